// message_formatter.js: the per-viewer classes of a message (spec/08 §4.1). The server sends the
// same bytes to everyone; here each message learns whether it is mine, mentions me, continues
// the previous author's thread (≤ 5 minutes) or starts a new day.
import { Current } from "lib/current"

const THREADING_WINDOW = 5 * 60 * 1000

export class MessageFormatter {
  // classes: { formatted, me, mentioned, threaded, firstOfDay } (class names from data attributes)
  constructor(classes) {
    this.classes = classes
  }

  format(message, { threaded = true } = {}) {
    const user = Current.user
    if (user) {
      message.classList.toggle(this.classes.me, message.dataset.userId == user.id)
      message.classList.toggle(this.classes.mentioned, this.#mentions(message, user.id))
    }
    if (threaded) {
      const previous = this.#previousMessage(message)
      if (previous) {
        message.classList.toggle(this.classes.threaded, this.#continues(previous, message))
      }
      message.classList.toggle(this.classes.firstOfDay, !previous || !this.#sameDay(previous, message))
    }
    message.classList.add(this.classes.formatted)
  }

  #mentions(message, userId) {
    return !!message.querySelector(`.mention[data-user-id="${userId}"], .mention a[href="/users/${userId}"]`)
  }

  #previousMessage(message) {
    const previous = message.previousElementSibling
    return previous?.dataset.messageTimestamp ? previous : null
  }

  #continues(previous, message) {
    return previous.dataset.userId === message.dataset.userId &&
      Math.abs(Number(message.dataset.messageTimestamp) - Number(previous.dataset.messageTimestamp)) <= THREADING_WINDOW
  }

  #sameDay(previous, message) {
    const day = el => new Date(Number(el.dataset.messageTimestamp)).toLocaleDateString()
    return day(previous) === day(message)
  }
}
