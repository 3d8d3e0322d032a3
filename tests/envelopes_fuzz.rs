//! Randomised testing of the Rails message verifier and encryptor and their metadata
//! envelopes (`crypto::verifier`, `crypto::encryptor`), with oracles:
//! - for random keys, digests, base64 forms and payloads, `sign` then `verify` gives the
//!   payload back, and every truncation, byte flip or splice of the signed message is refused;
//! - `encrypt` then `decrypt` gives the plaintext back under the same key only, and every
//!   change to the message is refused without touching the caller's buffer;
//! - envelopes (new and legacy) opened with the purpose and time they were made for give their
//!   data back; the wrong purpose, an expired time, or a mutated envelope never do, and random
//!   JSON never panics `open` or `expiry`.

mod fuzz_support;
use campfire::crypto::base64::Alphabet;
use campfire::crypto::gcm::Gcm;
use campfire::crypto::verifier::{self, Bare, Digest, Opened, Verifier};
use campfire::crypto::{encryptor, json};
use fuzz_support::{mutate, Budget, Rng};

const PURPOSES: &[&str] = &["", "cookie.session_token", "attachable", "transfer", "p\"q", "é"];
const INTERESTING: &[u8] = b"-=+/_{}\":,\\0123456789abcdefABCDEF";

/// A JSON value to carry (its text).
fn data_json(r: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    match r.below(5) {
        0 => json::write_string(&r.some_bytes(40).iter().map(|b| b'a' + b % 26).collect::<Vec<_>>(), &mut out),
        1 => out.extend_from_slice((r.next() as i64 >> r.below(63)).to_string().as_bytes()),
        2 => out.extend_from_slice(b"{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u00e9\"}"),
        3 => out.extend_from_slice(b"\"gid://campfire/User/1?expires_in\""),
        _ => out.extend_from_slice(b"[]"),
    }
    out
}

#[test]
fn verifier_round_trips_and_refuses_every_change() {
    let mut r = Rng::new(0x7E21F1E2);
    let mut budget = Budget::new("message verifier", 20_000).share(35);
    let mut prev = Vec::new();
    while budget.more() {
        let key_len = 1 + r.below(80);
        let key = r.bytes(key_len);
        let digest = r.pick(&[Digest::Sha1, Digest::Sha256]);
        let alphabet = r.pick(&[Alphabet::Standard, Alphabet::UrlSafe]);
        // The forms Rails writes: strict (padded) base64, or URL-safe with or without padding.
        let pad = alphabet == Alphabet::Standard || r.one_in(2);
        let v = Verifier::new(&key, digest, alphabet, pad);
        let payload = r.some_bytes(200);
        let mut signed = Vec::new();
        v.sign(&payload, &mut signed);
        let mut out = Vec::new();
        let ok = v.verify(&signed, &mut out);
        assert!(payload.is_empty() || ok.is_ok(), "{digest:?} {alphabet:?} pad {pad} key {} payload {payload:?} signed {:?} -> {ok:?}", key.len(), String::from_utf8_lossy(&signed));
        assert_eq!(out, payload);
        let other = Verifier::new(&[&key[..], b"x"].concat(), digest, alphabet, pad);
        assert!(other.verify(&signed, &mut Vec::new()).is_err(), "another key");

        let cut = r.below(signed.len());
        assert!(v.verify(&signed[..cut], &mut Vec::new()).is_err(), "cut at {cut}");
        let mut m = signed.clone();
        let i = r.below(m.len());
        m[i] ^= 1 << r.below(8);
        assert!(v.verify(&m, &mut Vec::new()).is_err(), "flip at {i}");
        let mut m = signed.clone();
        mutate(&mut r, &mut m, INTERESTING, &prev);
        if m != signed {
            assert!(v.verify(&m, &mut Vec::new()).is_err(), "{:?} from {:?}", String::from_utf8_lossy(&m), String::from_utf8_lossy(&signed));
        }
        let _ = v.verify(&r.some_bytes(120), &mut Vec::new());
        prev = signed;
    }
}

#[test]
fn encryptor_round_trips_and_refuses_every_change() {
    let mut r = Rng::new(0xE4C2F97);
    let mut budget = Budget::new("message encryptor", 20_000).share(35);
    let mut prev = Vec::new();
    while budget.more() {
        let mut key = [0u8; 32];
        key.copy_from_slice(&r.bytes(32));
        let gcm = Gcm::new(&key);
        let mut iv = [0u8; 12];
        iv.copy_from_slice(&r.bytes(12));
        let plain = r.some_bytes(300);
        let mut buf = plain.clone();
        let mut msg = Vec::new();
        encryptor::encrypt(&gcm, &iv, &mut buf, &mut msg);
        let mut out = b"kept".to_vec();
        encryptor::decrypt(&gcm, &msg, &mut out).expect("our own message");
        assert_eq!(&out[4..], &plain[..]);
        key[r.below(32)] ^= 1 << r.below(8);
        assert!(encryptor::decrypt(&Gcm::new(&key), &msg, &mut Vec::new()).is_err(), "another key");

        let mut m = msg.clone();
        if r.one_in(2) {
            let i = r.below(m.len());
            m[i] ^= 1 << r.below(8);
        } else {
            mutate(&mut r, &mut m, INTERESTING, &prev);
        }
        let mut out = b"kept".to_vec();
        // Base64 has a few spellings of the same bytes only at padding: a change that keeps
        // the decoded bytes may still open; anything else must not, and leaves `out` alone.
        if encryptor::decrypt(&gcm, &m, &mut out).is_err() {
            assert_eq!(out, b"kept");
        } else {
            assert_eq!(&out[4..], &plain[..], "a changed message opened to other bytes");
        }
        let _ = encryptor::decrypt(&gcm, &r.some_bytes(120), &mut Vec::new());
        prev = msg;
    }
}

#[test]
fn envelopes_open_for_their_purpose_and_time_only() {
    let mut r = Rng::new(0xE4E10BE);
    let mut budget = Budget::new("envelopes", 50_000).share(30);
    let mut prev = Vec::new();
    let now = 1_767_225_600_000i64; // 2026-01-01
    while budget.more() {
        let data = data_json(&mut r);
        let purpose = r.one_in(4).then(|| r.pick(PURPOSES));
        let exp = r.one_in(2).then(|| now + 1 + r.below(1 << 40) as i64);
        let legacy = r.one_in(3);
        let mut env = Vec::new();
        if legacy {
            verifier::legacy_envelope(&data, exp, purpose, &mut env);
        } else {
            verifier::envelope(&data, exp, purpose, &mut env);
        }
        let want = purpose.unwrap_or("");
        let mut out = Vec::new();
        let opened = verifier::open(&env, want, now, Bare::Refuse, &mut out).unwrap_or_else(|_| panic!("{:?} for {want:?}", String::from_utf8_lossy(&env)));
        match opened {
            Opened::Data(d) => assert_eq!(d, &data[..]),
            Opened::Message(start) => assert_eq!(&out[start..], &data[..]),
        }
        assert_eq!(verifier::expiry(&env), Ok(exp));
        if let Some(e) = exp {
            assert!(verifier::open(&env, want, e + 1000, Bare::Refuse, &mut Vec::new()).is_err(), "expired");
        }
        let wrong = if want == "attachable" { "transfer" } else { "attachable" };
        assert!(verifier::open(&env, wrong, now, Bare::Refuse, &mut Vec::new()).is_err(), "wrong purpose");
        let mut m = env.clone();
        mutate(&mut r, &mut m, INTERESTING, &prev);
        let _ = verifier::open(&m, want, now, Bare::Accept, &mut Vec::new());
        let _ = verifier::expiry(&m);
        prev = env;
    }
}
