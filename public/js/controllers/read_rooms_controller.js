// read_rooms_controller.js (sidebar frame): when I become present in a room on any tab or
// device, the server says so here and the room's dot is cleared (spec/08 §5).
import { Controller } from "@hotwired/stimulus"
import { subscribeTo } from "lib/cable"
import { nextFrame } from "lib/helpers"

export default class extends Controller {
  connect() {
    if (this.subscription) return
    this.subscription = subscribeTo({ channel: "ReadRoomsChannel" }, {
      received: ({ room_id }) => this.dispatch("read", { detail: { roomId: room_id } })
    })
  }

  async disconnect() {
    await nextFrame()
    if (!this.element.isConnected) {
      this.subscription?.unsubscribe()
      this.subscription = null
    }
  }
}
