// toggle_class_controller.js (aside#sidebar): the phone layout's menu button slides the sidebar
// in and out by toggling one class; the button says which state it left (aria-expanded).
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static classes = ["toggle"]

  toggle({ currentTarget }) {
    const open = this.element.classList.toggle(this.toggleClass)
    if (currentTarget instanceof Element) currentTarget.setAttribute("aria-expanded", open ? "true" : "false")
  }
}
