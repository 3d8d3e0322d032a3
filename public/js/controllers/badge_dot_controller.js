// badge_dot_controller.js (the sidebar, spec/08 §5): an installed app's icon badge counts the
// rooms with unread messages; it is set when the sidebar appears and after every read or unread
// event. Browsers without the Badging API are left alone.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static classes = ["unread"]
  static targets = ["unread"]

  connect() {
    this.update()
  }

  update() {
    if (typeof navigator.setAppBadge !== "function") return
    let unread = 0
    for (const link of this.unreadTargets) if (link.classList.contains(this.unreadClass)) unread += 1
    showOnBadge(unread)
  }
}

// A page that is not an installed app may be refused a badge; there is nothing to show then.
function showOnBadge(count) {
  const request = count === 0 ? navigator.clearAppBadge() : navigator.setAppBadge(count)
  request.catch(() => {})
}
