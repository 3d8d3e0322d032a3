// presence_controller.js (#message-area): tells the server I am in this room (spec/08 §3.10):
// present on subscribe, refresh every 50 s, absent after 5 s hidden, present again after 5 s
// visible. The server marks the room read; the sidebar clears its dot at once.
import { Controller } from "@hotwired/stimulus"
import { subscribeTo } from "lib/cable"
import { Current } from "lib/current"
import { isTurboPreview, nextFrame } from "lib/helpers"

const REFRESH_EVERY = 50000
const VISIBILITY_DEBOUNCE = 5000

export default class extends Controller {
  connect() {
    const room = Current.room
    if (!room || isTurboPreview()) return
    this.roomId = room.id
    this.subscription = subscribeTo({ channel: "PresenceChannel", room_id: room.id }, {
      connected: () => this.#connected(),
      disconnected: () => { this.connected = false; this.#stopRefreshing() }
    })
  }

  disconnect() {
    this.#stopRefreshing()
    clearTimeout(this.visibilityTimer)
    this.subscription?.unsubscribe()
    this.subscription = null
  }

  visibilityChanged() {
    clearTimeout(this.visibilityTimer)
    this.visibilityTimer = setTimeout(() => {
      if (!this.connected) return
      if (document.hidden && !this.wasHidden) {
        this.wasHidden = true
        this.#stopRefreshing()
        this.subscription.perform("absent")
      } else if (!document.hidden && this.wasHidden) {
        this.wasHidden = false
        this.subscription.perform("present")
        this.#present()
        this.#startRefreshing()
      }
    }, VISIBILITY_DEBOUNCE)
  }

  async #connected() {
    this.connected = true
    this.#startRefreshing()
    await nextFrame()
    this.#present()
  }

  #present() {
    this.dispatch("present", { detail: { roomId: this.roomId } })
  }

  #startRefreshing() {
    this.#stopRefreshing()
    this.refreshTimer = setInterval(() => this.subscription?.perform("refresh"), REFRESH_EVERY)
  }

  #stopRefreshing() {
    clearInterval(this.refreshTimer)
  }
}
