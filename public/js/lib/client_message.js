// client_message.js: pending messages (spec/07 §5.9, 08 §4.2). A pending copy is rendered from
// the room page's template at once; the server's copy (same id, message_<client id>) replaces it
// when the Turbo Stream append arrives.
import { escapeHTML, isEmojiOnly } from "lib/helpers"

export const SOUND_NAMES = ["56k", "ballmer", "bell", "bezos", "bueller", "butts", "clowntown",
  "cottoneyejoe", "crickets", "curb", "dadgummit", "dangerzone", "danielsan", "deeper", "donotwant",
  "drama", "flawless", "glados", "gogogo", "greatjob", "greyjoy", "guarantee", "heygirl", "honk",
  "horn", "horror", "inconceivable", "letitgo", "live", "loggins", "makeitso", "noooo", "nyan",
  "ohmy", "ohyeah", "pushit", "rimshot", "rollout", "rumble", "sax", "secret", "sexyback", "story",
  "tada", "tmyk", "totes", "trololo", "trombone", "unix", "vuvuzela", "what", "whoomp", "wups",
  "yay", "yeah", "yodel"]

// A random base-36 id of about 11 characters, like the Rails client's.
export function newClientMessageId() {
  return Math.random().toString(36).slice(2, 13).padEnd(11, "0")
}

export class ClientMessage {
  constructor(template) {
    this.template = template
  }

  // Returns the HTML of a pending message. `html` is the editor's HTML, `text` its plain text.
  render(clientMessageId, { html, text }) {
    const now = new Date()
    return this.#fill({
      clientMessageId,
      messageTimestamp: now.getTime(),
      messageDatetime: now.toISOString(),
      messageClasses: isEmojiOnly(text.trim()) ? "message--emoji" : "",
      body: this.#body(html, text)
    })
  }

  // A pending upload: the file name and a progress bar driven by --percentage.
  renderUpload(clientMessageId, file) {
    const now = new Date()
    return this.#fill({
      clientMessageId,
      messageTimestamp: now.getTime(),
      messageDatetime: now.toISOString(),
      messageClasses: "",
      body: ClientMessage.uploadBody(file.name, 0)
    })
  }

  static uploadBody(name, percentage) {
    return `<div class="pending">${escapeHTML(name)}</div><span class="message__progress" style="--percentage: ${percentage}%"></span>`
  }

  update(clientMessageId, percentage, name) {
    const bar = document.querySelector(`#message_${clientMessageId} .message__progress`)
    if (bar) bar.style.setProperty("--percentage", `${percentage}%`)
    else if (name) this.#content(clientMessageId)?.insertAdjacentHTML("beforeend", ClientMessage.uploadBody(name, percentage))
  }

  // Marks the pending copy as not sent; `reason` (e.g. "too large: the limit is 1 GiB") is
  // shown after "Not sent" (app.css reads it from data-failure).
  failed(clientMessageId, reason) {
    if (reason) this.#content(clientMessageId)?.setAttribute("data-failure", reason)
    document.getElementById(`message_${clientMessageId}`)?.classList.add("message--failed")
  }

  #content(clientMessageId) {
    return document.querySelector(`#message_${clientMessageId} .message__body-content`)
  }

  #body(html, text) {
    const sound = text.trim().match(/^\/play (\w+)/)
    if (sound && SOUND_NAMES.includes(sound[1])) {
      return `<span class="pending">Playing ${sound[1]}…</span>`
    }
    return `<div class="trix-content">${html}</div>`
  }

  #fill(values) {
    return this.template.replace(/\$(\w+)\$/g, (token, key) => key in values ? values[key] : token)
  }
}
