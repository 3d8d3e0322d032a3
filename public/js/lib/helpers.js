// helpers.js: small timing, DOM and device helpers shared by the controllers.

// Runs fn at most once per `wait` ms; the first call runs at once (leading edge).
export function throttle(fn, wait) {
  let last = 0
  return (...args) => {
    const now = Date.now()
    if (now - last >= wait) { last = now; fn(...args) }
  }
}

// Runs fn `wait` ms after the last call.
export function debounce(fn, wait) {
  let timer
  return (...args) => {
    clearTimeout(timer)
    timer = setTimeout(() => fn(...args), wait)
  }
}

export const nextFrame = () => new Promise(resolve => requestAnimationFrame(() => resolve()))
export const nextTick = () => new Promise(resolve => setTimeout(resolve, 0))
export const delay = ms => new Promise(resolve => setTimeout(resolve, ms))

export function isTouchDevice() {
  return matchMedia("(hover: none) and (pointer: coarse)").matches
}

// True while Turbo shows a cached preview of a page: live subscriptions wait for the real page.
export function isTurboPreview() {
  return document.documentElement.hasAttribute("data-turbo-preview")
}

export function escapeHTML(text) {
  const div = document.createElement("div")
  div.textContent = text
  return div.innerHTML
}

export function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text
}

// Parses an HTML fragment into a DocumentFragment (templates keep scripts inert).
export function parseFragment(html) {
  const template = document.createElement("template")
  template.innerHTML = html
  return template.content
}

// Emoji-only text, the same rule as the server (spec/07 §5.1): no spaces, at least one emoji.
const EMOJI_ONLY = /^(?:\p{Emoji_Presentation}|\p{Extended_Pictographic}|\uFE0F|\u200D)+$/u
export function isEmojiOnly(text) {
  return EMOJI_ONLY.test(text)
}

// The CSRF token Turbo and our fetches send as X-CSRF-Token (spec/08 §9).
export function csrfToken() {
  const param = document.querySelector("meta[name=csrf-param]")?.content
  const cookie = param && document.cookie.split("; ").find(c => c.startsWith(param + "="))
  return cookie ? decodeURIComponent(cookie.split("=")[1]) : document.querySelector("meta[name=csrf-token]")?.content
}

// Reloads a <turbo-frame> once the load it may have in flight is over. Reloading in the middle
// of a load cancels that fetch, and Turbo leaves the cancelled load's promise rejected with
// nobody listening ("signal is aborted without reason", seen when a room was opened right after
// creating one). A load that fails was the frame's own business; the reload follows anyway.
export async function reloadFrame(frame) {
  if (typeof frame.reload !== "function") return
  await frame.loaded?.catch(() => {})
  await frame.reload().catch(error => {
    if (error?.name !== "AbortError") throw error // a visit that replaces the page may cancel it
  })
}
