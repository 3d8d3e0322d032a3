// message_actions_controller.js (a message's options menu): the menu is not sent with every
// message; the page holds one template#message-actions (messages/actions.html) and this fills a
// copy for this message the first time its menu opens: boost forms targeting its boosts frame,
// the new-boost and edit links, the permalink to copy, and download/share for attachments.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  fill() {
    const menu = this.element.querySelector(".message__actions-menu")
    const message = this.element.closest(".message")
    const template = document.getElementById("message-actions")
    if (!this.element.open || !menu || menu.childElementCount || !message || !template) return

    const cmid = message.id.replace(/^message_/, "")
    const id = message.dataset.messageId
    const permalink = message.querySelector(".message__permalink")?.getAttribute("href") || ""
    const roomPath = permalink.split("/@")[0]
    const download = message.querySelector(".message__attachment-download")?.getAttribute("href")
    const hrefs = { new_boost: `/messages/${id}/boosts/new`, edit: `${roomPath}/messages/${id}/edit`, download }
    const frames = { boosting: `boosting_message_${cmid}`, new_boost: `new_boost_message_${cmid}`, edit: `edit_message_${cmid}` }

    const content = template.content.cloneNode(true)
    for (const el of content.querySelectorAll("[data-fill-for]")) {
      if ((el.dataset.fillFor === "attachment") !== !!download) el.remove()
    }
    for (const form of content.querySelectorAll("[data-fill-action=boosts]")) form.action = `/messages/${id}/boosts`
    for (const el of content.querySelectorAll("[data-fill-href]")) el.href = hrefs[el.dataset.fillHref]
    for (const el of content.querySelectorAll("[data-fill-frame]")) el.dataset.turboFrame = frames[el.dataset.fillFrame]
    for (const el of content.querySelectorAll("[data-fill-copy]")) el.dataset.copyToClipboardContentValue = new URL(permalink, location.origin).href
    for (const el of content.querySelectorAll("[data-fill-share]")) el.dataset.webShareFilesValue = download
    menu.append(content)
  }
}
