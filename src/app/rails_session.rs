//! The Rails session hash carried in the encrypted `_campfire_session` cookie (spec/03 §4.5):
//! JSON with `session_id`, `_csrf_token`, `return_to_after_authenticating` and `flash`.
//!
//! We read and write only what we use (the return-to URL and the flash) and carry every other
//! key through unchanged as raw JSON, so a session written by Rails survives a round trip
//! through us and back. The JSON reader here is deliberately small: objects, arrays, strings,
//! numbers and literals, with a nesting limit; anything else makes the session empty, as a bad
//! cookie does in Rails.

/// Deepest nesting accepted when skipping a value we do not interpret.
const MAX_DEPTH: usize = 16;

/// A decoded session hash.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RailsSession {
    pub session_id: Option<String>,
    /// `return_to_after_authenticating`: where to go after signing in.
    pub return_to: Option<String>,
    /// The flash that arrived with this request (set by the previous response).
    pub notice: Option<String>,
    pub alert: Option<String>,
    /// Keys we do not interpret, as (key, raw JSON value), in the order read.
    other: Vec<(String, Vec<u8>)>,
}

impl RailsSession {
    /// Parses the session JSON; `None` when it is not a JSON object we can read.
    pub fn parse(json: &[u8]) -> Option<RailsSession> {
        let mut r = Reader { s: json, i: 0 };
        let mut out = RailsSession::default();
        r.ws();
        r.expect(b'{')?;
        r.ws();
        if r.peek() == Some(b'}') {
            r.i += 1;
            return r.end().then_some(out);
        }
        loop {
            r.ws();
            let key = r.string()?;
            r.ws();
            r.expect(b':')?;
            r.ws();
            match key.as_str() {
                "session_id" => out.session_id = r.string_or_null()?,
                "return_to_after_authenticating" => out.return_to = r.string_or_null()?,
                "flash" => {
                    let start = r.i;
                    if r.flash(&mut out).is_none() {
                        // An unexpected flash shape is kept verbatim rather than lost.
                        r.i = start;
                        r.skip(0)?;
                        out.other.push((key, json.get(start..r.i)?.to_vec()));
                    }
                }
                _ => {
                    let start = r.i;
                    r.skip(0)?;
                    out.other.push((key, json.get(start..r.i)?.to_vec()));
                }
            }
            r.ws();
            match r.next()? {
                b',' => continue,
                b'}' => return r.end().then_some(out),
                _ => return None,
            }
        }
    }

    /// Serialises the session for the next response: the keys we carry, `return_to` when set,
    /// and `next_flash` (the flash for the following request) when there is one. The flash
    /// that arrived with this request is not written back: it has been shown.
    pub fn to_json(&self, next_notice: Option<&str>, next_alert: Option<&str>, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        let mut key = |out: &mut Vec<u8>, k: &str| {
            if !first {
                out.push(b',');
            }
            first = false;
            json_string(k, out);
            out.push(b':');
        };
        if let Some(id) = &self.session_id {
            key(out, "session_id");
            json_string(id, out);
        }
        for (k, raw) in &self.other {
            key(out, k);
            out.extend_from_slice(raw);
        }
        if let Some(r) = &self.return_to {
            key(out, "return_to_after_authenticating");
            json_string(r, out);
        }
        if next_notice.is_some() || next_alert.is_some() {
            key(out, "flash");
            out.extend_from_slice(b"{\"discard\":[],\"flashes\":{");
            let mut first_flash = true;
            for (k, v) in [("notice", next_notice), ("alert", next_alert)] {
                if let Some(v) = v {
                    if !first_flash {
                        out.push(b',');
                    }
                    first_flash = false;
                    json_string(k, out);
                    out.push(b':');
                    json_string(v, out);
                }
            }
            out.extend_from_slice(b"}}");
        }
        out.push(b'}');
    }

    /// True when there is nothing to store (Rails then sends no session cookie at all).
    pub fn is_empty(&self) -> bool {
        self.session_id.is_none() && self.return_to.is_none() && self.other.is_empty()
    }
}

/// Writes `s` as a JSON string the way Rails' encoder does (`<`, `>`, `&` as `\u` escapes,
/// so the cookie never carries markup).
pub fn json_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            '<' => out.extend_from_slice(b"\\u003c"),
            '>' => out.extend_from_slice(b"\\u003e"),
            '&' => out.extend_from_slice(b"\\u0026"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let n = c as u32;
                out.extend_from_slice(b"\\u");
                for shift in [12, 8, 4, 0] {
                    out.push(HEX[((n >> shift) & 0xf) as usize]);
                }
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }
    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }
    fn end(&mut self) -> bool {
        self.ws();
        self.i == self.s.len()
    }

    fn string_or_null(&mut self) -> Option<Option<String>> {
        if self.s.get(self.i..self.i + 4) == Some(b"null") {
            self.i += 4;
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A JSON string, unescaped.
    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            match self.next()? {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => match self.next()? {
                    b'"' => out.push(b'"'),
                    b'\\' => out.push(b'\\'),
                    b'/' => out.push(b'/'),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'u' => {
                        let mut c = self.hex4()?;
                        if (0xd800..0xdc00).contains(&c) {
                            self.expect(b'\\')?;
                            self.expect(b'u')?;
                            let lo = self.hex4()?;
                            if !(0xdc00..0xe000).contains(&lo) {
                                return None;
                            }
                            c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
                        }
                        let ch = char::from_u32(c)?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => return None,
                },
                b if b < 0x20 => return None,
                b => out.push(b),
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut n = 0u32;
        for _ in 0..4 {
            let d = (self.next()? as char).to_digit(16)?;
            n = n * 16 + d;
        }
        Some(n)
    }

    /// Skips one JSON value of any kind.
    fn skip(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let close = if self.next()? == b'{' { b'}' } else { b']' };
                self.ws();
                if self.peek() == Some(close) {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    if close == b'}' {
                        self.ws();
                        self.string()?;
                        self.ws();
                        self.expect(b':')?;
                    }
                    self.skip(depth + 1)?;
                    self.ws();
                    match self.next()? {
                        b',' => continue,
                        b if b == close => return Some(()),
                        _ => return None,
                    }
                }
            }
            b't' | b'f' | b'n' => {
                for lit in [&b"true"[..], b"false", b"null"] {
                    if self.s.get(self.i..self.i + lit.len()) == Some(lit) {
                        self.i += lit.len();
                        return Some(());
                    }
                }
                None
            }
            b'-' | b'0'..=b'9' => {
                let start = self.i;
                while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
                    self.i += 1;
                }
                (self.i > start).then_some(())
            }
            _ => None,
        }
    }

    /// `{"discard":[...],"flashes":{"notice":"…","alert":"…"}}`: takes notice and alert.
    fn flash(&mut self, out: &mut RailsSession) -> Option<()> {
        self.expect(b'{')?;
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Some(());
            }
            let key = self.string()?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            if key == "flashes" {
                self.expect(b'{')?;
                loop {
                    self.ws();
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        break;
                    }
                    let k = self.string()?;
                    self.ws();
                    self.expect(b':')?;
                    self.ws();
                    let v = self.string_or_null()?;
                    match k.as_str() {
                        "notice" => out.notice = v,
                        "alert" => out.alert = v,
                        _ => {}
                    }
                    self.ws();
                    if self.peek() == Some(b',') {
                        self.i += 1;
                    }
                }
            } else {
                self.skip(1)?;
            }
            self.ws();
            if self.peek() == Some(b',') {
                self.i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_spec_vector_session() {
        let json = br#"{"session_id":"5b1c6f0f0c0ad4f8b6b1e3f4a7d9c2e18f3a6b5c4d2e1f0a9b8c7d6e5f4a3b2c","_csrf_token":"kY7s3Qe0x9bVt2LmN4pR6uW8zA1cE3gI5kM7oQ9sU0w"}"#;
        let s = RailsSession::parse(json).unwrap();
        assert_eq!(s.session_id.as_deref(), Some("5b1c6f0f0c0ad4f8b6b1e3f4a7d9c2e18f3a6b5c4d2e1f0a9b8c7d6e5f4a3b2c"));
        let mut out = Vec::new();
        s.to_json(None, None, &mut out);
        assert_eq!(out, json.to_vec(), "unknown keys round-trip byte for byte");
    }

    #[test]
    fn flash_and_return_to() {
        let json = "{\"session_id\":\"ab\",\"return_to_after_authenticating\":\"https://x.test/rooms/1?a=\\u0026b\",\"flash\":{\"discard\":[],\"flashes\":{\"notice\":\"\\u2713\",\"alert\":\"Room not found\"}}}";
        let s = RailsSession::parse(json.as_bytes()).unwrap();
        assert_eq!(s.return_to.as_deref(), Some("https://x.test/rooms/1?a=&b"));
        assert_eq!(s.notice.as_deref(), Some("✓"));
        assert_eq!(s.alert.as_deref(), Some("Room not found"));
        let mut out = Vec::new();
        s.to_json(Some("<b>"), None, &mut out);
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            "{\"session_id\":\"ab\",\"return_to_after_authenticating\":\"https://x.test/rooms/1?a=\\u0026b\",\"flash\":{\"discard\":[],\"flashes\":{\"notice\":\"\\u003cb\\u003e\"}}}"
        );
        let again = RailsSession::parse(&out).unwrap();
        assert_eq!(again.notice.as_deref(), Some("<b>"));
        assert_eq!(again.alert, None);
    }

    #[test]
    fn rejects_garbage_without_panicking() {
        for bad in [&b""[..], b"[]", b"{", b"{\"a\":}", b"{\"a\":1,}", b"{\"a\":\"\\ud800\"}", b"{} x", b"{\"a\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}"] {
            assert_eq!(RailsSession::parse(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(RailsSession::parse(b" { } ").map(|s| s.is_empty()), Some(true));
        assert!(RailsSession::parse(b"{\"n\":-1.5e3,\"t\":true,\"o\":{\"k\":[null,false]}}").is_some());
    }
}
