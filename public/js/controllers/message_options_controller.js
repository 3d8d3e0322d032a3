// message_options_controller.js (div.message__actions of every message): puts in the options
// button and its empty menu, a copy of the page's template#message-options (messages/actions.html).
// The button is the same for every message, so messages are sent without it: a third fewer bytes
// on every page, and in every broadcast to every socket.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  connect() {
    const template = document.getElementById("message-options")
    if (this.element.childElementCount || !template) return
    this.element.append(template.content.cloneNode(true))
  }
}
