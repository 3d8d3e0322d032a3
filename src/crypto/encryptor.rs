//! Rails' ActiveSupport::MessageEncryptor wire format for AES-256-GCM:
//! `base64(ciphertext)--base64(iv)--base64(tag)`, strict base64, 12-byte IV (16 base64
//! characters), 16-byte tag (24 characters), empty AAD (spec/03 §4.3).

use super::base64::{self, Alphabet};
use super::gcm::Gcm;

/// The message was malformed or did not authenticate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Invalid;

const IV_B64: usize = 16;
const TAG_B64: usize = 24;

/// Encrypts `buf` in place (it holds the plaintext, typically an envelope) under `iv` and
/// appends the message to `out`. `iv` must be fresh random bytes for every message
/// (`sys::random::bytes()`); a fixed one is only for reproducing test vectors.
pub fn encrypt(gcm: &Gcm, iv: &[u8; 12], buf: &mut [u8], out: &mut Vec<u8>) {
    let tag = gcm.seal(iv, b"", buf);
    out.reserve(base64::encoded_len(buf.len(), true) + 4 + IV_B64 + TAG_B64);
    base64::encode(Alphabet::Standard, true, buf, out);
    out.extend_from_slice(b"--");
    base64::encode(Alphabet::Standard, true, iv, out);
    out.extend_from_slice(b"--");
    base64::encode(Alphabet::Standard, true, &tag, out);
}

/// Authenticates and decrypts `message`, appending the plaintext to `out`. The parts are
/// located from the right by their fixed lengths, as Rails does. On failure `out` keeps
/// its previous contents.
pub fn decrypt(gcm: &Gcm, message: &[u8], out: &mut Vec<u8>) -> Result<(), Invalid> {
    let ct_len = message
        .len()
        .checked_sub(IV_B64 + TAG_B64 + 4)
        .ok_or(Invalid)?;
    let (ct_b64, rest) = message.split_at(ct_len);
    let (sep1, rest) = rest.split_at(2);
    let (iv_b64, rest) = rest.split_at(IV_B64);
    let (sep2, tag_b64) = rest.split_at(2);
    if sep1 != b"--" || sep2 != b"--" {
        return Err(Invalid);
    }
    let mut iv = [0u8; 12];
    let mut tag = [0u8; 16];
    decode_exact(iv_b64, &mut iv)?;
    decode_exact(tag_b64, &mut tag)?;
    let start = out.len();
    base64::decode(Alphabet::Standard, ct_b64, out).map_err(|_| Invalid)?;
    if gcm.open(&iv, b"", &mut out[start..], &tag).is_err() {
        out.truncate(start);
        return Err(Invalid);
    }
    Ok(())
}

/// Decodes strict base64 that must yield exactly `dst.len()` bytes, without allocating.
fn decode_exact(b64: &[u8], dst: &mut [u8]) -> Result<(), Invalid> {
    let mut buf = [0u8; 24];
    // 24 base64 characters are at most 18 bytes.
    let n = base64::decode_to_slice(Alphabet::Standard, b64, &mut buf).map_err(|_| Invalid)?;
    if n != dst.len() {
        return Err(Invalid);
    }
    dst.copy_from_slice(&buf[..n]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_tamper() {
        let gcm = Gcm::new(&[3; 32]);
        let mut buf = b"{\"a\":1}".to_vec();
        let mut msg = Vec::new();
        encrypt(&gcm, &[1; 12], &mut buf, &mut msg);
        let text = String::from_utf8(msg.clone()).unwrap();
        let parts: Vec<&str> = text.split("--").collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[1], "AQEBAQEBAQEBAQEB");
        assert_eq!(parts[2].len(), 24);
        let mut out = Vec::new();
        decrypt(&gcm, &msg, &mut out).unwrap();
        assert_eq!(out, b"{\"a\":1}");
        for i in 0..msg.len() {
            let mut bad = msg.clone();
            bad[i] ^= 0x01;
            let mut out = b"x".to_vec();
            assert_eq!(decrypt(&gcm, &bad, &mut out), Err(Invalid), "byte {i}");
            assert_eq!(out, b"x");
        }
        assert_eq!(decrypt(&gcm, b"", &mut out), Err(Invalid));
        assert_eq!(decrypt(&gcm, &msg[..msg.len() - 1], &mut out), Err(Invalid));
    }
}
