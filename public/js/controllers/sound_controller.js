// sound_controller.js (a /play message): synthesizes its sound (lib/synth.js) when 🔊 is clicked,
// or when the message arrives live (`messages:play`, spec/08 §3.13); a live arrival stays silent
// until the page has had a user gesture, as browsers' autoplay rules require.
import { Controller } from "@hotwired/stimulus"
import { mayAutoplay, playSound } from "lib/synth"

export default class extends Controller {
  static values = { name: String }

  play(event) {
    if (event?.type === "messages:play" && !mayAutoplay()) return
    playSound(this.nameValue)
  }
}
