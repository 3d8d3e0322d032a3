// turbo_streaming_controller.js (a boosts block): while my boost form submits, the container
// loses its id so the broadcast can't add the chip a second time before the frame reloads.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static targets = ["container"]

  unsubscribe() {
    if (this.hasContainerTarget) this.containerTarget.removeAttribute("id")
  }
}
