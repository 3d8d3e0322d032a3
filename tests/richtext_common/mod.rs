//! Shared helpers for the richtext tests: a hostile and a friendly mention resolver, and the
//! html5ever oracle that checks what a browser would build from our output.

#![allow(dead_code)]

use campfire::richtext::Mention;
use html5ever::tendril::TendrilSink;
use html5ever::{local_name, namespace_url, ns, parse_fragment, ParseOpts, QualName};
use markup5ever_rcdom::{Handle, NodeData, RcDom};

/// An sgid-like string for user `id` in the Rails 7.1 format, with a fake signature.
pub fn sgid_for(id: i64) -> String {
    let json = format!(r#"{{"_rails":{{"data":"gid://campfire/User/{id}","pur":"attachable"}}}}"#);
    format!("{}--invalid", b64(json.as_bytes()))
}

/// Base64 with the standard alphabet and padding, as Rails writes sgid payloads.
pub fn b64(b: &[u8]) -> String {
    use campfire::crypto::base64::{encode, Alphabet};
    let mut out = Vec::new();
    encode(Alphabet::Standard, true, b, &mut out);
    String::from_utf8(out).unwrap()
}

/// Resolves users 1 (David) and 2 (Jason) from lenient sgids, like the app's resolver.
pub fn users(sgid: &str) -> Option<Mention> {
    match campfire::richtext::sgid::unverified_user_id(sgid)? {
        1 => Some(Mention { id: 1, name: "David".into(), bio: "Founder".into(), avatar_url: "/users/tok1/avatar?v=1".into() }),
        2 => Some(Mention { id: 2, name: "Jason".into(), bio: String::new(), avatar_url: "/users/tok2/avatar?v=2".into() }),
        _ => None,
    }
}

/// Resolves every sgid to a user whose every field is an attack.
pub fn hostile(_sgid: &str) -> Option<Mention> {
    Some(Mention {
        id: 9,
        name: "<img src=x onerror=alert(1)>\"'".into(),
        bio: "\" onclick=\"alert(2)".into(),
        avatar_url: "javascript:alert(3)".into(),
    })
}

/// Elements a rendered message may contain.
pub fn element_allowed(n: &str) -> bool {
    matches!(
        n,
        "a" | "abbr" | "acronym" | "address" | "b" | "big" | "blockquote" | "br" | "cite" | "code"
            | "dd" | "del" | "dfn" | "div" | "dl" | "dt" | "em" | "h1" | "h2" | "h3" | "h4" | "h5"
            | "h6" | "hr" | "i" | "ins" | "kbd" | "li" | "ol" | "p" | "pre" | "samp" | "small"
            | "span" | "strong" | "sub" | "sup" | "time" | "tt" | "ul" | "var" | "mark"
            | "action-text-attachment" | "figure" | "figcaption" | "img"
            | "actiontext-opengraph-embed"
    )
}

/// Attributes a rendered message may contain.
pub fn attribute_allowed(n: &str) -> bool {
    matches!(
        n,
        "abbr" | "alt" | "cite" | "class" | "datetime" | "height" | "href" | "lang" | "name" | "src"
            | "title" | "width" | "xml:lang" | "sgid" | "content-type" | "url" | "filename"
            | "filesize" | "previewable" | "presentation" | "caption" | "content" | "language"
            | "target" | "rel" | "data-user-id" | "data-turbo-frame" | "aria-hidden"
    )
}

/// A URL attribute value a browser could run or render as a document.
pub fn dangerous_url(v: &str) -> bool {
    let n: String = v.chars().filter(|c| !(c.is_whitespace() || (*c as u32) < 0x20 || *c == '\u{7f}')).collect::<String>().to_ascii_lowercase();
    n.starts_with("javascript:")
        || n.starts_with("vbscript:")
        || n.starts_with("livescript:")
        || (n.starts_with("data:") && !(n.starts_with("data:image/png") || n.starts_with("data:image/gif") || n.starts_with("data:image/jpeg") || n.starts_with("data:image/webp")))
}

/// Parses `html` the way a browser parses `div.innerHTML = html` and returns every problem
/// found: non-HTML namespaces, elements or attributes outside the allowlist, event handlers,
/// dangerous URLs, comments.
pub fn browser_view_problems(html: &str) -> Vec<String> {
    let dom = parse_in_div(html);
    let mut problems = Vec::new();
    walk(&dom.document, &mut problems);
    problems
}

/// The tree a browser builds for `div.innerHTML = html`.
fn parse_in_div(html: &str) -> RcDom {
    parse_fragment(RcDom::default(), ParseOpts::default(), QualName::new(None, ns!(html), local_name!("div")), vec![]).one(html)
}

fn walk(node: &Handle, problems: &mut Vec<String>) {
    match &node.data {
        NodeData::Element { name, attrs, .. } => {
            let local = name.local.to_string();
            if name.ns != ns!(html) {
                problems.push(format!("foreign element {local}"));
            }
            if local != "html" && !element_allowed(&local) {
                problems.push(format!("element {local}"));
            }
            for a in attrs.borrow().iter() {
                let an = a.name.local.to_string();
                if an.starts_with("on") || !attribute_allowed(&an) {
                    problems.push(format!("attribute {an} on {local}"));
                }
                if matches!(an.as_str(), "href" | "src" | "url" | "cite") && dangerous_url(&a.value) {
                    problems.push(format!("url {an}={:?}", &*a.value));
                }
            }
        }
        NodeData::Comment { .. } => problems.push("comment".into()),
        _ => {}
    }
    for c in node.children.borrow().iter() {
        walk(c, problems);
    }
}

/// What html5ever builds from `html` (as `div.innerHTML`), serialized again, normalised for
/// the escaping choices that do not change the tree (`&quot;`/`&lt;`/`&gt;`, NBSP).
pub fn browser_reserialized(html: &str) -> String {
    let dom = parse_in_div(html);
    let root = dom.document.children.borrow()[0].clone();
    let mut out = Vec::new();
    html5ever::serialize(&mut out, &markup5ever_rcdom::SerializableHandle::from(root), Default::default())
        .expect("serialize to a Vec");
    normalise(&String::from_utf8(out).expect("utf-8"))
}

fn normalise(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&gt;", ">").replace("&lt;", "<").replace('\u{a0}', "&nbsp;")
}

/// Our output normalised like `browser_reserialized`, minus the newline we add after `<pre>`
/// for the parser to eat (html5ever's serializer does not add it back).
pub fn normalise_ours(s: &str) -> String {
    normalise(s).replace("<pre>\n", "<pre>")
}
