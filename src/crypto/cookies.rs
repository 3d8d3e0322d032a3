//! The Rails Campfire cookies: `session_token` (signed), `_campfire_session` (encrypted
//! session hash) and `last_room` (plain), read and written byte-compatibly with Rails 8.2
//! and Rack 3.2 (spec/03 §4).
//!
//! Cookie values travel form-URL-encoded (`=`→`%3D`, `+`→`%2B`, `/`→`%2F`): readers take
//! the value exactly as it appears in the `Cookie` header, writers produce the whole
//! `Set-Cookie` value. Both cookies expire 20 calendar years after issue, in the `expires`
//! attribute and in the signed envelope alike. Reading goes through a reusable `Scratch`,
//! so a warm loop verifies a cookie without allocating.

use super::encryptor;
use super::json::{self, Reader};
use super::pbkdf2::Keys;
use super::time;
use super::verifier::{self, Bare, Opened};
use super::Scratch;

pub const SESSION_TOKEN: &str = "session_token";
pub const SESSION: &str = "_campfire_session";
pub const LAST_ROOM: &str = "last_room";

const SESSION_TOKEN_PURPOSE: &str = "cookie.session_token";
const SESSION_PURPOSE: &str = "cookie._campfire_session";
/// `permanent` cookies and the session store's `expire_after: 20.years`.
const LIFETIME_YEARS: i64 = 20;
/// The longest session token accepted from a cookie (ours are 24 characters).
pub const MAX_TOKEN: usize = 64;

/// A session token taken from a verified cookie, held inline.
#[derive(Clone, Copy)]
pub struct Token {
    buf: [u8; MAX_TOKEN],
    len: usize,
}

impl Token {
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// A token made directly (tests of code that keeps tokens); `None` past `MAX_TOKEN`.
    #[cfg(test)]
    pub(crate) fn from_bytes(b: &[u8]) -> Option<Token> {
        let mut t = Token { buf: [0; MAX_TOKEN], len: b.len() };
        t.buf.get_mut(..b.len())?.copy_from_slice(b);
        Some(t)
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

/// Appends `value` form-URL-encoded as Rack's `escape` does: `*-._` and alphanumerics
/// kept, space as `+`, everything else `%XX` (uppercase hex).
pub fn form_escape(value: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &c in value {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => out.push(c),
            b' ' => out.push(b'+'),
            _ => out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]),
        }
    }
}

/// A `%` in a cookie value not followed by two hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BadEscape;

/// Appends the form-URL-decoding of `value` (`%XX`, `+` as space). A `%` not followed by
/// two hex digits is an error, as in Ruby's `decode_www_form_component`.
pub fn form_unescape(value: &[u8], out: &mut Vec<u8>) -> Result<(), BadEscape> {
    let mut i = 0;
    while let Some(&c) = value.get(i) {
        match c {
            b'%' => {
                let hex = value.get(i + 1..i + 3).ok_or(BadEscape)?;
                let s = std::str::from_utf8(hex).map_err(|_| BadEscape)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return Err(BadEscape);
                }
                out.push(u8::from_str_radix(s, 16).map_err(|_| BadEscape)?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(())
}

/// Appends `name=<escaped value>; path=/; expires=<date>[; secure][; httponly]; samesite=lax`.
fn set_cookie(
    name: &str,
    raw_value: &[u8],
    expires_ms: i64,
    secure: bool,
    httponly: bool,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(name.as_bytes());
    out.push(b'=');
    form_escape(raw_value, out);
    out.extend_from_slice(b"; path=/; expires=");
    time::write_http_date(expires_ms, out);
    if secure {
        out.extend_from_slice(b"; secure");
    }
    if httponly {
        out.extend_from_slice(b"; httponly");
    }
    out.extend_from_slice(b"; samesite=lax");
}

/// Appends the `Set-Cookie` value that deletes cookie `name`, as Rack writes it.
pub fn delete_cookie(name: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(
        b"=; path=/; max-age=0; expires=Thu, 01 Jan 1970 00:00:00 GMT; samesite=lax",
    );
}

/// Appends the `session_token` cookie value (unescaped) for `token`, signed as Rails'
/// signed cookie jar does, expiring at `expires_ms`.
pub fn session_token_value(keys: &Keys, token: &[u8], expires_ms: i64, out: &mut Vec<u8>) {
    let mut inner = Vec::with_capacity(token.len() + 2);
    json::write_string(token, &mut inner);
    let mut envelope = Vec::with_capacity(160);
    verifier::legacy_envelope(
        &inner,
        Some(expires_ms),
        Some(SESSION_TOKEN_PURPOSE),
        &mut envelope,
    );
    keys.signed_cookie.sign(&envelope, out);
}

/// Appends the whole `Set-Cookie` value that signs `token` in: 20 years from `now_ms`,
/// HttpOnly, SameSite=Lax, `secure` unless SSL is disabled.
pub fn set_session_token(keys: &Keys, token: &[u8], now_ms: i64, secure: bool, out: &mut Vec<u8>) {
    let expires = time::add_years(now_ms, LIFETIME_YEARS);
    let mut value = Vec::with_capacity(300);
    session_token_value(keys, token, expires, &mut value);
    set_cookie(SESSION_TOKEN, &value, expires, secure, true, out);
}

/// Reads the session token from a `session_token` cookie value as it appears in the
/// request's `Cookie` header. `None` for anything Rails would treat as "not logged in":
/// bad encoding or signature, wrong purpose, expired, not a JSON string, too long.
pub fn read_session_token(
    keys: &Keys,
    cookie_value: &[u8],
    now_ms: i64,
    s: &mut Scratch,
) -> Option<Token> {
    read_session_token_until(keys, cookie_value, now_ms, s).map(|(t, _)| t)
}

/// `read_session_token`, plus the moment the cookie stops being valid (its signed expiry in
/// Unix ms, `None` for never): what a caller needs to remember a verified cookie and skip
/// the HMAC next time (`app::session_memo`). Allocation-free with a warm `Scratch`.
pub fn read_session_token_until(
    keys: &Keys,
    cookie_value: &[u8],
    now_ms: i64,
    s: &mut Scratch,
) -> Option<(Token, Option<i64>)> {
    s.a.clear();
    s.b.clear();
    form_unescape(cookie_value, &mut s.a).ok()?;
    keys.signed_cookie.verify(&s.a, &mut s.b).ok()?;
    let expires_ms = verifier::expiry(&s.b).ok()?;
    s.a.clear();
    let json_text: &[u8] =
        match verifier::open(&s.b, SESSION_TOKEN_PURPOSE, now_ms, Bare::Accept, &mut s.a).ok()? {
            Opened::Data(d) => d,
            Opened::Message(start) => s.a.get(start..)?,
        };
    let mut r = Reader::new(json_text);
    let raw = r.string().ok()?;
    r.end().ok()?;
    let mut t = Token {
        buf: [0; MAX_TOKEN],
        len: 0,
    };
    t.len = json::unescape_to_slice(raw, &mut t.buf).ok()?;
    Some((t, expires_ms))
}

/// The Rails session hash, as far as Campfire uses it (spec/03 §4.5). Members it does not
/// know are kept verbatim so a round trip loses nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Session {
    /// `session_id`: 64 hex characters, created on first write.
    pub session_id: Option<String>,
    /// `_csrf_token`: URL-safe base64 of 32 raw bytes.
    pub csrf_token: Option<String>,
    /// `return_to_after_authenticating`: the URL to go back to after login.
    pub return_to: Option<String>,
    /// Live flash messages, `(kind, message)`, e.g. `("notice", "…")`.
    pub flash: Vec<(String, String)>,
    /// Other members as raw JSON `(key, value)` texts.
    pub other: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Session {
    /// Whether there is nothing to store (Rack then writes no cookie).
    pub fn is_empty(&self) -> bool {
        self.session_id.is_none()
            && self.csrf_token.is_none()
            && self.return_to.is_none()
            && self.flash.is_empty()
            && self.other.is_empty()
    }

    /// Appends the session hash as JSON.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        let mut member = |key: &[u8], out: &mut Vec<u8>| {
            if !std::mem::replace(&mut first, false) {
                out.push(b',');
            }
            json::write_string(key, out);
            out.push(b':');
        };
        for (key, value) in [
            (&b"session_id"[..], &self.session_id),
            (b"_csrf_token", &self.csrf_token),
            (b"return_to_after_authenticating", &self.return_to),
        ] {
            if let Some(v) = value {
                member(key, out);
                json::write_string(v.as_bytes(), out);
            }
        }
        if !self.flash.is_empty() {
            member(b"flash", out);
            out.extend_from_slice(b"{\"discard\":[],\"flashes\":{");
            for (i, (kind, message)) in self.flash.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json::write_string(kind.as_bytes(), out);
                out.push(b':');
                json::write_string(message.as_bytes(), out);
            }
            out.extend_from_slice(b"}}");
        }
        for (key, value) in &self.other {
            if !first {
                out.push(b',');
            }
            first = false;
            out.push(b'"');
            out.extend_from_slice(key);
            out.extend_from_slice(b"\":");
            out.extend_from_slice(value);
        }
        out.push(b'}');
    }

    /// Parses a session hash; `None` if it is not a JSON object. Flash entries listed in
    /// `discard` are dropped, as Rails does when it loads the flash.
    pub fn from_json(text: &[u8]) -> Option<Session> {
        let mut r = Reader::new(text);
        r.begin_object().ok()?;
        let mut s = Session::default();
        while let Some(key) = r.next_key().ok()? {
            match key {
                b"session_id" if r.peek() == Some(b'"') => s.session_id = Some(string(&mut r)?),
                b"_csrf_token" if r.peek() == Some(b'"') => s.csrf_token = Some(string(&mut r)?),
                b"return_to_after_authenticating" if r.peek() == Some(b'"') => {
                    s.return_to = Some(string(&mut r)?)
                }
                b"flash" if r.peek() == Some(b'{') => s.flash = flash(&mut r)?,
                _ => {
                    let value = r.value().ok()?;
                    s.other.push((key.to_vec(), value.to_vec()));
                }
            }
        }
        r.end().ok()?;
        Some(s)
    }
}

fn string(r: &mut Reader<'_>) -> Option<String> {
    let raw = r.string().ok()?;
    let mut v = Vec::with_capacity(raw.len());
    json::unescape(raw, &mut v).ok()?;
    String::from_utf8(v).ok()
}

/// Reads `{"discard":[…],"flashes":{…}}`, keeping string flashes not discarded.
fn flash(r: &mut Reader<'_>) -> Option<Vec<(String, String)>> {
    r.begin_object().ok()?;
    let mut discard: Vec<String> = Vec::new();
    let mut flashes = Vec::new();
    while let Some(key) = r.next_key().ok()? {
        match key {
            b"discard" if r.peek() == Some(b'[') => {
                r.begin_array().ok()?;
                while r.next_item().ok()? {
                    if r.peek() == Some(b'"') {
                        discard.push(string(r)?);
                    } else {
                        r.value().ok()?;
                    }
                }
            }
            b"flashes" if r.peek() == Some(b'{') => {
                r.begin_object().ok()?;
                while let Some(kind) = r.next_key().ok()? {
                    if r.peek() == Some(b'"') {
                        let message = string(r)?;
                        let mut k = Vec::new();
                        json::unescape(kind, &mut k).ok()?;
                        flashes.push((String::from_utf8(k).ok()?, message));
                    } else {
                        r.value().ok()?;
                    }
                }
            }
            _ => {
                r.value().ok()?;
            }
        }
    }
    flashes.retain(|(kind, _)| !discard.contains(kind));
    Some(flashes)
}

/// Appends the `_campfire_session` cookie value (unescaped): the session JSON in a legacy
/// envelope expiring at `expires_ms`, AES-256-GCM encrypted under a fresh IV.
pub fn session_value(keys: &Keys, session: &Session, expires_ms: i64, out: &mut Vec<u8>) {
    session_value_with_iv(keys, session, expires_ms, &crate::sys::random::bytes(), out)
}

fn session_value_with_iv(
    keys: &Keys,
    session: &Session,
    expires_ms: i64,
    iv: &[u8; 12],
    out: &mut Vec<u8>,
) {
    let mut text = Vec::with_capacity(256);
    session.write_json(&mut text);
    let mut envelope = Vec::with_capacity(text.len() * 4 / 3 + 120);
    verifier::legacy_envelope(
        &text,
        Some(expires_ms),
        Some(SESSION_PURPOSE),
        &mut envelope,
    );
    encryptor::encrypt(&keys.encrypted_cookie, iv, &mut envelope, out);
}

/// Appends the whole `Set-Cookie` value for the session hash: 20 years from `now_ms`,
/// HttpOnly, SameSite=Lax, `secure` unless SSL is disabled.
pub fn set_session(keys: &Keys, session: &Session, now_ms: i64, secure: bool, out: &mut Vec<u8>) {
    let expires = time::add_years(now_ms, LIFETIME_YEARS);
    let mut value = Vec::with_capacity(512);
    session_value(keys, session, expires, &mut value);
    set_cookie(SESSION, &value, expires, secure, true, out);
}

/// Reads the session hash from a `_campfire_session` cookie value as it appears in the
/// `Cookie` header. Any failure (tampering, wrong key, expiry, bad JSON) gives an empty
/// session, as Rails does.
pub fn read_session(keys: &Keys, cookie_value: &[u8], now_ms: i64, s: &mut Scratch) -> Session {
    read_session_inner(keys, cookie_value, now_ms, s).unwrap_or_default()
}

fn read_session_inner(
    keys: &Keys,
    cookie_value: &[u8],
    now_ms: i64,
    s: &mut Scratch,
) -> Option<Session> {
    s.a.clear();
    s.b.clear();
    form_unescape(cookie_value, &mut s.a).ok()?;
    encryptor::decrypt(&keys.encrypted_cookie, &s.a, &mut s.b).ok()?;
    s.a.clear();
    let text: &[u8] =
        match verifier::open(&s.b, SESSION_PURPOSE, now_ms, Bare::Accept, &mut s.a).ok()? {
            Opened::Data(d) => d,
            Opened::Message(start) => s.a.get(start..)?,
        };
    Session::from_json(text)
}

/// Appends the `Set-Cookie` value remembering the last room visited (not HttpOnly: the
/// page's JavaScript reads it).
pub fn set_last_room(room_id: i64, now_ms: i64, secure: bool, out: &mut Vec<u8>) {
    let expires = time::add_years(now_ms, LIFETIME_YEARS);
    let mut digits = Vec::with_capacity(20);
    super::write_int(room_id, &mut digits);
    set_cookie(LAST_ROOM, &digits, expires, secure, false, out);
}

/// Reads `last_room`: a decimal room id.
pub fn read_last_room(cookie_value: &[u8]) -> Option<i64> {
    super::parse_id(cookie_value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::base64;
    use std::sync::OnceLock;

    fn keys() -> &'static Keys {
        static K: OnceLock<Keys> = OnceLock::new();
        K.get_or_init(|| Keys::derive(b"dummy"))
    }

    /// 2026-01-01T00:00:00Z, before every expiry in the vectors.
    const NOW: i64 = 1_767_225_600_000;
    const EXP_2045: i64 = 2_366_841_600_000;

    const REPO_COOKIE: &str = "eyJfcmFpbHMiOnsibWVzc2FnZSI6IkltRmhZV0ZoWVdGaFlXRmhZV0ZoWVdGaFlXRXdNREF3TVNJPSIsImV4cCI6IjIwNDQtMDEtMTZUMDk6NTU6MDkuMDA0WiIsInB1ciI6ImNvb2tpZS5zZXNzaW9uX3Rva2VuIn19--d7c7c54d796052ecafd42f742c837634374b5c53";
    const AXJS_COOKIE: &str = "eyJfcmFpbHMiOnsibWVzc2FnZSI6IklrRjRTbk01TkdaMFpWRTFRWFYwZGpKV2NrdHpTRFk0WXlJPSIsImV4cCI6IjIwNDUtMDEtMDFUMDA6MDA6MDAuMDAwWiIsInB1ciI6ImNvb2tpZS5zZXNzaW9uX3Rva2VuIn19--9a3b592fcd6510f211f76a49d51a34ba74df6c5b";
    const SESSION_COOKIE: &str = "C48PY3oFz4AemAzmyI73v3BklYVQyB/zaHrz7KXPIKNd3U4QInJ0P9e4gEYGTg2bBTH1f8vQuhkRSYlnVSv1N65BOUATQTOqIbyy9rM1bXcYk85G5IpQjMYQLCNK4OWMcvBAIQ+v9zSZHwsotwGpVYYEvqdelGv51Z+iv3yubignSc3mEcM6cS++fH+n9X8VvN5jnypb+I9CcWnXPxa1aaY+NWlKadv3lNDq6UiA7iQ5aexSqbzPiQWDDsUvDNucMhMNfHl1eURUcgxYy9FsPd2d5hTZNg0MfQiPJmO3VvflJw6NFIYRNSwmEEqAmtljP/is6d7M6Zy2jdPcDOoyIFCAyjYsmhcGd3crgNMFqGYm3VbBrDzB--cfUJfr/L6siLfik5--XyOQmuO1VaWD71WdcIjqIg==";
    const SESSION_ID: &str = "5b1c6f0f0c0ad4f8b6b1e3f4a7d9c2e18f3a6b5c4d2e1f0a9b8c7d6e5f4a3b2c";
    const CSRF: &str = "kY7s3Qe0x9bVt2LmN4pR6uW8zA1cE3gI5kM7oQ9sU0w";

    fn escaped(v: &str) -> Vec<u8> {
        let mut out = Vec::new();
        form_escape(v.as_bytes(), &mut out);
        out
    }

    fn token(v: &[u8], now: i64) -> Option<String> {
        read_session_token(keys(), v, now, &mut Scratch::default())
            .map(|t| String::from_utf8(t.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn spec03_session_token_vectors_sign_in() {
        assert_eq!(
            token(REPO_COOKIE.as_bytes(), NOW).as_deref(),
            Some("aaaaaaaaaaaaaaaaaaa00001")
        );
        assert_eq!(
            token(&escaped(REPO_COOKIE), NOW).as_deref(),
            Some("aaaaaaaaaaaaaaaaaaa00001")
        );
        assert_eq!(
            token(&escaped(AXJS_COOKIE), NOW).as_deref(),
            Some("AxJs94fteQ5Autv2VrKsH68c")
        );
        let repo_exp = time::parse_iso8601(b"2044-01-16T09:55:09.004Z").unwrap();
        assert_eq!(
            token(REPO_COOKIE.as_bytes(), repo_exp - 1).as_deref(),
            Some("aaaaaaaaaaaaaaaaaaa00001")
        );
        assert_eq!(token(REPO_COOKIE.as_bytes(), repo_exp), None, "expired");
        let (t, until) = read_session_token_until(keys(), REPO_COOKIE.as_bytes(), NOW, &mut Scratch::default()).unwrap();
        assert_eq!(t.as_bytes(), b"aaaaaaaaaaaaaaaaaaa00001");
        assert_eq!(until, Some(repo_exp), "the envelope's expiry, for a memo of the verified cookie");
        assert!(read_session_token_until(keys(), REPO_COOKIE.as_bytes(), repo_exp, &mut Scratch::default()).is_none());
    }

    #[test]
    fn spec03_session_token_is_reproduced_byte_for_byte() {
        let mut v = Vec::new();
        session_token_value(keys(), b"AxJs94fteQ5Autv2VrKsH68c", EXP_2045, &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), AXJS_COOKIE);
    }

    #[test]
    fn session_token_refusals() {
        let mut bad = AXJS_COOKIE.as_bytes().to_vec();
        let last = bad.len() - 1;
        bad[last] = b'0';
        assert_eq!(token(&bad, NOW), None, "bad digest");
        assert_eq!(token(b"", NOW), None);
        assert_eq!(token(b"%zz", NOW), None);
        assert_eq!(token(b"garbage--", NOW), None);
        let other = Keys::derive(b"other secret");
        assert!(
            read_session_token(&other, AXJS_COOKIE.as_bytes(), NOW, &mut Scratch::default())
                .is_none()
        );

        // Signed with the right key but meant for another cookie: refused.
        let mut env = Vec::new();
        verifier::legacy_envelope(b"\"tok\"", Some(EXP_2045), Some("cookie.other"), &mut env);
        let mut v = Vec::new();
        keys().signed_cookie.sign(&env, &mut v);
        assert_eq!(token(&v, NOW), None);
        // No envelope at all: accepted, as Rails retries without purpose.
        v.clear();
        keys().signed_cookie.sign(b"\"tok\"", &mut v);
        assert_eq!(token(&v, NOW).as_deref(), Some("tok"));
        let bare = read_session_token_until(keys(), &v, NOW, &mut Scratch::default()).unwrap();
        assert_eq!(bare.1, None, "no envelope: it never expires");
        // A JSON number is not a token.
        v.clear();
        keys().signed_cookie.sign(b"12", &mut v);
        assert_eq!(token(&v, NOW), None);
        // Longer than MAX_TOKEN: refused rather than truncated.
        v.clear();
        session_token_value(keys(), &[b'a'; MAX_TOKEN + 1], EXP_2045, &mut v);
        assert_eq!(token(&v, NOW), None);
    }

    #[test]
    fn set_session_token_header() {
        let mut h = Vec::new();
        set_session_token(
            keys(),
            b"AxJs94fteQ5Autv2VrKsH68c",
            time::add_years(EXP_2045, -20),
            true,
            &mut h,
        );
        let h = String::from_utf8(h).unwrap();
        let value = h
            .strip_prefix("session_token=")
            .unwrap()
            .split(';')
            .next()
            .unwrap();
        assert!(!value.contains('=') && !value.contains('+') && !value.contains('/'));
        assert_eq!(value.as_bytes(), escaped(AXJS_COOKIE));
        assert!(
            h.ends_with(
                "; path=/; expires=Sun, 01 Jan 2045 00:00:00 GMT; secure; httponly; samesite=lax"
            ),
            "{h}"
        );
        let mut plain = Vec::new();
        set_session_token(keys(), b"t", NOW, false, &mut plain);
        assert!(String::from_utf8(plain)
            .unwrap()
            .ends_with("; path=/; expires=Mon, 01 Jan 2046 00:00:00 GMT; httponly; samesite=lax"));
    }

    fn session(v: &[u8]) -> Session {
        read_session(keys(), v, NOW, &mut Scratch::default())
    }

    #[test]
    fn spec03_encrypted_session_vector_decrypts() {
        let s = session(&escaped(SESSION_COOKIE));
        assert_eq!(s.session_id.as_deref(), Some(SESSION_ID));
        assert_eq!(s.csrf_token.as_deref(), Some(CSRF));
        assert!(s.return_to.is_none() && s.flash.is_empty() && s.other.is_empty());
        assert!(
            session(SESSION_COOKIE.as_bytes()).is_empty(),
            "an unescaped '+' reads as a space"
        );
    }

    #[test]
    fn spec03_encrypted_session_is_reproduced_with_its_iv() {
        let s = Session {
            session_id: Some(SESSION_ID.into()),
            csrf_token: Some(CSRF.into()),
            ..Session::default()
        };
        let mut iv = Vec::new();
        base64::decode(base64::Alphabet::Standard, b"cfUJfr/L6siLfik5", &mut iv).unwrap();
        let mut v = Vec::new();
        session_value_with_iv(keys(), &s, EXP_2045, &iv.try_into().unwrap(), &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), SESSION_COOKIE);
    }

    #[test]
    fn session_round_trip_with_flash_and_unknown_members() {
        let s = Session {
            session_id: Some(SESSION_ID.into()),
            csrf_token: None,
            return_to: Some("https://chat.example/rooms/1?x=<y>&z".into()),
            flash: vec![("notice".into(), "✓ \"saved\"".into())],
            other: vec![(b"warden".to_vec(), br#"{"a":[1,2]}"#.to_vec())],
        };
        let mut h = Vec::new();
        set_session(keys(), &s, NOW, true, &mut h);
        let h = String::from_utf8(h).unwrap();
        assert!(
            h.starts_with("_campfire_session=") && h.ends_with("; secure; httponly; samesite=lax")
        );
        let value = h["_campfire_session=".len()..].split(';').next().unwrap();
        assert_eq!(session(value.as_bytes()), s);
        let mut again = Vec::new();
        set_session(keys(), &s, NOW, true, &mut again);
        assert_ne!(h.as_bytes(), &again[..], "a fresh IV every time");
        let exp = time::add_years(NOW, 20);
        assert!(
            read_session(keys(), value.as_bytes(), exp, &mut Scratch::default()).is_empty(),
            "expired"
        );
        let mut tampered = value.as_bytes().to_vec();
        tampered[3] ^= 1;
        assert!(session(&tampered).is_empty());
        assert!(session(b"").is_empty());
    }

    #[test]
    fn flash_discard_is_honoured() {
        let json = br#"{"flash":{"discard":["alert"],"flashes":{"notice":"hi","alert":"gone","n":1}},"x":null}"#;
        let s = Session::from_json(json).unwrap();
        assert_eq!(s.flash, vec![("notice".to_string(), "hi".to_string())]);
        assert_eq!(s.other, vec![(b"x".to_vec(), b"null".to_vec())]);
        let mut out = Vec::new();
        s.write_json(&mut out);
        assert_eq!(
            out,
            br#"{"flash":{"discard":[],"flashes":{"notice":"hi"}},"x":null}"#
        );
        assert!(Session::from_json(b"[]").is_none());
        assert!(Session::from_json(b"{").is_none());
    }

    #[test]
    fn form_encoding() {
        let mut out = Vec::new();
        form_escape(b"a+b/c=d e-f_g.h*i~", &mut out);
        assert_eq!(out, b"a%2Bb%2Fc%3Dd+e-f_g.h*i%7E");
        let mut back = Vec::new();
        form_unescape(&out, &mut back).unwrap();
        assert_eq!(back, b"a+b/c=d e-f_g.h*i~");
        assert!(form_unescape(b"%4", &mut Vec::new()).is_err());
        assert!(form_unescape(b"%g0", &mut Vec::new()).is_err());
        let mut lower = Vec::new();
        form_unescape(b"%2b%2F", &mut lower).unwrap();
        assert_eq!(lower, b"+/");
    }

    #[test]
    fn last_room_and_deletion() {
        let mut h = Vec::new();
        set_last_room(42, NOW, false, &mut h);
        assert_eq!(
            h,
            b"last_room=42; path=/; expires=Mon, 01 Jan 2046 00:00:00 GMT; samesite=lax"
        );
        assert_eq!(read_last_room(b"42"), Some(42));
        assert_eq!(read_last_room(b"4x"), None);
        let mut d = Vec::new();
        delete_cookie(SESSION_TOKEN, &mut d);
        assert_eq!(d, b"session_token=; path=/; max-age=0; expires=Thu, 01 Jan 1970 00:00:00 GMT; samesite=lax");
    }

    #[test]
    fn warm_scratch_reads_without_growing() {
        let mut scratch = Scratch::default();
        let v = escaped(AXJS_COOKIE);
        read_session_token(keys(), &v, NOW, &mut scratch).unwrap();
        let caps = (scratch.a.capacity(), scratch.b.capacity());
        for _ in 0..10 {
            read_session_token(keys(), &v, NOW, &mut scratch).unwrap();
        }
        assert_eq!(caps, (scratch.a.capacity(), scratch.b.capacity()));
    }
}
