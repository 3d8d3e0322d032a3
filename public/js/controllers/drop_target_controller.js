// drop_target_controller.js (message area, composer): accepts dragged files and hands them on
// as a drop-target:drop event with {files}.
import { Controller } from "@hotwired/stimulus"

export default class extends Controller {
  dragenter(event) {
    if (this.#hasFiles(event)) event.preventDefault()
  }

  dragover(event) {
    if (!this.#hasFiles(event)) return
    event.preventDefault()
    event.dataTransfer.dropEffect = "copy"
  }

  drop(event) {
    if (!this.#hasFiles(event)) return
    event.preventDefault()
    event.stopPropagation()
    this.dispatch("drop", { detail: { files: event.dataTransfer.files } })
  }

  #hasFiles(event) {
    return event.dataTransfer?.types?.includes("Files")
  }
}
