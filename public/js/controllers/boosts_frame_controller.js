// boosts_frame_controller.js (turbo-frame#boosting_message_<cmid> of a message sent without
// boosts, messages/boosts_slot.html): fills in the block messages/boosts.html renders, from the
// page's template#message-boosts (messages/actions.html): the list boost broadcasts append to
// and the add-a-boost link, named for this message. A frame that already has content (a message
// with boosts, or the block reloaded after a boost) is left alone.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  connect() {
    const template = document.getElementById("message-boosts")
    const message = this.element.closest(".message")
    if (this.element.childElementCount || !template || !message) return

    const cmid = message.id.replace(/^message_/, "")
    const ids = { boosts: `boosts_message_${cmid}`, new_boost: `new_boost_message_${cmid}` }
    const hrefs = { new_boost: `/messages/${message.dataset.messageId}/boosts/new` }
    const content = template.content.cloneNode(true)
    for (const el of content.querySelectorAll("[data-fill-id]")) {
      el.id = ids[el.dataset.fillId]
      el.removeAttribute("data-fill-id")
    }
    for (const el of content.querySelectorAll("[data-fill-href]")) {
      el.setAttribute("href", hrefs[el.dataset.fillHref])
      el.removeAttribute("data-fill-href")
    }
    this.element.append(content)
  }
}
