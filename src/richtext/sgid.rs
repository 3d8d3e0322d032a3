//! Reading the user id out of a signed global id WITHOUT checking its signature.
//!
//! Campfire renders @mentions leniently (spec/01 §8.3): the part of the sgid before the first
//! `--` is Base64 JSON; `_rails.data` holds `gid://campfire/User/<id>` (Rails 7.1+), or the
//! legacy `_rails.message` holds Base64 Ruby Marshal bytes in which the first
//! `gid://campfire/<Model>/<digits>` is the id. Only `User` ids are returned, so a tampered sgid
//! can at worst show another user's name in a mention — exactly what Rails accepts. Mention
//! *detection* (pushes, webhooks) must verify the signature instead (crypto).

use super::json::Json;

/// The user id an sgid names, if it names a `User`; the signature is not checked.
pub fn unverified_user_id(sgid: &str) -> Option<i64> {
    let message = sgid.split("--").next()?;
    let json = base64_decode(message)?;
    let doc = Json::parse(std::str::from_utf8(&json).ok()?)?;
    let rails = doc.get("_rails")?;
    if let Some(gid) = rails.get("data").and_then(Json::as_str) {
        return user_id_from_gid(gid);
    }
    let marshal = base64_decode(rails.get("message").and_then(Json::as_str)?)?;
    let at = find(&marshal, b"gid://campfire/")?;
    let rest = &marshal[at..];
    // gid://campfire/<model>/<digits>, model = one or more bytes other than '/'.
    let after_app = &rest[15..];
    let slash = after_app.iter().position(|&c| c == b'/')?;
    let digits = after_app[slash + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if slash == 0 || digits == 0 {
        return None;
    }
    let gid = std::str::from_utf8(&rest[..15 + slash + 1 + digits]).ok()?;
    user_id_from_gid(gid)
}

/// `gid://campfire/User/42` → 42.
fn user_id_from_gid(gid: &str) -> Option<i64> {
    let id = gid.strip_prefix("gid://campfire/User/")?;
    let id = id.split(['?', '/']).next()?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Base64: the standard alphabet (padding optional), falling back to the URL-safe one.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    decode_with(s, b'+', b'/').or_else(|| decode_with(s, b'-', b'_'))
}

fn decode_with(s: &str, c62: u8, c63: u8) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in s.as_bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            _ if c == c62 => 62,
            _ if c == c63 => 63,
            _ => return None,
        } as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(b: &[u8]) -> String {
        let mut out = Vec::new();
        crate::crypto::base64::encode(crate::crypto::base64::Alphabet::Standard, true, b, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn current_format() {
        let p = b64(br#"{"_rails":{"data":"gid://campfire/User/42","pur":"attachable"}}"#);
        assert_eq!(unverified_user_id(&format!("{p}--deadbeef")), Some(42));
        assert_eq!(unverified_user_id(&format!("{p}--invalid")), Some(42));
        let room = b64(br#"{"_rails":{"data":"gid://campfire/Rooms::Open/1","pur":"attachable"}}"#);
        assert_eq!(unverified_user_id(&format!("{room}--x")), None);
        assert_eq!(unverified_user_id("not base64!--x"), None);
        assert_eq!(unverified_user_id(""), None);
    }

    #[test]
    fn legacy_marshal_format() {
        let marshal = b"\x04\x08I\"\x1bgid://campfire/User/7\x06:\x06ET";
        let p = b64(format!(r#"{{"_rails":{{"message":"{}","exp":null,"pur":"attachable"}}}}"#, b64(marshal)).as_bytes());
        assert_eq!(unverified_user_id(&format!("{p}--invalid")), Some(7));
        let url_safe = p.replace('+', "-").replace('/', "_");
        assert_eq!(unverified_user_id(&url_safe), Some(7));
    }
}
