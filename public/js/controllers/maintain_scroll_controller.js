// maintain_scroll_controller.js (messages list): streams marked maintain_scroll (edits, boosts)
// change a message in place without moving the view (spec/08 §3.4).
import { Controller } from "@hotwired/stimulus"
import { queueScrollChange, keepingScrollPosition } from "lib/scroll"

export default class extends Controller {
  beforeStreamRender(event) {
    const stream = event.target
    if (!stream.hasAttribute("maintain_scroll")) return
    const target = document.getElementById(stream.getAttribute("target"))
    if (!target || !this.element.contains(target)) return
    const render = event.detail.render
    event.detail.render = element => queueScrollChange(async () => {
      const viewBottom = this.element.getBoundingClientRect().bottom
      const aboveBottom = target.getBoundingClientRect().top < viewBottom
      let rendered
      keepingScrollPosition(this.element, () => { rendered = render(element) }, { fromBottom: aboveBottom })
      await rendered
    })
  }
}
