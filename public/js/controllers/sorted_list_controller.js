// sorted_list_controller.js (#direct_rooms, #shared_rooms): keeps sidebar links in order
// (spec/08 §5): pings by latest activity first, rooms by name. A ping with a new message moves
// to the front.
import { Controller } from "@hotwired/stimulus"
import { debounce } from "lib/helpers"

export default class extends Controller {
  static targets = ["item"]

  initialize() {
    this.sortSoon = debounce(() => this.sort(), 1000)
  }

  itemTargetConnected() {
    if (this.connected) this.sortSoon()
  }

  connect() {
    this.connected = true
  }

  updateItem({ detail: { targetId } }) {
    const item = this.itemTargets.find(item => item.id === targetId)
    if (!item) return
    item.dataset.sortedListNumber = Date.now()
    this.sort()
  }

  sort() {
    const items = [...this.itemTargets]
    const sorted = [...items].sort((a, b) => {
      if (a.dataset.sortedListNumber || b.dataset.sortedListNumber) {
        return Number(b.dataset.sortedListNumber || 0) - Number(a.dataset.sortedListNumber || 0)
      }
      return (a.dataset.sortedListName || "").localeCompare(b.dataset.sortedListName || "", undefined, { sensitivity: "base" })
    })
    if (sorted.some((item, index) => item !== items[index])) this.element.append(...sorted)
  }
}
