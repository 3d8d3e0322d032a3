// search_results_controller.js (#search-results): formats results (mine, mentions) without
// threading, and starts at the newest result.
import { Controller } from "@hotwired/stimulus"
import { MessageFormatter } from "lib/message_formatter"
import { highlightCode } from "lib/highlight"

export default class extends Controller {
  static targets = ["messages", "message"]
  static classes = ["me", "threaded", "mentioned", "formatted"]

  initialize() {
    this.formatter = new MessageFormatter({ me: this.meClass, mentioned: this.mentionedClass, formatted: this.formattedClass })
  }

  connect() {
    this.element.scrollTop = this.element.scrollHeight
    const main = document.getElementById("main-content")
    if (main) main.scrollTop = main.scrollHeight
  }

  messageTargetConnected(message) {
    this.formatter.format(message, { threaded: false })
    highlightCode(message)
  }
}
