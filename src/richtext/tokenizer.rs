//! An HTML tokenizer for untrusted input, after the WHATWG tokenizer's shape.
//!
//! It turns a string into start tags, end tags, text, comments and doctypes. It never fails:
//! broken markup is read the way a browser reads it where that matters for safety (a `<` that
//! starts no tag is text, an unterminated tag at the end is dropped, a comment runs to `-->` or
//! the end, `<![CDATA[` and `<?` are bogus comments). After `script`, `style` and the other
//! raw-text elements everything up to the matching end tag is one text token; after `textarea`
//! and `title` likewise, with character references decoded. Text and attribute values come out
//! decoded; names come out lowercased. Slices of the input are borrowed whenever nothing needed
//! decoding or lowercasing.
//!
//! Known limit: foreign content (SVG/MathML) is tokenized like HTML (`<style>` in SVG is raw
//! text here). That only changes what gets dropped: the sanitizer drops those elements whole and
//! re-serializes everything it keeps, so a browser never sees markup we did not produce.

use std::borrow::Cow;

use super::entities;

/// One attribute; `value` is decoded, `name` lowercased.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr<'a> {
    pub name: Cow<'a, str>,
    pub value: Cow<'a, str>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Token<'a> {
    /// `<name attrs...>`; duplicate attributes are dropped (the first wins, as in browsers).
    Start { name: Cow<'a, str>, attrs: Vec<Attr<'a>>, self_closing: bool },
    End { name: Cow<'a, str> },
    /// Decoded text (raw for script/style-like elements).
    Text(Cow<'a, str>),
    Comment(&'a str),
    Doctype(&'a str),
}

/// Elements whose content is not markup, up to their end tag. `true` = decode references.
fn raw_text_kind(name: &str) -> Option<bool> {
    match name {
        "script" | "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => Some(false),
        "textarea" | "title" => Some(true),
        _ => None,
    }
}

pub struct Tokenizer<'a> {
    src: &'a str,
    pos: usize,
    /// Set after a raw-text start tag: (element name, decode references).
    raw: Option<(Cow<'a, str>, bool)>,
    /// After `<plaintext>` the rest of the input is text.
    plaintext: bool,
}

impl<'a> Tokenizer<'a> {
    pub fn new(src: &'a str) -> Self {
        Tokenizer { src, pos: 0, raw: None, plaintext: false }
    }

    fn bytes(&self) -> &'a [u8] {
        self.src.as_bytes()
    }

    /// Slices `src[a..b]`; offsets always sit next to ASCII bytes, so this never fails in
    /// practice, and an impossible split yields "" rather than a panic.
    fn slice(&self, a: usize, b: usize) -> &'a str {
        self.src.get(a..b).unwrap_or("")
    }

    fn raw_text(&mut self, name: Cow<'a, str>, decode: bool) -> Option<Token<'a>> {
        let b = self.bytes();
        let start = self.pos;
        let mut i = start;
        let end = loop {
            match b[i.min(b.len())..].iter().position(|&c| c == b'<') {
                None => break b.len(),
                Some(p) => {
                    let at = i + p;
                    let n = name.len();
                    if b.get(at + 1) == Some(&b'/')
                        && b.len() >= at + 2 + n
                        && b[at + 2..at + 2 + n].eq_ignore_ascii_case(name.as_bytes())
                        && matches!(b.get(at + 2 + n), None | Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | 0x0c))
                    {
                        break at;
                    }
                    i = at + 1;
                }
            }
        };
        self.pos = end;
        if end == start {
            return None;
        }
        let text = self.slice(start, end);
        Some(Token::Text(if decode { entities::decode(text, false) } else { Cow::Borrowed(text) }))
    }

    /// Reads text up to the next `<` that starts markup.
    fn text(&mut self) -> Token<'a> {
        let b = self.bytes();
        let start = self.pos;
        let mut i = start;
        while i < b.len() {
            if b[i] == b'<' && i > start && starts_markup(b.get(i + 1).copied()) {
                break;
            }
            i += 1;
        }
        self.pos = i;
        Token::Text(entities::decode(self.slice(start, i), false))
    }

    /// At `<!--`: the comment runs to `-->` (or `--!>`), `<!-->` and `<!--->` are empty.
    fn comment(&mut self) -> Token<'a> {
        let b = self.bytes();
        let start = self.pos + 4;
        if b.get(start) == Some(&b'>') {
            self.pos = start + 1;
            return Token::Comment("");
        }
        if b.get(start..start + 2) == Some(b"->") {
            self.pos = start + 2;
            return Token::Comment("");
        }
        let mut i = start;
        while i < b.len() {
            if b[i..].starts_with(b"-->") {
                self.pos = i + 3;
                return Token::Comment(self.slice(start, i));
            }
            if b[i..].starts_with(b"--!>") {
                self.pos = i + 4;
                return Token::Comment(self.slice(start, i));
            }
            i += 1;
        }
        self.pos = b.len();
        Token::Comment(self.slice(start, b.len()))
    }

    /// `<!...>`, `<?...>`, `</ ...>`: everything up to the next `>` is a comment.
    fn bogus_comment(&mut self, skip: usize) -> Token<'a> {
        let b = self.bytes();
        let start = self.pos + skip;
        let end = b[start.min(b.len())..].iter().position(|&c| c == b'>').map_or(b.len(), |p| start + p);
        self.pos = (end + 1).min(b.len());
        let body = self.slice(start.min(end), end);
        Token::Comment(body)
    }

    /// Reads a tag name starting at `i`; returns it lowercased and the index after it.
    fn name_at(&self, i: usize) -> (Cow<'a, str>, usize) {
        let b = self.bytes();
        let mut j = i;
        while j < b.len() && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'/' | b'>') {
            j += 1;
        }
        (lower(self.slice(i, j)), j)
    }

    /// Reads attributes from `i` up to and including `>`. Returns None at end of input
    /// (an unterminated tag is dropped, as browsers do).
    fn attrs_at(&self, mut i: usize, keep: bool) -> Option<(Vec<Attr<'a>>, bool, usize)> {
        let b = self.bytes();
        let mut attrs: Vec<Attr<'a>> = Vec::new();
        let mut self_closing = false;
        loop {
            while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
                i += 1;
            }
            match b.get(i) {
                None => return None,
                Some(b'>') => return Some((attrs, self_closing, i + 1)),
                Some(b'/') => {
                    self_closing = b.get(i + 1) == Some(&b'>');
                    i += 1;
                    continue;
                }
                _ => {}
            }
            self_closing = false;
            // Attribute name: a leading '=' belongs to the name (WHATWG).
            let ns = i;
            i += 1;
            while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'/' | b'>' | b'=') {
                i += 1;
            }
            let name = lower(self.slice(ns, i));
            while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
                i += 1;
            }
            let mut value: Cow<'a, str> = Cow::Borrowed("");
            if b.get(i) == Some(&b'=') {
                i += 1;
                while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0c) {
                    i += 1;
                }
                match b.get(i) {
                    Some(&q @ (b'"' | b'\'')) => {
                        let vs = i + 1;
                        let ve = b[vs.min(b.len())..].iter().position(|&c| c == q).map(|p| vs + p)?;
                        value = entities::decode(self.slice(vs, ve), true);
                        i = ve + 1;
                    }
                    Some(_) => {
                        let vs = i;
                        while i < b.len() && !matches!(b[i], b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'>') {
                            i += 1;
                        }
                        value = entities::decode(self.slice(vs, i), true);
                    }
                    None => return None,
                }
            }
            if keep && !attrs.iter().any(|a| a.name == name) {
                attrs.push(Attr { name, value });
            }
        }
    }
}

fn starts_markup(c: Option<u8>) -> bool {
    matches!(c, Some(c) if c.is_ascii_alphabetic() || c == b'/' || c == b'!' || c == b'?')
}

fn lower(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|c| c.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

impl<'a> Iterator for Tokenizer<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        let b = self.bytes();
        if let Some((name, decode)) = self.raw.take() {
            if let Some(t) = self.raw_text(name, decode) {
                return Some(t);
            }
        }
        loop {
            if self.pos >= b.len() {
                return None;
            }
            if self.plaintext {
                let t = self.slice(self.pos, b.len());
                self.pos = b.len();
                return Some(Token::Text(Cow::Borrowed(t)));
            }
            if b[self.pos] != b'<' || !starts_markup(b.get(self.pos + 1).copied()) {
                return Some(self.text());
            }
            let next = b.get(self.pos + 1).copied();
            match next {
                Some(b'!') => {
                    if b[self.pos..].starts_with(b"<!--") {
                        return Some(self.comment());
                    }
                    let rest = &b[self.pos + 2..];
                    if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"doctype") {
                        if let Token::Comment(body) = self.bogus_comment(9) {
                            return Some(Token::Doctype(body.trim()));
                        }
                    }
                    return Some(self.bogus_comment(2));
                }
                Some(b'?') => return Some(self.bogus_comment(1)),
                Some(b'/') => match b.get(self.pos + 2) {
                    Some(c) if c.is_ascii_alphabetic() => {
                        let (name, after) = self.name_at(self.pos + 2);
                        match self.attrs_at(after, false) {
                            Some((_, _, end)) => {
                                self.pos = end;
                                return Some(Token::End { name });
                            }
                            None => {
                                self.pos = b.len();
                                return None;
                            }
                        }
                    }
                    Some(b'>') => {
                        self.pos += 3;
                        continue;
                    }
                    None => {
                        // A lone "</" at the very end is text.
                        let t = self.slice(self.pos, b.len());
                        self.pos = b.len();
                        return Some(Token::Text(Cow::Borrowed(t)));
                    }
                    Some(_) => return Some(self.bogus_comment(2)),
                },
                _ => {
                    let (name, after) = self.name_at(self.pos + 1);
                    match self.attrs_at(after, true) {
                        Some((attrs, self_closing, end)) => {
                            self.pos = end;
                            if name == "plaintext" {
                                self.plaintext = true;
                            } else if let Some(decode) = raw_text_kind(&name) {
                                self.raw = Some((name.clone(), decode));
                            }
                            return Some(Token::Start { name, attrs, self_closing });
                        }
                        None => {
                            self.pos = b.len();
                            return None;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Token<'_>> {
        Tokenizer::new(s).collect()
    }

    #[test]
    fn tags_attributes_and_text() {
        let t = toks("<A HREF='x' title=\"a&amp;b\" data-x=y disabled>hi &lt;</a>");
        assert_eq!(t.len(), 3);
        match &t[0] {
            Token::Start { name, attrs, self_closing } => {
                assert_eq!(name, "a");
                assert!(!self_closing);
                let got: Vec<(&str, &str)> = attrs.iter().map(|a| (&*a.name, &*a.value)).collect();
                assert_eq!(got, [("href", "x"), ("title", "a&b"), ("data-x", "y"), ("disabled", "")]);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(t[1], Token::Text("hi <".into()));
        assert_eq!(t[2], Token::End { name: "a".into() });
    }

    #[test]
    fn comments_doctype_cdata_and_bogus() {
        assert_eq!(toks("<!--a-->b"), [Token::Comment("a"), Token::Text("b".into())]);
        assert_eq!(toks("<!-->x"), [Token::Comment(""), Token::Text("x".into())]);
        assert_eq!(toks("<!--a--!>x"), [Token::Comment("a"), Token::Text("x".into())]);
        assert_eq!(toks("<!--open"), [Token::Comment("open")]);
        assert_eq!(toks("<!DOCTYPE html>"), [Token::Doctype("html")]);
        assert_eq!(toks("<![CDATA[x]]>y"), [Token::Comment("[CDATA[x]]"), Token::Text("y".into())]);
        assert_eq!(toks("<?xml x?>"), [Token::Comment("?xml x?")]);
        assert_eq!(toks("</ x>"), [Token::Comment(" x")]);
    }

    #[test]
    fn raw_text_elements() {
        let t = toks("<script>if (a<b) x='</p>'</SCRIPT >z");
        assert_eq!(t[1], Token::Text("if (a<b) x='</p>'".into()));
        assert_eq!(t[2], Token::End { name: "script".into() });
        assert_eq!(t[3], Token::Text("z".into()));
        let t = toks("<textarea>&lt;b&gt;</textarea>");
        assert_eq!(t[1], Token::Text("<b>".into()));
        let t = toks("<style>never closed <b>");
        assert_eq!(t[1], Token::Text("never closed <b>".into()));
    }

    #[test]
    fn broken_markup() {
        assert_eq!(toks("a < b <3 <"), [Token::Text("a < b <3 <".into())]);
        assert_eq!(toks("x<a href='unterminated"), [Token::Text("x".into())]);
        assert_eq!(toks("<b/>"), [Token::Start { name: "b".into(), attrs: vec![], self_closing: true }]);
        match &toks("<a href=1 href=2 =x>")[0] {
            Token::Start { attrs, .. } => {
                assert_eq!(attrs.len(), 2);
                assert_eq!(attrs[0].value, "1");
                assert_eq!(attrs[1].name, "=x");
            }
            other => panic!("{other:?}"),
        }
    }
}
