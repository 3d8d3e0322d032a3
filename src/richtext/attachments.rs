//! `<action-text-attachment>` elements: what they resolve to, how they render, their plain
//! text, and the canonical form a body is saved in (spec/01 §8.2–8.3, spec/07 §5.3).
//!
//! Resolution order (Campfire's override of Action Text): an Open Graph embed by content type;
//! else an `sgid` that the caller's resolver maps to a user (lenient, see `sgid.rs`); else an
//! inline HTML content attachment (`content-type` containing `html` + `content`); else a remote
//! image (`content-type` image/* + `url`); else a missing attachable, rendered as `☒`.

use std::borrow::Cow;

use super::dom::{self, Dom, Kind, NodeId, ROOT};
use super::json::Json;
use super::sanitizer::{self, url_allowed};

pub const TAG: &str = "action-text-attachment";
pub const MENTION_CONTENT_TYPE: &str = "application/vnd.campfire.mention";
pub const OPENGRAPH_CONTENT_TYPE: &str = "application/vnd.actiontext.opengraph-embed";

/// A mentioned user as the renderer needs it. `avatar_url` is the fresh avatar path
/// (`/users/<token>/avatar?v=...`); `bio` may be empty.
#[derive(Debug, Clone, PartialEq)]
pub struct Mention {
    pub id: i64,
    pub name: String,
    pub bio: String,
    pub avatar_url: String,
}

/// What one attachment element stands for.
pub enum Attachable<'d> {
    Embed { href: &'d str, url: Option<&'d str>, title: Option<&'d str>, caption: Option<&'d str> },
    User(Mention),
    Content(&'d str),
    RemoteImage { url: &'d str, width: Option<&'d str>, height: Option<&'d str>, caption: Option<&'d str> },
    Missing { caption: Option<&'d str> },
}

/// Resolves the attachment element `id`.
pub fn resolve<'d>(dom: &'d Dom, id: NodeId, resolve: &dyn Fn(&str) -> Option<Mention>) -> Attachable<'d> {
    let ct = dom.attr(id, "content-type").unwrap_or("");
    if ct.contains(OPENGRAPH_CONTENT_TYPE) {
        return Attachable::Embed {
            href: dom.attr(id, "href").unwrap_or(""),
            url: dom.attr(id, "url"),
            title: dom.attr(id, "filename"),
            caption: dom.attr(id, "caption"),
        };
    }
    if let Some(user) = dom.attr(id, "sgid").and_then(resolve) {
        return Attachable::User(user);
    }
    if ct.contains("html") {
        if let Some(content) = dom.attr(id, "content").filter(|c| !c.trim().is_empty()) {
            return Attachable::Content(content);
        }
    }
    let image = ct == "image" || ct.starts_with("image/") && ct.len() > 6;
    if let (true, Some(url)) = (image, dom.attr(id, "url").filter(|u| !u.trim().is_empty())) {
        return Attachable::RemoteImage {
            url,
            width: dom.attr(id, "width"),
            height: dom.attr(id, "height"),
            caption: dom.attr(id, "caption"),
        };
    }
    Attachable::Missing { caption: dom.attr(id, "caption") }
}

/// The plain-text form (spec/01 §8.4): `@name`, "" for embeds, `[caption or Image]` for remote
/// images, the text of inline content, the caption (or "") when missing.
pub fn plain_text(a: &Attachable) -> Cow<'static, str> {
    match a {
        Attachable::User(m) => Cow::Owned(format!("@{}", m.name)),
        Attachable::Embed { .. } => Cow::Borrowed(""),
        Attachable::RemoteImage { caption, .. } => {
            Cow::Owned(format!("[{}]", caption.filter(|c| !c.trim().is_empty()).unwrap_or("Image")))
        }
        Attachable::Content(html) => Cow::Owned(super::plain_text::of_content(html)),
        Attachable::Missing { caption } => Cow::Owned(caption.unwrap_or("").to_string()),
    }
}

/// Writes the inner HTML of the attachment element for `a`. `sgid` is the element's own sgid.
pub fn render(a: &Attachable, sgid: Option<&str>, out: &mut String) {
    match a {
        Attachable::User(m) => render_mention(m, sgid.unwrap_or(""), out),
        Attachable::Embed { href, url, title, caption } => render_embed(href, *url, *title, *caption, out),
        Attachable::Content(html) => {
            out.push_str("<figure class=\"attachment attachment--content\">");
            sanitizer::sanitize_into(html, &sanitizer::ACTION_TEXT, out);
            out.push_str("</figure>");
        }
        Attachable::RemoteImage { url, width, height, caption } => {
            out.push_str("<figure class=\"attachment attachment--preview\"><img");
            if url_allowed(url, true) {
                push_attr(out, "src", url);
            }
            for (n, v) in [("width", width), ("height", height)] {
                if let Some(v) = v.filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())) {
                    push_attr(out, n, v);
                }
            }
            out.push('>');
            if let Some(c) = caption.filter(|c| !c.is_empty()) {
                out.push_str("<figcaption class=\"attachment__caption\">");
                dom::escape_text(out, c);
                out.push_str("</figcaption>");
            }
            out.push_str("</figure>");
        }
        Attachable::Missing { .. } => out.push('\u{2612}'),
    }
}

fn push_attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    dom::escape_attr(out, value);
    out.push('"');
}

/// `div.mention` with the avatar widget (spec/07 conventions) and the name. `data-user-id` is
/// the viewer-independent marker the formatter uses for `message--mentioned` (spec/08 §4.1).
fn render_mention(m: &Mention, sgid: &str, out: &mut String) {
    out.push_str("<div class=\"mention\"");
    push_attr(out, "sgid", sgid);
    push_attr(out, "data-user-id", &m.id.to_string());
    out.push_str("><a href=\"/users/");
    out.push_str(&m.id.to_string());
    out.push('"');
    let title = if m.bio.is_empty() { Cow::Borrowed(&*m.name) } else { Cow::Owned(format!("{} \u{2013} {}", m.name, m.bio)) };
    push_attr(out, "title", &title);
    out.push_str(" class=\"btn avatar\" data-turbo-frame=\"_top\"><img aria-hidden=\"true\" width=\"48\" height=\"48\"");
    if url_allowed(&m.avatar_url, true) {
        push_attr(out, "src", &m.avatar_url);
    }
    out.push_str("></a> ");
    dom::escape_text(out, &m.name);
    out.push_str("</div>");
}

/// Ruby's `truncate(length, omission: "…")`: at most `max` characters including the omission.
fn truncate(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() <= max {
        return Cow::Borrowed(s);
    }
    let mut t: String = s.chars().take(max - 1).collect();
    t.push('…');
    Cow::Owned(t)
}

fn render_embed(href: &str, url: Option<&str>, title: Option<&str>, caption: Option<&str>, out: &mut String) {
    out.push_str("<figure class=\"attachment attachment--content attachment--og\"><actiontext-opengraph-embed><div class=\"og-embed gap\"><div class=\"og-embed__content\"><div class=\"og-embed__title\"><a");
    if url_allowed(href, false) {
        push_attr(out, "href", href);
    }
    out.push_str(" rel=\"noreferrer\" target=\"_blank\">");
    dom::escape_text(out, &truncate(title.unwrap_or(href), 280));
    out.push_str("</a></div><div class=\"og-embed__description\">");
    dom::escape_text(out, &truncate(caption.unwrap_or(""), 560));
    out.push_str("</div></div>");
    if let Some(url) = url {
        out.push_str("<div class=\"og-embed__image\"><img");
        if url_allowed(url, true) {
            push_attr(out, "src", url);
        }
        out.push_str(" class=\"image center\" alt=\"\"></div>");
    }
    out.push_str("</div></actiontext-opengraph-embed></figure>");
}

/// The attachment attributes Action Text keeps, in the order it writes them.
const ATTRIBUTES: [&str; 12] = [
    "sgid", "content-type", "url", "href", "filename", "filesize", "width", "height", "previewable",
    "presentation", "caption", "content",
];

/// `contentType` → `content-type` (Rails' underscore + dasherize).
fn dasherize(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 4);
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else if c == '_' {
            out.push('-');
        } else {
            out.push(c);
        }
    }
    out
}

/// The value Action Text writes for a Trix attribute, None to leave it out.
fn attribute_value(key: &str, v: &Json) -> Option<String> {
    let text = match v {
        Json::Null => None,
        Json::Bool(b) => Some(b.to_string()),
        Json::Num(n) | Json::Str(n) => Some(n.clone()),
        Json::Arr(_) | Json::Obj(_) => None,
    };
    match key {
        "previewable" => Some((text.as_deref() == Some("true")).to_string()),
        "width" | "height" => text.filter(|t| {
            let d = t.strip_prefix('-').unwrap_or(t);
            !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
        }),
        _ => Some(text.unwrap_or_default()),
    }
}

/// The attributes of the attachment a Trix `figure[data-trix-attachment]` stands for.
fn from_trix_figure(dom: &Dom, id: NodeId) -> Vec<(&'static str, String)> {
    let mut merged: Vec<(String, Json)> = Vec::new();
    for attr in ["data-trix-attachment", "data-trix-attributes"] {
        if let Some(Json::Obj(m)) = dom.attr(id, attr).and_then(Json::parse) {
            for (k, v) in m {
                match merged.iter_mut().find(|(mk, _)| *mk == k) {
                    Some(slot) => slot.1 = v,
                    None => merged.push((k, v)),
                }
            }
        }
    }
    let mut out = Vec::new();
    for name in ATTRIBUTES {
        if let Some((k, v)) = merged.iter().find(|(k, _)| dasherize(k) == name) {
            if let Some(value) = attribute_value(&dasherize(k), v) {
                out.push((name, value));
            }
        }
    }
    out
}

/// The canonical stored form of a submitted body (spec/01 §8.2): whitespace trimmed, Trix
/// attachment figures turned into `<action-text-attachment>` elements with Action Text's
/// attributes in Action Text's order (a figure with none is removed), every attachment
/// emptied, the fragment re-serialized. The result is NOT sanitized; sanitize on output.
pub fn canonicalize_for_save(html: &str) -> String {
    let mut dom = Dom::parse(html.trim());
    for id in dom.elements() {
        if dom.name(id) == Some("figure") && dom.attr(id, "data-trix-attachment").is_some() {
            let attrs = from_trix_figure(&dom, id);
            if attrs.is_empty() {
                dom.detach(id);
                continue;
            }
            dom.nodes[id].kind = Kind::Element {
                name: Cow::Borrowed(TAG),
                attrs: attrs
                    .into_iter()
                    .map(|(n, v)| super::tokenizer::Attr { name: Cow::Borrowed(n), value: Cow::Owned(v) })
                    .collect(),
            };
        }
        if dom.name(id) == Some(TAG) {
            dom.clear_children(id);
        }
    }
    let mut out = String::with_capacity(html.len());
    dom::serialize_children(&dom, ROOT, &mut out);
    out
}

/// The sgids of all attachments in a stored body, first occurrence order, without duplicates.
/// Mention detection verifies each one (signature, `User`, room membership) — not done here.
pub fn mentions(stored_body: &str) -> Vec<String> {
    let dom = Dom::parse(stored_body);
    let mut out: Vec<String> = Vec::new();
    for id in dom.find_all(TAG) {
        if let Some(sgid) = dom.attr(id, "sgid").filter(|s| !s.is_empty()) {
            if !out.iter().any(|s| s == sgid) {
                out.push(sgid.to_string());
            }
        }
    }
    out
}
