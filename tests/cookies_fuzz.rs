//! Randomised testing of cookies, from the `Cookie` header to the values inside it, with
//! oracles:
//! - `http::cookies::get` (eight bytes at a time) agrees with the plain `iter` reading on
//!   every generated and mutated header, and headers made of known pairs give those pairs;
//! - `session_token` and `_campfire_session` values written for random tokens and session
//!   hashes (flash text, return URLs, any characters) read back equal; every truncation and
//!   byte flip of them is refused (signed or encrypted, nothing else gets through), and so
//!   are random values; `form_escape`/`form_unescape` round-trip any bytes;
//! - `last_room` takes exactly the decimal ids.

mod fuzz_support;
use campfire::crypto::cookies::{self, form_escape, form_unescape, Session};
use campfire::crypto::{Keys, Scratch};
use campfire::http::cookies as header;
use fuzz_support::{mutate, Budget, Rng};

const NAMES: &[&str] = &["session_token", "_campfire_session", "last_room", "a", "A", "x y", "__Host-x", "é"];
const PIECES: &[&[u8]] = &[b";", b"; ", b"=", b"\"", b" ", b"\t", b"abc", b"--", b"%3D", b"12345678", b";;", b"=\"q\"", b"\xff"];
const TEXTS: &[&str] = &["", "hi", "Signed in as Ada", "a\"b\\c", "é 😄", "/rooms/1?a=b&c=d#x", "\u{0}\u{1f}", "<script>", "+%=;"];

fn value(r: &mut Rng) -> Vec<u8> {
    // A cookie-octet run (no ';', ',', quote, backslash or whitespace) crossing 8-byte blocks.
    const OCTETS: &[u8] = b"abcXYZ019-_.!#$%&'()*+/:<=>?@[]^`{|}~";
    let n = r.below(40);
    (0..n).map(|_| r.pick(OCTETS)).collect()
}

#[test]
fn header_get_agrees_with_iter_and_reads_known_pairs() {
    let mut r = Rng::new(0xC00C1E5);
    let mut budget = Budget::new("cookie header", 100_000).share(40);
    let mut prev = Vec::new();
    while budget.more() {
        // Known pairs, distinct names.
        let mut pairs: Vec<(&str, Vec<u8>)> = Vec::new();
        for _ in 0..r.below(6) {
            let name = r.pick(NAMES);
            if !name.contains(' ') && pairs.iter().all(|(n, _)| *n != name) {
                pairs.push((name, value(&mut r)));
            }
        }
        let mut h = Vec::new();
        for (i, (n, v)) in pairs.iter().enumerate() {
            if i > 0 {
                h.extend_from_slice(r.pick(&[&b"; "[..], b";", b" ; ", b";\t"]));
            }
            h.extend_from_slice(n.as_bytes());
            h.push(b'=');
            let quoted = r.one_in(5);
            if quoted {
                h.push(b'"');
            }
            h.extend_from_slice(v);
            if quoted {
                h.push(b'"');
            }
        }
        let read: Vec<(&[u8], &[u8])> = header::iter(&h).collect();
        let want: Vec<(&[u8], &[u8])> = pairs.iter().map(|(n, v)| (n.as_bytes(), &v[..])).collect();
        assert_eq!(read, want, "{:?}", String::from_utf8_lossy(&h));
        for (n, v) in &pairs {
            assert_eq!(header::get(&h, n.as_bytes()), Some(&v[..]));
        }

        // Soup and mutations: `get` is the same reading as `iter`.
        let mut soup: Vec<u8> = (0..r.below(12)).flat_map(|_| r.pick(PIECES).to_vec()).collect();
        if r.one_in(2) {
            soup.splice(0..0, h.iter().copied());
        }
        mutate(&mut r, &mut soup, b";= \t\"", &prev);
        for name in NAMES.iter().map(|n| n.as_bytes()).chain([&b""[..], b"abc", b"q"]) {
            let want = header::iter(&soup).find(|(n, _)| *n == name).map(|(_, v)| v);
            assert_eq!(header::get(&soup, name), want, "{:?} in {:?}", String::from_utf8_lossy(name), String::from_utf8_lossy(&soup));
        }
        prev = h;
    }
}

fn text(r: &mut Rng) -> String {
    (0..r.below(4)).map(|_| r.pick(TEXTS)).collect()
}

fn session(r: &mut Rng) -> Session {
    let hex = |r: &mut Rng| (0..64).map(|_| r.pick(b"0123456789abcdef") as char).collect::<String>();
    Session {
        session_id: r.one_in(2).then(|| hex(r)),
        csrf_token: r.one_in(2).then(|| text(r)),
        return_to: r.one_in(2).then(|| text(r)),
        flash: (0..r.below(3)).map(|i| (["notice", "alert", "x"][i].to_string(), text(r))).collect(),
        other: Vec::new(),
    }
}

/// The value part of a `Set-Cookie` line.
fn value_of(set_cookie: &[u8]) -> Vec<u8> {
    let start = set_cookie.iter().position(|&c| c == b'=').map_or(0, |p| p + 1);
    let end = set_cookie.iter().position(|&c| c == b';').unwrap_or(set_cookie.len());
    set_cookie[start..end].to_vec()
}

/// Whether `a` and `b` decode to the same bytes (`%2b` and `%2B` do).
fn same_decoding(a: &[u8], b: &[u8]) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    form_unescape(a, &mut x).is_ok() && form_unescape(b, &mut y).is_ok() && x == y
}

#[test]
fn signed_and_encrypted_cookies_round_trip_and_refuse_every_change() {
    let keys = Keys::derive(b"cookies fuzz");
    let other = Keys::derive(b"another secret");
    let now = campfire::crypto::time::now_ms();
    let mut s = Scratch::default();
    let mut r = Rng::new(0x5E55104E);
    let mut budget = Budget::new("cookie values", 400).share(40);
    while budget.more() {
        let token: Vec<u8> = (0..1 + r.below(cookies::MAX_TOKEN)).map(|_| r.pick(b"ABCDEFabcdef0123456789")).collect();
        let mut line = Vec::new();
        cookies::set_session_token(&keys, &token, now, r.one_in(2), &mut line);
        let signed = value_of(&line);
        let t = cookies::read_session_token(&keys, &signed, now, &mut s).expect("our own session_token");
        assert_eq!(t.as_bytes(), &token[..]);
        assert!(cookies::read_session_token(&other, &signed, now, &mut s).is_none(), "another key");

        let sess = session(&mut r);
        let mut line = Vec::new();
        cookies::set_session(&keys, &sess, now, r.one_in(2), &mut line);
        let sealed = value_of(&line);
        let back = cookies::read_session(&keys, &sealed, now, &mut s);
        assert_eq!(back, sess);
        assert!(cookies::read_session(&other, &sealed, now, &mut s).is_empty(), "another key");

        // A few truncations and byte flips of each, at random places.
        for _ in 0..8 {
            let cut = r.below(signed.len());
            assert!(cookies::read_session_token(&keys, &signed[..cut], now, &mut s).is_none(), "cut at {cut}");
            let cut = r.below(sealed.len());
            assert!(cookies::read_session(&keys, &sealed[..cut], now, &mut s).is_empty() || sess.is_empty(), "cut at {cut}");
            let mut m = signed.clone();
            let i = r.below(m.len());
            m[i] ^= 1 << r.below(8);
            if !same_decoding(&m, &signed) {
                assert!(cookies::read_session_token(&keys, &m, now, &mut s).is_none(), "flip at {i}");
            }
            let mut m = sealed.clone();
            let i = r.below(m.len());
            m[i] ^= 1 << r.below(8);
            if !same_decoding(&m, &sealed) {
                assert!(cookies::read_session(&keys, &m, now, &mut s).is_empty(), "flip at {i}");
            }
        }
        // Noise is refused.
        let noise = r.some_bytes(300);
        assert!(cookies::read_session_token(&keys, &noise, now, &mut s).is_none());
        assert!(cookies::read_session(&keys, &noise, now, &mut s).is_empty());

        // form escaping round-trips any bytes.
        let raw = r.some_bytes(80);
        let mut esc = Vec::new();
        form_escape(&raw, &mut esc);
        assert!(esc.iter().all(|b| b.is_ascii_alphanumeric() || b"*-._+%".contains(b)));
        let mut back = Vec::new();
        form_unescape(&esc, &mut back).unwrap();
        assert_eq!(back, raw);
        let _ = form_unescape(&noise, &mut back);
    }
}

#[test]
fn last_room_takes_exactly_decimal_ids() {
    let mut r = Rng::new(0x1A57700);
    let mut budget = Budget::new("last_room", 100_000).share(20);
    while budget.more() {
        let id = (r.next() >> r.below(64)) as i64 & i64::MAX;
        assert_eq!(cookies::read_last_room(id.to_string().as_bytes()), Some(id));
        let mut v = id.to_string().into_bytes();
        mutate(&mut r, &mut v, b"+- 0x9\x00", b"");
        let want = (!v.is_empty() && v.iter().all(u8::is_ascii_digit)).then(|| std::str::from_utf8(&v).ok()?.parse::<i64>().ok()).flatten();
        assert_eq!(cookies::read_last_room(&v), want, "{:?}", String::from_utf8_lossy(&v));
    }
}
