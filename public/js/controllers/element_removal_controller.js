// element_removal_controller.js (flash): removes the element when its animation ends.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  remove() {
    this.element.remove()
  }
}
