//! A small HTML fragment tree built from the tokenizer, with the parts of the WHATWG tree
//! builder that decide nesting in rich text: void elements, `<p>` closed by blocks, `<li>`,
//! `<dd>`/`<dt>` and headings closing their open siblings, `<a>` not nesting, stray end tags
//! ignored, everything still open closed at the end.
//!
//! Nodes live in one Vec and link to each other by index (parent, first/last child, next
//! sibling), so building allocates little and borrowing the input stays possible. Nesting is
//! capped at `MAX_DEPTH`: deeper elements become siblings at that depth, which keeps every
//! recursive walk over the tree bounded.

use std::borrow::Cow;

use super::tokenizer::{Attr, Token, Tokenizer};

/// Deepest nesting kept; beyond it elements are flattened.
pub const MAX_DEPTH: usize = 128;

pub type NodeId = usize;
/// The fragment root; it has no element name.
pub const ROOT: NodeId = 0;
const NONE: usize = usize::MAX;

#[derive(Debug)]
pub enum Kind<'a> {
    Root,
    Element { name: Cow<'a, str>, attrs: Vec<Attr<'a>> },
    Text(Cow<'a, str>),
    Comment(&'a str),
}

#[derive(Debug)]
pub struct Node<'a> {
    pub kind: Kind<'a>,
    pub parent: NodeId,
    first: usize,
    last: usize,
    next: usize,
}

pub struct Dom<'a> {
    pub nodes: Vec<Node<'a>>,
}

pub fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area" | "base" | "br" | "col" | "embed" | "hr" | "img" | "input" | "keygen" | "link"
            | "meta" | "param" | "source" | "track" | "wbr"
    )
}

/// Start tags that close an open `<p>`.
fn closes_p(name: &str) -> bool {
    matches!(
        name,
        "address" | "article" | "aside" | "blockquote" | "center" | "details" | "dialog" | "dir"
            | "div" | "dl" | "fieldset" | "figcaption" | "figure" | "footer" | "form" | "h1" | "h2"
            | "h3" | "h4" | "h5" | "h6" | "header" | "hgroup" | "hr" | "main" | "menu" | "nav"
            | "ol" | "p" | "pre" | "section" | "summary" | "table" | "ul" | "li" | "dd" | "dt"
            | "listing" | "plaintext" | "xmp"
    )
}

fn is_heading(name: &str) -> bool {
    matches!(name, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// The HTML "special" elements (WHATWG): an implied `</li>`, `</dd>`, `</dt>` or a stray end
/// tag does not reach past them (except `address`, `div` and `p` for the former).
fn is_special(name: &str) -> bool {
    matches!(
        name,
        "address" | "applet" | "area" | "article" | "aside" | "base" | "basefont" | "bgsound"
            | "blockquote" | "body" | "br" | "button" | "caption" | "center" | "col" | "colgroup"
            | "dd" | "details" | "dir" | "div" | "dl" | "dt" | "embed" | "fieldset" | "figcaption"
            | "figure" | "footer" | "form" | "frame" | "frameset" | "h1" | "h2" | "h3" | "h4" | "h5"
            | "h6" | "head" | "header" | "hgroup" | "hr" | "html" | "iframe" | "img" | "input"
            | "keygen" | "li" | "link" | "listing" | "main" | "marquee" | "menu" | "meta" | "nav"
            | "noembed" | "noframes" | "noscript" | "object" | "ol" | "p" | "param" | "plaintext"
            | "pre" | "script" | "search" | "section" | "select" | "source" | "style" | "summary"
            | "table" | "tbody" | "td" | "template" | "textarea" | "tfoot" | "th" | "thead"
            | "title" | "tr" | "track" | "ul" | "wbr" | "xmp" | "svg" | "math" | "foreignobject"
    )
}

/// Formatting elements, whose stray end tags browsers resolve by the adoption agency
/// algorithm; approximated here by closing the element wherever it is open in scope.
fn is_formatting(name: &str) -> bool {
    matches!(
        name,
        "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small" | "strike"
            | "strong" | "tt" | "u"
    )
}

/// Elements a search for an open element to close does not look past.
fn is_scope_boundary(name: &str) -> bool {
    matches!(
        name,
        "applet" | "caption" | "html" | "table" | "td" | "th" | "marquee" | "object" | "template"
            | "button" | "svg" | "math" | "foreignobject"
    )
}

impl<'a> Dom<'a> {
    fn push(&mut self, kind: Kind<'a>, parent: NodeId) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(Node { kind, parent, first: NONE, last: NONE, next: NONE });
        let last = self.nodes[parent].last;
        if last == NONE {
            self.nodes[parent].first = id;
        } else {
            self.nodes[last].next = id;
        }
        self.nodes[parent].last = id;
        id
    }

    /// Parses `html` as a body fragment.
    pub fn parse(html: &'a str) -> Dom<'a> {
        let mut dom = Dom { nodes: Vec::with_capacity(16) };
        dom.nodes.push(Node { kind: Kind::Root, parent: ROOT, first: NONE, last: NONE, next: NONE });
        let mut stack: Vec<NodeId> = vec![ROOT];
        let mut foreign = 0usize; // open svg/math elements
        let mut strip_newline = false;
        for tok in Tokenizer::new(html) {
            let after_pre = std::mem::take(&mut strip_newline);
            match tok {
                Token::Text(t) => {
                    let t = if after_pre {
                        match t {
                            Cow::Borrowed(s) => Cow::Borrowed(s.strip_prefix('\n').unwrap_or(s)),
                            Cow::Owned(s) => Cow::Owned(s.strip_prefix('\n').unwrap_or(&s).to_string()),
                        }
                    } else {
                        t
                    };
                    if !t.is_empty() {
                        let parent = stack.last().copied().unwrap_or(ROOT);
                        dom.push(Kind::Text(t), parent);
                    }
                }
                Token::Comment(c) => {
                    let parent = stack.last().copied().unwrap_or(ROOT);
                    dom.push(Kind::Comment(c), parent);
                }
                Token::Doctype(_) => {}
                Token::Start { name, attrs, self_closing } => {
                    // Table parts outside a table are ignored by browsers.
                    if foreign == 0
                        && matches!(&*name, "caption" | "col" | "colgroup" | "tbody" | "td" | "tfoot" | "th" | "thead" | "tr" | "frame" | "head")
                        && !stack.iter().any(|&id| dom.name(id) == Some("table"))
                    {
                        continue;
                    }
                    if foreign == 0 {
                        if closes_p(&name) {
                            dom.close_open(&mut stack, "p", |_| false);
                        }
                        if is_heading(&name) {
                            if let Some(&top) = stack.last() {
                                if dom.name(top).is_some_and(is_heading) {
                                    stack.pop();
                                }
                            }
                        }
                        match &*name {
                            "li" => dom.close_open(&mut stack, "li", |n| {
                                is_special(n) && !matches!(n, "address" | "div" | "p")
                            }),
                            "dd" | "dt" => {
                                // The innermost open dd or dt, whichever comes first.
                                let stop = |n: &str| is_special(n) && !matches!(n, "address" | "div" | "p" | "dd" | "dt");
                                let dd = dom.find_open(&stack, "dd", stop);
                                let dt = dom.find_open(&stack, "dt", stop);
                                if let Some(pos) = dd.max(dt) {
                                    stack.truncate(pos);
                                }
                            }
                            "a" => dom.close_open(&mut stack, "a", |_| false),
                            _ => {}
                        }
                    }
                    let parent = stack.last().copied().unwrap_or(ROOT);
                    let void = is_void(&name) || (foreign > 0 && self_closing);
                    let enters_foreign = name == "svg" || name == "math";
                    let is_pre = name == "pre" || name == "listing" || name == "textarea";
                    let id = dom.push(Kind::Element { name, attrs }, parent);
                    if !void && stack.len() <= MAX_DEPTH {
                        stack.push(id);
                        if enters_foreign {
                            foreign += 1;
                        }
                        strip_newline = is_pre;
                    }
                }
                Token::End { name } => {
                    if name == "br" {
                        let parent = stack.last().copied().unwrap_or(ROOT);
                        dom.push(Kind::Element { name: Cow::Borrowed("br"), attrs: Vec::new() }, parent);
                        continue;
                    }
                    if name == "p" && !dom.has_open(&stack, "p") && foreign == 0 {
                        let parent = stack.last().copied().unwrap_or(ROOT);
                        dom.push(Kind::Element { name: Cow::Borrowed("p"), attrs: Vec::new() }, parent);
                        continue;
                    }
                    // Special and formatting end tags close their element if it is open in
                    // scope (`</li>` within its list); any other end tag only up to the
                    // nearest special element.
                    let other = !is_formatting(&name) && !is_special(&name);
                    let in_list = name == "li";
                    if let Some(pos) = dom.find_open(&stack, &name, |n| (other && is_special(n)) || (in_list && (n == "ul" || n == "ol"))) {
                        for &closed in &stack[pos..] {
                            if matches!(dom.name(closed), Some("svg" | "math")) {
                                foreign = foreign.saturating_sub(1);
                            }
                        }
                        stack.truncate(pos);
                    }
                }
            }
        }
        dom
    }

    /// Index in `stack` of the innermost open `name`, not looking past scope boundaries or
    /// elements for which `stop` is true.
    fn find_open(&self, stack: &[NodeId], name: &str, stop: impl Fn(&str) -> bool) -> Option<usize> {
        for (i, &id) in stack.iter().enumerate().rev() {
            let n = self.name(id)?;
            if n == name {
                return Some(i);
            }
            if is_scope_boundary(n) || stop(n) {
                return None;
            }
        }
        None
    }

    fn has_open(&self, stack: &[NodeId], name: &str) -> bool {
        self.find_open(stack, name, |_| false).is_some()
    }

    fn close_open(&self, stack: &mut Vec<NodeId>, name: &str, stop: impl Fn(&str) -> bool) {
        if let Some(pos) = self.find_open(stack, name, stop) {
            stack.truncate(pos);
        }
    }

    /// The element name of `id`, None for text, comments and the root.
    pub fn name(&self, id: NodeId) -> Option<&str> {
        match &self.nodes.get(id)?.kind {
            Kind::Element { name, .. } => Some(name),
            _ => None,
        }
    }

    /// The decoded value of attribute `attr` on element `id`.
    pub fn attr(&self, id: NodeId, attr: &str) -> Option<&str> {
        match &self.nodes.get(id)?.kind {
            Kind::Element { attrs, .. } => attrs.iter().find(|a| a.name == attr).map(|a| &*a.value),
            _ => None,
        }
    }

    /// Sets (or adds) an attribute on element `id`.
    pub fn set_attr(&mut self, id: NodeId, attr: &'static str, value: String) {
        if let Some(Node { kind: Kind::Element { attrs, .. }, .. }) = self.nodes.get_mut(id) {
            match attrs.iter_mut().find(|a| a.name == attr) {
                Some(a) => a.value = Cow::Owned(value),
                None => attrs.push(Attr { name: Cow::Borrowed(attr), value: Cow::Owned(value) }),
            }
        }
    }

    /// The children of `id`, in order.
    pub fn children(&self, id: NodeId) -> Children<'_, 'a> {
        Children { dom: self, next: self.nodes.get(id).map_or(NONE, |n| n.first) }
    }

    /// Detaches all children of `id` (they stay in the arena, unreachable).
    pub fn clear_children(&mut self, id: NodeId) {
        if let Some(n) = self.nodes.get_mut(id) {
            n.first = NONE;
            n.last = NONE;
        }
    }

    /// Unlinks `id` (and its subtree) from its parent.
    pub fn detach(&mut self, id: NodeId) {
        if id == ROOT || id >= self.nodes.len() {
            return;
        }
        let parent = self.nodes[id].parent;
        let mut prev = NONE;
        let mut cur = self.nodes[parent].first;
        while cur != NONE && cur != id {
            prev = cur;
            cur = self.nodes[cur].next;
        }
        if cur == NONE {
            return;
        }
        let next = self.nodes[id].next;
        if prev == NONE {
            self.nodes[parent].first = next;
        } else {
            self.nodes[prev].next = next;
        }
        if self.nodes[parent].last == id {
            self.nodes[parent].last = prev;
        }
        self.nodes[id].next = NONE;
    }

    /// Appends the existing node `child` (detached from wherever it was reachable) to `parent`.
    pub fn adopt(&mut self, parent: NodeId, child: NodeId) {
        if child >= self.nodes.len() || parent >= self.nodes.len() {
            return;
        }
        self.nodes[child].next = NONE;
        self.nodes[child].parent = parent;
        let last = self.nodes[parent].last;
        if last == NONE {
            self.nodes[parent].first = child;
        } else {
            self.nodes[last].next = child;
        }
        self.nodes[parent].last = child;
    }

    /// All element ids reachable from the root, in document order.
    pub fn elements(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut stack = vec![ROOT];
        while let Some(id) = stack.pop() {
            if id != ROOT && self.name(id).is_some() {
                out.push(id);
            }
            let kids: Vec<NodeId> = self.children(id).collect();
            stack.extend(kids.into_iter().rev());
        }
        out
    }

    /// Elements named `name` reachable from the root, in document order.
    pub fn find_all(&self, name: &str) -> Vec<NodeId> {
        self.elements().into_iter().filter(|&id| self.name(id) == Some(name)).collect()
    }
}

pub struct Children<'d, 'a> {
    dom: &'d Dom<'a>,
    next: usize,
}

impl Iterator for Children<'_, '_> {
    type Item = NodeId;
    fn next(&mut self) -> Option<NodeId> {
        if self.next == NONE {
            return None;
        }
        let id = self.next;
        self.next = self.dom.nodes.get(id).map_or(NONE, |n| n.next);
        Some(id)
    }
}

/// Serializes the children of `id` as HTML without judging them (the stored form of a body):
/// names and attributes as parsed, text re-escaped, raw-text elements' content written raw,
/// comments kept, every element closed. Attribute and element names that could not be written
/// back unambiguously are dropped (elements keep their children).
pub fn serialize_children(dom: &Dom, id: NodeId, out: &mut String) {
    for c in dom.children(id) {
        match &dom.nodes[c].kind {
            Kind::Element { name, attrs } => {
                let ok = plain_name(name) && name.as_bytes().first().is_some_and(|b| b.is_ascii_alphabetic());
                if ok {
                    out.push('<');
                    out.push_str(name);
                    for a in attrs {
                        if plain_name(&a.name) {
                            out.push(' ');
                            out.push_str(&a.name);
                            out.push_str("=\"");
                            escape_attr(out, &a.value);
                            out.push('"');
                        }
                    }
                    out.push('>');
                }
                if ok && is_void(name) {
                    continue;
                }
                if ok && matches!(&**name, "script" | "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript") {
                    for t in dom.children(c) {
                        if let Kind::Text(t) = &dom.nodes[t].kind {
                            out.push_str(t);
                        }
                    }
                } else {
                    let start = out.len();
                    serialize_children(dom, c, out);
                    if ok && matches!(&**name, "pre" | "textarea" | "listing") && out[start..].starts_with('\n') {
                        out.insert(start, '\n');
                    }
                }
                if ok {
                    out.push_str("</");
                    out.push_str(name);
                    out.push('>');
                }
            }
            Kind::Text(t) => escape_text(out, t),
            Kind::Comment(t) => {
                // "-->" cannot occur inside a parsed comment; "--!>" and a leading ">" can't either
                // once re-wrapped, except a trailing "--!" — neutralise it.
                out.push_str("<!--");
                out.push_str(&t.replace("--!", "-- !"));
                out.push_str("-->");
            }
            Kind::Root => {}
        }
    }
}

fn plain_name(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
}

/// Appends `s` with `& < >` escaped (text content). Also applies the parser's input
/// normalisation so output reads back as written: CR and CRLF become LF, NUL is dropped.
pub fn escape_text(out: &mut String, s: &str) {
    escape(out, s, false);
}

fn escape(out: &mut String, s: &str, attr: bool) {
    let b = s.as_bytes();
    let mut last = 0;
    for (i, &c) in b.iter().enumerate() {
        let rep = match c {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' if attr => "&quot;",
            b'\r' if b.get(i + 1) == Some(&b'\n') => "",
            b'\r' => "\n",
            0 if attr => "\u{fffd}",
            0 => "",
            _ => continue,
        };
        out.push_str(&s[last..i]);
        out.push_str(rep);
        last = i + 1;
    }
    out.push_str(&s[last..]);
}

/// Appends `s` with `& < > "` escaped (a double-quoted attribute value), normalised like
/// `escape_text` (NUL becomes U+FFFD, as a parser would make it).
pub fn escape_attr(out: &mut String, s: &str) {
    escape(out, s, true);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(dom: &Dom, id: NodeId, out: &mut String) {
        for c in dom.children(id) {
            match &dom.nodes[c].kind {
                Kind::Element { name, .. } => {
                    out.push('(');
                    out.push_str(name);
                    shape(dom, c, out);
                    out.push(')');
                }
                Kind::Text(t) => out.push_str(t),
                Kind::Comment(_) => out.push('!'),
                Kind::Root => {}
            }
        }
    }

    fn tree(html: &str) -> String {
        let dom = Dom::parse(html);
        let mut s = String::new();
        shape(&dom, ROOT, &mut s);
        s
    }

    #[test]
    fn nesting_rules() {
        assert_eq!(tree("<p>a<div>b</div>"), "(pa)(divb)");
        assert_eq!(tree("<ul><li>a<li>b</ul>"), "(ul(lia)(lib))");
        assert_eq!(tree("<ul><li>a<ul><li>b</ul></ul>"), "(ul(lia(ul(lib))))");
        assert_eq!(tree("<b>x</i>y</b>z"), "(bxy)z");
        assert_eq!(tree("<a>1<a>2"), "(a1)(a2)");
        assert_eq!(tree("a<br>b</br>c</p>"), "a(br)b(br)c(p)");
        assert_eq!(tree("<div>unclosed<span>x"), "(divunclosed(spanx))");
        assert_eq!(tree("<pre>\ncode</pre>"), "(precode)");
        assert_eq!(tree("<h1>a<h2>b"), "(h1a)(h2b)");
        assert_eq!(tree("<svg><path/><p>x</svg>y"), "(svg(path)(px))y");
        // Implied ends stop at special elements; stray end tags too.
        assert_eq!(tree("<li>a<blockquote><li>b"), "(lia(blockquote(lib)))");
        assert_eq!(tree("<li>a<div><li>b"), "(lia(div))(lib)");
        assert_eq!(tree("<dl><dt>a<dd>b<dt>c</dl>"), "(dl(dta)(ddb)(dtc))");
        assert_eq!(tree("<span>a<div>b</span>c</div>d"), "(spana(divbc)d)");
        assert_eq!(tree("<ul><li>a</ul></li>b"), "(ul(lia))b");
        assert_eq!(tree("<p><button><div>x</div></button></p>"), "(p(button(divx)))");
        // Table parts outside a table are ignored.
        assert_eq!(tree("<td>a<tr>b<caption>c"), "abc");
    }

    #[test]
    fn depth_is_capped() {
        let html = "<div>".repeat(10_000);
        let dom = Dom::parse(&html);
        let mut depth = 0;
        let mut id = ROOT;
        while let Some(c) = dom.children(id).next() {
            depth += 1;
            id = c;
        }
        assert!(depth <= MAX_DEPTH + 1);
    }
}
