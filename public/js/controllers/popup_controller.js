// popup_controller.js (a <details> menu, spec/08 §7): a menu that keeps out of the way. It shuts
// on Esc, on a click anywhere else on the page and once one of its items is chosen. Every time
// it opens it looks at where it landed: with too little window left below it, it opens upward
// (the orientation class), and it is told how wide it may grow (--max-width) in the direction
// it grows.
import { Controller } from "@hotwired/stimulus"

// Less window than this under an opened menu and it opens upward instead (spec/08 §12).
const MIN_ROOM_BELOW = 90
// Kept free between a menu and the window's edge.
const EDGE_MARGIN = 8

// Measures the menu as it opens downward, flips it when the window ends too soon below it, and
// caps its width by the room on the side it grows toward (a menu anchored at the button's end
// grows toward the start).
function place(details, menu, upward) {
  details.classList.remove(upward)
  const button = details.getBoundingClientRect()
  const box = menu.getBoundingClientRect()
  if (innerHeight - box.bottom < MIN_ROOM_BELOW) details.classList.add(upward)
  const growsTowardStart = box.left < button.left
  const room = growsTowardStart ? button.right : innerWidth - button.left
  menu.style.setProperty("--max-width", `${Math.floor(room - EDGE_MARGIN)}px`)
}

export default class extends Controller {
  static classes = ["orientationTop"]
  static targets = ["menu"]

  // The details element's toggle event: it fires for opening and for closing.
  toggle() {
    if (this.element.open) place(this.element, this.menuTarget, this.orientationTopClass)
  }

  closeOnClickOutside(event) {
    const outside = !this.element.contains(event.target)
    if (outside && this.element.open) this.close()
  }

  close() {
    this.element.removeAttribute("open")
  }
}
