// sound_controller.js (a /play message): plays its sound on 🔊 or when it arrives live.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static values = { url: String }

  play() {
    new Audio(this.urlValue).play().catch(() => {})
  }
}
