// boost_delete_controller.js (a boost chip, spec/08 §3.15): a boost can be taken back only by
// the person who gave it. On their own chips the emoji becomes focusable and clicking it (or
// Enter on it) shows the delete button beside it, clicking again hides it; while the delete
// request runs the chip is dimmed. Other people's chips ignore clicks.
import { Controller } from "@hotwired/stimulus"
import { Current } from "lib/current"

export default class extends Controller {
  static values = { boosterId: Number }
  static targets = ["content", "button"]
  static classes = ["reveal", "perform"]

  connect() {
    if (!this.#givenByMe) return
    Object.assign(this.contentTarget, { tabIndex: 0 })
    this.contentTarget.setAttribute("aria-describedby", "delete_boost_accessible_label")
  }

  reveal() {
    if (!this.#givenByMe) return
    const shown = this.element.classList.toggle(this.revealClass)
    if (shown) this.buttonTarget.focus()
  }

  // The delete button's click: its form goes on to submit; the broadcast removes the chip.
  perform() {
    this.element.classList.add(this.performClass)
  }

  get #givenByMe() {
    const me = Current.user
    return me !== undefined && me.id === this.boosterIdValue
  }
}
