// autocomplete.js: the suggestion list shared by @mentions in Trix editors and the people
// picker of a new ping (spec/08 §3.12, §6.1). Defines <suggestion-select> (a listbox) and
// <suggestion-option>; fetches users from /autocompletable/users and ranks them locally.

let optionCount = 0

class SuggestionOption extends HTMLElement {
  connectedCallback() {
    this.id ||= `suggestion-option-${++optionCount}`
    this.setAttribute("role", "option")
  }

  get value() { return this.getAttribute("value") }

  flash() {
    this.classList.add("flash")
    return new Promise(resolve => setTimeout(resolve, 200))
  }
}

class SuggestionSelect extends HTMLElement {
  connectedCallback() {
    this.setAttribute("role", "listbox")
    this.setAttribute("aria-live", "assertive")
  }

  get options() { return [...this.querySelectorAll("suggestion-option")] }
  get selected() { return this.querySelector("suggestion-option[selected]") }
  get value() { return this.selected?.value }

  select(option) {
    this.selected?.removeAttribute("selected")
    if (!option) return
    option.setAttribute("selected", "")
    option.scrollIntoView({ block: "nearest" })
    this.setAttribute("aria-activedescendant", option.id)
  }

  move(delta) {
    const options = this.options
    if (!options.length) return
    const index = options.indexOf(this.selected)
    this.select(options[(index + delta + options.length) % options.length])
  }
}

if (!customElements.get("suggestion-option")) customElements.define("suggestion-option", SuggestionOption)
if (!customElements.get("suggestion-select")) customElements.define("suggestion-select", SuggestionSelect)

// The floating list: one per editor or picker, appended to body.
export class Suggestions {
  // onCommit(user) is called with the chosen user object from the JSON.
  constructor(id, onCommit) {
    this.onCommit = onCommit
    this.list = document.getElementById(id) || Object.assign(document.createElement("suggestion-select"), { id })
    this.list.hidden = true
    document.body.append(this.list)
    this.list.addEventListener("mousedown", event => event.preventDefault()) // keep editor focus
    this.list.addEventListener("click", event => {
      const option = event.target.closest("suggestion-option")
      if (option) { this.list.select(option); setTimeout(() => this.commit(), 100) }
    })
    this.hideOnMove = () => this.hide()
    window.addEventListener("resize", this.hideOnMove)
    document.addEventListener("scroll", this.hideOnMove, true)
  }

  get visible() { return !this.list.hidden }

  // users: [{name, value, avatar_url, sgid}]; rect: where to show it (the cursor or the input).
  show(users, rect) {
    this.users = users
    if (!users.length) return this.hide()
    this.list.replaceChildren(...users.map(user => {
      const option = document.createElement("suggestion-option")
      option.setAttribute("value", user.value)
      option.innerHTML = `<img src="${encodeURI(user.avatar_url)}" alt=""><span>${user.name}</span>`
      return option
    }))
    this.list.select(this.list.options[0])
    this.list.hidden = false
    const below = window.innerHeight - rect.bottom
    const height = this.list.offsetHeight
    const threeOptions = (this.list.options[0]?.offsetHeight || 32) * 3
    const top = below < threeOptions && rect.top > height ? rect.top - height - 4 : rect.bottom + 4
    this.list.style.top = `${Math.max(4, top)}px`
    this.list.style.left = `${Math.min(rect.left, window.innerWidth - this.list.offsetWidth - 4)}px`
  }

  hide() {
    this.list.hidden = true
  }

  // Handles a keydown; returns true when it was for the list.
  handleKey(event, { spaceCommits = true } = {}) {
    if (!this.visible) return false
    switch (event.key) {
      case "ArrowDown": this.list.move(1); break
      case "ArrowUp": this.list.move(-1); break
      case "Escape": this.hide(); break
      case "Enter": case "Tab": this.commit(); break
      case " ": if (!spaceCommits) return false; this.commit(); break
      default: return false
    }
    event.preventDefault()
    event.stopImmediatePropagation()
    return true
  }

  async commit() {
    const option = this.list.selected
    const user = option && this.users.find(u => String(u.value) === option.value)
    if (!user) return
    await option.flash()
    this.hide()
    this.onCommit(user)
  }

  destroy() {
    window.removeEventListener("resize", this.hideOnMove)
    document.removeEventListener("scroll", this.hideOnMove, true)
    this.list.remove()
  }
}

export async function fetchUsers(url, query) {
  const target = new URL(url, location.origin)
  if (query) target.searchParams.set("query", query)
  const response = await fetch(target, { credentials: "same-origin" })
  return response.ok ? await response.json() : []
}

// Names starting with the query first, then names with a word starting with it; accents ignored.
export function rankUsers(users, query) {
  const fold = text => text.normalize("NFD").replace(/\p{Diacritic}/gu, "").toLowerCase()
  const q = fold(query)
  if (!q) return users
  const starts = [], words = []
  for (const user of users) {
    const name = fold(decodeEntities(user.name))
    if (name.startsWith(q)) starts.push(user)
    else if (name.split(/[\s\-_.]+/).some(word => word.startsWith(q))) words.push(user)
  }
  return starts.concat(words)
}

function decodeEntities(html) {
  const textarea = document.createElement("textarea")
  textarea.innerHTML = html
  return textarea.value
}
