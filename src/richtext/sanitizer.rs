//! The allowlist sanitizer: a parsed fragment in, well-formed escaped HTML out.
//!
//! Nothing is passed through: every kept element and attribute is written again by us, text is
//! re-escaped, comments and doctypes are dropped. What is kept is decided by a `Policy`:
//!
//! - `ACTION_TEXT` is what Action Text applies to rendered rich text (`sanitize`): the Rails
//!   safe-list tags plus `action-text-attachment`, `figure` and `figcaption`; unknown elements
//!   are unwrapped (their text stays), and elements whose content is not text (script, style,
//!   svg, math, template, iframe, ...) go with their content.
//! - `MESSAGE` is Campfire's presentation filter for message bodies (`SanitizeTags` +
//!   `SanitizeAttributes`): a shorter tag list (no `img`), and any other element goes with its
//!   content.
//!
//! Attributes: the Rails safe list (`abbr alt cite class datetime height href lang name src
//! title width xml:lang`) plus Action Text's attachment attributes. Event handlers, `style`,
//! `id`, `data-*` and everything else are dropped. URL-valued attributes are decoded, stripped of
//! whitespace and control characters, lowercased, and dropped when they name a scheme outside
//! the allowed list (`javascript:`, `vbscript:`, `data:` except images in `src`, ...).

use super::dom::{self, Dom, Kind, NodeId, ROOT};

pub struct Policy {
    /// Element names that are kept.
    pub tag_allowed: fn(&str) -> bool,
    /// For a disallowed element: keep its children (true) or drop them with it (false).
    pub unwrap_disallowed: bool,
}

fn rails_safe_tag(n: &str) -> bool {
    matches!(
        n,
        "a" | "abbr" | "acronym" | "address" | "b" | "big" | "blockquote" | "br" | "cite" | "code"
            | "dd" | "del" | "dfn" | "div" | "dl" | "dt" | "em" | "h1" | "h2" | "h3" | "h4" | "h5"
            | "h6" | "hr" | "i" | "img" | "ins" | "kbd" | "li" | "mark" | "ol" | "p" | "pre"
            | "samp" | "small" | "span" | "strong" | "sub" | "sup" | "time" | "tt" | "ul" | "var"
    )
}

fn action_text_tag(n: &str) -> bool {
    rails_safe_tag(n) || matches!(n, "action-text-attachment" | "figure" | "figcaption")
}

fn message_tag(n: &str) -> bool {
    n != "img" && n != "mark" && action_text_tag(n)
}

/// Action Text's output sanitizer (Rails safe list + attachment elements, `img` allowed).
pub const ACTION_TEXT: Policy = Policy { tag_allowed: action_text_tag, unwrap_disallowed: true };
/// Campfire's message presentation filter (no `img`; other elements dropped whole).
pub const MESSAGE: Policy = Policy { tag_allowed: message_tag, unwrap_disallowed: false };

/// Elements never unwrapped: their content is code, foreign markup or a nested document.
fn drop_with_content(n: &str) -> bool {
    matches!(
        n,
        "script" | "style" | "template" | "noscript" | "textarea" | "title" | "iframe" | "object"
            | "embed" | "applet" | "svg" | "math" | "select" | "option" | "xmp" | "noembed"
            | "noframes" | "plaintext" | "head" | "frame" | "frameset" | "video" | "audio"
            | "canvas" | "base" | "meta" | "link"
    )
}

/// Attributes kept on allowed elements.
pub fn attr_allowed(n: &str) -> bool {
    matches!(
        n,
        "abbr" | "alt" | "cite" | "class" | "datetime" | "height" | "href" | "lang" | "name" | "src"
            | "title" | "width" | "xml:lang" | "sgid" | "content-type" | "url" | "filename"
            | "filesize" | "previewable" | "presentation" | "caption" | "content"
    )
}

fn attr_is_url(n: &str) -> bool {
    matches!(n, "href" | "src" | "cite" | "url" | "action" | "formaction" | "longdesc" | "xlink:href" | "poster" | "background")
}

const ALLOWED_SCHEMES: &[&str] = &[
    "http", "https", "mailto", "tel", "ftp", "ftps", "sftp", "ssh", "irc", "ircs", "webcal", "xmpp",
    "callto", "feed", "news", "nntp", "urn", "tag", "rsync", "rtsp", "ed2k", "gopher", "telnet",
    "aim", "afs", "sms",
];

/// Whether a (decoded) URL may be written into a link or image attribute. `image` allows
/// `data:image/{png,gif,jpeg,webp}`. A URL without a scheme (relative, `#x`, `?a:b`) is fine.
pub fn url_allowed(value: &str, image: bool) -> bool {
    // What a browser would see as the scheme: leading/embedded tabs, newlines and control
    // characters are ignored by URL parsers, so strip them all before looking.
    let mut scheme = String::new();
    let mut rest_start = None;
    for (i, c) in value.char_indices() {
        if (c as u32) <= 0x20 || c == '\u{7f}' || c.is_whitespace() {
            continue;
        }
        if c == ':' {
            rest_start = Some(i + 1);
            break;
        }
        if c == '/' || c == '?' || c == '#' {
            return true;
        }
        scheme.push(c.to_ascii_lowercase());
        if scheme.len() > 32 {
            return false;
        }
    }
    let Some(rest_start) = rest_start else { return true };
    let valid_scheme = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !valid_scheme {
        // Not a scheme in any browser's eyes ("a b:c", "ü:x"): a relative reference, unless it
        // still hides one of the dangerous words.
        return !(scheme.contains("script") || scheme.contains("data"));
    }
    if scheme == "data" {
        if !image {
            return false;
        }
        let rest: String = value
            .get(rest_start..)
            .unwrap_or("")
            .chars()
            .filter(|c| !((*c as u32) <= 0x20 || c.is_whitespace()))
            .take(16)
            .collect::<String>()
            .to_ascii_lowercase();
        return ["image/png", "image/gif", "image/jpeg", "image/webp"]
            .iter()
            .any(|t| rest.starts_with(t) && matches!(rest.as_bytes().get(t.len()), Some(b';' | b',')));
    }
    ALLOWED_SCHEMES.contains(&scheme.as_str())
}

/// Hooks for the message renderer; plain sanitizing uses none of them.
pub trait Hooks {
    /// Writes the inner HTML of an `action-text-attachment` (its parsed children are ignored).
    fn attachment(&mut self, dom: &Dom, id: NodeId, out: &mut String);
    /// Writes a text node that is not inside a link.
    fn text(&mut self, text: &str, out: &mut String) {
        dom::escape_text(out, text);
    }
}

struct NoHooks;
impl Hooks for NoHooks {
    fn attachment(&mut self, dom: &Dom, id: NodeId, out: &mut String) {
        write_children(dom, id, &ACTION_TEXT, &mut NoHooks, false, out);
    }
}

/// Sanitizes `html` with `policy` into `out`.
///
/// Unwrapping an element can leave markup that parses differently once it is gone
/// (`<p><button><div>` → `<p><div>` closes the `p`; `<h1><font><h1>` → `<h1><h1>`); when
/// anything was unwrapped, the result is parsed and written once more, so what we emit is what
/// a parser builds from it.
pub fn sanitize_into(html: &str, policy: &Policy, out: &mut String) {
    let dom = Dom::parse(html);
    let reshaped = policy.unwrap_disallowed
        && dom.nodes.iter().any(|n| match &n.kind {
            Kind::Element { name, .. } => !(policy.tag_allowed)(name) && !drop_with_content(name),
            _ => false,
        });
    if !reshaped {
        write_children(&dom, ROOT, policy, &mut NoHooks, false, out);
        return;
    }
    let mut first = String::with_capacity(html.len());
    write_children(&dom, ROOT, policy, &mut NoHooks, false, &mut first);
    let again = Dom::parse(&first);
    write_children(&again, ROOT, policy, &mut NoHooks, false, out);
}

/// Writes the sanitized children of `id`. `in_link` marks text inside `<a>`.
pub fn write_children(dom: &Dom, id: NodeId, policy: &Policy, hooks: &mut dyn Hooks, in_link: bool, out: &mut String) {
    for c in dom.children(id) {
        match &dom.nodes[c].kind {
            Kind::Text(t) => {
                if in_link {
                    dom::escape_text(out, t);
                } else {
                    hooks.text(t, out);
                }
            }
            Kind::Element { name, attrs } => {
                if !(policy.tag_allowed)(name) {
                    if policy.unwrap_disallowed && !drop_with_content(name) {
                        write_children(dom, c, policy, hooks, in_link, out);
                    }
                    continue;
                }
                out.push('<');
                out.push_str(name);
                for a in attrs {
                    // Trix marks code blocks with `language`; harmless, and kept for highlighting.
                    if !(attr_allowed(&a.name) || (a.name == "language" && name == "pre")) {
                        continue;
                    }
                    if attr_is_url(&a.name) && !url_allowed(&a.value, a.name == "src" && name == "img") {
                        continue;
                    }
                    out.push(' ');
                    out.push_str(&a.name);
                    out.push_str("=\"");
                    dom::escape_attr(out, &a.value);
                    out.push('"');
                }
                out.push('>');
                if dom::is_void(name) {
                    continue;
                }
                if name == "action-text-attachment" {
                    hooks.attachment(dom, c, out);
                } else {
                    let start = out.len();
                    write_children(dom, c, policy, hooks, in_link || name == "a", out);
                    // A parser eats one newline right after `<pre>`: write one more when the
                    // content we actually emitted starts with one.
                    if name == "pre" && out[start..].starts_with('\n') {
                        out.insert(start, '\n');
                    }
                }
                out.push_str("</");
                out.push_str(name);
                out.push('>');
            }
            Kind::Comment(_) | Kind::Root => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(html: &str, p: &Policy) -> String {
        let mut out = String::new();
        sanitize_into(html, p, &mut out);
        out
    }

    #[test]
    fn urls() {
        for bad in [
            "javascript:alert(1)", " JaVaScRiPt:x", "java\tscript:x", "java\nscript:x", "\u{1}javascript:x",
            "vbscript:x", "data:text/html,x", "livescript:x", "jar:x",
        ] {
            assert!(!url_allowed(bad, false), "{bad:?}");
        }
        for good in ["https://x.com/a?b=c:d", "/x", "#a", "?q=a:b", "mailto:a@b.c", "x", "//host/a:b", ""] {
            assert!(url_allowed(good, false), "{good:?}");
        }
        assert!(url_allowed("data:image/png;base64,AAAA", true));
        assert!(!url_allowed("data:image/png;base64,AAAA", false));
        assert!(!url_allowed("data:image/svg+xml,<svg>", true));
    }

    #[test]
    fn policies() {
        assert_eq!(s("Hello <img src=x>World", &MESSAGE), "Hello World");
        assert_eq!(s("a<font>b</font>c", &MESSAGE), "ac");
        assert_eq!(s("a<font>b</font>c", &ACTION_TEXT), "abc");
        assert_eq!(s("a<script>b</script>c<svg><g>d</g></svg>", &ACTION_TEXT), "ac");
        assert_eq!(s("<a href=\"javascript:alert(1)\" onclick=x>x</a>", &MESSAGE), "<a>x</a>");
        assert_eq!(s("<p style=\"x\" id=y class=\"c\">&lt;&amp;</p><!-- c -->", &ACTION_TEXT), "<p class=\"c\">&lt;&amp;</p>");
        assert_eq!(s("<pre>\n\nx</pre>", &MESSAGE), "<pre>\n\nx</pre>");
    }
}
