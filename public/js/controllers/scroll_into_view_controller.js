// scroll_into_view_controller.js (edit and boost forms): brings itself to the middle of the view.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  connect() {
    requestAnimationFrame(() => this.element.scrollIntoView({ behavior: "smooth", block: "center" }))
  }
}
