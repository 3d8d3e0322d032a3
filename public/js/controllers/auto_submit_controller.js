// auto_submit_controller.js (session transfer form): submits itself as soon as it appears.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  connect() {
    this.element.requestSubmit()
  }
}
