// unfurl.js: link previews in the composer (spec/08 §3.17). When a single URL is pasted into an
// editor that permits OpenGraph attachments, ask the server (/unfurl_link) for the page's title,
// description and image, and insert a preview attachment while the URL is still there.
import { csrfToken, escapeHTML, nextFrame, truncate } from "lib/helpers"

export const OPENGRAPH_TYPE = "application/vnd.actiontext.opengraph-embed"
const SINGLE_URL = /^(?:[a-z][a-z0-9+.-]*:\/\/|www\.)\S+$/i

let inFlight

// Handles a trix-paste event from `editorElement`.
export async function unfurlPaste(editorElement, paste) {
  if (!(editorElement.dataset.permittedAttachmentTypes || "").includes(OPENGRAPH_TYPE)) return
  const url = pastedText(paste).trim()
  if (!SINGLE_URL.test(url)) return

  await nextFrame()
  inFlight?.abort()
  const controller = inFlight = new AbortController()
  let preview
  try {
    const response = await fetch("/unfurl_link", {
      method: "POST",
      signal: controller.signal,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() || "", "X-Requested-With": "XMLHttpRequest" },
      body: JSON.stringify({ url })
    })
    if (response.status !== 200) return
    preview = await response.json()
  } catch {
    return
  }
  const editor = editorElement.editor
  if (!preview?.title || !editor.getDocument().toString().includes(url)) return

  const selection = editor.getSelectedRange()
  editor.recordUndoEntry("Insert Opengraph preview for Pasted URL")
  editor.insertAttachment(new window.Trix.Attachment({
    contentType: OPENGRAPH_TYPE,
    href: preview.url,
    url: preview.image || "",
    filename: preview.title,
    caption: preview.description || "",
    content: previewHTML(preview)
  }))
  editor.setSelectedRange(selection)
}

function pastedText(paste) {
  if (paste?.string) return paste.string
  if (paste?.html) {
    const link = new DOMParser().parseFromString(paste.html, "text/html").querySelector("a[href]")
    return link ? link.getAttribute("href") : ""
  }
  return ""
}

function previewHTML({ title, description, image }) {
  const twitter = image?.startsWith("https://pbs.twimg.com/profile_images") ? " cf-twitter-avatar" : ""
  const img = image ? `<div class="og-embed__image"><img class="image center" src="${escapeHTML(image)}" alt=""></div>` : ""
  return `<actiontext-opengraph-embed class="${twitter.trim()}"><div class="og-embed"><div class="og-embed__content">` +
    `<div class="og-embed__title">${escapeHTML(truncate(title, 560))}</div>` +
    `<div class="og-embed__description">${escapeHTML(truncate(description || "", 560))}</div></div>${img}</div></actiontext-opengraph-embed>`
}
