// messages_controller.js (#message-area): the room's message list (spec/08 §3). Formats each
// message as it appears, scrolls to the bottom (or to a permalink's message), pages through
// history, keeps new stream messages in order and in view, offers "jump to newest", opens the
// editor of my last message on Up, and renders pending messages for the composer.
import { Controller } from "@hotwired/stimulus"
import { MessageFormatter } from "lib/message_formatter"
import { ClientMessage } from "lib/client_message"
import { Paginator } from "lib/paginator"
import { queueScrollChange, isNearBottom, scrollToBottom, keepingElementInPlace } from "lib/scroll"
import { Current } from "lib/current"
import { nextTick, parseFragment } from "lib/helpers"
import { highlightCode } from "lib/highlight"

const MAX_MESSAGES = 300
const TRIM_SLACK = 20

export default class extends Controller {
  static targets = ["messages", "template", "latest", "message", "body"]
  static classes = ["firstOfDay", "formatted", "me", "mentioned", "threaded"]
  static values = { pageUrl: String }

  initialize() {
    this.formatter = new MessageFormatter({
      firstOfDay: this.firstOfDayClass, formatted: this.formattedClass, me: this.meClass,
      mentioned: this.mentionedClass, threaded: this.threadedClass
    })
  }

  connect() {
    this.clientMessage = new ClientMessage(this.templateTarget.innerHTML)
    this.paginator = new Paginator(this.messagesTarget, this.pageUrlValue, {
      upToDateChanged: upToDate => { if (upToDate) this.latestTarget.hidden = true },
      formatted: element => this.formatter.format(element)
    })
    this.#scrollInitially()
    this.paginator.start()
    this.#keepBottomEdgeOnResize()
  }

  disconnect() {
    this.paginator.stop()
    this.resizes?.disconnect()
    this.messagesTarget.removeEventListener("scroll", this.noteBottomEdge)
  }

  messageTargetConnected(message) {
    this.formatter.format(message)
    highlightCode(message)
  }

  // Wraps renders of streams that append to the list: keep order, follow the bottom if the
  // reader was there, play a new sound, trim old messages.
  beforeStreamRender(event) {
    const stream = event.target
    if (stream.getAttribute("target") !== this.messagesTarget.id || stream.getAttribute("action") !== "append") return
    if (!this.paginator.upToDate) {
      this.latestTarget.hidden = false
      return
    }
    const render = event.detail.render
    event.detail.render = element => queueScrollChange(async () => {
      const container = this.messagesTarget
      const wasNearBottom = isNearBottom(container)
      await render(element)
      await nextTick()
      const last = container.lastElementChild
      if (last) {
        this.#keepInOrder(last)
        last.querySelector(".sound")?.dispatchEvent(new CustomEvent("messages:play"))
      }
      if (last) keepingElementInPlace(container, last, () => this.#trimOldest())
      if (wasNearBottom) scrollToBottom(container)
      else this.latestTarget.hidden = false
    })
  }

  // The list shrinks when the composer grows (file chips, the rich-text toolbar, a phone's
  // keyboard); the browser keeps the top in place, which would slide the newest messages out of
  // sight under it. Keep what sits at the list's bottom edge there instead.
  #keepBottomEdgeOnResize() {
    const list = this.messagesTarget
    const belowView = () => list.scrollHeight - list.scrollTop - list.clientHeight
    this.belowView = belowView()
    this.noteBottomEdge = () => { this.belowView = belowView() }
    list.addEventListener("scroll", this.noteBottomEdge, { passive: true })
    this.resizes = new ResizeObserver(() => {
      list.scrollTop = list.scrollHeight - list.clientHeight - this.belowView
    })
    this.resizes.observe(list)
  }

  async returnToLatest() {
    this.latestTarget.hidden = true
    if (this.paginator.upToDate) {
      queueScrollChange(() => scrollToBottom(this.messagesTarget))
    } else {
      await this.paginator.resetToLast()
    }
  }

  // Up arrow with an empty composer: edit my most recent message.
  editMyLastMessage(event) {
    const editor = document.querySelector("#composer trix-editor")
    const inOtherField = event.target.closest("input, textarea, trix-editor") && event.target !== editor
    if (inOtherField || !this.paginator.upToDate || editor?.editor?.getDocument().toString().trim()) return
    const mine = this.messageTargets.filter(m => m.dataset.messageId && m.dataset.userId == Current.user?.id)
    const last = mine.at(-1)
    if (!last) return
    event.preventDefault()
    const cmid = last.id.replace(/^message_/, "")
    const roomPath = last.querySelector(".message__permalink")?.getAttribute("href")?.split("/@")[0]
    const frame = document.getElementById(`edit_message_${cmid}`)
    if (frame && roomPath) frame.src = `${roomPath}/messages/${last.dataset.messageId}/edit`
  }

  // --- called by the composer ---

  async prepareForNewMessage() {
    if (!this.paginator.upToDate) await this.paginator.resetToLast()
  }

  insertPendingMessage(clientMessageId, content) {
    return this.#insertPending(this.clientMessage.render(clientMessageId, content))
  }

  insertPendingUpload(clientMessageId, file) {
    return this.#insertPending(this.clientMessage.renderUpload(clientMessageId, file))
  }

  updatePendingUpload(clientMessageId, percentage) {
    this.clientMessage.update(clientMessageId, percentage)
  }

  failPendingMessage(clientMessageId, reason) {
    this.clientMessage.failed(clientMessageId, reason)
  }

  #insertPending(html) {
    return queueScrollChange(() => {
      this.messagesTarget.append(parseFragment(html))
      scrollToBottom(this.messagesTarget)
    })
  }

  #scrollInitially() {
    const id = location.pathname.includes("@") ? location.pathname.split("@").pop() : null
    const target = id && this.messagesTarget.querySelector(`[data-message-id="${CSS.escape(id)}"]`)
    if (target) {
      target.classList.add("search-highlight")
      target.scrollIntoView({ block: "center", behavior: "instant" })
      this.paginator.setUpToDate(false)
    } else {
      scrollToBottom(this.messagesTarget)
    }
  }

  // A live message can arrive after a later one (clock order is the server's): move it up
  // before the first message with a larger sort value. Pending messages have none: they stop it.
  #keepInOrder(message) {
    const value = Number(message.dataset.sortValue)
    if (!value) return
    let before = null
    for (let sibling = message.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
      const siblingValue = Number(sibling.dataset.sortValue)
      if (!siblingValue) break
      if (siblingValue > value) before = sibling
      else break
    }
    if (before) before.before(message)
  }

  #trimOldest() {
    const list = this.messagesTarget
    if (list.children.length > MAX_MESSAGES + TRIM_SLACK) {
      while (list.children.length > MAX_MESSAGES) list.firstElementChild.remove()
    }
  }
}
