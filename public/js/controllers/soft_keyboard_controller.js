// soft_keyboard_controller.js (message actions, inline boost): on touch devices, focuses a
// throw-away input before an async form appears, so the on-screen keyboard is already open when
// the form's autofocus field arrives (browsers only open it during a user gesture).
import { Controller } from "@hotwired/stimulus"
import { isTouchDevice } from "lib/helpers"

export default class extends Controller {
  open() {
    if (!isTouchDevice()) return
    const input = document.createElement("input")
    input.setAttribute("aria-hidden", "true")
    input.style.cssText = "position:fixed;opacity:0;inline-size:1px;block-size:1px;inset-block-start:50%"
    input.addEventListener("focusout", () => input.remove(), { once: true })
    this.element.append(input)
    input.focus()
  }
}
