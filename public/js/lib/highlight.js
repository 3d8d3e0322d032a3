// highlight.js (ours): syntax colouring of code blocks in messages (spec/08 §3.14). Only `pre`
// elements holding nothing but text are coloured; the vendored highlight.js core and its twelve
// languages load on the first code block, not before.
import { nextTick } from "lib/helpers"

const LANGUAGES = ["bash", "css", "diff", "go", "java", "javascript", "json", "python", "ruby", "rust", "sql", "xml"]
let loading

function load() {
  loading ??= (async () => {
    const hljs = (await import("highlight.js")).default
    const grammars = await Promise.all(LANGUAGES.map(name => import(`highlight/${name}`)))
    grammars.forEach((grammar, index) => hljs.registerLanguage(LANGUAGES[index], grammar.default))
    window.hljs = hljs
    return hljs
  })()
  return loading
}

export async function highlightCode(element) {
  await nextTick()
  const blocks = [...element.querySelectorAll("pre")].filter(pre =>
    !pre.dataset.highlighted && [...pre.childNodes].every(node => node.nodeType === Node.TEXT_NODE))
  if (!blocks.length) return
  const hljs = await load()
  for (const pre of blocks) {
    const result = hljs.highlightAuto(pre.textContent, LANGUAGES)
    pre.innerHTML = result.value
    pre.classList.add("hljs")
    pre.dataset.highlighted = "yes"
  }
}
