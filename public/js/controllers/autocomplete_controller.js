// autocomplete_controller.js (the new-ping form): pick people by name (spec/08 §6.1). Each
// chosen person becomes a selected <option> of the hidden user_ids[] select and a pill with a
// remove button; Backspace in the empty input removes the last one.
import { Controller } from "@hotwired/stimulus"
import { Suggestions, fetchUsers, rankUsers } from "lib/autocomplete"
import { Current } from "lib/current"
import { debounce } from "lib/helpers"

export default class extends Controller {
  static targets = ["select", "input"]
  static values = { url: String }

  initialize() {
    this.search = debounce(this.search.bind(this), 300)
  }

  connect() {
    this.suggestions = new Suggestions("autocomplete_suggestions", user => this.#add(user))
    this.inputTarget.focus()
  }

  disconnect() {
    this.suggestions.destroy()
  }

  async search() {
    const query = this.inputTarget.value.trim()
    if (!query) return this.suggestions.hide()
    const chosen = new Set([...this.selectTarget.options].map(o => o.value))
    const users = rankUsers(await fetchUsers(this.urlValue, query), query)
      .filter(user => !chosen.has(String(user.value)) && user.value !== Current.user?.id)
    this.suggestions.show(users, this.inputTarget.getBoundingClientRect())
  }

  didPressKey(event) {
    if (this.suggestions.handleKey(event, { spaceCommits: false })) return
    if (event.key === "Backspace" && this.inputTarget.value === "") {
      const last = [...this.selectTarget.options].at(-1)
      if (last) this.#remove(last.value)
    }
  }

  remove(event) {
    this.#remove(event.currentTarget.dataset.value)
  }

  #add(user) {
    const option = new Option(new DOMParser().parseFromString(user.name, "text/html").body.textContent, user.value, true, true)
    option.dataset.avatarUrl = user.avatar_url
    this.selectTarget.append(option)
    this.inputTarget.before(this.#pill(option))
    this.inputTarget.value = ""
    this.inputTarget.focus()
  }

  #pill(option) {
    const template = document.getElementById(this.selectTarget.dataset.templateId)
    const pill = template.content.firstElementChild.cloneNode(true)
    pill.dataset.value = option.value
    pill.querySelector("[data-content=avatar]").src = option.dataset.avatarUrl
    pill.querySelector("[data-content=label]").textContent = option.text
    pill.querySelector("[data-content=screenReaderLabel]").textContent = option.text
    pill.querySelector("button").dataset.value = option.value
    return pill
  }

  #remove(value) {
    this.selectTarget.querySelector(`option[value="${CSS.escape(value)}"]`)?.remove()
    this.element.querySelector(`.autocomplete__pill[data-value="${CSS.escape(value)}"]`)?.remove()
    this.inputTarget.focus()
  }
}
