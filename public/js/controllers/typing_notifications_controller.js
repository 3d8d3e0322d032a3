// typing_notifications_controller.js (.composer): "Kevin, Sarah" is typing (spec/08 §3.9). Sends
// start at most once a second while the editor has text, stop when it empties or on send;
// shows the others who started within the last 5 s.
import { Controller } from "@hotwired/stimulus"
import { subscribeTo } from "lib/cable"
import { Current } from "lib/current"
import { isTurboPreview, throttle } from "lib/helpers"

const EXPIRY = 5000
const TICK = 1000

export default class extends Controller {
  static targets = ["indicator", "author"]
  static classes = ["active"]

  initialize() {
    this.typists = new Map()
    this.sendStart = throttle(() => this.subscription?.perform("start"), 1000)
  }

  connect() {
    const room = Current.room
    if (!room || isTurboPreview()) return
    this.subscription = subscribeTo({ channel: "TypingNotificationsChannel", room_id: room.id }, {
      received: data => this.#received(data)
    })
    this.ticker = setInterval(() => this.#render(), TICK)
  }

  disconnect() {
    clearInterval(this.ticker)
    this.subscription?.unsubscribe()
    this.subscription = null
  }

  start(event) {
    const editor = event.target.editor
    if (editor && editor.getDocument().toString().trim() === "") this.stop()
    else this.sendStart()
  }

  stop() {
    this.subscription?.perform("stop")
  }

  #received({ action, user }) {
    if (!user || user.id === Current.user?.id) return
    if (action === "start") this.typists.set(user.name, Date.now())
    else this.typists.delete(user.name)
    this.#render()
  }

  #render() {
    const now = Date.now()
    for (const [name, at] of this.typists) if (now - at > EXPIRY) this.typists.delete(name)
    const names = [...this.typists.keys()].sort()
    this.authorTarget.textContent = names.join(", ")
    this.indicatorTarget.classList.toggle(this.activeClass, names.length > 0)
    this.indicatorTarget.toggleAttribute("data-plural", names.length > 1)
  }
}
