//! Active Storage variations (spec/03 §11.2, spec/01 §12.4): the signed "variation key" of a
//! representation URL, and the `variation_digest` that names a variant record.
//!
//! Only the one shape this application makes is understood: `{"format":"<ext>",
//! "resize_to_limit":[w,h]}` (a message attachment's `thumb`). The digest is Base64 of the
//! SHA-1 of Ruby's `Marshal.dump` of that hash with symbol keys and a UTF-8 string format,
//! which is what Rails hashes for a variation read back from a URL; the test vectors are the
//! digests of spec/01 §12.4, so rows we write and rows Rails wrote find each other.

use super::base64::{self, Alphabet};
use super::json::Reader;
use super::pbkdf2::Keys;
use super::verifier::{self, Bare, Opened};
use super::Scratch;
use sha1::{Digest, Sha1};

/// Purpose of variation keys.
pub const PURPOSE: &str = "variation";

/// A `resize_to_limit` variation in a given format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variation {
    /// File extension naming the output format (`jpg`, `png`, `gif`, `webp`).
    pub format: String,
    pub max_width: u32,
    pub max_height: u32,
}

impl Variation {
    /// The `variation_digest` of this variation (Base64 of SHA-1 of its Marshal form) as a
    /// representation URL's variation hashes: the format a string.
    pub fn digest(&self) -> String {
        self.marshal_digest(false)
    }

    /// The `variation_digest` of a named variant declared in a model (`variant :large,
    /// resize_to_limit: …, format: :png`): the format a symbol.
    pub fn named_digest(&self) -> String {
        self.marshal_digest(true)
    }

    fn marshal_digest(&self, format_symbol: bool) -> String {
        let mut m = Vec::with_capacity(64);
        m.extend_from_slice(b"\x04\x08{\x07");
        symbol(b"format", &mut m);
        if format_symbol {
            symbol(self.format.as_bytes(), &mut m);
        } else {
            // A string with one instance variable, `E: true` (UTF-8).
            m.extend_from_slice(b"I\"");
            long(self.format.len() as u32, &mut m);
            m.extend_from_slice(self.format.as_bytes());
            m.push(6);
            symbol(b"E", &mut m);
            m.push(b'T');
        }
        symbol(b"resize_to_limit", &mut m);
        m.extend_from_slice(b"[\x07");
        fixnum(self.max_width as i64, &mut m);
        fixnum(self.max_height as i64, &mut m);
        let mut out = Vec::with_capacity(28);
        base64::encode(Alphabet::Standard, true, &Sha1::digest(&m), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Appends the signed variation key for representation URLs (no expiry).
    pub fn sign(&self, keys: &Keys, out: &mut Vec<u8>) {
        let mut data = Vec::with_capacity(64);
        data.extend_from_slice(b"{\"format\":");
        super::json::write_string(self.format.as_bytes(), &mut data);
        data.extend_from_slice(format!(",\"resize_to_limit\":[{},{}]}}", self.max_width, self.max_height).as_bytes());
        let mut payload = Vec::with_capacity(128);
        verifier::envelope(&data, None, Some(PURPOSE), &mut payload);
        keys.active_storage.sign(&payload, out);
    }

    /// The variation of a valid signed variation key of the one shape we know, else None.
    pub fn verify(keys: &Keys, signed: &[u8], now_ms: i64, s: &mut Scratch) -> Option<Variation> {
        s.a.clear();
        s.b.clear();
        keys.active_storage.verify(signed, &mut s.a).ok()?;
        let Opened::Data(d) = verifier::open(&s.a, PURPOSE, now_ms, Bare::Refuse, &mut s.b).ok()? else { return None };
        let mut r = Reader::new(d);
        r.begin_object().ok()?;
        let (mut format, mut limit) = (None, None);
        while let Some(key) = r.next_key().ok()? {
            match key {
                b"format" => {
                    let f = r.string().ok()?;
                    if f.is_empty() || f.len() > 8 || !f.iter().all(u8::is_ascii_alphanumeric) {
                        return None;
                    }
                    format = Some(String::from_utf8_lossy(f).into_owned());
                }
                b"resize_to_limit" => {
                    r.begin_array().ok()?;
                    let mut v = [0u32; 2];
                    for slot in &mut v {
                        if !r.next_item().ok()? {
                            return None;
                        }
                        *slot = u32::try_from(r.integer().ok()?).ok().filter(|n| (1..=10_000).contains(n))?;
                    }
                    if r.next_item().ok()? {
                        return None;
                    }
                    limit = Some((v[0], v[1]));
                }
                _ => return None,
            }
        }
        let (max_width, max_height) = limit?;
        Some(Variation { format: format?, max_width, max_height })
    }
}

fn symbol(name: &[u8], m: &mut Vec<u8>) {
    m.push(b':');
    long(name.len() as u32, m);
    m.extend_from_slice(name);
}

/// Ruby Marshal's `i` fixnum (non-negative values only: all this module writes).
fn fixnum(n: i64, m: &mut Vec<u8>) {
    m.push(b'i');
    long(n.clamp(0, u32::MAX as i64) as u32, m);
}

/// Marshal's variable-length integer, for lengths and fixnums: 0, n+5 below 123, else a
/// byte count and the little-endian bytes.
fn long(n: u32, m: &mut Vec<u8>) {
    if n == 0 {
        m.push(0);
    } else if n < 123 {
        m.push((n + 5) as u8);
    } else {
        let k = (1..=4).find(|&k| k == 4 || n < 1u32 << (8 * k)).unwrap_or(4);
        m.push(k as u8);
        m.extend_from_slice(&n.to_le_bytes()[..k]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::OnceLock;

    fn keys() -> &'static Keys {
        static K: OnceLock<Keys> = OnceLock::new();
        K.get_or_init(|| Keys::derive(b"dummy"))
    }

    fn thumb(format: &str) -> Variation {
        Variation { format: format.into(), max_width: 1200, max_height: 800 }
    }

    #[test]
    fn digests_match_the_rails_table() {
        assert_eq!(thumb("jpg").digest(), "IBhrLAIapu+NCId+2Kz6EqUWRKY=");
        assert_eq!(thumb("png").digest(), "aFrmZ9PxOH5XKtnRmopvClCmS1g=");
        assert_eq!(thumb("gif").digest(), "QhvxvYWo0o2axWU0l3EW8VQDYbM=");
        assert_eq!(thumb("webp").digest(), "u0TSbUypNLiezYYkiqbZ8jAyVv0=");
        let named = |f: &str, n: u32| Variation { format: f.into(), max_width: n, max_height: n }.named_digest();
        assert_eq!(named("png", 512), "ksXvpLsa7BuCVyHOwmQOKedbIbM=", "logo large");
        assert_eq!(named("png", 192), "EXATZfM7OVVC86CDh85TOsa8ZSw=", "logo small");
        assert_eq!(named("webp", 512), "6gwfjNKv9eUy9jNUtEZvQFLU0hQ=", "avatar square as Rails makes it");
    }

    #[test]
    fn keys_round_trip_and_refuse_tampering() {
        let mut s = Scratch::default();
        let mut signed = Vec::new();
        thumb("jpg").sign(keys(), &mut signed);
        assert_eq!(Variation::verify(keys(), &signed, 0, &mut s), Some(thumb("jpg")));
        let n = signed.len();
        signed[n - 1] ^= 1;
        assert_eq!(Variation::verify(keys(), &signed, 0, &mut s), None);
        // A blob signed id is not a variation key.
        let mut blob = Vec::new();
        super::super::signed_id::blob_signed_id(keys(), 1, &mut blob);
        assert_eq!(Variation::verify(keys(), &blob, 0, &mut s), None);
    }
}
