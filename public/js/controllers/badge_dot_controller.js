// badge_dot_controller.js (sidebar): the app badge shows how many rooms are unread (spec/08 §5).
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static targets = ["unread"]
  static classes = ["unread"]

  connect() {
    this.update()
  }

  update() {
    const count = this.unreadTargets.filter(link => link.classList.contains(this.unreadClass)).length
    if (!("setAppBadge" in navigator)) return
    const done = count > 0 ? navigator.setAppBadge(count) : navigator.clearAppBadge()
    done.catch(() => {})
  }
}
