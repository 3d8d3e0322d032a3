// reply_controller.js (each message): "Reply" quotes the message into the composer (spec/08
// §3.8): its body as a blockquote (mentions as plain text, link previews dropped), then a cite
// with the author and a link to the message. Also points links in the body at the right target.
import { Controller } from "@hotwired/stimulus"
import { escapeHTML } from "lib/helpers"

export default class extends Controller {
  static targets = ["author", "body", "link"]
  static outlets = ["composer"]

  bodyTargetConnected(body) {
    for (const link of body.querySelectorAll("a[href]")) {
      link.target = link.origin === location.origin ? "_top" : "_blank"
    }
  }

  reply() {
    if (!this.hasComposerOutlet) return
    const author = this.hasAuthorTarget ? this.authorTarget.textContent.trim() : ""
    const permalink = this.hasLinkTarget ? this.linkTarget.getAttribute("href") : "#"
    this.composerOutlet.replaceContent(
      `<blockquote>${this.#quotedBody()}</blockquote><cite>${escapeHTML(author)} <a href="${escapeHTML(permalink)}">#</a></cite><br>`)
  }

  #quotedBody() {
    const body = (this.bodyTarget.querySelector(".trix-content") || this.bodyTarget).cloneNode(true)
    for (const mention of body.querySelectorAll(".mention")) {
      mention.closest("action-text-attachment")?.replaceWith(`@${mention.textContent.trim()}`) || mention.replaceWith(`@${mention.textContent.trim()}`)
    }
    const embeds = [...body.querySelectorAll(".attachment--og, action-text-attachment[content-type='application/vnd.actiontext.opengraph-embed']")]
    const firstLink = embeds[0]?.querySelector("a[href]")?.href
    embeds.forEach(embed => embed.remove())
    if (!body.textContent.trim() && firstLink) return escapeHTML(firstLink)
    return body.innerHTML
  }
}
