// local_time_controller.js (body): fills every time[data-local-time-target] in the reader's
// locale and time zone: "3:45 PM", "January 1, 2025", or both (spec/08 §3.18).
import { Controller } from "@hotwired/stimulus"

const time = new Intl.DateTimeFormat(undefined, { timeStyle: "short" })
const date = new Intl.DateTimeFormat(undefined, { dateStyle: "long" })
const datetime = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "short" })

export default class extends Controller {
  static targets = ["time", "date", "datetime"]

  timeTargetConnected(element) { this.#fill(element, time) }
  dateTargetConnected(element) { this.#fill(element, date) }
  datetimeTargetConnected(element) { this.#fill(element, datetime) }

  #fill(element, format) {
    const value = new Date(element.getAttribute("datetime"))
    if (isNaN(value)) return
    element.textContent = format.format(value)
    element.title = datetime.format(value)
  }
}
