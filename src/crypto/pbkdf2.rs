//! Rails' key generator (PBKDF2-HMAC-SHA256, 1000 iterations) and `Keys`, every key the
//! app needs, derived once at start from SECRET_KEY_BASE.
//!
//! The secret is used as its ASCII bytes, never hex-decoded; each use has a fixed salt
//! (spec/03 §2). Deriving all of them costs ~14,000 HMAC-SHA256 blocks, a few
//! milliseconds, which is why it happens once and the results are shared read-only.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::base64::Alphabet;
use super::gcm::Gcm;
use super::verifier::{Digest, Verifier};

/// Rails' iteration count for `ActiveSupport::KeyGenerator`.
pub const ITERATIONS: u32 = 1000;

/// PBKDF2 (RFC 8018) with HMAC-SHA256: fills `out` with key material for `password` and
/// `salt`.
pub fn pbkdf2_hmac_sha256(password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
    // HMAC accepts keys of any length, so this cannot fail.
    let keyed =
        <Hmac<Sha256> as KeyInit>::new_from_slice(password).unwrap_or_else(|_| unreachable!());
    for (i, block) in out.chunks_mut(32).enumerate() {
        let mut m = keyed.clone();
        m.update(salt);
        m.update(&(i as u32 + 1).to_be_bytes());
        let mut u: [u8; 32] = m.finalize().into_bytes().into();
        let mut t = u;
        for _ in 1..iterations {
            let mut m = keyed.clone();
            m.update(&u);
            u = m.finalize().into_bytes().into();
            for (a, b) in t.iter_mut().zip(u) {
                *a ^= b;
            }
        }
        block.copy_from_slice(&t[..block.len()]);
    }
}

/// Derives a key of `N` bytes with Rails' key generator.
pub fn derive<const N: usize>(secret_key_base: &[u8], salt: &str) -> [u8; N] {
    let mut k = [0u8; N];
    pbkdf2_hmac_sha256(secret_key_base, salt.as_bytes(), ITERATIONS, &mut k);
    k
}

/// Every key campfire-room signs or encrypts with, ready to use.
#[derive(Clone)]
pub struct Keys {
    /// `session_token` cookie: salt `signed cookie`, HMAC-SHA1, strict base64.
    pub signed_cookie: Verifier,
    /// `_campfire_session` cookie: salt `authenticated encrypted cookie`, AES-256-GCM.
    pub encrypted_cookie: Gcm,
    /// Active Record signed ids as generated: salt `active_record/signed_id`, HMAC-SHA256,
    /// URL-safe base64 without padding.
    pub signed_id: Verifier,
    /// Active Record signed ids, the other accepted form: same key, HMAC-SHA1, strict.
    pub signed_id_sha1: Verifier,
    /// Signed global ids (mentions): salt `signed_global_ids`, HMAC-SHA1, URL-safe padded.
    pub sgid: Verifier,
    /// Active Storage signed blob ids: salt `ActiveStorage`, HMAC-SHA1, strict.
    pub active_storage: Verifier,
    /// Turbo signed stream names: salt `turbo/signed_stream_verifier_key`, HMAC-SHA256,
    /// strict.
    pub turbo_stream: Verifier,
    /// Unique to this derivation: per-thread caches of what these keys sign (avatar tokens)
    /// tell key sets apart by it.
    pub serial: u64,
}

/// The next `Keys::serial`.
static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Keys {
    /// Derives every key from `secret_key_base` (its bytes as given).
    pub fn derive(secret_key_base: &[u8]) -> Keys {
        let signed_cookie: [u8; 64] = derive(secret_key_base, "signed cookie");
        let encrypted_cookie: [u8; 32] = derive(secret_key_base, "authenticated encrypted cookie");
        let signed_id: [u8; 64] = derive(secret_key_base, "active_record/signed_id");
        let sgid: [u8; 64] = derive(secret_key_base, "signed_global_ids");
        let active_storage: [u8; 64] = derive(secret_key_base, "ActiveStorage");
        let turbo: [u8; 64] = derive(secret_key_base, "turbo/signed_stream_verifier_key");
        Keys {
            signed_cookie: Verifier::new(&signed_cookie, Digest::Sha1, Alphabet::Standard, true),
            encrypted_cookie: Gcm::new(&encrypted_cookie),
            signed_id: Verifier::new(&signed_id, Digest::Sha256, Alphabet::UrlSafe, false),
            signed_id_sha1: Verifier::new(&signed_id, Digest::Sha1, Alphabet::Standard, true),
            sgid: Verifier::new(&sgid, Digest::Sha1, Alphabet::UrlSafe, true),
            active_storage: Verifier::new(&active_storage, Digest::Sha1, Alphabet::Standard, true),
            turbo_stream: Verifier::new(&turbo, Digest::Sha256, Alphabet::Standard, true),
            serial: SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn rfc7914_pbkdf2_sha256_vectors() {
        let mut out = [0u8; 64];
        pbkdf2_hmac_sha256(b"passwd", b"salt", 1, &mut out);
        assert_eq!(hex(&out), "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783");
        let mut short = [0u8; 20];
        pbkdf2_hmac_sha256(b"password", b"salt", 2, &mut short);
        assert_eq!(hex(&short), "ae4d0c95af6b46d32d0adff928f06dd02a303f8e");
    }

    #[test]
    fn spec03_derived_keys_for_dummy() {
        let signed: [u8; 64] = derive(b"dummy", "signed cookie");
        assert_eq!(hex(&signed), "9f8282cc3ef5d19aea7f6d399524ac061af763ac9f6af160b115cea0fd94c7ffa2f69c2021a8d59d3e8750baadb3ea5ab4c8fd88395a969dff882eda8f6beb59");
        let encrypted: [u8; 32] = derive(b"dummy", "authenticated encrypted cookie");
        assert_eq!(
            hex(&encrypted),
            "34f5ae4664779f2de0615600d865f93d2bcd4893cff23bffa9371e721f399703"
        );
    }
}
