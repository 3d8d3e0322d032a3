// copy_to_clipboard_controller.js (copy buttons): copies its value and flashes success.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static values = { content: String }
  static classes = ["success"]

  async copy(event) {
    event.preventDefault()
    await navigator.clipboard.writeText(this.contentValue)
    this.element.classList.remove(this.successClass)
    void this.element.offsetWidth // restart the animation when copied again
    this.element.classList.add(this.successClass)
  }
}
