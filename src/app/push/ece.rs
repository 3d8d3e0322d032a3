//! Web Push message encryption: RFC 8291 over RFC 8188 "aes128gcm", one record.
//!
//! The sender makes a fresh P-256 key pair and a random salt per message, agrees a secret
//! with the browser's `p256dh` key (ECDH), mixes in the browser's `auth` secret with
//! HKDF-SHA256, and seals the payload with AES-128-GCM. The body carries the salt, the
//! record size and the sender's public key in its header, so the browser can do the same.
//! The record size written is the ciphertext's length, as the web-push gem (3.0.2) writes
//! it; payloads whose ciphertext would pass 4096 bytes are refused, as the gem refuses them.

use hmac::{Hmac, KeyInit, Mac};
use p256::elliptic_curve::sec1::ToSec1Point;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;

use crate::crypto::gcm::Gcm;
use crate::sys::random;

/// Largest ciphertext (payload + delimiter + tag) one record may hold (RFC 8291 §4).
pub const MAX_CIPHERTEXT: usize = 4096;

/// Length of an uncompressed P-256 point (`0x04 ‖ X ‖ Y`).
pub const POINT_LEN: usize = 65;

/// Why a payload could not be encrypted for a subscription.
#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    /// `p256dh_key` is not a point on P-256 (or not base64url).
    BadP256dh,
    /// `auth_key` is not 16 bytes of base64url.
    BadAuth,
    /// The ciphertext would not fit one 4096-byte record.
    TooLarge,
}

/// A subscription's keys, decoded from the base64url strings the browser gave.
pub struct Receiver {
    pub public: [u8; POINT_LEN],
    pub auth: [u8; 16],
}

impl Receiver {
    /// Decodes `p256dh_key` and `auth_key` as stored in `push_subscriptions` (base64url,
    /// padding optional) and checks that the point is on the curve.
    pub fn parse(p256dh: &str, auth: &str) -> Result<Receiver, Error> {
        use crate::crypto::base64::{decode_to_slice, Alphabet::UrlSafe};
        let mut public = [0u8; POINT_LEN];
        match decode_to_slice(UrlSafe, p256dh.trim().as_bytes(), &mut public) {
            Ok(POINT_LEN) if PublicKey::from_sec1_bytes(&public).is_ok() => {}
            _ => return Err(Error::BadP256dh),
        }
        let mut a = [0u8; 16];
        match decode_to_slice(UrlSafe, auth.trim().as_bytes(), &mut a) {
            Ok(16) => Ok(Receiver { public, auth: a }),
            _ => Err(Error::BadAuth),
        }
    }
}

/// Encrypts `plaintext` for `to` with a fresh sender key and salt, returning the whole
/// request body (header ‖ ciphertext).
pub fn encrypt(to: &Receiver, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
    let sender = fresh_secret_key();
    let salt: [u8; 16] = random::bytes();
    let rs = (plaintext.len() + 1 + 16) as u32;
    encrypt_with(to, plaintext, &sender, &salt, rs)
}

/// `encrypt` with the sender key, salt and record size given (the RFC's test vector fixes
/// all three). `rs` goes into the header as is.
pub fn encrypt_with(to: &Receiver, plaintext: &[u8], sender: &SecretKey, salt: &[u8; 16], rs: u32) -> Result<Vec<u8>, Error> {
    let ct_len = plaintext.len() + 1 + 16;
    if ct_len > MAX_CIPHERTEXT {
        return Err(Error::TooLarge);
    }
    let ua = PublicKey::from_sec1_bytes(&to.public).map_err(|_| Error::BadP256dh)?;
    let shared = p256::ecdh::diffie_hellman(sender.to_nonzero_scalar(), ua.as_affine());
    let as_point = sender.public_key().to_sec1_point(false);
    let as_pub = as_point.as_bytes();

    // RFC 8291 §3.4: IKM = HKDF(auth, ecdh, "WebPush: info" ‖ 0 ‖ ua_public ‖ as_public, 32)
    let mut info = Vec::with_capacity(14 + 2 * POINT_LEN);
    info.extend_from_slice(b"WebPush: info\0");
    info.extend_from_slice(&to.public);
    info.extend_from_slice(as_pub);
    let ikm: [u8; 32] = hkdf(&to.auth, shared.raw_secret_bytes().as_slice(), &info);
    // RFC 8188 §2.2–2.3: the content key and nonce from the salt.
    let cek: [u8; 16] = hkdf(salt, &ikm, b"Content-Encoding: aes128gcm\0");
    let nonce: [u8; 12] = hkdf(salt, &ikm, b"Content-Encoding: nonce\0");

    let header_len = 16 + 4 + 1 + as_pub.len();
    let mut body = Vec::with_capacity(header_len + ct_len);
    body.extend_from_slice(salt);
    body.extend_from_slice(&rs.to_be_bytes());
    body.push(as_pub.len() as u8);
    body.extend_from_slice(as_pub);
    body.extend_from_slice(plaintext);
    body.push(2); // the last (and only) record's delimiter
    let tag = Gcm::new128(&cek).seal(&nonce, b"", &mut body[header_len..]);
    body.extend_from_slice(&tag);
    Ok(body)
}

/// A random P-256 private key: 32 random bytes, drawn again in the (2^-32) case that they
/// are zero or not below the group order.
pub fn fresh_secret_key() -> SecretKey {
    loop {
        let b: [u8; 32] = random::bytes();
        if let Ok(k) = SecretKey::from_slice(&b) {
            return k;
        }
    }
}

/// HKDF-SHA256 (RFC 5869) for outputs of at most one hash block: extract, then the first
/// block of expand, truncated to `N` bytes.
fn hkdf<const N: usize>(salt: &[u8], ikm: &[u8], info: &[u8]) -> [u8; N] {
    let mut extract = <Hmac<Sha256> as KeyInit>::new_from_slice(salt).unwrap_or_else(|_| unreachable!());
    extract.update(ikm);
    let prk: [u8; 32] = extract.finalize().into_bytes().into();
    let mut expand = <Hmac<Sha256> as KeyInit>::new_from_slice(&prk).unwrap_or_else(|_| unreachable!());
    expand.update(info);
    expand.update(&[1]);
    let t: [u8; 32] = expand.finalize().into_bytes().into();
    let mut out = [0u8; N];
    out.copy_from_slice(&t[..N]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::base64::{decode, Alphabet::UrlSafe};

    fn b64(s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        decode(UrlSafe, s.as_bytes(), &mut v).unwrap();
        v
    }

    // RFC 8291 Appendix A.
    const PLAINTEXT: &[u8] = b"When I grow up, I want to be a watermelon";
    const AS_PRIVATE: &str = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
    const AS_PUBLIC: &str = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
    const UA_PRIVATE: &str = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
    const UA_PUBLIC: &str = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
    const AUTH: &str = "BTBZMqHH6r4Tts7J_aSIgg";
    const SALT: &str = "DGv6ra1nlYgDCS1FRnbzlw";
    const BODY: &str = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

    #[test]
    fn rfc8291_appendix_a_exact_bytes() {
        let to = Receiver::parse(UA_PUBLIC, AUTH).unwrap();
        let sender = SecretKey::from_slice(&b64(AS_PRIVATE)).unwrap();
        assert_eq!(sender.public_key().to_sec1_point(false).as_bytes(), b64(AS_PUBLIC).as_slice());
        let salt: [u8; 16] = b64(SALT).try_into().unwrap();
        let body = encrypt_with(&to, PLAINTEXT, &sender, &salt, 4096).unwrap();
        assert_eq!(body, b64(BODY));
    }

    #[test]
    fn rfc8291_intermediate_keys() {
        let salt = b64(SALT);
        let ikm: [u8; 32] = {
            let ua = PublicKey::from_sec1_bytes(&b64(UA_PUBLIC)).unwrap();
            let sk = SecretKey::from_slice(&b64(AS_PRIVATE)).unwrap();
            let shared = p256::ecdh::diffie_hellman(sk.to_nonzero_scalar(), ua.as_affine());
            let mut info = b"WebPush: info\0".to_vec();
            info.extend(b64(UA_PUBLIC));
            info.extend(b64(AS_PUBLIC));
            hkdf(&b64(AUTH), shared.raw_secret_bytes().as_slice(), &info)
        };
        let cek: [u8; 16] = hkdf(&salt, &ikm, b"Content-Encoding: aes128gcm\0");
        let nonce: [u8; 12] = hkdf(&salt, &ikm, b"Content-Encoding: nonce\0");
        assert_eq!(cek.to_vec(), b64("oIhVW04MRdy2XN9CiKLxTg"));
        assert_eq!(nonce.to_vec(), b64("4h_95klXJ5E_qnoN"));
    }

    /// The receiving side, written from the RFC, as the browser would run it.
    fn decrypt(ua_private: &SecretKey, auth: &[u8], body: &[u8]) -> Vec<u8> {
        let salt = &body[..16];
        let idlen = body[20] as usize;
        let as_pub = &body[21..21 + idlen];
        let ct = &body[21 + idlen..];
        let sender = PublicKey::from_sec1_bytes(as_pub).unwrap();
        let shared = p256::ecdh::diffie_hellman(ua_private.to_nonzero_scalar(), sender.as_affine());
        let mut info = b"WebPush: info\0".to_vec();
        info.extend_from_slice(ua_private.public_key().to_sec1_point(false).as_bytes());
        info.extend_from_slice(as_pub);
        let ikm: [u8; 32] = hkdf(auth, shared.raw_secret_bytes().as_slice(), &info);
        let cek: [u8; 16] = hkdf(salt, &ikm, b"Content-Encoding: aes128gcm\0");
        let nonce: [u8; 12] = hkdf(salt, &ikm, b"Content-Encoding: nonce\0");
        let (data, tag) = ct.split_at(ct.len() - 16);
        let mut buf = data.to_vec();
        Gcm::new128(&cek).open(&nonce, b"", &mut buf, tag).unwrap();
        assert_eq!(buf.pop(), Some(2));
        buf
    }

    #[test]
    fn fresh_encryptions_differ_and_decrypt_with_the_gem_record_size() {
        let ua = SecretKey::from_slice(&b64(UA_PRIVATE)).unwrap();
        let to = Receiver::parse(UA_PUBLIC, AUTH).unwrap();
        let a = encrypt(&to, PLAINTEXT).unwrap();
        let b = encrypt(&to, PLAINTEXT).unwrap();
        assert_ne!(a, b);
        let ct_len = PLAINTEXT.len() + 17;
        assert_eq!(a.len(), 16 + 4 + 1 + 65 + ct_len);
        assert_eq!(u32::from_be_bytes(a[16..20].try_into().unwrap()) as usize, ct_len);
        assert_eq!(a[20], 65);
        assert_eq!(decrypt(&ua, &b64(AUTH), &a), PLAINTEXT);
        assert_eq!(decrypt(&ua, &b64(AUTH), &b), PLAINTEXT);
    }

    #[test]
    fn the_record_limit_and_bad_keys_are_refused() {
        let to = Receiver::parse(UA_PUBLIC, AUTH).unwrap();
        assert!(encrypt(&to, &[b'x'; MAX_CIPHERTEXT - 17]).is_ok());
        assert_eq!(encrypt(&to, &[b'x'; MAX_CIPHERTEXT - 16]).err(), Some(Error::TooLarge));
        assert_eq!(Receiver::parse("not a key", AUTH).err(), Some(Error::BadP256dh));
        // 65 bytes that are not a point on the curve
        let mut off = b64(UA_PUBLIC);
        off[64] ^= 1;
        let mut s = Vec::new();
        crate::crypto::base64::encode(UrlSafe, false, &off, &mut s);
        assert_eq!(Receiver::parse(std::str::from_utf8(&s).unwrap(), AUTH).err(), Some(Error::BadP256dh));
        assert_eq!(Receiver::parse(UA_PUBLIC, "c2hvcnQ").err(), Some(Error::BadAuth));
        // padded base64url, as some clients send it, is accepted
        assert!(Receiver::parse(UA_PUBLIC, "BTBZMqHH6r4Tts7J_aSIgg==").is_ok());
    }
}
