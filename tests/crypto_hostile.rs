//! Hostile input for every reader that sees bytes from outside the process: random
//! bytes, truncations and single-byte mutations of valid values. Nothing may panic, and
//! nothing mutated may verify (except where the mutation is provably harmless).

use campfire::crypto::{base64, bcrypt, cookies, csrf, json, sgid, signed_id, turbo};
use campfire::crypto::{time, Keys, Scratch};

mod fuzz_support;
use fuzz_support::Rng;

/// Valid values of every kind we read, issued with `keys` at `now`.
fn valid_values(keys: &Keys, now: i64) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    let mut c = Vec::new();
    cookies::set_session_token(keys, b"AxJs94fteQ5Autv2VrKsH68c", now, true, &mut c);
    v.push(value_of(&c));
    let mut c = Vec::new();
    let session = cookies::Session {
        session_id: Some("ab".repeat(32)),
        flash: vec![("notice".into(), "hi".into())],
        ..Default::default()
    };
    cookies::set_session(keys, &session, now, true, &mut c);
    v.push(value_of(&c));
    let mut s = Vec::new();
    sgid::user_sgid(keys, 5, &mut s);
    v.push(s);
    let mut a = Vec::new();
    signed_id::transfer_id(keys, 9, now, &mut a);
    v.push(a);
    let mut t = Vec::new();
    turbo::sign_stream_name(keys, b"rooms", &mut t);
    v.push(t);
    v
}

fn value_of(set_cookie: &[u8]) -> Vec<u8> {
    let start = set_cookie.iter().position(|&c| c == b'=').unwrap() + 1;
    let end = set_cookie.iter().position(|&c| c == b';').unwrap();
    set_cookie[start..end].to_vec()
}

/// Runs every reader on `input`; returns how many accepted it.
fn read_all(keys: &Keys, input: &[u8], now: i64, s: &mut Scratch) -> usize {
    let mut accepted = 0;
    accepted += cookies::read_session_token(keys, input, now, s).is_some() as usize;
    accepted += !cookies::read_session(keys, input, now, s).is_empty() as usize;
    accepted += sgid::verify_user(keys, input, now, s).is_some() as usize;
    accepted += signed_id::verify(keys, input, signed_id::TRANSFER, now, s).is_some() as usize;
    accepted += signed_id::verify_blob_signed_id(keys, input, now, s).is_some() as usize;
    let mut name = Vec::new();
    accepted += turbo::verify_stream_name(keys, input, now, s, &mut name) as usize;
    // Lenient sgids ignore the signature by design; only check they do not panic.
    let _ = sgid::lenient_user(input, s);
    let _ = cookies::read_last_room(input);
    let raw = [7u8; 32];
    let _ = csrf::valid(&raw, input, input, b"post");
    let _ = csrf::raw_from_session(input);
    let _ = bcrypt::verify(b"pw", input);
    let _ = base64::decode(base64::Alphabet::Standard, input, &mut Vec::new());
    let _ = base64::decode(base64::Alphabet::UrlSafe, input, &mut Vec::new());
    let _ = json::Reader::new(input).value();
    let _ = json::unescape(input, &mut Vec::new());
    let _ = time::parse_iso8601(input);
    accepted
}

#[test]
fn random_bytes_are_refused_without_panics() {
    let keys = Keys::derive(b"hostile");
    let now = time::now_ms();
    let mut s = Scratch::default();
    let mut rng = Rng::new(0x9E3779B97F4A7C15);
    for i in 0..3000 {
        let len = (rng.next() % 400) as usize;
        let mut input = rng.bytes(len);
        if i % 2 == 0 {
            // Bias towards the characters our formats use so parsers get further.
            const ALPHABET: &[u8] =
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_%{}\":,[]\\u";
            for b in &mut input {
                *b = ALPHABET[*b as usize % ALPHABET.len()];
            }
        }
        assert_eq!(
            read_all(&keys, &input, now, &mut s),
            0,
            "accepted random input {input:?}"
        );
    }
}

#[test]
fn mutated_and_truncated_values_are_refused() {
    let keys = Keys::derive(b"hostile");
    let now = time::now_ms();
    let mut s = Scratch::default();
    for valid in valid_values(&keys, now) {
        assert_eq!(
            read_all(&keys, &valid, now, &mut s),
            1,
            "{}",
            String::from_utf8_lossy(&valid)
        );
        for cut in 0..valid.len() {
            assert_eq!(read_all(&keys, &valid[..cut], now, &mut s), 0);
        }
        for i in 0..valid.len() {
            for flip in [0x01u8, 0x20, 0x80] {
                let mut m = valid.clone();
                m[i] ^= flip;
                // Flipping 0x20 can turn "%2b" into "%2B": the same decoded bytes.
                let same = {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    cookies::form_unescape(&valid, &mut a).is_ok()
                        && cookies::form_unescape(&m, &mut b).is_ok()
                        && a == b
                };
                if !same {
                    assert_eq!(read_all(&keys, &m, now, &mut s), 0, "byte {i} ^ {flip:#x}");
                }
            }
        }
    }
}
