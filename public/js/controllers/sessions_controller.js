// sessions_controller.js (log out form): drops this browser's push subscription first, so a
// signed-out device gets no more notifications, then submits.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static targets = ["pushSubscriptionEndpoint"]

  async logout() {
    try {
      const registration = await navigator.serviceWorker?.getRegistration()
      const subscription = await registration?.pushManager.getSubscription()
      if (subscription) {
        this.pushSubscriptionEndpointTarget.value = subscription.endpoint
        await subscription.unsubscribe()
      }
    } finally {
      this.element.requestSubmit()
    }
  }
}
