// web_share_controller.js (share buttons, spec/08 §3.16): hands a link or a file to the system's
// share sheet. Where the browser has no Web Share API the button stays hidden. A file is fetched
// first and shared under the name its URL ends with.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static values = { url: String, title: String, text: String, files: String }

  connect() {
    this.element.hidden = typeof navigator.share !== "function"
  }

  async share() {
    const payload = await shareable(this)
    if (navigator.canShare && !navigator.canShare(payload)) return
    try {
      await navigator.share(payload)
    } catch (error) {
      // Closing the share sheet rejects with AbortError; that is the person's choice, not a fault.
      if (error.name !== "AbortError") console.warn("share failed:", error)
    }
  }
}

// What navigator.share takes: the non-empty text fields and, for a file button, the file itself.
async function shareable(controller) {
  const fields = { title: controller.titleValue, text: controller.textValue, url: controller.urlValue }
  const payload = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== ""))
  if (controller.filesValue !== "") payload.files = [await download(controller.filesValue)]
  return payload
}

async function download(address) {
  const response = await fetch(address)
  const blob = await response.blob()
  const path = new URL(response.url || address, location.href).pathname
  const name = decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || "campfire-file"
  return new File([blob], name, { type: blob.type })
}
