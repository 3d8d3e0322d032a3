//! Signed Global IDs for mentions: `gid://campfire/User/<id>` signed with purpose
//! `attachable` (spec/03 §8).
//!
//! Two ways to resolve one, both needed:
//! - strict (`verify_user`): signature and purpose checked; used to decide who gets
//!   notified and what bots are told.
//! - lenient (`lenient_user`): signature ignored; used to render stored messages, so
//!   mentions survive a changed SECRET_KEY_BASE. The caller must still check that the
//!   user exists.
//!
//! Rails 7 wrote sgids whose payload is a legacy envelope around a Ruby Marshal dump of
//! the gid string; without a Marshal decoder the gid is found by the pattern
//! `gid://campfire/[^/]+/\d+`, exactly as the Rails app's own lenient path does.

use super::base64::{self, Alphabet};
use super::json::{self, Reader};
use super::pbkdf2::Keys;
use super::verifier::{self, Bare, Opened};
use super::{parse_id, write_int, Scratch};

const PURPOSE: &str = "attachable";
const APP_PREFIX: &[u8] = b"gid://campfire/";
const USER_GID: &[u8] = b"gid://campfire/User/";

/// Appends the attachable sgid of user `user_id` (no expiry), as mention attachments and
/// the autocomplete JSON carry it.
pub fn user_sgid(keys: &Keys, user_id: i64, out: &mut Vec<u8>) {
    let mut gid = Vec::with_capacity(40);
    gid.extend_from_slice(USER_GID);
    write_int(user_id, &mut gid);
    let mut data = Vec::with_capacity(48);
    json::write_string(&gid, &mut data);
    let mut payload = Vec::with_capacity(96);
    verifier::envelope(&data, None, Some(PURPOSE), &mut payload);
    keys.sgid.sign(&payload, out);
}

/// Strict resolution: the user id of a correctly signed, unexpired `attachable` sgid for a
/// `User`; `None` otherwise.
pub fn verify_user(keys: &Keys, sgid: &[u8], now_ms: i64, s: &mut Scratch) -> Option<i64> {
    s.a.clear();
    s.b.clear();
    keys.sgid.verify(sgid, &mut s.a).ok()?;
    match verifier::open(&s.a, PURPOSE, now_ms, Bare::Refuse, &mut s.b).ok()? {
        Opened::Data(d) => user_from_json_string(d),
        Opened::Message(start) => user_from_marshal(s.b.get(start..)?),
    }
}

/// Lenient resolution: the user id named by an sgid without checking its signature,
/// purpose or expiry. `None` when it does not name a `User`.
pub fn lenient_user(sgid: &[u8], s: &mut Scratch) -> Option<i64> {
    let data = match sgid.windows(2).position(|w| w == b"--") {
        Some(i) => &sgid[..i],
        None => sgid,
    };
    s.a.clear();
    s.b.clear();
    base64::decode_either(Alphabet::UrlSafe, data, &mut s.a).ok()?;
    match verifier::envelope_fields(&s.a).ok()? {
        Some(f) => match (f.message, f.data) {
            (Some(m), _) => {
                base64::decode_either(Alphabet::Standard, m, &mut s.b).ok()?;
                user_from_marshal(&s.b)
            }
            (None, Some(d)) => user_from_json_string(d),
            (None, None) => None,
        },
        None => user_from_json_string(&s.a),
    }
}

/// `"gid://campfire/User/<id>"` (a JSON string) → id.
fn user_from_json_string(d: &[u8]) -> Option<i64> {
    let mut r = Reader::new(d);
    let raw = r.string().ok()?;
    r.end().ok()?;
    let mut buf = [0u8; 64];
    let n = json::unescape_to_slice(raw, &mut buf).ok()?;
    parse_id(buf.get(..n)?.strip_prefix(USER_GID)?)
}

/// Finds the leftmost `gid://campfire/<model>/<digits>` in Marshal bytes; its id if the
/// model is `User`.
fn user_from_marshal(bytes: &[u8]) -> Option<i64> {
    let mut from = 0;
    while let Some(at) = find(bytes.get(from..)?, APP_PREFIX) {
        let rest = &bytes[from + at + APP_PREFIX.len()..];
        let model_len = rest.iter().position(|&c| c == b'/').unwrap_or(0);
        if model_len > 0 {
            let digits = &rest[model_len + 1..];
            let n = digits.iter().take_while(|c| c.is_ascii_digit()).count();
            if n > 0 {
                return if &rest[..model_len] == b"User" {
                    parse_id(&digits[..n])
                } else {
                    None
                };
            }
        }
        from += at + 1;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::vectors::{keys, NOW};

    const USER_1: &str = "eyJfcmFpbHMiOnsiZGF0YSI6ImdpZDovL2NhbXBmaXJlL1VzZXIvMSIsInB1ciI6ImF0dGFjaGFibGUifX0=--fd472d3e948facd1b544c712894239ac67458ba0";

    #[test]
    fn spec03_sgid_vector() {
        let mut v = Vec::new();
        user_sgid(keys(), 1, &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), USER_1);
        assert_eq!(
            verify_user(keys(), USER_1.as_bytes(), NOW, &mut Scratch::default()),
            Some(1)
        );
        assert_eq!(
            lenient_user(USER_1.as_bytes(), &mut Scratch::default()),
            Some(1)
        );
    }

    #[test]
    fn strict_refuses_what_lenient_accepts() {
        let other = Keys::derive(b"rotated secret");
        let mut v = Vec::new();
        user_sgid(&other, 7, &mut v);
        assert_eq!(verify_user(keys(), &v, NOW, &mut Scratch::default()), None);
        assert_eq!(lenient_user(&v, &mut Scratch::default()), Some(7));
        assert_eq!(
            lenient_user(&v[..v.len() - 42], &mut Scratch::default()),
            Some(7),
            "no digest at all"
        );

        // Right key, wrong purpose.
        let mut p = Vec::new();
        verifier::envelope(b"\"gid://campfire/User/3\"", None, Some("other"), &mut p);
        let mut signed = Vec::new();
        keys().sgid.sign(&p, &mut signed);
        assert_eq!(
            verify_user(keys(), &signed, NOW, &mut Scratch::default()),
            None
        );
    }

    #[test]
    fn only_users() {
        let mut p = Vec::new();
        verifier::envelope(b"\"gid://campfire/Room/3\"", None, Some(PURPOSE), &mut p);
        let mut signed = Vec::new();
        keys().sgid.sign(&p, &mut signed);
        assert_eq!(
            verify_user(keys(), &signed, NOW, &mut Scratch::default()),
            None
        );
        assert_eq!(lenient_user(&signed, &mut Scratch::default()), None);
        for bad in [&b""[..], b"--", b"!!!!--x", b"eyJ9--x"] {
            assert_eq!(lenient_user(bad, &mut Scratch::default()), None);
        }
    }

    /// A Rails 7 sgid: legacy envelope, Marshal dump of the gid string inside.
    #[test]
    fn legacy_marshal_sgids() {
        let marshal = b"\x04\x08I\"\x19gid://campfire/User/12\x06:\x06ET";
        let mut payload = Vec::new();
        verifier::legacy_envelope(marshal, None, Some(PURPOSE), &mut payload);
        let mut signed = Vec::new();
        keys().sgid.sign(&payload, &mut signed);
        assert_eq!(
            verify_user(keys(), &signed, NOW, &mut Scratch::default()),
            Some(12)
        );
        assert_eq!(lenient_user(&signed, &mut Scratch::default()), Some(12));
        // Strict-base64 legacy payload, as Rails 7 wrote it, read through either alphabet.
        let mut std = Vec::new();
        base64::encode(Alphabet::Standard, true, &payload, &mut std);
        assert_eq!(lenient_user(&std, &mut Scratch::default()), Some(12));

        assert_eq!(
            user_from_marshal(b"gid://campfire/Room/1 gid://campfire/User/2"),
            None,
            "leftmost match wins"
        );
        assert_eq!(
            user_from_marshal(b"gid://campfire/ gid://campfire/User/5x"),
            Some(5)
        );
        assert_eq!(user_from_marshal(b"gid://campfire/User/"), None);
    }
}
