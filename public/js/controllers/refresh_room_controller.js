// refresh_room_controller.js (messages list): connection health and catch-up (spec/08 §3.11).
// Every HeartbeatChannel confirmation (load and each reconnect) fetches what changed since the
// newest message seen; 5 s without a connection disables the composer; a tab back after more
// than a minute refreshes and reloads the sidebar.
import { Controller } from "@hotwired/stimulus"
import { subscribeTo, reconnectIfStale } from "lib/cable"
import { isTurboPreview } from "lib/helpers"

const OFFLINE_AFTER = 5000
const REFRESH_AFTER_HIDDEN = 60000

export default class extends Controller {
  static targets = ["message"]
  static values = { loadedAt: Number, url: String }

  connect() {
    this.since = this.loadedAtValue
    if (isTurboPreview()) return
    this.subscription = subscribeTo({ channel: "HeartbeatChannel" }, {
      connected: () => this.#connected(),
      disconnected: () => this.#disconnected()
    })
  }

  disconnect() {
    clearTimeout(this.offlineTimer)
    this.subscription?.unsubscribe()
    this.subscription = null
  }

  messageTargetConnected(message) {
    const updatedAt = Number(message.dataset.messageUpdatedAt)
    if (updatedAt > this.since) this.since = updatedAt
  }

  online() {
    reconnectIfStale()
  }

  visibilityChanged() {
    if (document.hidden) {
      this.hiddenAt = Date.now()
    } else if (this.hiddenAt && Date.now() - this.hiddenAt > REFRESH_AFTER_HIDDEN) {
      this.hiddenAt = null
      this.#refresh("visibility")
      this.dispatch("visible")
    }
  }

  #connected() {
    clearTimeout(this.offlineTimer)
    this.#refresh("connection")
    window.dispatchEvent(new CustomEvent("refresh-room:online"))
  }

  #disconnected() {
    clearTimeout(this.offlineTimer)
    this.offlineTimer = setTimeout(() => window.dispatchEvent(new CustomEvent("refresh-room:offline")), OFFLINE_AFTER)
  }

  async #refresh(reason) {
    const url = new URL(this.urlValue)
    url.searchParams.set("since", this.since)
    url.searchParams.set("reason", reason)
    const response = await fetch(url, {
      headers: { Accept: "text/vnd.turbo-stream.html, text/html, application/xhtml+xml", "X-Requested-With": "XMLHttpRequest" },
      credentials: "same-origin"
    })
    if (response.ok) {
      const html = await response.text()
      if (html.trim()) window.Turbo.renderStreamMessage(html)
    }
  }
}
