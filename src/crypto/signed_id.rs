//! Active Record signed ids (avatar tokens, session-transfer ids) and Active Storage
//! signed blob ids (spec/03 §11.1–11.2).
//!
//! Active Record generates HMAC-SHA256 / URL-safe unpadded tokens and, with Rails'
//! `:generate_and_verify` legacy setting, also accepts the HMAC-SHA1 / strict base64 form
//! under the same key. Both carry `{"_rails":{"data":<id>,["exp":…,]"pur":"<purpose>"}}`.

use super::json::Reader;
use super::pbkdf2::Keys;
use super::verifier::{self, Bare, Opened, Verifier};
use super::{parse_id, write_int, Scratch};

/// Purpose of avatar URLs (`/users/<token>/avatar`); never expires.
pub const AVATAR: &str = "user/avatar";
/// Purpose of session-transfer links; valid for `TRANSFER_LIFETIME_MS`.
pub const TRANSFER: &str = "user/transfer";
/// `TRANSFER_LINK_EXPIRY_DURATION`: 4 hours.
pub const TRANSFER_LIFETIME_MS: i64 = 4 * 3600 * 1000;
/// Purpose of Active Storage blob signed ids.
pub const BLOB: &str = "blob_id";

fn sign(v: &Verifier, id: i64, purpose: &str, expires_ms: Option<i64>, out: &mut Vec<u8>) {
    let mut data = Vec::with_capacity(20);
    write_int(id, &mut data);
    let mut payload = Vec::with_capacity(80);
    verifier::envelope(&data, expires_ms, Some(purpose), &mut payload);
    v.sign(&payload, out);
}

fn open_id(
    v: &Verifier,
    signed: &[u8],
    purpose: &str,
    now_ms: i64,
    s: &mut Scratch,
) -> Option<i64> {
    s.a.clear();
    s.b.clear();
    v.verify(signed, &mut s.a).ok()?;
    match verifier::open(&s.a, purpose, now_ms, Bare::Refuse, &mut s.b).ok()? {
        Opened::Data(d) => {
            let mut r = Reader::new(d);
            let id = match r.peek() {
                // find_by casts a numeric string too
                Some(b'"') => parse_id(r.string().ok()?)?,
                _ => r.integer().ok()?,
            };
            r.end().ok()?;
            Some(id)
        }
        Opened::Message(_) => None,
    }
}

/// Appends a signed id for record `id` with `purpose` (e.g. `AVATAR`), expiring at
/// `expires_ms` when given.
pub fn generate(keys: &Keys, id: i64, purpose: &str, expires_ms: Option<i64>, out: &mut Vec<u8>) {
    sign(&keys.signed_id, id, purpose, expires_ms, out)
}

/// The record id of a valid signed id for `purpose`, in either accepted format.
pub fn verify(
    keys: &Keys,
    signed: &[u8],
    purpose: &str,
    now_ms: i64,
    s: &mut Scratch,
) -> Option<i64> {
    open_id(&keys.signed_id, signed, purpose, now_ms, s)
        .or_else(|| open_id(&keys.signed_id_sha1, signed, purpose, now_ms, s))
}

/// Appends the avatar token of user `user_id`.
pub fn avatar_token(keys: &Keys, user_id: i64, out: &mut Vec<u8>) {
    generate(keys, user_id, AVATAR, None, out)
}

/// Appends a session-transfer id for user `user_id`, valid for 4 hours from `now_ms`.
pub fn transfer_id(keys: &Keys, user_id: i64, now_ms: i64, out: &mut Vec<u8>) {
    generate(
        keys,
        user_id,
        TRANSFER,
        Some(now_ms + TRANSFER_LIFETIME_MS),
        out,
    )
}

/// Appends the Active Storage signed id of blob `blob_id` (no expiry).
pub fn blob_signed_id(keys: &Keys, blob_id: i64, out: &mut Vec<u8>) {
    sign(&keys.active_storage, blob_id, BLOB, None, out)
}

/// The blob id of a valid Active Storage signed blob id.
pub fn verify_blob_signed_id(
    keys: &Keys,
    signed: &[u8],
    now_ms: i64,
    s: &mut Scratch,
) -> Option<i64> {
    open_id(&keys.active_storage, signed, BLOB, now_ms, s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::time;
    use crate::crypto::vectors::{keys, NOW};

    const AVATAR_1: &str = "eyJfcmFpbHMiOnsiZGF0YSI6MSwicHVyIjoidXNlci9hdmF0YXIifX0--9ed00a9b40e88fdec103005e9d2aa0797b2f5fb5c7c33e25d3bc53b37db6c1b3";
    const TRANSFER_1: &str = "eyJfcmFpbHMiOnsiZGF0YSI6MSwiZXhwIjoiMjA0NS0wMS0wMVQwMDowMDowMC4wMDBaIiwicHVyIjoidXNlci90cmFuc2ZlciJ9fQ--2e09b7f9396585489caf05a53a9b635df0b69d4bc880679b45b412b436f7b8cd";
    const AVATAR_1_SHA1: &str = "eyJfcmFpbHMiOnsiZGF0YSI6MSwicHVyIjoidXNlci9hdmF0YXIifX0=--46534f9fefa08df4f363158de820d7203c6b0290";
    const BLOB_1: &str = "eyJfcmFpbHMiOnsiZGF0YSI6MSwicHVyIjoiYmxvYl9pZCJ9fQ==--4a84313f3b50fab44776f2d354f1a8729d53f91c";

    fn s() -> Scratch {
        Scratch::default()
    }

    #[test]
    fn spec03_avatar_token() {
        let mut v = Vec::new();
        avatar_token(keys(), 1, &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), AVATAR_1);
        assert_eq!(
            verify(keys(), AVATAR_1.as_bytes(), AVATAR, NOW, &mut s()),
            Some(1)
        );
        assert_eq!(
            verify(keys(), AVATAR_1_SHA1.as_bytes(), AVATAR, NOW, &mut s()),
            Some(1),
            "fallback format"
        );
        assert_eq!(
            verify(keys(), AVATAR_1.as_bytes(), TRANSFER, NOW, &mut s()),
            None
        );
    }

    #[test]
    fn spec03_transfer_id() {
        let exp = time::parse_iso8601(b"2045-01-01T00:00:00.000Z").unwrap();
        let mut v = Vec::new();
        transfer_id(keys(), 1, exp - TRANSFER_LIFETIME_MS, &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), TRANSFER_1);
        assert_eq!(
            verify(keys(), TRANSFER_1.as_bytes(), TRANSFER, exp - 1, &mut s()),
            Some(1)
        );
        assert_eq!(
            verify(keys(), TRANSFER_1.as_bytes(), TRANSFER, exp, &mut s()),
            None,
            "expired"
        );
        assert_eq!(
            verify(keys(), TRANSFER_1.as_bytes(), AVATAR, NOW, &mut s()),
            None
        );
    }

    #[test]
    fn spec03_blob_signed_id() {
        let mut v = Vec::new();
        blob_signed_id(keys(), 1, &mut v);
        assert_eq!(String::from_utf8(v).unwrap(), BLOB_1);
        assert_eq!(
            verify_blob_signed_id(keys(), BLOB_1.as_bytes(), NOW, &mut s()),
            Some(1)
        );
        assert_eq!(
            verify(keys(), BLOB_1.as_bytes(), BLOB, NOW, &mut s()),
            None,
            "different key"
        );
    }

    #[test]
    fn refusals() {
        let mut t = AVATAR_1.as_bytes().to_vec();
        t[5] ^= 1;
        assert_eq!(verify(keys(), &t, AVATAR, NOW, &mut s()), None);
        assert_eq!(verify(keys(), b"", AVATAR, NOW, &mut s()), None);
        // Bare payload (no envelope) when a purpose is expected: refused.
        let mut bare = Vec::new();
        keys().signed_id.sign(b"1", &mut bare);
        assert_eq!(verify(keys(), &bare, AVATAR, NOW, &mut s()), None);
        // Data that is not an id.
        let mut p = Vec::new();
        verifier::envelope(b"[1]", None, Some(AVATAR), &mut p);
        let mut signed = Vec::new();
        keys().signed_id.sign(&p, &mut signed);
        assert_eq!(verify(keys(), &signed, AVATAR, NOW, &mut s()), None);
    }
}
