// toggle_class_controller.js (aside#sidebar): the menu button opens and closes the sidebar on
// phones by toggling a class.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static classes = ["toggle"]

  toggle() {
    this.element.classList.toggle(this.toggleClass)
  }
}
