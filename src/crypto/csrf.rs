//! Rails' authenticity tokens (spec/03 §7), for pages and scripts Rails rendered that
//! still post to us after a switch, and for any form that carries a token.
//!
//! campfire-room's own forgery protection is Fetch Metadata (design §6), so it never needs
//! to put a per-request random token in a page; these functions only check tokens the
//! browser sends (`authenticity_token` or `X-CSRF-Token`) against the raw token kept in
//! the Rails session (`_csrf_token`), and mask tokens when a caller does want to emit one.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::base64::{self, Alphabet};
use super::token::ct_eq;
use crate::sys::random;

/// Length of the raw token and of each HMAC-derived token.
pub const TOKEN_LEN: usize = 32;

/// The raw token stored URL-safe-base64 in the session's `_csrf_token`.
pub fn raw_from_session(csrf_token: &[u8]) -> Option<[u8; TOKEN_LEN]> {
    let mut raw = [0u8; TOKEN_LEN];
    let n = base64::decode_to_slice(Alphabet::UrlSafe, csrf_token, &mut raw).ok()?;
    (n == TOKEN_LEN).then_some(raw)
}

/// A fresh raw token and its session form (43 URL-safe base64 characters, no padding).
pub fn new_raw() -> ([u8; TOKEN_LEN], String) {
    let raw: [u8; TOKEN_LEN] = random::bytes();
    let mut text = Vec::with_capacity(43);
    base64::encode(Alphabet::UrlSafe, false, &raw, &mut text);
    (raw, String::from_utf8(text).unwrap_or_default())
}

fn hmac(raw: &[u8; TOKEN_LEN], parts: &[&[u8]]) -> [u8; TOKEN_LEN] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(raw).unwrap_or_else(|_| unreachable!());
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().into()
}

/// The global token `HMAC-SHA256(raw, "!real_csrf_token")` (the layout's meta tag).
pub fn global_token(raw: &[u8; TOKEN_LEN]) -> [u8; TOKEN_LEN] {
    hmac(raw, &[b"!real_csrf_token"])
}

/// The per-form token for `path` (trailing `/` ignored) and lowercase `method`.
pub fn form_token(raw: &[u8; TOKEN_LEN], path: &[u8], method: &[u8]) -> [u8; TOKEN_LEN] {
    let path = path.strip_suffix(b"/").unwrap_or(path);
    hmac(raw, &[path, b"#", method])
}

/// Appends `token` masked with `pad`: URL-safe base64, no padding, of `pad ‖ pad⊕token`.
pub fn mask_with(token: &[u8; TOKEN_LEN], pad: &[u8; TOKEN_LEN], out: &mut Vec<u8>) {
    let mut both = [0u8; 2 * TOKEN_LEN];
    both[..TOKEN_LEN].copy_from_slice(pad);
    for (i, (p, t)) in pad.iter().zip(token).enumerate() {
        both[TOKEN_LEN + i] = p ^ t;
    }
    base64::encode(Alphabet::UrlSafe, false, &both, out);
}

/// Appends `token` masked with a fresh random pad (different on every call).
pub fn mask(token: &[u8; TOKEN_LEN], out: &mut Vec<u8>) {
    mask_with(token, &random::bytes(), out)
}

/// Whether a submitted token is valid for this session, request path and lowercase
/// method: a bare 32-byte raw token, or a masked one unmasking to the raw, global or
/// per-form token. All comparisons are constant-time.
pub fn valid(raw: &[u8; TOKEN_LEN], submitted: &[u8], path: &[u8], method: &[u8]) -> bool {
    let mut buf = [0u8; 2 * TOKEN_LEN];
    let n = match base64::decode_to_slice(Alphabet::UrlSafe, submitted, &mut buf)
        .or_else(|_| base64::decode_to_slice(Alphabet::Standard, submitted, &mut buf))
    {
        Ok(n) => n,
        Err(_) => return false,
    };
    match n {
        TOKEN_LEN => ct_eq(&buf[..TOKEN_LEN], raw),
        n if n == 2 * TOKEN_LEN => {
            let mut token = [0u8; TOKEN_LEN];
            for (i, t) in token.iter_mut().enumerate() {
                *t = buf[i] ^ buf[TOKEN_LEN + i];
            }
            let a = ct_eq(&token, raw);
            let b = ct_eq(&token, &global_token(raw));
            let c = ct_eq(&token, &form_token(raw, path, method));
            a | b | c
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RAW_B64: &[u8] = b"kY7s3Qe0x9bVt2LmN4pR6uW8zA1cE3gI5kM7oQ9sU0w";

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn spec03_csrf_vectors() {
        let raw = raw_from_session(RAW_B64).unwrap();
        let g = global_token(&raw);
        assert_eq!(
            hex(&g),
            "c5ef7aed9a98d5c2ee241a253af14f6e53b1879cfef4ca4c8c3650d1e1090bc6"
        );
        let mut masked = Vec::new();
        mask_with(&g, &[1; 32], &mut masked);
        assert_eq!(masked, b"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQHE7nvsm5nUw-8lGyQ78E5vUrCGnf_1y02NN1HQ4AgKxw");
        assert_eq!(
            hex(&form_token(&raw, b"/session", b"post")),
            "6ecd50a98f1e2644d7d02f1e163c00dfe5f02949f71f2a208976f32e19184f4f"
        );
        assert_eq!(
            form_token(&raw, b"/session/", b"post"),
            form_token(&raw, b"/session", b"post")
        );
        assert!(valid(&raw, &masked, b"/anything", b"delete"));
    }

    #[test]
    fn accepts_and_refuses() {
        let (raw, text) = new_raw();
        assert_eq!(text.len(), 43);
        assert_eq!(raw_from_session(text.as_bytes()), Some(raw));
        let f = form_token(&raw, b"/rooms/1/messages", b"post");
        let mut m = Vec::new();
        mask(&f, &mut m);
        assert_eq!(m.len(), 86);
        assert!(valid(&raw, &m, b"/rooms/1/messages/", b"post"));
        assert!(!valid(&raw, &m, b"/rooms/2/messages", b"post"));
        assert!(!valid(&raw, &m, b"/rooms/1/messages", b"delete"));
        let mut bare = Vec::new();
        base64::encode(Alphabet::UrlSafe, false, &raw, &mut bare);
        assert!(valid(&raw, &bare, b"/", b"post"));
        let (other, _) = new_raw();
        assert!(!valid(&other, &m, b"/rooms/1/messages", b"post"));
        assert!(!valid(&raw, b"", b"/", b"post"));
        assert!(!valid(&raw, b"!!!", b"/", b"post"));
        assert!(!valid(&raw, &m[..80], b"/rooms/1/messages", b"post"));
        assert_eq!(raw_from_session(b"short"), None);
    }
}
