// boost_delete_controller.js (a boost chip): my own boosts reveal a delete button when clicked
// (or on Enter); other people's chips do nothing (spec/08 §3.15).
import { Controller } from "@hotwired/stimulus"
import { Current } from "lib/current"

export default class extends Controller {
  static targets = ["content", "button"]
  static classes = ["perform", "reveal"]
  static values = { boosterId: Number }

  connect() {
    if (this.#mine) {
      this.contentTarget.tabIndex = 0
      this.contentTarget.setAttribute("aria-describedby", "delete_boost_accessible_label")
      this.element.classList.add("boost--mine")
    }
  }

  reveal() {
    if (!this.#mine) return
    this.element.classList.toggle(this.revealClass)
    if (this.element.classList.contains(this.revealClass)) this.buttonTarget.focus()
  }

  perform() {
    this.element.classList.add(this.performClass)
  }

  get #mine() {
    return this.boosterIdValue === Current.user?.id
  }
}
