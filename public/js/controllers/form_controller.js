// form_controller.js (various forms): submit through Turbo, cancel via the cancel link, refuse
// in-editor file attachments.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static targets = ["cancel"]

  submit() {
    this.element.requestSubmit()
  }

  cancel() {
    if (this.hasCancelTarget) this.cancelTarget.click()
  }

  preventAttachment(event) {
    event.preventDefault()
  }
}
