// notifications_controller.js (the room's bell): Web Push for this browser (spec/09 §5). When
// notifications already work here, the bell's frame loads the room's notification-level toggle
// (notifications:ready); otherwise the bell shows an alert icon and clicking it asks for
// permission, subscribes through /service-worker.js and registers the subscription with the
// server. Blocked notifications open a dialog explaining how to allow them. A server with no
// VAPID key cannot push at all: then the toggle is shown at once.
import { Controller } from "@hotwired/stimulus"
import { csrfToken, isTurboPreview, nextTick } from "lib/helpers"

const FIRST_RUN_COOKIE = "notifications-first-run-seen"
const PWA_FIRST_RUN_COOKIE = "notifications-pwa-first-run-seen"
let readyInThisWindow = false

export default class extends Controller {
  static targets = ["bell", "notAllowedNotice"]
  static values = { subscriptionsUrl: String }
  static classes = ["attention"]

  async connect() {
    if (isTurboPreview()) return
    if (readyInThisWindow || !this.#vapidKey) return this.#ready()
    if (!this.#firstRunSeen) this.element.classList.add(this.attentionClass)
    if (await this.#subscribed()) this.#ready()
    else this.#showAlertIcon()
  }

  async attemptToSubscribe() {
    this.element.classList.remove(this.attentionClass)
    document.cookie = `${this.#firstRunCookie}=true; path=/; max-age=${20 * 365 * 24 * 3600}`
    if (!this.#supported) return this.notAllowedNoticeTarget.showModal()

    const registration = await navigator.serviceWorker.getRegistration() || await navigator.serviceWorker.register("/service-worker.js")
    let permission = Notification.permission
    if (permission === "default") permission = await Notification.requestPermission()
    if (permission === "denied") return this.notAllowedNoticeTarget.showModal()
    if (permission === "granted" && await this.#subscribe(registration)) this.#ready()
  }

  async #ready() {
    readyInThisWindow = true
    await nextTick() // the involvement frame inside connects after this controller
    this.dispatch("ready")
  }

  #showAlertIcon() {
    const [loading, alert] = this.bellTarget.querySelectorAll(".icon")
    loading?.setAttribute("hidden", "")
    alert?.removeAttribute("hidden")
  }

  async #subscribed() {
    if (!this.#supported || Notification.permission !== "granted") return false
    const registration = await navigator.serviceWorker.getRegistration()
    return !!(await registration?.pushManager.getSubscription())
  }

  async #subscribe(registration) {
    await navigator.serviceWorker.ready
    const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: this.#vapidKeyBytes })
    const json = subscription.toJSON()
    const response = await fetch(this.subscriptionsUrlValue, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "text/vnd.turbo-stream.html, text/html, application/xhtml+xml", "X-CSRF-Token": csrfToken() || "" },
      body: JSON.stringify({ push_subscription: { endpoint: json.endpoint, p256dh_key: json.keys.p256dh, auth_key: json.keys.auth } })
    })
    if (!response.ok) {
      await subscription.unsubscribe()
      return false
    }
    return true
  }

  get #supported() {
    return "serviceWorker" in navigator && "Notification" in window && "PushManager" in window
  }

  get #vapidKey() {
    return document.querySelector("meta[name=vapid-public-key]")?.content
  }

  get #vapidKeyBytes() {
    const base64 = this.#vapidKey.replace(/-/g, "+").replace(/_/g, "/")
    const padded = base64 + "=".repeat((4 - base64.length % 4) % 4)
    return Uint8Array.from(atob(padded), c => c.charCodeAt(0))
  }

  get #firstRunCookie() {
    return matchMedia("(display-mode: standalone)").matches ? PWA_FIRST_RUN_COOKIE : FIRST_RUN_COOKIE
  }

  get #firstRunSeen() {
    return document.cookie.split("; ").some(c => c === `${this.#firstRunCookie}=true`)
  }
}
