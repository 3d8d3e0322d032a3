// filter_controller.js (people lists): marks rows whose data-value contains the typed text.
import { Controller } from "@hotwired/stimulus"
import { debounce } from "lib/helpers"

export default class extends Controller {
  static targets = ["list"]
  static classes = ["active", "selected"]

  initialize() {
    this.filter = debounce(this.filter.bind(this), 300)
  }

  filter(event) {
    const query = event.target.value.trim().toLowerCase()
    this.element.classList.toggle(this.activeClass, query !== "")
    for (const row of this.element.querySelectorAll("[data-value]")) {
      row.classList.toggle(this.selectedClass, query !== "" && row.dataset.value.includes(query))
    }
  }
}
