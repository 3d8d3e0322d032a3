//! Rich text to plain text (spec/01 §8.4), as Action Text converts it for the search index,
//! push notifications, webhook `plain` and JSON `plain_text`.
//!
//! Bottom-up over the parsed fragment: attachments become their plain-text form, `<br>` a
//! newline, `div` its text plus `\n`, `p`/`h1`/lists their text plus `\n\n`, list items get
//! bullets or numbers and indentation, blockquotes curly quotes, figcaptions brackets, script
//! and style nothing. Note (kept from Rails): an `ol` item's number is its position among ALL
//! its parent's child nodes, text and comments included.

use super::attachments::{self, Mention, TAG};
use super::dom::{Dom, Kind, NodeId, ROOT};

/// The plain text of a stored body; `resolve` maps a mention's sgid to the user (lenient).
pub fn plain_text(stored_body: &str, resolve: &dyn Fn(&str) -> Option<Mention>) -> String {
    let dom = Dom::parse(stored_body);
    of_dom(&dom, resolve)
}

/// The plain text of an already parsed fragment.
pub fn of_dom(dom: &Dom, resolve: &dyn Fn(&str) -> Option<Mention>) -> String {
    of_dom_in(dom, &Cx { resolve, nested: false })
}

/// How the conversion runs: the mention resolver, and whether this fragment is itself the
/// content of an inline HTML attachment (then attachments inside it are not expanded again —
/// as in Rails — which also bounds the recursion nested `content` attributes could cause).
struct Cx<'r> {
    resolve: &'r dyn Fn(&str) -> Option<Mention>,
    nested: bool,
}

/// The plain text of the `content` of an inline HTML attachment.
pub fn of_content(html: &str) -> String {
    let dom = Dom::parse(html);
    of_dom_in(&dom, &Cx { resolve: &|_| None, nested: true })
}

fn of_dom_in(dom: &Dom, cx: &Cx) -> String {
    let mut s = children(dom, ROOT, cx);
    trim_newlines(&mut s);
    s
}

fn trim_newlines(s: &mut String) {
    while s.ends_with('\n') {
        s.pop();
        if s.ends_with('\r') {
            s.pop();
        }
    }
}

fn children(dom: &Dom, id: NodeId, cx: &Cx) -> String {
    let mut out = String::new();
    for (index, c) in dom.children(id).enumerate() {
        if matches!(dom.name(c), Some("script" | "style")) {
            continue;
        }
        out.push_str(&node(dom, c, index, cx));
    }
    out
}

fn block(dom: &Dom, id: NodeId, cx: &Cx) -> String {
    let mut s = children(dom, id, cx);
    trim_newlines(&mut s);
    s.push_str("\n\n");
    s
}

/// Names of the list elements (`ul`/`ol`) above `id`, innermost first.
fn list_ancestors<'d>(dom: &'d Dom, id: NodeId) -> impl Iterator<Item = &'d str> + 'd {
    let mut cur = id;
    std::iter::from_fn(move || {
        while cur != ROOT {
            cur = dom.nodes.get(cur).map_or(ROOT, |n| n.parent);
            if let Some(n @ ("ul" | "ol")) = dom.name(cur) {
                return Some(n);
            }
        }
        None
    })
}

fn node(dom: &Dom, id: NodeId, index: usize, cx: &Cx) -> String {
    let name = match &dom.nodes[id].kind {
        Kind::Text(t) => {
            let mut s = t.to_string();
            trim_newlines(&mut s);
            return s;
        }
        Kind::Element { name, .. } => &**name,
        Kind::Comment(_) | Kind::Root => return String::new(),
    };
    match name {
        TAG => {
            // Inside inline content Rails sees bare elements without children: no text.
            if cx.nested {
                return String::new();
            }
            let a = attachments::resolve(dom, id, cx.resolve);
            let mut s = attachments::plain_text(&a).into_owned();
            trim_newlines(&mut s);
            s
        }
        "br" => "\n".to_string(),
        "div" => {
            let mut s = children(dom, id, cx);
            trim_newlines(&mut s);
            s.push('\n');
            s
        }
        "p" | "h1" => block(dom, id, cx),
        "ul" | "ol" => {
            let text = block(dom, id, cx);
            if list_ancestors(dom, id).next().is_some() {
                format!("\n{text}")
            } else {
                text
            }
        }
        "li" => {
            let bullet = match list_ancestors(dom, id).next() {
                Some("ol") => format!("{}.", index + 1),
                _ => "\u{2022}".to_string(),
            };
            let depth = list_ancestors(dom, id).count();
            let mut text = children(dom, id, cx);
            trim_newlines(&mut text);
            format!("{}{} {}\n", "  ".repeat(depth.saturating_sub(1)), bullet, text)
        }
        "blockquote" => {
            let mut text = block(dom, id, cx);
            if text.trim().is_empty() {
                return "\u{201c}\u{201d}".to_string();
            }
            if let Some((last, c)) = text.char_indices().rev().find(|(_, c)| !c.is_ascii_whitespace()) {
                text.insert(last + c.len_utf8(), '\u{201d}');
            }
            if let Some((first, _)) = text.char_indices().find(|(_, c)| !c.is_ascii_whitespace()) {
                text.insert(first, '\u{201c}');
            }
            text
        }
        "figcaption" => {
            let mut s = children(dom, id, cx);
            trim_newlines(&mut s);
            format!("[{s}]")
        }
        _ => children(dom, id, cx),
    }
}
