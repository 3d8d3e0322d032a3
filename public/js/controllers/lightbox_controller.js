// lightbox_controller.js (body): shows an image (or a QR code) full screen in the page's
// dialog, with download and share buttons for the file; closing clears it.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static targets = ["dialog", "zoomedImage", "download", "share", "image"]

  open(event) {
    event.preventDefault()
    const link = event.currentTarget
    const url = link.dataset.lightboxUrlValue || link.href
    this.zoomedImageTarget.src = link.href
    this.downloadTarget.href = url
    this.shareTarget.dataset.webShareFilesValue = url
    this.dialogTarget.showModal()
  }

  reset() {
    this.zoomedImageTarget.src = ""
    this.downloadTarget.removeAttribute("href")
    this.shareTarget.dataset.webShareFilesValue = ""
  }
}
