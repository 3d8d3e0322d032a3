// rich_autocomplete_controller.js (Trix editors): @mentions (spec/08 §3.12). While the editor
// has focus, the word at the cursor is watched; "@jo" lists matching room members at the
// cursor; choosing one replaces "@jo" with a mention attachment carrying the user's sgid.
import { Controller } from "@hotwired/stimulus"
import { Suggestions, fetchUsers, rankUsers } from "lib/autocomplete"
import { debounce } from "lib/helpers"

const MENTION_TYPE = "application/vnd.campfire.mention"
const WORD_BREAK = /[\s\uFFFC]/
const MENTION_WORD = /^@([^\s@]*?)([.,!?;:]*)$/

export default class extends Controller {
  static values = { url: String }

  initialize() {
    this.search = debounce(this.search.bind(this), 300)
    this.onKeydown = event => this.suggestions?.handleKey(event)
  }

  connect() {
    // Capture phase: the list must see Enter before the composer's send-on-Enter does.
    this.element.addEventListener("keydown", this.onKeydown, true)
    // The composer focuses its editor as the room opens, possibly before this controller was
    // there to hear trix-focus: an editor that already has the focus gets its list now.
    if (document.activeElement === this.element) this.focus()
  }

  disconnect() {
    this.element.removeEventListener("keydown", this.onKeydown, true)
    this.suggestions?.destroy()
    this.suggestions = null
  }

  focus() {
    // Composer and edit form editors share the id message_body: key the list by the form too.
    const key = this.element.closest("form")?.id || this.element.id
    this.suggestions ||= new Suggestions(`${key}_suggestions`, user => this.#insertMention(user))
  }

  blur() {
    setTimeout(() => this.suggestions?.hide(), 150)
  }

  async search() {
    const word = this.#wordAtCursor()
    const match = word && word.text.match(MENTION_WORD)
    if (!match) return this.suggestions?.hide()
    // Typing means the editor has the focus, whether or not its trix-focus was seen.
    this.focus()
    this.mention = { start: word.start, end: word.end, punctuation: match[2] }
    const users = rankUsers(await fetchUsers(this.urlValue, match[1]), match[1])
    const editor = this.element.editor
    const rect = editor.getClientRectAtPosition(word.start) || this.element.getBoundingClientRect()
    this.suggestions.show(users, rect)
  }

  #wordAtCursor() {
    const editor = this.element.editor
    const [position, end] = editor.getSelectedRange()
    if (position !== end) return null
    const text = editor.getDocument().toString()
    let start = position
    while (start > 0 && !WORD_BREAK.test(text[start - 1])) start--
    return { start, end: position, text: text.slice(start, position) }
  }

  #insertMention(user) {
    const editor = this.element.editor
    const { start, end, punctuation } = this.mention
    editor.setSelectedRange([start, end])
    editor.insertAttachment(new window.Trix.Attachment({
      sgid: user.sgid,
      contentType: MENTION_TYPE,
      content: `<span class="mention"><img src="${encodeURI(user.avatar_url)}" class="avatar" alt="">${user.name}</span>`
    }))
    editor.insertString(punctuation || " ")
  }
}
