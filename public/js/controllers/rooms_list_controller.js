// rooms_list_controller.js (the sidebar frame, spec/08 §5): the unread marks on room links. A
// message in a room other than the one open marks that room's link; being present in a room
// (on this page, another tab or another device) clears it, and so does loading the sidebar while
// the room is open. Each (re)connection of the unread channel reloads the whole frame, so what
// was missed while offline shows. The open room's link also carries aria-current.
import { Controller } from "@hotwired/stimulus"
import { subscribeTo } from "lib/cable"
import { Current } from "lib/current"
import { nextFrame, reloadFrame } from "lib/helpers"

export default class extends Controller {
  static classes = ["unread"]
  static targets = ["room"]

  initialize() {
    this.followNavigation = () => this.#showOpenRoom()
  }

  connect() {
    // The frame is permanent and outlives page loads: follow navigation for aria-current.
    document.addEventListener("turbo:load", this.followNavigation)
    this.subscription ??= subscribeTo({ channel: "UnreadRoomsChannel" }, {
      connected: () => reloadFrame(this.element),
      received: data => this.#messageIn(data.roomId)
    })
  }

  // Turbo detaches and re-attaches a permanent element on every navigation; the subscription
  // goes only with an element that is still detached a frame later.
  async disconnect() {
    document.removeEventListener("turbo:load", this.followNavigation)
    await nextFrame()
    if (this.element.isConnected) return
    this.subscription?.unsubscribe()
    this.subscription = undefined
  }

  // presence:present and read-rooms:read carry the room in detail.roomId.
  read(event) {
    this.#markRead(event.detail.roomId)
  }

  // turbo:frame-load: whatever the server says, the room on screen has been seen.
  loaded() {
    const open = Current.room
    if (open !== undefined) this.#markRead(open.id)
    this.#showOpenRoom()
  }

  #markRead(roomId) {
    const link = this.#linkTo(roomId)
    if (link === undefined) return
    link.classList.remove(this.unreadClass)
    this.dispatch("read", { detail: { targetId: roomId } })
  }

  #messageIn(roomId) {
    const link = this.#linkTo(roomId)
    if (link === undefined) return
    const onScreen = String(Current.room?.id) === String(roomId)
    if (!onScreen) link.classList.add(this.unreadClass)
    this.dispatch("unread", { detail: { targetId: link.id } })
  }

  #showOpenRoom() {
    const open = String(Current.room?.id)
    for (const link of this.roomTargets) link.toggleAttribute("aria-current", link.dataset.roomId === open)
  }

  #linkTo(roomId) {
    return this.roomTargets.find(link => link.dataset.roomId === String(roomId))
  }
}
