// web_share_controller.js (share buttons): the Web Share API; hidden where the browser can't
// share. A file is fetched and shared as a file.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static values = { files: String, url: String, text: String, title: String }

  connect() {
    this.element.hidden = !navigator.canShare
  }

  async share() {
    const data = {}
    if (this.titleValue) data.title = this.titleValue
    if (this.textValue) data.text = this.textValue
    if (this.urlValue) data.url = this.urlValue
    if (this.filesValue) {
      const blob = await (await fetch(this.filesValue)).blob()
      const extension = (blob.type.split("/")[1] || "bin").split(/[+;]/)[0]
      data.files = [new File([blob], `Campfire_${Math.random().toString(36).slice(2, 8)}.${extension}`, { type: blob.type })]
    }
    if (navigator.canShare?.(data)) navigator.share(data).catch(() => {})
  }
}
