// filter_controller.js (the people list of room forms, spec/08 §7): typing in the filter box
// narrows the list to the people whose lower-cased name contains the text. The list is only
// re-marked once typing pauses (300 ms); an empty box shows everyone again.
import { Controller } from "@hotwired/stimulus"
import { debounce } from "lib/helpers"

const PAUSE_MS = 300

export default class extends Controller {
  static classes = ["selected", "active"]
  static targets = ["list"]

  initialize() {
    this.narrowSoon = debounce(query => this.#narrow(query), PAUSE_MS)
  }

  // input->filter#filter on the search box.
  filter({ target }) {
    this.narrowSoon(target.value.trim().toLowerCase())
  }

  #narrow(query) {
    const filtering = query.length > 0
    this.element.classList.toggle(this.activeClass, filtering)
    for (const person of this.listTarget.querySelectorAll("[data-value]")) {
      const matches = filtering && person.dataset.value.includes(query)
      person.classList.toggle(this.selectedClass, matches)
    }
  }
}
