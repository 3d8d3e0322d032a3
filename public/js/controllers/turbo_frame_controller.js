// turbo_frame_controller.js (sidebar and involvement frames): small frame operations
// (spec/08 §7): drop permanence before a form inside replaces the sidebar, reload, or load the
// URL given as the action's url param.
import { Controller } from "@hotwired/stimulus"
import { nextTick, reloadFrame } from "lib/helpers"

export default class extends Controller {
  unpermanize() {
    this.element.removeAttribute("data-turbo-permanent")
  }

  reload() {
    reloadFrame(this.element)
  }

  async load({ params: { url } }) {
    await nextTick()
    if (url) this.element.src = url
  }
}
