// copy_to_clipboard_controller.js (copy buttons, spec/08 §3.16): puts its text on the clipboard
// and wears the success class for a moment so the person sees it worked. A second copy while the
// first still shows starts the moment over.
import { Controller } from "@hotwired/stimulus"

// How long the button shows that the copy worked.
const CONFIRMATION_MS = 2000

export default class extends Controller {
  static classes = ["success"]
  static values = { content: String }

  async copy(event) {
    event.preventDefault()
    clearTimeout(this.confirmation)
    this.element.classList.remove(this.successClass)
    const copied = await navigator.clipboard?.writeText(this.contentValue).then(() => true, () => false)
    if (!copied) return
    this.element.classList.add(this.successClass)
    this.confirmation = setTimeout(() => this.element.classList.remove(this.successClass), CONFIRMATION_MS)
  }

  disconnect() {
    clearTimeout(this.confirmation)
  }
}
