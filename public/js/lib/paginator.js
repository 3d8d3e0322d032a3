// paginator.js: scrolling back and forth through a room's history (spec/08 §3.5, §3.6). Watches
// the first and last children of the message list; when one scrolls into view it fetches the
// 40 messages before or after it from the paging endpoint and inserts them without moving what
// the reader sees. The list is kept to at most 300 messages (trimmed when over 320).
import { queueScrollChange, keepingElementInPlace, scrollToBottom } from "lib/scroll"
import { parseFragment } from "lib/helpers"

const MAX_MESSAGES = 300
const TRIM_SLACK = 20

export class Paginator {
  // container: the messages list; url: absolute paging URL; delegate: { upToDateChanged(bool),
  // formatted(element) } called as messages are inserted.
  constructor(container, url, delegate) {
    Object.assign(this, { container, url, delegate })
    this.upToDate = true // the newest message is in the list
    this.firstWasHidden = false // the first child has been out of view since the last prepend
    this.loading = false
  }

  start() {
    this.observer = new IntersectionObserver(entries => this.#intersected(entries), { root: this.container })
    this.mutations = new MutationObserver(() => this.#observeEdges())
    this.mutations.observe(this.container, { childList: true })
    this.#observeEdges()
  }

  stop() {
    this.observer?.disconnect()
    this.mutations?.disconnect()
  }

  setUpToDate(value) {
    if (this.upToDate !== value) {
      this.upToDate = value
      this.delegate.upToDateChanged(value)
    }
  }

  // Replaces the list with the latest page and scrolls to the bottom.
  async resetToLast() {
    const html = await this.#fetch(this.url)
    await queueScrollChange(() => {
      if (html) this.container.replaceChildren(parseFragment(html))
      this.setUpToDate(true)
      scrollToBottom(this.container)
    })
  }

  #observeEdges() {
    const first = this.container.firstElementChild
    const last = this.container.lastElementChild
    if (first === this.first && last === this.last) return
    this.observer.disconnect()
    if (first !== this.first) this.firstWasHidden = false
    this.first = first
    this.last = last
    if (first) this.observer.observe(first)
    if (last && last !== first) this.observer.observe(last)
  }

  #intersected(entries) {
    for (const entry of entries) {
      if (entry.target === this.first) {
        if (!entry.isIntersecting) this.firstWasHidden = true
        else if (this.firstWasHidden) this.#loadBefore(entry.target)
      }
      if (entry.target === this.last && entry.isIntersecting) {
        if (this.upToDate) this.delegate.upToDateChanged(true)
        else this.#loadAfter(entry.target)
      }
    }
  }

  async #loadBefore(first) {
    const id = first.dataset.messageId
    if (!id || this.loading) return
    this.loading = true
    try {
      const html = await this.#fetch(this.#pageUrl("before", id))
      if (!html) return
      await queueScrollChange(() => {
        keepingElementInPlace(this.container, first, () => {
          this.container.prepend(parseFragment(html))
          this.delegate.formatted(first)
          if (this.container.children.length > MAX_MESSAGES + TRIM_SLACK) {
            while (this.container.children.length > MAX_MESSAGES) this.container.lastElementChild.remove()
            this.setUpToDate(false)
          }
        })
      })
    } finally {
      this.loading = false
    }
  }

  async #loadAfter(last) {
    const id = last.dataset.messageId
    if (!id || this.loading) return
    this.loading = true
    try {
      const html = await this.#fetch(this.#pageUrl("after", id))
      await queueScrollChange(() => {
        if (!html) { this.setUpToDate(true); return }
        keepingElementInPlace(this.container, last, () => {
          this.container.append(parseFragment(html))
          if (this.container.children.length > MAX_MESSAGES + TRIM_SLACK) {
            while (this.container.children.length > MAX_MESSAGES) this.container.firstElementChild.remove()
          }
        })
      })
    } finally {
      this.loading = false
    }
  }

  #pageUrl(param, id) {
    const url = new URL(this.url)
    url.searchParams.set(param, id)
    return url
  }

  // The fragment's HTML, or null for 204 No Content.
  async #fetch(url) {
    const response = await fetch(url, {
      headers: { Accept: "text/html, application/xhtml+xml", "X-Requested-With": "XMLHttpRequest" },
      credentials: "same-origin"
    })
    if (response.status === 204 || !response.ok) return null
    return await response.text()
  }
}
