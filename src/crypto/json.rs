//! The little JSON the Rails message formats need: a pull reader over a byte slice and a
//! string writer.
//!
//! Envelopes (`{"_rails":{...}}`) and the session hash are small flat objects, so a
//! cursor that hands out borrowed slices is enough and allocates nothing; strings are
//! unescaped into the caller's buffer only when their value is wanted. Nesting is capped
//! at `MAX_DEPTH` so hostile input cannot recurse deeply.

/// The input was not the JSON that was expected.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Invalid;

const MAX_DEPTH: usize = 32;

/// A cursor over one JSON text.
pub struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    /// Just inside `{`: the next member has no leading comma.
    fresh: bool,
}

impl<'a> Reader<'a> {
    pub fn new(s: &'a [u8]) -> Reader<'a> {
        Reader {
            s,
            i: 0,
            fresh: false,
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    /// The next non-blank byte, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), Invalid> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(Invalid)
        }
    }

    /// Consumes the `{` that opens an object.
    pub fn begin_object(&mut self) -> Result<(), Invalid> {
        self.expect(b'{')?;
        self.fresh = true;
        Ok(())
    }

    /// Returns the next key of the current object (raw, still escaped) and consumes the
    /// `:` after it; `None` after consuming the closing `}`. Call once per member, after
    /// reading or skipping the previous member's value.
    pub fn next_key(&mut self) -> Result<Option<&'a [u8]>, Invalid> {
        let first = std::mem::replace(&mut self.fresh, false);
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(None);
        }
        if !first {
            self.expect(b',')?;
        }
        let key = self.string()?;
        self.expect(b':')?;
        Ok(Some(key))
    }

    /// Consumes the `[` that opens an array.
    pub fn begin_array(&mut self) -> Result<(), Invalid> {
        self.expect(b'[')?;
        self.fresh = true;
        Ok(())
    }

    /// Moves to the next element of the current array: `true` when one follows (read or
    /// skip it next), `false` after consuming the closing `]`.
    pub fn next_item(&mut self) -> Result<bool, Invalid> {
        let first = std::mem::replace(&mut self.fresh, false);
        if self.peek() == Some(b']') {
            self.i += 1;
            return Ok(false);
        }
        if !first {
            self.expect(b',')?;
        }
        Ok(true)
    }

    /// Consumes a string and returns its raw contents (between the quotes, escapes kept).
    pub fn string(&mut self) -> Result<&'a [u8], Invalid> {
        self.expect(b'"')?;
        let start = self.i;
        loop {
            match self.s.get(self.i) {
                None => return Err(Invalid),
                Some(b'"') => break,
                Some(b'\\') => match self.s.get(self.i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
                    Some(b'u') => {
                        let hex = self.s.get(self.i + 2..self.i + 6).ok_or(Invalid)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(Invalid);
                        }
                        self.i += 6;
                    }
                    _ => return Err(Invalid),
                },
                Some(&c) if c < 0x20 => return Err(Invalid),
                Some(_) => self.i += 1,
            }
        }
        let raw = &self.s[start..self.i];
        self.i += 1;
        Ok(raw)
    }

    /// Consumes `null` if it is next; returns whether it was.
    pub fn null(&mut self) -> bool {
        self.ws();
        if self.s.get(self.i..).is_some_and(|r| r.starts_with(b"null")) {
            self.i += 4;
            true
        } else {
            false
        }
    }

    /// Consumes an integer (no fraction or exponent) that fits in an `i64`.
    pub fn integer(&mut self) -> Result<i64, Invalid> {
        let raw = self.value()?;
        let (neg, digits) = match raw {
            [b'-', rest @ ..] => (true, rest),
            _ => (false, raw),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return Err(Invalid);
        }
        let mut n: i64 = 0;
        for &d in digits {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add((d - b'0') as i64))
                .ok_or(Invalid)?;
        }
        Ok(if neg { -n } else { n })
    }

    /// Consumes any value and returns its exact text.
    pub fn value(&mut self) -> Result<&'a [u8], Invalid> {
        self.ws();
        let start = self.i;
        self.skip(0)?;
        Ok(&self.s[start..self.i])
    }

    fn skip(&mut self, depth: usize) -> Result<(), Invalid> {
        if depth > MAX_DEPTH {
            return Err(Invalid);
        }
        match self.peek().ok_or(Invalid)? {
            b'"' => self.string().map(|_| ()),
            b'{' => {
                self.i += 1;
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.string()?;
                    self.expect(b':')?;
                    self.skip(depth + 1)?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(Invalid),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.peek() == Some(b']') {
                    self.i += 1;
                    return Ok(());
                }
                loop {
                    self.skip(depth + 1)?;
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(Invalid),
                    }
                }
            }
            b't' | b'f' | b'n' => {
                for lit in [&b"true"[..], b"false", b"null"] {
                    if self.s.get(self.i..).is_some_and(|r| r.starts_with(lit)) {
                        self.i += lit.len();
                        return Ok(());
                    }
                }
                Err(Invalid)
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.s.get(self.i)
                {
                    self.i += 1;
                }
                let n = &self.s[start..self.i];
                let ok = std::str::from_utf8(n)
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .is_some();
                if ok {
                    Ok(())
                } else {
                    Err(Invalid)
                }
            }
            _ => Err(Invalid),
        }
    }

    /// Succeeds when only blanks remain.
    pub fn end(&mut self) -> Result<(), Invalid> {
        if self.peek().is_none() {
            Ok(())
        } else {
            Err(Invalid)
        }
    }
}

fn hex4(h: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(h.get(..4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Appends the unescaped UTF-8 of a raw string (as returned by [`Reader::string`]).
/// Unpaired surrogates become U+FFFD, as most JSON parsers do.
pub fn unescape(raw: &[u8], out: &mut Vec<u8>) -> Result<(), Invalid> {
    let start = out.len();
    let r = unescape_with(raw, |b| {
        out.extend_from_slice(b);
        Ok(())
    });
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// Unescapes a raw string into `dst` without allocating; returns the length written.
/// Too small a `dst` is an error.
pub fn unescape_to_slice(raw: &[u8], dst: &mut [u8]) -> Result<usize, Invalid> {
    let mut n = 0;
    unescape_with(raw, |b| {
        let end = n + b.len();
        dst.get_mut(n..end).ok_or(Invalid)?.copy_from_slice(b);
        n = end;
        Ok(())
    })?;
    Ok(n)
}

fn unescape_with(
    raw: &[u8],
    mut emit: impl FnMut(&[u8]) -> Result<(), Invalid>,
) -> Result<(), Invalid> {
    let mut i = 0;
    while let Some(&c) = raw.get(i) {
        if c != b'\\' {
            let run = raw[i..]
                .iter()
                .position(|&b| b == b'\\')
                .unwrap_or(raw.len() - i);
            emit(&raw[i..i + run])?;
            i += run;
            continue;
        }
        let e = *raw.get(i + 1).ok_or(Invalid)?;
        i += 2;
        let simple = match e {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => 0,
            _ => return Err(Invalid),
        };
        if e != b'u' {
            emit(&[simple])?;
            continue;
        }
        let mut cp = hex4(raw.get(i..).ok_or(Invalid)?).ok_or(Invalid)?;
        i += 4;
        if (0xD800..0xDC00).contains(&cp) {
            let low = raw
                .get(i..i + 2)
                .filter(|p| *p == b"\\u")
                .and_then(|_| hex4(&raw[i + 2..]));
            match low {
                Some(lo @ 0xDC00..=0xDFFF) => {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
                _ => cp = 0xFFFD,
            }
        } else if (0xDC00..0xE000).contains(&cp) {
            cp = 0xFFFD;
        }
        let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
        let mut buf = [0u8; 4];
        emit(ch.encode_utf8(&mut buf).as_bytes())?;
    }
    Ok(())
}

/// Appends `s` as a JSON string the way Rails' encoder writes it: `"` `\` and control
/// characters escaped, `<` `>` `&` as `\u003c` `\u003e` `\u0026`, U+2028/9 escaped, other
/// UTF-8 kept as is.
pub fn write_string(s: &[u8], out: &mut Vec<u8>) {
    escape(s, true, out);
}

/// Appends `s` as a JSON string with only the escapes JSON requires (and U+2028/9, for old
/// JavaScript parsers). Broadcast HTML goes out this way rather than with ActiveSupport's
/// `\u003c`/`\u003e`/`\u0026`, which spec/06 §1.4 leaves optional: each `<` would cost six
/// bytes instead of one, and a message's frame is copied once per subscriber.
pub fn write_plain_string(s: &[u8], out: &mut Vec<u8>) {
    escape(s, false, out);
}

/// The bytes of the word `x` that `escape` may act on, as `crate::words` marks them: a control
/// byte, `"`, `\\`, the lead byte 0xE2 of U+2028/U+2029, and with `html` `<` `>` `&`. The
/// lowest mark is exact (higher ones can be false alarms), which is all `escape` reads.
fn marks(x: u64, html: bool) -> u64 {
    use crate::words::{below, eq};
    let mut hit = below(x, 0x20) | eq(x, b'"') | eq(x, b'\\') | eq(x, 0xE2);
    if html {
        hit |= eq(x, b'<') | eq(x, b'>') | eq(x, b'&');
    }
    hit
}

/// Whether `escape` may act on byte `c` (`marks` for one byte).
fn marked(c: u8, html: bool) -> bool {
    c < 0x20 || matches!(c, b'"' | b'\\' | 0xE2) || (html && matches!(c, b'<' | b'>' | b'&'))
}

/// The one JSON string encoder: copies runs of plain bytes whole; `html` adds Rails' escapes
/// of `<` `>` `&`. It jumps from one marked byte to the next a word at a time: broadcast HTML
/// has a quote every dozen bytes or so, so most words hold one, and a byte loop through each
/// such word cost 16 instructions a byte (33k for a message's stream, now 17.5k).
fn escape(s: &[u8], html: bool, out: &mut Vec<u8>) {
    out.reserve(s.len() + s.len() / 16 + 2);
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    loop {
        let at = match s.get(i..i + 8) {
            Some(w) => match marks(crate::words::load(w), html) {
                0 => {
                    i += 8;
                    continue;
                }
                m => i + (m.trailing_zeros() / 8) as usize,
            },
            None => match s.get(i..).and_then(|t| t.iter().position(|&c| marked(c, html))) {
                Some(p) => i + p,
                None => break,
            },
        };
        let Some(&c) = s.get(at) else { break };
        i = at + 1;
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            8 => b"\\b",
            12 => b"\\f",
            b'<' if html => b"\\u003c",
            b'>' if html => b"\\u003e",
            b'&' if html => b"\\u0026",
            0xE2 if s.get(at + 1) == Some(&0x80) && matches!(s.get(at + 2), Some(0xA8 | 0xA9)) => {
                i = at + 3;
                if s.get(at + 2) == Some(&0xA8) { b"\\u2028" } else { b"\\u2029" }
            }
            0..=0x1f => {
                out.extend_from_slice(s.get(run..at).unwrap_or_default());
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&super::token::hex_byte(c));
                run = i;
                continue;
            }
            // 0xE2 leading another character.
            _ => continue,
        };
        out.extend_from_slice(s.get(run..at).unwrap_or_default());
        out.extend_from_slice(esc);
        run = i;
    }
    out.extend_from_slice(s.get(run..).unwrap_or_default());
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unesc(raw: &str) -> String {
        let mut v = Vec::new();
        unescape(raw.as_bytes(), &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn reads_nested_objects() {
        let text = br#" {"a": 1, "b" :{"c":[1,2,{"d":null}],"e":"x\"y"}, "f":-12, "g":true} "#;
        let mut r = Reader::new(text);
        r.begin_object().unwrap();
        assert_eq!(r.next_key().unwrap(), Some(&b"a"[..]));
        assert_eq!(r.integer().unwrap(), 1);
        assert_eq!(r.next_key().unwrap(), Some(&b"b"[..]));
        assert_eq!(r.value().unwrap(), br#"{"c":[1,2,{"d":null}],"e":"x\"y"}"#);
        assert_eq!(r.next_key().unwrap(), Some(&b"f"[..]));
        assert_eq!(r.integer().unwrap(), -12);
        assert_eq!(r.next_key().unwrap(), Some(&b"g"[..]));
        assert_eq!(r.value().unwrap(), b"true");
        assert_eq!(r.next_key().unwrap(), None);
        r.end().unwrap();

        let mut r = Reader::new(br#"[ "a", 2 ,[]]"#);
        r.begin_array().unwrap();
        assert!(r.next_item().unwrap());
        assert_eq!(r.string().unwrap(), b"a");
        assert!(r.next_item().unwrap());
        assert_eq!(r.integer().unwrap(), 2);
        assert!(r.next_item().unwrap());
        r.begin_array().unwrap();
        assert!(!r.next_item().unwrap());
        assert!(!r.next_item().unwrap());
        r.end().unwrap();
        let mut r = Reader::new(b"[1 2]");
        r.begin_array().unwrap();
        assert!(r.next_item().unwrap());
        r.value().unwrap();
        assert!(r.next_item().is_err());
    }

    #[test]
    fn refuses_broken_json() {
        for bad in [
            &br#"{"a":}"#[..],
            br#"{"a":1,}"#,
            br#"{"a" 1}"#,
            br#"["#,
            br#""abc"#,
            br#""\x""#,
            b"tru",
            b"1.2.3",
            b"\"a\x01\"",
            br#""\u12""#,
        ] {
            let mut r = Reader::new(bad);
            assert!(
                r.value().is_err() || r.end().is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(Reader::new(deep.as_bytes()).value().is_err());
        assert!(Reader::new(b"99999999999999999999").integer().is_err());
        assert!(Reader::new(b"1.5").integer().is_err());
    }

    #[test]
    fn unescapes() {
        assert_eq!(
            unesc(r#"a\"b\\c\/d\n\u003c\u00e9\ud83d\ude00"#),
            "a\"b\\c/d\n<é😀"
        );
        assert_eq!(unesc(r#"\ud83d"#), "\u{FFFD}");
        assert_eq!(unesc(r#"\ude00x"#), "\u{FFFD}x");
        assert!(unescape(br"\q", &mut Vec::new()).is_err());
        let mut small = [0u8; 4];
        assert_eq!(unescape_to_slice(br"a\u00e9b", &mut small), Ok(4));
        assert_eq!(&small, "aéb".as_bytes());
        assert!(unescape_to_slice(b"abcde", &mut small).is_err());
        assert!(unescape(br"\u12", &mut Vec::new()).is_err());
    }

    #[test]
    fn writes_like_rails() {
        let mut v = Vec::new();
        write_string("<a href=\"x\">&\u{2028}✓\n\x01".as_bytes(), &mut v);
        assert_eq!(
            String::from_utf8(v).unwrap(),
            r#""\u003ca href=\"x\"\u003e\u0026\u2028✓\n\u0001""#
        );
    }

    /// Each byte on its own, as the encoder worked before it learned to skip plain words.
    fn escaped_bytewise(s: &[u8], html: bool) -> Vec<u8> {
        let mut out = vec![b'"'];
        let mut i = 0;
        while i < s.len() {
            let mut one = Vec::new();
            let take = if s[i] == 0xE2 && s.get(i + 1) == Some(&0x80) && matches!(s.get(i + 2), Some(0xA8 | 0xA9)) { 3 } else { 1 };
            escape(&s[i..i + take], html, &mut one);
            out.extend_from_slice(&one[1..one.len() - 1]);
            i += take;
        }
        out.push(b'"');
        out
    }

    #[test]
    fn words_and_bytes_escape_alike_wherever_the_specials_fall() {
        let specials: [&[u8]; 11] = [b"\"", b"\\", b"\n", b"\x01", b"\x1f", b"<", b">", b"&", "\u{2028}".as_bytes(), "\u{2029}".as_bytes(), "\u{2020}✓".as_bytes()];
        for html in [false, true] {
            for len in 0..40 {
                for at in 0..len.max(1) {
                    // Each special alone, twice in a row, and before a quote.
                    for sp in specials.iter().flat_map(|sp| [sp.to_vec(), sp.repeat(2), [*sp, b"\""].concat()]) {
                        let mut s = b"<div class=plain>text".repeat(3)[..len].to_vec();
                        s.splice(at.min(s.len())..at.min(s.len()), sp.iter().copied());
                        let mut v = Vec::new();
                        escape(&s, html, &mut v);
                        assert_eq!(v, escaped_bytewise(&s, html), "{:?} html={html}", String::from_utf8_lossy(&s));
                        let mut back = Vec::new();
                        unescape(&v[1..v.len() - 1], &mut back).unwrap();
                        assert_eq!(back, s);
                    }
                }
            }
        }
    }
}
