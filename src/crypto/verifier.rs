//! Rails' ActiveSupport::MessageVerifier wire format and its metadata envelopes.
//!
//! A signed message is `DATA--DIGEST`: `DATA` is the base64 of a payload, `DIGEST` the
//! lowercase hex HMAC of the base64 text itself (spec/03 §3). The payload may wrap the
//! value in an envelope carrying a purpose and an expiry, in one of two forms:
//! - new:    `{"_rails":{"data":<json>,"exp":"<iso>","pur":"<purpose>"}}`
//! - legacy: `{"_rails":{"message":"<base64 of serialized>","exp":<iso|null>,"pur":<p|null>}}`
//!   (cookie jars, and Rails 7 sgids whose message is a Ruby Marshal dump).
//!
//! Verification works on borrowed slices and appends decoded bytes to a caller buffer,
//! so a loop that keeps one scratch `Vec` verifies cookies without allocating.

use hmac::{Hmac, KeyInit, Mac};
use sha1::Sha1;
use sha2::Sha256;

use super::base64::{self, Alphabet};
use super::json::{self, Reader};
use super::time;
use super::token::{ct_eq, hex_byte};

/// The message was forged, malformed, expired or meant for another purpose.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Invalid;

impl From<base64::Invalid> for Invalid {
    fn from(_: base64::Invalid) -> Invalid {
        Invalid
    }
}

impl From<json::Invalid> for Invalid {
    fn from(_: json::Invalid) -> Invalid {
        Invalid
    }
}

/// The HMAC digest of a verifier.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Digest {
    Sha1,
    Sha256,
}

#[derive(Clone)]
enum MacKey {
    Sha1(Hmac<Sha1>),
    Sha256(Hmac<Sha256>),
}

/// A keyed MessageVerifier: digest, key and the base64 form it writes.
#[derive(Clone)]
pub struct Verifier {
    mac: MacKey,
    alphabet: Alphabet,
    pad: bool,
}

impl Verifier {
    /// A verifier over `key` that writes `alphabet` base64 (padded when `pad`). The HMAC
    /// key schedule is computed here once; signing clones it.
    pub fn new(key: &[u8], digest: Digest, alphabet: Alphabet, pad: bool) -> Verifier {
        // HMAC takes keys of any length, so these constructors cannot fail.
        let mac = match digest {
            Digest::Sha1 => MacKey::Sha1(
                <Hmac<Sha1> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!()),
            ),
            Digest::Sha256 => MacKey::Sha256(
                <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!()),
            ),
        };
        Verifier { mac, alphabet, pad }
    }

    /// Writes the lowercase hex HMAC of `data` into `hex`, returning its length (40 or 64).
    fn hex_digest(&self, data: &[u8], hex: &mut [u8; 64]) -> usize {
        let mut raw = [0u8; 32];
        let n = match &self.mac {
            MacKey::Sha1(m) => {
                let mut m = m.clone();
                m.update(data);
                raw[..20].copy_from_slice(&m.finalize().into_bytes());
                20
            }
            MacKey::Sha256(m) => {
                let mut m = m.clone();
                m.update(data);
                raw.copy_from_slice(&m.finalize().into_bytes());
                32
            }
        };
        for (pair, b) in hex.chunks_mut(2).zip(&raw[..n]) {
            pair.copy_from_slice(&hex_byte(*b));
        }
        n * 2
    }

    /// Appends `base64(payload)--hexdigest` to `out`.
    pub fn sign(&self, payload: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        base64::encode(self.alphabet, self.pad, payload, out);
        let mut hex = [0u8; 64];
        let n = self.hex_digest(&out[start..], &mut hex);
        out.extend_from_slice(b"--");
        out.extend_from_slice(&hex[..n]);
    }

    /// Checks the digest of `message` in constant time and appends the decoded payload to
    /// `out`. The separator is found by the digest's fixed length from the end, as Rails
    /// does, so `--` inside the data is harmless.
    pub fn verify(&self, message: &[u8], out: &mut Vec<u8>) -> Result<(), Invalid> {
        let data = self.authentic_data(message)?;
        base64::decode_either(self.alphabet, data, out)?;
        Ok(())
    }

    /// The still-encoded `DATA` part of `message` if its digest is right.
    pub fn authentic_data<'m>(&self, message: &'m [u8]) -> Result<&'m [u8], Invalid> {
        let hex_len = match self.mac {
            MacKey::Sha1(_) => 40,
            MacKey::Sha256(_) => 64,
        };
        let split = message.len().checked_sub(hex_len + 2).ok_or(Invalid)?;
        let (data, rest) = message.split_at(split);
        let (sep, digest) = rest.split_at(2);
        if sep != b"--" || data.is_empty() {
            return Err(Invalid);
        }
        let mut hex = [0u8; 64];
        let n = self.hex_digest(data, &mut hex);
        if !ct_eq(&hex[..n], digest) {
            return Err(Invalid);
        }
        Ok(data)
    }
}

/// Appends a new-form payload: the bare `data_json` when there is neither expiry nor
/// purpose, else `{"_rails":{"data":…,"exp":…,"pur":…}}` with only the fields set.
pub fn envelope(data_json: &[u8], exp_ms: Option<i64>, purpose: Option<&str>, out: &mut Vec<u8>) {
    if exp_ms.is_none() && purpose.is_none() {
        out.extend_from_slice(data_json);
        return;
    }
    out.extend_from_slice(b"{\"_rails\":{\"data\":");
    out.extend_from_slice(data_json);
    if let Some(exp) = exp_ms {
        out.extend_from_slice(b",\"exp\":\"");
        time::write_iso8601(exp, out);
        out.push(b'"');
    }
    if let Some(p) = purpose {
        out.extend_from_slice(b",\"pur\":");
        json::write_string(p.as_bytes(), out);
    }
    out.extend_from_slice(b"}}");
}

/// Appends a legacy ("dual-serialized") payload around already-serialized bytes, as the
/// cookie jars write it: `{"_rails":{"message":"<b64>","exp":…|null,"pur":…|null}}`.
pub fn legacy_envelope(
    serialized: &[u8],
    exp_ms: Option<i64>,
    purpose: Option<&str>,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"{\"_rails\":{\"message\":\"");
    base64::encode(Alphabet::Standard, true, serialized, out);
    out.extend_from_slice(b"\",\"exp\":");
    match exp_ms {
        Some(exp) => {
            out.push(b'"');
            time::write_iso8601(exp, out);
            out.push(b'"');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"pur\":");
    match purpose {
        Some(p) => json::write_string(p.as_bytes(), out),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b"}}");
}

/// What an opened payload holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Opened<'p> {
    /// The JSON text of the value (new envelope `data`, or a payload without envelope).
    Data(&'p [u8]),
    /// A legacy envelope's `message`, base64-decoded and appended to the caller's buffer
    /// from this offset on: still serialized (JSON for cookies, Marshal for old sgids).
    Message(usize),
}

/// Whether a payload without any envelope is acceptable when a purpose is expected.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bare {
    /// Only when `purpose` is empty (ActiveSupport's rule for verifiers).
    Refuse,
    /// Always (the cookie jars retry without purpose).
    Accept,
}

/// Unwraps a verified payload: checks the envelope's purpose against `purpose` (absent
/// counts as empty) and refuses it when `now_ms >= exp`. Legacy messages are decoded
/// into `out`.
pub fn open<'p>(
    payload: &'p [u8],
    purpose: &str,
    now_ms: i64,
    bare: Bare,
    out: &mut Vec<u8>,
) -> Result<Opened<'p>, Invalid> {
    match envelope_fields(payload)? {
        None => {
            let mut r = Reader::new(payload);
            r.value()?;
            r.end()?;
            if purpose.is_empty() || bare == Bare::Accept {
                Ok(Opened::Data(payload))
            } else {
                Err(Invalid)
            }
        }
        Some(f) => {
            if let Some(exp) = f.exp {
                if now_ms >= exp_ms(exp)? {
                    return Err(Invalid);
                }
            }
            let mut pbuf = [0u8; 128];
            let pur = match f.pur {
                Some(p) => unescape_small(p, &mut pbuf).ok_or(Invalid)?,
                None => b"",
            };
            if !ct_eq(pur, purpose.as_bytes()) {
                return Err(Invalid);
            }
            match (f.message, f.data) {
                (Some(m), _) => {
                    let start = out.len();
                    base64::decode(Alphabet::Standard, m, out)?;
                    Ok(Opened::Message(start))
                }
                (None, Some(d)) => Ok(Opened::Data(d)),
                (None, None) => Err(Invalid),
            }
        }
    }
}

/// When a payload that `open` accepted stops being valid: its envelope's `exp` in Unix ms,
/// `None` when it never expires (no envelope, or no `exp`). Lets a caller remember an opened
/// value without opening it again, and still refuse it from that moment on.
pub fn expiry(payload: &[u8]) -> Result<Option<i64>, Invalid> {
    match envelope_fields(payload)? {
        Some(Fields { exp: Some(exp), .. }) => exp_ms(exp).map(Some),
        _ => Ok(None),
    }
}

/// An envelope's raw `exp` string (ISO 8601) as Unix ms.
fn exp_ms(exp: &[u8]) -> Result<i64, Invalid> {
    let mut text = [0u8; 40];
    let t = unescape_small(exp, &mut text).ok_or(Invalid)?;
    time::parse_iso8601(t).ok_or(Invalid)
}

/// Unescapes a short JSON string into `buf` without allocating; `None` if it does not fit.
fn unescape_small<'b>(raw: &[u8], buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let n = json::unescape_to_slice(raw, buf).ok()?;
    buf.get(..n)
}

pub(crate) struct Fields<'p> {
    pub(crate) data: Option<&'p [u8]>,
    pub(crate) message: Option<&'p [u8]>,
    pub(crate) exp: Option<&'p [u8]>,
    pub(crate) pur: Option<&'p [u8]>,
}

/// `Some` when `payload` is exactly `{"_rails":{…}}`; `None` for any other valid JSON.
pub(crate) fn envelope_fields(payload: &[u8]) -> Result<Option<Fields<'_>>, Invalid> {
    let mut r = Reader::new(payload);
    if r.peek() != Some(b'{') {
        return Ok(None);
    }
    r.begin_object()?;
    if r.next_key()? != Some(b"_rails") || r.peek() != Some(b'{') {
        return Ok(None);
    }
    r.begin_object()?;
    let mut f = Fields {
        data: None,
        message: None,
        exp: None,
        pur: None,
    };
    while let Some(key) = r.next_key()? {
        match key {
            b"data" => f.data = Some(r.value()?),
            b"message" => f.message = Some(r.string()?),
            b"exp" if r.null() => f.exp = None,
            b"exp" => f.exp = Some(r.string()?),
            b"pur" if r.null() => f.pur = None,
            b"pur" => f.pur = Some(r.string()?),
            _ => {
                r.value()?;
            }
        }
    }
    if r.next_key()?.is_some() {
        return Ok(None);
    }
    r.end()?;
    Ok(Some(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier() -> Verifier {
        Verifier::new(b"secret", Digest::Sha1, Alphabet::Standard, true)
    }

    #[test]
    fn sign_then_verify_and_tamper() {
        let v = verifier();
        let mut msg = Vec::new();
        v.sign(b"\"hello\"", &mut msg);
        assert!(msg.starts_with(b"ImhlbGxvIg==--"));
        assert_eq!(msg.len(), 12 + 2 + 40);
        let mut out = Vec::new();
        v.verify(&msg, &mut out).unwrap();
        assert_eq!(out, b"\"hello\"");
        for i in 0..msg.len() {
            let mut bad = msg.clone();
            bad[i] ^= 1;
            assert_eq!(v.verify(&bad, &mut Vec::new()), Err(Invalid));
        }
        assert_eq!(v.verify(b"", &mut out), Err(Invalid));
        assert_eq!(v.verify(&msg[1..], &mut out), Err(Invalid));
        let other = Verifier::new(b"secret", Digest::Sha256, Alphabet::Standard, true);
        assert_eq!(other.verify(&msg, &mut out), Err(Invalid));
    }

    #[test]
    fn hmac_sha1_known_answer() {
        // RFC 2202 test case 2 ("what do ya want for nothing?", key "Jefe").
        let v = Verifier::new(b"Jefe", Digest::Sha1, Alphabet::Standard, true);
        let mut hex = [0u8; 64];
        let n = v.hex_digest(b"what do ya want for nothing?", &mut hex);
        assert_eq!(&hex[..n], b"effcdf6ae5eb2fa2d27416d5f184df9c259a7c79");
        let v = Verifier::new(b"Jefe", Digest::Sha256, Alphabet::Standard, true);
        let n = v.hex_digest(b"what do ya want for nothing?", &mut hex);
        assert_eq!(
            &hex[..n],
            b"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn envelopes_round_trip() {
        let now = 1_700_000_000_000;
        let mut p = Vec::new();
        envelope(b"1", Some(now + 1), Some("user/transfer"), &mut p);
        assert!(p.starts_with(br#"{"_rails":{"data":1,"exp":""#));
        assert_eq!(
            open(&p, "user/transfer", now, Bare::Refuse, &mut Vec::new()),
            Ok(Opened::Data(b"1"))
        );
        assert_eq!(
            open(&p, "user/transfer", now + 1, Bare::Refuse, &mut Vec::new()),
            Err(Invalid),
            "expired at exp"
        );
        assert_eq!(
            open(&p, "user/avatar", now, Bare::Refuse, &mut Vec::new()),
            Err(Invalid)
        );
        assert_eq!(
            open(&p, "", now, Bare::Accept, &mut Vec::new()),
            Err(Invalid)
        );

        let mut bare = Vec::new();
        envelope(b"\"rooms\"", None, None, &mut bare);
        assert_eq!(bare, b"\"rooms\"");
        assert_eq!(
            open(&bare, "", now, Bare::Refuse, &mut Vec::new()),
            Ok(Opened::Data(b"\"rooms\""))
        );
        assert_eq!(
            open(&bare, "x", now, Bare::Refuse, &mut Vec::new()),
            Err(Invalid)
        );
        assert_eq!(
            open(&bare, "x", now, Bare::Accept, &mut Vec::new()),
            Ok(Opened::Data(b"\"rooms\""))
        );

        let mut legacy = Vec::new();
        legacy_envelope(b"\"tok\"", None, Some("cookie.x"), &mut legacy);
        assert_eq!(
            legacy,
            br#"{"_rails":{"message":"InRvayI=","exp":null,"pur":"cookie.x"}}"#
        );
        let mut out = b"..".to_vec();
        assert_eq!(
            open(&legacy, "cookie.x", now, Bare::Accept, &mut out),
            Ok(Opened::Message(2))
        );
        assert_eq!(&out[2..], b"\"tok\"");
        assert_eq!(
            open(&legacy, "cookie.y", now, Bare::Accept, &mut out),
            Err(Invalid)
        );

        let mut no_pur = Vec::new();
        envelope(b"2", Some(now + 5), None, &mut no_pur);
        assert_eq!(
            open(&no_pur, "", now, Bare::Refuse, &mut Vec::new()),
            Ok(Opened::Data(b"2"))
        );
        assert_eq!(
            open(&no_pur, "p", now, Bare::Refuse, &mut Vec::new()),
            Err(Invalid)
        );
    }

    #[test]
    fn odd_payloads() {
        let now = 0;
        for bad in [
            &b"{"[..],
            b"",
            b"{\"_rails\":{\"data\":1",
            b"{\"_rails\":{}}",
            b"{\"_rails\":{\"exp\":\"soon\",\"data\":1}}",
            b"{\"_rails\":{\"message\":\"!!\"}}",
        ] {
            assert_eq!(
                open(bad, "", now, Bare::Accept, &mut Vec::new()),
                Err(Invalid),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        // A second top-level key means "not an envelope": the whole object is the value.
        let two = br#"{"_rails":{"data":1},"x":2}"#;
        assert_eq!(
            open(two, "", now, Bare::Refuse, &mut Vec::new()),
            Ok(Opened::Data(&two[..]))
        );
        let escaped = br#"{"_rails":{"data":1,"pur":"user\/avatar"}}"#;
        assert_eq!(
            open(escaped, "user/avatar", now, Bare::Refuse, &mut Vec::new()),
            Ok(Opened::Data(b"1"))
        );
    }
}
