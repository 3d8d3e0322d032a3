// popup_controller.js (details menus): closes on Esc, outside click or a choice; opens upward
// when the menu would come within 90 px of the viewport bottom; tells the menu how much room it
// has to the right (--max-width).
import { Controller } from "@hotwired/stimulus"

const FLIP_THRESHOLD = 90

export default class extends Controller {
  static targets = ["menu"]
  static classes = ["orientationTop"]

  close() {
    this.element.open = false
  }

  toggle() {
    if (!this.element.open) return
    this.element.classList.remove(this.orientationTopClass)
    const menu = this.menuTarget.getBoundingClientRect()
    if (window.innerHeight - menu.bottom < FLIP_THRESHOLD) this.element.classList.add(this.orientationTopClass)
    const box = this.element.getBoundingClientRect()
    this.menuTarget.style.setProperty("--max-width", `${Math.max(box.right - 8, 200)}px`)
  }

  closeOnClickOutside(event) {
    if (this.element.open && !this.element.contains(event.target)) this.close()
  }
}
