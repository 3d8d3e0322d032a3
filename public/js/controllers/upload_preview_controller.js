// upload_preview_controller.js (avatar and logo pickers): shows the chosen image before upload.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  static targets = ["image", "input"]

  previewImage(event) {
    const file = (event?.target || this.inputTarget).files?.[0]
    if (file && this.hasImageTarget) this.imageTarget.src = URL.createObjectURL(file)
  }
}
