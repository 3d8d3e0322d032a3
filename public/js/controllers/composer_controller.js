// composer_controller.js (form#composer): sending messages (spec/08 §3.2, §3.3). Enter sends,
// Shift+Enter breaks the line (with the toolbar open, Enter breaks and Ctrl/Cmd+Enter sends);
// the message shows at once as a pending copy, then the form is submitted through Turbo and
// the server's copy replaces it by id. Files (picked, pasted, dropped) go first, one upload
// each, with a progress bar. The fields are disabled while the connection is down.
import { Controller } from "@hotwired/stimulus"
import { newClientMessageId } from "lib/client_message"
import { isTouchDevice, nextFrame, csrfToken, escapeHTML } from "lib/helpers"
import { unfurlPaste } from "lib/unfurl"

export default class extends Controller {
  static targets = ["clientid", "fields", "fileList", "text"]
  static classes = ["toolbar"]
  static values = { roomId: Number, maxUpload: Number }
  static outlets = ["messages"]

  initialize() {
    this.files = []
    this.unfurl = event => unfurlPaste(this.textTarget, event.paste)
  }

  connect() {
    this.textTarget.addEventListener("trix-paste", this.unfurl)
    if (!isTouchDevice()) this.textTarget.focus()
  }

  disconnect() {
    this.textTarget.removeEventListener("trix-paste", this.unfurl)
  }

  submitByKeyboard(event) {
    if (event.key !== "Enter" || event.isComposing || event.defaultPrevented || isTouchDevice()) return
    const toolbarOpen = this.element.classList.contains(this.toolbarClass)
    if (event.metaKey || event.ctrlKey || (!event.shiftKey && !toolbarOpen)) {
      event.preventDefault()
      this.submit(event)
    }
  }

  async submit(event) {
    event?.preventDefault()
    if (this.fieldsTarget.disabled) return
    await this.#sendFiles()
    const editor = this.textTarget.editor
    const text = editor.getDocument().toString()
    if (text.trim() === "" && !this.#hasAttachments()) return

    const clientMessageId = newClientMessageId()
    this.lastClientMessageId = clientMessageId
    if (this.hasMessagesOutlet) {
      await this.messagesOutlet.prepareForNewMessage()
      await this.messagesOutlet.insertPendingMessage(clientMessageId, { html: this.#editorHTML(), text })
    }
    await nextFrame()
    this.clientidTarget.value = clientMessageId
    this.element.requestSubmit()
    editor.loadHTML("")
    this.element.classList.remove(this.toolbarClass)
    this.textTarget.focus()
  }

  submitEnd(event) {
    if (!event.detail.success && this.lastClientMessageId && this.hasMessagesOutlet) {
      this.messagesOutlet.failPendingMessage(this.lastClientMessageId, refusal(event.detail.fetchResponse?.statusCode))
    }
  }

  toggleToolbar() {
    this.element.classList.toggle(this.toolbarClass)
    this.textTarget.focus()
  }

  // Files are sent as their own messages, never as in-editor attachments.
  preventAttachment(event) {
    event.preventDefault()
  }

  filePicked(event) {
    this.#addFiles(event.target.files)
    event.target.value = ""
  }

  dropFiles({ detail: { files } }) {
    this.#addFiles(files)
  }

  pasteFiles(event) {
    const files = event.clipboardData?.files
    if (files?.length) {
      event.preventDefault()
      this.#addFiles(files)
    }
  }

  removeFile(event) {
    this.files.splice(Number(event.currentTarget.dataset.index), 1)
    this.#renderFiles()
  }

  // refresh-room:online / refresh-room:offline (spec/08 §3.11).
  online() {
    this.#connection("up")
  }

  offline() {
    this.#connection("down")
  }

  // Replaces the editor's content (reply quoting) as one undo step.
  replaceContent(html) {
    const editor = this.textTarget.editor
    editor.recordUndoEntry("Format reply")
    editor.setSelectedRange([0, editor.getDocument().getLength()])
    editor.deleteInDirection("forward")
    editor.insertHTML(html)
    editor.setSelectedRange(editor.getDocument().getLength() - 1)
    this.textTarget.focus()
  }

  // A disabled fieldset blocks typing and sending at once, and takes the focus out of the
  // editor; when the connection is back the editor gets it again unless the person moved on.
  #connection(state) {
    const down = state === "down"
    this.fieldsTarget.disabled = down
    if (!down && document.activeElement === document.body && !isTouchDevice()) this.textTarget.focus()
  }

  #hasAttachments() {
    return this.textTarget.editor.getDocument().getAttachments().length > 0
  }

  // Trix's serialized HTML, as it will be posted (the hidden input it keeps in sync).
  #editorHTML() {
    return document.getElementById(this.textTarget.getAttribute("input"))?.value || ""
  }

  #addFiles(fileList) {
    this.files.push(...Array.from(fileList))
    this.files.sort((a, b) => a.name.localeCompare(b.name))
    this.#renderFiles()
  }

  #renderFiles() {
    this.fileListTarget.replaceChildren(...this.files.map((file, index) => {
      const chip = document.createElement("button")
      chip.type = "button"
      chip.className = "composer__file"
      chip.dataset.index = index
      chip.dataset.action = "composer#removeFile"
      chip.title = `Remove ${file.name}`
      const preview = file.type.startsWith("image/")
        ? `<img src="${URL.createObjectURL(file)}" alt="">`
        : `<span class="icon icon--file"></span>`
      chip.innerHTML = `${preview}<span>${escapeHTML(file.name)}</span><span class="icon icon--x"></span>`
      return chip
    }))
  }

  async #sendFiles() {
    const files = this.files
    this.files = []
    this.#renderFiles()
    for (const file of files) await this.#upload(file)
  }

  async #upload(file) {
    const clientMessageId = newClientMessageId()
    // Awaited: a refusal right away must find the pending copy in the page.
    await this.messagesOutlet?.insertPendingUpload(clientMessageId, file)
    const tooLarge = `too large: the limit is ${formatBytes(this.maxUploadValue)}`
    // Refused here rather than after sending a file the server would only turn away.
    if (this.maxUploadValue && file.size > this.maxUploadValue) return this.messagesOutlet?.failPendingMessage(clientMessageId, tooLarge)
    const data = new FormData()
    data.append("message[attachment]", file)
    data.append("message[client_message_id]", clientMessageId)
    // The server has no video decoder: the poster frame comes from this browser.
    const poster = file.type.startsWith("video/") ? await capturePoster(file) : null
    if (poster) data.append("message[poster]", poster, "poster.jpg")
    return new Promise(resolve => {
      const request = new XMLHttpRequest()
      request.open("POST", this.element.action)
      request.setRequestHeader("X-CSRF-Token", csrfToken() || "")
      request.upload.addEventListener("progress", event => {
        if (event.lengthComputable) this.messagesOutlet?.updatePendingUpload(clientMessageId, Math.round(event.loaded / event.total * 100))
      })
      // A refused upload (413 too large, 422, 503 busy) or a lost connection leaves the
      // pending copy marked as failed rather than spinning forever.
      const fail = (reason) => this.messagesOutlet?.failPendingMessage(clientMessageId, reason)
      request.addEventListener("load", () => {
        if (request.status < 400) window.Turbo.renderStreamMessage(request.responseText)
        else fail(request.status === 413 ? tooLarge : refusal(request.status))
        resolve()
      })
      request.addEventListener("error", () => { fail("the connection was lost"); resolve() })
      request.send(data)
    })
  }
}

// What "Not sent" adds for a refused post: a full disk (507) and a busy server (503) will
// pass, so say so; other statuses are named; none (a lost connection) says that.
function refusal(status) {
  if (!status) return "the connection was lost"
  if (status === 507) return "the server's disk is full, try again later"
  if (status === 503) return "the server is busy, try again"
  return `the server answered ${status}`
}

// The first frame of a video file, drawn on a canvas at the video's size fitted to 1200×800
// (the thumbnail limit), as a JPEG blob; null when the browser cannot decode the file or
// takes longer than a few seconds, and the video is then sent without a poster.
function capturePoster(file) {
  return new Promise(resolve => {
    const url = URL.createObjectURL(file)
    const video = document.createElement("video")
    let timer
    const done = blob => {
      clearTimeout(timer)
      video.removeAttribute("src")
      video.load()
      URL.revokeObjectURL(url)
      resolve(blob)
    }
    timer = setTimeout(() => done(null), 5000)
    video.muted = true
    video.playsInline = true
    video.preload = "auto"
    video.addEventListener("error", () => done(null), { once: true })
    video.addEventListener("loadeddata", () => {
      const { videoWidth: w, videoHeight: h } = video
      if (!w || !h) return done(null)
      const scale = Math.min(1, 1200 / w, 800 / h)
      const canvas = document.createElement("canvas")
      canvas.width = Math.max(1, Math.round(w * scale))
      canvas.height = Math.max(1, Math.round(h * scale))
      try {
        canvas.getContext("2d").drawImage(video, 0, 0, canvas.width, canvas.height)
        canvas.toBlob(blob => done(blob), "image/jpeg", 0.8)
      } catch {
        done(null)
      }
    }, { once: true })
    video.src = url
  })
}

// 1073741824 → "1 GiB", 8388608 → "8 MiB", 500000 → "488 KiB".
function formatBytes(n) {
  const units = ["bytes", "KiB", "MiB", "GiB"]
  let i = 0
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++ }
  return `${Math.round(n * 10) / 10} ${units[i]}`
}
