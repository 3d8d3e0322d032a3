//! Rails-format tokens the seed writes into labels.json and message bodies: Active Record signed ids
//! (avatar tokens), signed global ids (mention sgids) and UUIDv5 client message ids (spec 03 §3, §8, §11).

use crate::digest::{base64, hex, hmac, pbkdf2_sha256, sha1, sha256};

/// The signed id of a user for `purpose` (e.g. "user/avatar"), expiring at `exp` (ISO 8601 with
/// milliseconds) when given: URL-safe unpadded JSON envelope, HMAC-SHA256 with the
/// `active_record/signed_id` key.
pub fn signed_id(secret_key_base: &str, id: i64, purpose: &str, exp: Option<&str>) -> String {
    let key = pbkdf2_sha256(secret_key_base.as_bytes(), b"active_record/signed_id", 1000, 64);
    let exp = exp.map(|e| format!(",\"exp\":\"{e}\"")).unwrap_or_default();
    let payload = format!("{{\"_rails\":{{\"data\":{id}{exp},\"pur\":\"{purpose}\"}}}}");
    let data = base64(payload.as_bytes(), true, false);
    let mac = hex(&hmac(sha256, &key, data.as_bytes()));
    format!("{data}--{mac}")
}

/// The attachable sgid of `gid://campfire/User/<id>`: URL-safe padded, HMAC-SHA1.
pub fn user_sgid(secret_key_base: &str, id: i64) -> String {
    let key = pbkdf2_sha256(secret_key_base.as_bytes(), b"signed_global_ids", 1000, 64);
    let payload = format!("{{\"_rails\":{{\"data\":\"gid://campfire/User/{id}\",\"pur\":\"attachable\"}}}}");
    let data = base64(payload.as_bytes(), true, true);
    let mac = hex(&hmac(sha1, &key, data.as_bytes()));
    format!("{data}--{mac}")
}

/// UUID version 5 (SHA-1, RFC 4122) of `name` in the URL namespace.
pub fn uuid_v5_url(name: &str) -> String {
    let mut input = vec![
        0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8,
    ];
    input.extend_from_slice(name.as_bytes());
    let mut h = sha1(&input);
    h.truncate(16);
    h[6] = (h[6] & 0x0f) | 0x50;
    h[8] = (h[8] & 0x3f) | 0x80;
    let x = hex(&h);
    format!("{}-{}-{}-{}-{}", &x[0..8], &x[8..12], &x[12..16], &x[16..20], &x[20..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_vectors() {
        assert_eq!(
            signed_id("dummy", 1, "user/avatar", None),
            "eyJfcmFpbHMiOnsiZGF0YSI6MSwicHVyIjoidXNlci9hdmF0YXIifX0--9ed00a9b40e88fdec103005e9d2aa0797b2f5fb5c7c33e25d3bc53b37db6c1b3"
        );
        assert_eq!(
            user_sgid("dummy", 1),
            "eyJfcmFpbHMiOnsiZGF0YSI6ImdpZDovL2NhbXBmaXJlL1VzZXIvMSIsInB1ciI6ImF0dGFjaGFibGUifX0=--fd472d3e948facd1b544c712894239ac67458ba0"
        );
    }

    #[test]
    fn signed_id_with_expiry_matches_spec() {
        assert_eq!(
            signed_id("dummy", 1, "user/transfer", Some("2045-01-01T00:00:00.000Z")),
            "eyJfcmFpbHMiOnsiZGF0YSI6MSwiZXhwIjoiMjA0NS0wMS0wMVQwMDowMDowMC4wMDBaIiwicHVyIjoidXNlci90cmFuc2ZlciJ9fQ--2e09b7f9396585489caf05a53a9b635df0b69d4bc880679b45b412b436f7b8cd"
        );
    }

    #[test]
    fn uuid_v5_matches_rfc_example() {
        // The value Python's uuid.uuid5(NAMESPACE_URL, ...) gives for this name.
        assert_eq!(uuid_v5_url("http://python.org/"), "4c565f0d-3f5a-5890-b41b-20cf47701c5e");
    }
}
