// rooms_list_controller.js (sidebar frame): unread dots (spec/08 §5). A message in a room I am
// not looking at marks its link unread; being present in a room (here or on another device)
// clears it. Reloads the whole sidebar whenever the unread channel (re)connects.
import { Controller } from "@hotwired/stimulus"
import { subscribeTo } from "lib/cable"
import { Current } from "lib/current"
import { nextFrame } from "lib/helpers"

export default class extends Controller {
  static targets = ["room"]
  static classes = ["unread"]

  initialize() {
    this.markCurrent = this.markCurrent.bind(this)
  }

  connect() {
    // The frame outlives page loads (it is permanent): follow navigation to mark the open room.
    document.addEventListener("turbo:load", this.markCurrent)
    if (this.subscription) return
    this.subscription = subscribeTo({ channel: "UnreadRoomsChannel" }, {
      connected: () => this.element.reload?.(),
      received: ({ roomId }) => this.#unread(roomId)
    })
  }

  // The frame is Turbo-permanent: a navigation detaches and re-attaches it. Keep the
  // subscription unless it is really gone.
  async disconnect() {
    document.removeEventListener("turbo:load", this.markCurrent)
    await nextFrame()
    if (!this.element.isConnected) {
      this.subscription?.unsubscribe()
      this.subscription = null
    }
  }

  read({ detail: { roomId } }) {
    const link = this.#link(roomId)
    if (link) {
      link.classList.remove(this.unreadClass)
      this.dispatch("read", { detail: { targetId: roomId } })
    }
  }

  loaded() {
    const room = Current.room
    if (room) this.read({ detail: { roomId: room.id } })
    this.markCurrent()
  }

  markCurrent() {
    const room = Current.room
    for (const link of this.roomTargets) link.toggleAttribute("aria-current", link.dataset.roomId == room?.id)
  }

  #unread(roomId) {
    const link = this.#link(roomId)
    if (!link) return
    if (roomId !== Current.room?.id) link.classList.add(this.unreadClass)
    this.dispatch("unread", { detail: { targetId: link.id } })
  }

  #link(roomId) {
    return this.roomTargets.find(link => link.dataset.roomId == roomId)
  }
}
