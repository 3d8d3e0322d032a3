// notifications_controller.js (the room's bell): loads the notification-level toggle and asks
// for notification permission. When the browser can push and a VAPID key is configured, the
// subscription is sent to the server (spec/09 §5); when notifications are blocked, a dialog
// explains how to allow them.
import { Controller } from "@hotwired/stimulus"
import { csrfToken, nextTick } from "lib/helpers"

export default class extends Controller {
  static targets = ["bell", "notAllowedNotice"]
  static values = { subscriptionsUrl: String }
  static classes = ["attention"]

  async connect() {
    if ("Notification" in window && Notification.permission === "default") {
      this.element.classList.add(this.attentionClass)
    }
    // The involvement frame inside connects after this controller: tell it on the next tick.
    await nextTick()
    this.dispatch("ready")
  }

  async attemptToSubscribe() {
    if (!("Notification" in window)) return
    const permission = await Notification.requestPermission()
    if (permission === "denied") {
      this.notAllowedNoticeTarget.showModal()
      return
    }
    this.element.classList.remove(this.attentionClass)
    if (permission === "granted") await this.#subscribe()
    this.dispatch("ready")
  }

  async #subscribe() {
    const key = document.querySelector("meta[name=vapid-public-key]")?.content
    if (!key || !("serviceWorker" in navigator) || !("PushManager" in window)) return
    const registration = await navigator.serviceWorker.register("/service-worker.js")
    const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })
    const json = subscription.toJSON()
    const response = await fetch(this.subscriptionsUrlValue, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "text/vnd.turbo-stream.html, text/html, application/xhtml+xml", "X-CSRF-Token": csrfToken() || "" },
      body: JSON.stringify({ push_subscription: { endpoint: json.endpoint, p256dh_key: json.keys.p256dh, auth_key: json.keys.auth } })
    })
    if (!response.ok) await subscription.unsubscribe()
  }
}
