//! VAPID (RFC 8292): the server's P-256 key pair and the ES256 JWT that identifies it to a
//! push service.
//!
//! The keys come from `VAPID_PUBLIC_KEY` / `VAPID_PRIVATE_KEY` in the web-push gem's format
//! (spec/04 §3.1): URL-safe base64 (padding optional) of the 65-byte uncompressed point and
//! of the big-endian private scalar, which the gem writes without its leading zero bytes.
//! The token is a compact JWS (RFC 7515) with the raw `r ‖ s` signature of RFC 7518 §3.4,
//! signed deterministically (RFC 6979), so no random numbers are drawn for it.

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};

use crate::crypto::base64::{self, Alphabet::UrlSafe};

/// The `sub` claim Rails hard-codes.
pub const SUBJECT: &str = "mailto:support@37signals.com";

/// How long a token is valid (`exp` = now + this). The web-push gem's default; RFC 8292
/// allows at most 24 hours, so a push service whose clock runs ahead still takes it.
pub const TOKEN_TTL_S: i64 = 12 * 60 * 60;

/// A token is reused for the same push service for this long (an ECDSA signature saved per
/// push), so what is sent still has at least 11 hours to run.
pub const TOKEN_REUSE_S: i64 = 60 * 60;

/// Push services a process talks to are few (FCM, Mozilla, Apple, Microsoft): tokens kept.
const TOKEN_CACHE_MAX: usize = 16;

/// The application server's identity. `Debug` shows the public key only.
pub struct Vapid {
    key: SigningKey,
    /// The public key as `k=` wants it: URL-safe base64 without padding.
    public_b64: String,
    /// Recent `Authorization` values per audience: (audience, minted at, value).
    tokens: std::sync::Mutex<Vec<(String, i64, String)>>,
}

impl std::fmt::Debug for Vapid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Vapid {{ public: {} }}", self.public_b64)
    }
}

impl Vapid {
    /// Reads the configured pair. `Ok(None)` when either is unset or blank (Web Push is then
    /// off: Rails has no keys to sign with either). `Err` says what is wrong with a pair
    /// that is set: a public key that is not a P-256 point, a private key that is not a
    /// scalar, or a public key that does not belong to the private key (every push would be
    /// refused by the push service).
    pub fn from_config(public: Option<&str>, private: Option<&str>) -> Result<Option<Vapid>, String> {
        let (Some(public), Some(private)) = (public.map(str::trim), private.map(str::trim)) else {
            return Ok(None);
        };
        if public.is_empty() || private.is_empty() {
            return Ok(None);
        }
        let mut raw = Vec::with_capacity(32);
        base64::decode(UrlSafe, private.as_bytes(), &mut raw).map_err(|_| "VAPID_PRIVATE_KEY is not URL-safe base64".to_string())?;
        if raw.is_empty() || raw.len() > 32 {
            return Err(format!("VAPID_PRIVATE_KEY is {} bytes, expected at most 32", raw.len()));
        }
        let mut scalar = [0u8; 32];
        scalar[32 - raw.len()..].copy_from_slice(&raw);
        let key = SigningKey::from_slice(&scalar).map_err(|_| "VAPID_PRIVATE_KEY is not a P-256 private key".to_string())?;
        let mut given = Vec::with_capacity(65);
        base64::decode(UrlSafe, public.as_bytes(), &mut given).map_err(|_| "VAPID_PUBLIC_KEY is not URL-safe base64".to_string())?;
        let derived = key.verifying_key().to_sec1_point(false);
        if given.as_slice() != derived.as_bytes() {
            return Err("VAPID_PUBLIC_KEY does not belong to VAPID_PRIVATE_KEY".into());
        }
        let mut public_b64 = Vec::with_capacity(88);
        base64::encode(UrlSafe, false, &given, &mut public_b64);
        Ok(Some(Vapid { key, public_b64: String::from_utf8_lossy(&public_b64).into_owned(), tokens: Default::default() }))
    }

    /// The public key, URL-safe base64 without padding.
    pub fn public_key(&self) -> &str {
        &self.public_b64
    }

    /// The `Authorization` value for a POST to `endpoint` at Unix time `now_s`:
    /// `vapid t=<JWT>,k=<public key>`, the one minted for the same audience within
    /// `TOKEN_REUSE_S` if there is one. None when the endpoint has no `scheme://host`.
    pub fn authorization(&self, endpoint: &str, now_s: i64) -> Option<String> {
        let aud = audience(endpoint)?;
        let fresh = |minted: i64| minted <= now_s && now_s - minted < TOKEN_REUSE_S;
        if let Ok(tokens) = self.tokens.lock() {
            if let Some((_, _, value)) = tokens.iter().find(|(a, minted, _)| *a == aud && fresh(*minted)) {
                return Some(value.clone());
            }
        }
        let value = format!("vapid t={},k={}", self.token(&aud, now_s + TOKEN_TTL_S), self.public_b64);
        if let Ok(mut tokens) = self.tokens.lock() {
            tokens.retain(|(a, minted, _)| *a != aud && fresh(*minted));
            if tokens.len() >= TOKEN_CACHE_MAX {
                tokens.remove(0);
            }
            tokens.push((aud, now_s, value.clone()));
        }
        Some(value)
    }

    /// The signed JWT: header `{"typ":"JWT","alg":"ES256"}`, claims `aud`, `exp`, `sub`.
    pub fn token(&self, aud: &str, exp: i64) -> String {
        let mut claims = Vec::with_capacity(aud.len() + 64);
        claims.extend_from_slice(b"{\"aud\":");
        crate::crypto::json::write_string(aud.as_bytes(), &mut claims);
        claims.extend_from_slice(format!(",\"exp\":{exp},\"sub\":").as_bytes());
        crate::crypto::json::write_string(SUBJECT.as_bytes(), &mut claims);
        claims.push(b'}');
        let mut out = Vec::with_capacity(256);
        base64::encode(UrlSafe, false, br#"{"typ":"JWT","alg":"ES256"}"#, &mut out);
        out.push(b'.');
        base64::encode(UrlSafe, false, &claims, &mut out);
        let sig: Signature = self.key.sign(&out);
        out.push(b'.');
        base64::encode(UrlSafe, false, &sig.to_bytes(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// `scheme://host` of a URL: no userinfo, port, path or query (the gem's audience).
pub fn audience(endpoint: &str) -> Option<String> {
    let (scheme, rest) = endpoint.split_once("://")?;
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') { &host[..host.find(']')? + 1] } else { host.split(':').next().unwrap_or("") };
    if scheme.is_empty() || host.is_empty() {
        return None;
    }
    Some(format!("{}://{}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;

    // A P-256 pair from RFC 8291 Appendix A, in the gem's format (public padded).
    const PUBLIC: &str = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8=";
    const PRIVATE: &str = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw=";

    fn b64(s: &str) -> Vec<u8> {
        let mut v = Vec::new();
        base64::decode(UrlSafe, s.as_bytes(), &mut v).unwrap();
        v
    }

    #[test]
    fn es256_jwt_verifies_with_the_public_key() {
        let v = Vapid::from_config(Some(PUBLIC), Some(PRIVATE)).unwrap().unwrap();
        let auth = v.authorization("https://fcm.googleapis.com:443/fcm/send/abc?x=1", 1_700_000_000).unwrap();
        let (t, k) = auth.strip_prefix("vapid t=").unwrap().split_once(",k=").unwrap();
        assert_eq!(k, PUBLIC.trim_end_matches('='));
        let parts: Vec<&str> = t.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(b64(parts[0]), br#"{"typ":"JWT","alg":"ES256"}"#);
        assert_eq!(
            String::from_utf8(b64(parts[1])).unwrap(),
            r#"{"aud":"https://fcm.googleapis.com","exp":1700043200,"sub":"mailto:support@37signals.com"}"#
        );
        let sig = Signature::from_slice(&b64(parts[2])).unwrap();
        let public = VerifyingKey::from_sec1_bytes(&b64(k)).unwrap();
        let signing_input = format!("{}.{}", parts[0], parts[1]);
        public.verify(signing_input.as_bytes(), &sig).unwrap();
        // and not for anything else
        assert!(public.verify(b"x.y", &sig).is_err());
    }

    #[test]
    fn a_token_is_reused_per_push_service_for_an_hour() {
        let v = Vapid::from_config(Some(PUBLIC), Some(PRIVATE)).unwrap().unwrap();
        let t0 = 1_700_000_000;
        let a = v.authorization("https://fcm.googleapis.com/fcm/send/1", t0).unwrap();
        assert_eq!(v.authorization("https://fcm.googleapis.com/fcm/send/2", t0 + TOKEN_REUSE_S - 1).unwrap(), a);
        let other = v.authorization("https://updates.push.services.mozilla.com/wpush/v2/x", t0).unwrap();
        assert_ne!(other, a);
        let later = v.authorization("https://fcm.googleapis.com/fcm/send/1", t0 + TOKEN_REUSE_S).unwrap();
        assert_ne!(later, a);
        let claims = |auth: &str| {
            let jwt = auth.strip_prefix("vapid t=").unwrap().split(',').next().unwrap().to_string();
            String::from_utf8(b64(jwt.split('.').nth(1).unwrap())).unwrap()
        };
        assert!(claims(&later).contains(&format!("\"exp\":{},", t0 + TOKEN_REUSE_S + TOKEN_TTL_S)));
        // a clock that went backwards mints afresh rather than reuse a token from the future
        assert_ne!(v.authorization("https://fcm.googleapis.com/fcm/send/1", t0 - 10).unwrap(), later);
    }

    #[test]
    fn keys_as_the_gem_writes_them() {
        assert!(Vapid::from_config(None, Some(PRIVATE)).unwrap().is_none());
        assert!(Vapid::from_config(Some(PUBLIC), Some("  ")).unwrap().is_none());
        // unpadded is accepted as well
        let v = Vapid::from_config(Some(PUBLIC.trim_end_matches('=')), Some(PRIVATE.trim_end_matches('='))).unwrap().unwrap();
        assert_eq!(v.public_key(), PUBLIC.trim_end_matches('='));
        assert!(format!("{v:?}").contains(v.public_key()));
        assert!(!format!("{v:?}").contains(PRIVATE.trim_end_matches('=')));
        // a public key of another pair, a non-scalar, garbage
        let other = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
        assert!(Vapid::from_config(Some(other), Some(PRIVATE)).unwrap_err().contains("does not belong"));
        assert!(Vapid::from_config(Some(PUBLIC), Some("AAAA")).is_err());
        assert!(Vapid::from_config(Some(PUBLIC), Some("!!")).is_err());
    }

    #[test]
    fn a_private_key_with_its_leading_zeros_stripped() {
        // 0x00…01 is a valid scalar; the gem would write it as the single byte 0x01.
        let one = SigningKey::from_slice(&{
            let mut s = [0u8; 32];
            s[31] = 1;
            s
        })
        .unwrap();
        let mut public = Vec::new();
        base64::encode(UrlSafe, true, one.verifying_key().to_sec1_point(false).as_bytes(), &mut public);
        let v = Vapid::from_config(Some(std::str::from_utf8(&public).unwrap()), Some("AQ==")).unwrap();
        assert!(v.is_some());
    }

    #[test]
    fn audience_is_scheme_and_host() {
        assert_eq!(audience("https://updates.push.services.mozilla.com/wpush/v2/gAAA").as_deref(), Some("https://updates.push.services.mozilla.com"));
        assert_eq!(audience("http://127.0.0.1:8080/push?x").as_deref(), Some("http://127.0.0.1"));
        assert_eq!(audience("https://user:pw@Push.Example").as_deref(), Some("https://push.example"));
        assert_eq!(audience("http://[::1]:9/x").as_deref(), Some("http://[::1]"));
        assert_eq!(audience("no-scheme"), None);
        assert_eq!(audience("https:///path"), None);
    }
}
