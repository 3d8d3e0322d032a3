//! Rich text: message bodies as Action Text stores them, made safe to show.
//!
//! Bodies are stored unsanitized (spec/01 §8.1) and cleaned on every render. Everything here is
//! a pure function over `&str`; nothing touches the database: callers pass a resolver that maps
//! a mention's sgid to the user (`sgid::unverified_user_id` + a users lookup).
//!
//! Pieces: `tokenizer` (HTML tokens, hostile input), `entities` (character references), `dom`
//! (a small fragment tree), `sanitizer` (allowlists, URL checks, re-serialization),
//! `attachments` (`<action-text-attachment>`: resolve, render, plain text, canonical save
//! form), `plain_text` (spec/01 §8.4), `trix` (the editor's form), `filters` (Campfire's presentation filters, auto-linking,
//! emoji-only), `sounds` (`/play`), `sgid` (lenient user ids), `json` (Trix/sgid payloads).
//!
//! Public API (all pure, no I/O, no global state; safe to call from any thread):
//! - `sanitize(html: &str) -> Safe` — Action Text's output sanitizer for any HTML.
//! - `render_body(stored_body: &str, resolve: &dyn Fn(&str) -> Option<Mention>) -> Safe` — a
//!   message's "text" presentation (spec/07 §5.3): filters, allowlist, attachments rendered,
//!   bare URLs linked, wrapped in `div.trix-content`. Cache it per message; it is
//!   viewer-independent.
//! - `plain_text(stored_body: &str, resolve: &dyn Fn(&str) -> Option<Mention>) -> String` —
//!   spec/01 §8.4, for FTS, pushes, webhooks, JSON. (Message plain text = this, or the
//!   attachment's filename when empty.)
//! - `canonicalize_for_save(submitted: &str) -> String` — what to store in
//!   `action_text_rich_texts.body` (spec/01 §8.2); not sanitized.
//! - `to_trix_html(stored_body: &str, resolve: ...) -> String` — the body as the edit form's
//!   Trix editor loads it (attachments as `figure[data-trix-attachment]`).
//! - `mentions(stored_body: &str) -> Vec<String>` — attachment sgids, first-seen order, no
//!   duplicates; the caller verifies each (crypto, purpose `attachable`), keeps `User`s that are
//!   room members.
//! - `is_blank(stored_body: &str) -> bool` — nothing would show once rendered: no text, no
//!   attachment; such a message is refused (422), never stored.
//! - `is_emoji_only(plain_text: &str) -> bool` — the `message--emoji` class.
//! - `play_sound(plain_text: &str) -> Option<&'static Sound>` — `/play <name>`; `sounds::SOUNDS`
//!   lists all 56.
//! - `sgid::unverified_user_id(sgid: &str) -> Option<i64>` — the lenient sgid reading a
//!   `resolve` callback should use (spec/01 §8.3): `|sgid| unverified_user_id(sgid).and_then(
//!   |id| users::find(id)).map(|u| Mention { id, name, bio, avatar_url })`.
//! - `Mention { id: i64, name: String, bio: String, avatar_url: String }`.

pub mod attachments;
pub mod dom;
pub mod entities;
pub mod filters;
pub mod json;
pub mod plain_text;
pub mod sanitizer;
pub mod sgid;
pub mod sounds;
pub mod tokenizer;
pub mod trix;

pub use attachments::{canonicalize_for_save, mentions, Mention};
pub use filters::is_emoji_only;
pub use plain_text::plain_text;
pub use sounds::{play_sound, Sound};
pub use trix::to_trix_html;

/// HTML that is safe to write into a page as is. Only this module can make one, so a template
/// writing a `Safe` raw can only write sanitizer output or markup generated here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Safe(String);

impl Safe {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Sanitizes arbitrary HTML with Action Text's allowlist: Rails safe-list tags plus
/// `action-text-attachment`, `figure`, `figcaption`; unknown elements unwrapped, script-like
/// ones dropped with their content; safe attributes only; dangerous URLs removed.
pub fn sanitize(html: &str) -> Safe {
    let mut out = String::with_capacity(html.len());
    sanitizer::sanitize_into(html, &sanitizer::ACTION_TEXT, &mut out);
    Safe(out)
}

/// Whether a stored body shows nothing: rendered as a message is (so after sanitizing: a tag
/// left open to the end, `<p><br></p>`, a dropped `<script>` all count as nothing), it holds no
/// attachment and no text but whitespace. Rails stores such a body as an empty
/// message (its browser controller checks nothing, its bot controller only a blank raw body);
/// we refuse what renders empty.
pub fn is_blank(stored_body: &str) -> bool {
    is_blank_render(&render_body(stored_body, &|_| None))
}

/// `is_blank` of a body already rendered (`render_body`, with any resolver: a mention renders
/// as an attachment whether its user is found or not).
pub fn is_blank_render(rendered: &Safe) -> bool {
    !shows_bare_text(rendered.as_str()) && is_blank_parsed(rendered)
}

/// `is_blank_render` the long way: no attachment, and plain text that trims to nothing.
fn is_blank_parsed(rendered: &Safe) -> bool {
    let dom = dom::Dom::parse(rendered.as_str());
    // Campfire's message policy drops a bare `img`: images come as attachments.
    let attached = dom.elements().into_iter().any(|id| dom.name(id) == Some(attachments::TAG));
    !attached && plain_text::of_dom(&dom, &|_| None).trim().is_empty()
}

/// Whether a render is bare text inside its wrapper — no element at all, as most chat lines
/// are — with a visible ASCII character outside any character reference: then its plain text
/// is not blank, decided without parsing the render again. Renders escape every `<` and `&`
/// of text, so a `<` starts an element and a `&` a reference. Anything else says false and
/// leaves the answer to the parse.
fn shows_bare_text(html: &str) -> bool {
    let Some(inner) = html.strip_prefix("<div class=\"trix-content\">").and_then(|s| s.strip_suffix("</div>")) else {
        return false;
    };
    if inner.contains('<') {
        return false;
    }
    let mut in_reference = false;
    inner.bytes().any(|b| match b {
        b'&' => {
            in_reference = true;
            false
        }
        b';' if in_reference => {
            in_reference = false;
            false
        }
        _ => !in_reference && b.is_ascii_graphic(),
    })
}

/// Renders a stored message body for the "text" presentation (spec/07 §5.3): the solo-link and
/// Twitter-avatar filters, Campfire's tag/attribute allowlist (other elements dropped with
/// their content), attachments rendered inside their `<action-text-attachment>` (mentions via
/// `resolve`, link previews, missing ones as `☒`), bare URLs and e-mail addresses linked with
/// `target="_blank"`, all inside `<div class="trix-content">`.
pub fn render_body(stored_body: &str, resolve: &dyn Fn(&str) -> Option<Mention>) -> Safe {
    let mut dom = dom::Dom::parse(stored_body);
    filters::remove_solo_unfurled_link_text(&mut dom, resolve);
    filters::style_unfurled_twitter_avatars(&mut dom);
    let mut out = String::with_capacity(stored_body.len() + 48);
    out.push_str("<div class=\"trix-content\">");
    let mut hooks = filters::MessageHooks { resolve };
    sanitizer::write_children(&dom, dom::ROOT, &sanitizer::MESSAGE, &mut hooks, false, &mut out);
    out.push_str("</div>");
    Safe(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bare_text_shortcut_never_disagrees_with_the_parse() {
        let bodies = ["fanout bmk1z", " x ", "&nbsp;", " &nbsp; &#32; ", "a &amp; b", "&lt;", ";", "\u{3000}", "tab\there", "<p>hi</p>", "", "\n\n"];
        let mut taken = 0;
        for body in bodies {
            let r = render_body(&canonicalize_for_save(body), &|_| None);
            if shows_bare_text(r.as_str()) {
                taken += 1;
                assert!(!is_blank_parsed(&r), "{body:?} renders {:?}", r.as_str());
            }
            assert_eq!(is_blank_render(&r), is_blank_parsed(&r), "{body:?}");
        }
        assert_eq!(taken, 5, "the shortcut takes the plain lines");
    }

    #[test]
    fn blank_is_what_renders_empty() {
        let tag_soup = "<a href=\"".repeat(50_000);
        for blank in ["", " \n\t", "<p><br></p>", "<div> &nbsp; </div>", "<p></p><p> </p>", &tag_soup, "<script>alert(1)</script>", "<style>p{}</style>", "<!-- note -->", "<b><i> </i></b>", "<img src=\"https://example.com/a.png\">"] {
            assert!(is_blank(&canonicalize_for_save(blank)), "{:.40?}", blank);
        }
        for shown in [
            "x",
            "<p>hello</p>",
            "<div>&lt;</div>",
            "<action-text-attachment sgid=\"x\" content-type=\"application/vnd.campfire.mention\"></action-text-attachment>",
            "<figure data-trix-attachment='{\"contentType\":\"image/png\",\"url\":\"https://example.com/a.png\"}'></figure>",
            "😄",
        ] {
            assert!(!is_blank(&canonicalize_for_save(shown)), "{shown}");
        }
        // A post decides on its own render, whose mentions are found: the same verdicts.
        let found = |_: &str| Some(Mention { id: 7, name: "Kevin".into(), bio: String::new(), avatar_url: "/a".into() });
        for body in ["", "<p><br></p>", "x", "<action-text-attachment sgid=\"x\" content-type=\"application/vnd.campfire.mention\"></action-text-attachment>", "<img src=\"https://example.com/a.png\">"] {
            let body = canonicalize_for_save(body);
            assert_eq!(is_blank_render(&render_body(&body, &found)), is_blank(&body), "{body}");
        }
    }
}
