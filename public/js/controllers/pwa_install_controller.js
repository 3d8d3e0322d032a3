// pwa_install_controller.js (install instructions): where the browser offers to install the
// app, keep its prompt and show an "Install now" button that replays it (spec/09 §7).
import { Controller } from "@hotwired/stimulus"

let deferredPrompt = null

export default class extends Controller {
  static classes = ["prompting"]

  initialize() {
    this.capture = this.capture.bind(this)
    this.installed = this.installed.bind(this)
  }

  connect() {
    if (!("serviceWorker" in navigator) || matchMedia("(display-mode: standalone)").matches) return
    window.addEventListener("beforeinstallprompt", this.capture)
    window.addEventListener("appinstalled", this.installed)
    if (deferredPrompt) this.element.classList.add(this.promptingClass)
  }

  disconnect() {
    window.removeEventListener("beforeinstallprompt", this.capture)
    window.removeEventListener("appinstalled", this.installed)
  }

  capture(event) {
    event.preventDefault()
    deferredPrompt = event
    this.element.classList.add(this.promptingClass)
  }

  async promptInstall() {
    if (!deferredPrompt) return
    deferredPrompt.prompt()
    await deferredPrompt.userChoice
    deferredPrompt = null
    this.element.classList.remove(this.promptingClass)
  }

  installed() {
    deferredPrompt = null
    this.element.classList.remove(this.promptingClass)
  }
}
