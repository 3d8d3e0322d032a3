// scroll.js: every scroll-affecting change of the message list goes through one promise chain,
// so stream renders and page inserts never interleave (spec/08 §4.4).

const NEAR_BOTTOM = 100
let chain = Promise.resolve()

// Runs fn (may be async) after everything queued before it.
export function queueScrollChange(fn) {
  chain = chain.then(fn, fn).catch(error => console.error(error))
  return chain
}

export function isNearBottom(container) {
  return container.scrollHeight - container.scrollTop - container.clientHeight <= NEAR_BOTTOM
}

export function scrollToBottom(container) {
  container.scrollTop = container.scrollHeight
}

// Changes the DOM while keeping what the reader sees in place. A short overflow:hidden stops
// inertial scrolling, which would otherwise fight the correction.
export function keepingScrollPosition(container, change, { fromBottom = true } = {}) {
  const before = fromBottom ? container.scrollHeight - container.scrollTop : container.scrollTop
  container.style.overflow = "hidden"
  change()
  container.scrollTop = fromBottom ? container.scrollHeight - before : before
  container.style.overflow = ""
}

// Changes the DOM (inserting and trimming at either end) while `anchor`, an element that stays,
// keeps its place on screen.
export function keepingElementInPlace(container, anchor, change) {
  const before = anchor.getBoundingClientRect().top
  container.style.overflow = "hidden"
  change()
  container.scrollTop += anchor.getBoundingClientRect().top - before
  container.style.overflow = ""
}
