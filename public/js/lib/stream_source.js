// stream_source.js: the <turbo-cable-stream-source> element (spec/06 §8.1). It subscribes to an
// Action Cable channel with its signed stream name and hands every received string to Turbo,
// which renders the <turbo-stream> elements in it. Marks itself [connected] while confirmed.
import { connectStreamSource, disconnectStreamSource } from "@hotwired/turbo"
import { subscribeTo } from "lib/cable"
import { nextFrame } from "lib/helpers"

class TurboCableStreamSourceElement extends HTMLElement {
  static observedAttributes = ["channel", "signed-stream-name"]

  connectedCallback() {
    connectStreamSource(this)
    // Turbo moves permanent elements (the sidebar) by detaching and re-attaching them: keep
    // the subscription we still hold instead of churning it.
    if (this.subscription) return
    this.subscription = subscribeTo(this.params, {
      received: data => this.dispatchEvent(new MessageEvent("message", { data })),
      connected: () => this.setAttribute("connected", ""),
      disconnected: () => this.removeAttribute("connected")
    })
  }

  async disconnectedCallback() {
    disconnectStreamSource(this)
    await nextFrame()
    if (!this.isConnected) this.unsubscribe()
  }

  attributeChangedCallback(name, oldValue, newValue) {
    if (this.subscription && oldValue !== newValue) {
      this.unsubscribe()
      this.connectedCallback()
    }
  }

  unsubscribe() {
    this.removeAttribute("connected")
    this.subscription?.unsubscribe()
    this.subscription = null
  }

  // channel, signed_stream_name, then every data-* attribute in snake_case.
  get params() {
    const params = { channel: this.getAttribute("channel"), signed_stream_name: this.getAttribute("signed-stream-name") }
    for (const [key, value] of Object.entries(this.dataset)) {
      params[key.replace(/([A-Z])/g, "_$1").toLowerCase()] = value
    }
    return params
  }
}

if (!customElements.get("turbo-cable-stream-source")) {
  customElements.define("turbo-cable-stream-source", TurboCableStreamSourceElement)
}
