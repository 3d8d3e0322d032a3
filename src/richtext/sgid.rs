//! Reading the user id out of a signed global id WITHOUT checking its signature.
//!
//! Campfire renders @mentions leniently (spec/01 §8.3): the part of the sgid before the first
//! `--` is Base64 JSON; `_rails.data` holds `gid://campfire/User/<id>` (Rails 7.1+), or the
//! legacy `_rails.message` holds Base64 Ruby Marshal bytes in which the first
//! `gid://campfire/<Model>/<digits>` is the id. Only `User` ids are returned, so a tampered sgid
//! can at worst show another user's name in a mention — exactly what Rails accepts. Mention
//! *detection* (pushes, webhooks) must verify the signature instead (crypto).

/// The user id an sgid names, if it names a `User`; the signature is not checked. The one
/// reading of it is `crypto::sgid::lenient_user`; this is its entry point for the `resolve`
/// callbacks of rendering and plain text.
pub fn unverified_user_id(sgid: &str) -> Option<i64> {
    crate::crypto::sgid::lenient_user(sgid.as_bytes(), &mut crate::crypto::Scratch::default())
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
