//! Randomised testing of the request parser: over a million generated and mutated inputs must
//! never panic and must keep the invariants (every slice inside the input, framing consistent
//! with the headers, chunked bodies within limits, prefixes of a valid head incomplete); valid
//! requests must parse the same as httparse (method, target, headers, head length).
//! Deterministic: the fixed-seed generator of tests/fuzz_support, so a failure reproduces
//! exactly; `make fuzz` runs both loops for minutes.

use campfire::http::chunked;
use campfire::http::limits::HEADER_SLOTS;
use campfire::http::{parse_head, Framing, Header, Limits, ParseError};

mod fuzz_support;
use fuzz_support::{Budget, Rng};

const METHODS: &[&str] = &["GET", "POST", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "M-SEARCH"];
const PATHS: &[&str] = &["/", "/up", "/rooms/12/messages", "/a%20b?q=1&r=%2F", "/search?q=caf%C3%A9", "/x?", "/assets/app-1a2b3c4d.css", "http://h.example/p?q", "*"];
const NAMES: &[&str] = &["Accept", "User-Agent", "Cookie", "X-Forwarded-For", "Sec-Fetch-Site", "Turbo-Frame", "Accept-Encoding", "If-None-Match", "x_under", "A"];
const VALUES: &[&str] = &["text/html", "session_token=abc--def; a=b", "gzip, br", "\"etag\"", "", "caf\u{e9}", "1.2.3.4, 5.6.7.8", "a\tb", "same-origin"];
const INTERESTING: &[u8] = b"\r\n \t:;,0123456789aAfFzZ-/?%\"\x00\x01\x7f\x80\xff";

/// A valid request: head (with Host) and a body framed by Content-Length or chunked.
fn valid(r: &mut Rng) -> Vec<u8> {
    let mut method = r.pick(METHODS);
    let path = r.pick(PATHS);
    if path == "*" {
        method = "OPTIONS";
    }
    let http10 = r.below(8) == 0;
    let mut v = Vec::new();
    if r.below(20) == 0 {
        v.extend_from_slice(b"\r\n");
    }
    v.extend_from_slice(format!("{method} {path} HTTP/1.{}\r\n", if http10 { 0 } else { 1 }).as_bytes());
    v.extend_from_slice(b"Host: example.com\r\n");
    for _ in 0..r.below(8) {
        let ws = r.pick(&["", " ", "  ", "\t"]);
        v.extend_from_slice(format!("{}:{ws}{}{}\r\n", r.pick(NAMES), r.pick(VALUES), r.pick(&["", " ", "\t"])).as_bytes());
    }
    let body: Vec<u8> = (0..r.below(40)).map(|_| b'a' + r.below(26) as u8).collect();
    if !http10 && r.below(3) == 0 {
        v.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        for part in body.chunks(1 + r.below(9)) {
            v.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
            v.extend_from_slice(part);
            v.extend_from_slice(b"\r\n");
        }
        v.extend_from_slice(b"0\r\n");
        if r.below(3) == 0 {
            v.extend_from_slice(b"X-Checksum: 1\r\n");
        }
        v.extend_from_slice(b"\r\n");
    } else if !body.is_empty() || r.below(2) == 0 {
        v.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        v.extend_from_slice(&body);
    } else {
        v.extend_from_slice(b"\r\n");
    }
    v
}

fn mutate(r: &mut Rng, v: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..1 + r.below(4) {
        let at = r.below(v.len() + 1);
        match r.below(7) {
            0 if at < v.len() => v[at] = r.pick(INTERESTING),
            1 => v.insert(at, r.pick(INTERESTING)),
            2 if at < v.len() => {
                v.remove(at);
            }
            3 => v.truncate(at),
            4 if at < v.len() => v[at] = r.next() as u8,
            5 => {
                let from = r.below(other.len());
                let len = r.below(other.len() - from + 1);
                v.splice(at..at, other[from..from + len].iter().copied());
            }
            _ if at < v.len() => v[at] ^= 1 << r.below(8),
            _ => {}
        }
    }
}

fn inside(s: &[u8], input: &[u8]) -> bool {
    let (b, e) = (input.as_ptr() as usize, input.as_ptr() as usize + input.len());
    let p = s.as_ptr() as usize;
    s.is_empty() || (p >= b && p + s.len() <= e)
}

/// Checks one input; returns the head length when it parsed.
fn check(input: &[u8], limits: &Limits) -> Option<usize> {
    let mut slots = [Header::EMPTY; HEADER_SLOTS];
    let head = match parse_head(input, limits, &mut slots) {
        Ok(Some(h)) => h,
        Ok(None) => {
            assert!(input.len() <= limits.max_header_bytes, "incomplete past the header limit");
            return None;
        }
        Err(e) => {
            assert!(matches!(e.status(), 400 | 413 | 414 | 417 | 431 | 501 | 505));
            return None;
        }
    };
    assert!(head.len <= input.len() && head.len <= limits.max_header_bytes + 2);
    assert!(inside(head.request.target, input));
    assert!(inside(head.request.path, input) || head.request.path == b"/");
    assert!(inside(head.request.query, input));
    assert!(head.request.headers.len() <= limits.max_headers);
    for h in head.request.headers {
        assert!(inside(h.name, input) && inside(h.value, input));
        assert!(!h.name.is_empty());
        assert!(!h.value.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0));
    }
    let cls: Vec<&Header> = head.request.headers.iter().filter(|h| h.name.eq_ignore_ascii_case(b"content-length")).collect();
    let te = head.request.headers.iter().any(|h| h.name.eq_ignore_ascii_case(b"transfer-encoding"));
    match head.framing {
        Framing::Length(n) => {
            assert_eq!(cls.len(), 1);
            assert!(!te);
            assert_eq!(std::str::from_utf8(cls[0].value).unwrap().parse::<usize>().unwrap(), n);
            assert!(n <= limits.max_body && n > 0);
        }
        Framing::None => {
            assert!(!te);
            assert!(cls.is_empty() || cls[0].value.iter().all(|&b| b == b'0'));
        }
        Framing::Chunked => {
            assert!(te && cls.is_empty() && !head.request.http10);
            let rest = &input[head.len..];
            if let Ok(Some((raw, blen))) = chunked::scan(rest, limits) {
                assert!(raw <= rest.len() && blen <= raw && blen <= limits.max_body);
                let mut copy = rest[..raw].to_vec();
                assert_eq!(chunked::dechunk_in_place(&mut copy), blen);
            }
        }
    }
    Some(head.len)
}

#[test]
fn a_million_inputs_no_panic_and_invariants_hold() {
    let limits = Limits { max_url: 64, max_header_bytes: 512, max_headers: 12, max_body: 100, max_upload: 200 };
    let mut r = Rng::new(0x9E3779B97F4A7C15);
    let mut parsed = 0;
    let mut prev = valid(&mut r);
    let mut budget = Budget::new("http parser", 1_000_000).share(50);
    while budget.more() {
        let i = budget.done() - 1;
        let mut v = valid(&mut r);
        if !i.is_multiple_of(4) {
            mutate(&mut r, &mut v, &prev);
        } else if let Some(len) = check(&v, &limits) {
            // Every prefix of a complete valid head is incomplete (or over a limit), never
            // a different request.
            let cut = r.below(len);
            let mut slots = [Header::EMPTY; HEADER_SLOTS];
            assert!(!matches!(parse_head(&v[..cut], &limits, &mut slots), Ok(Some(_))));
        }
        if check(&v, &limits).is_some() {
            parsed += 1;
        }
        if i.is_multiple_of(16) {
            // Pure noise, and noise after a valid request line.
            let noise: Vec<u8> = (0..r.below(80)).map(|_| r.next() as u8).collect();
            check(&noise, &limits);
            let mut line = b"GET / HTTP/1.1\r\n".to_vec();
            line.extend_from_slice(&noise);
            check(&line, &limits);
        }
        prev = v;
    }
    // The generator must exercise the accepting paths too, not only errors.
    assert!(parsed > budget.done() / 5, "only {parsed} inputs parsed");
}

#[test]
fn agrees_with_httparse_on_valid_requests() {
    let limits = Limits::DEFAULT;
    let mut r = Rng::new(0x123456789ABCDEF1);
    let mut compared = 0;
    let mut budget = Budget::new("http parser vs httparse", 200_000).share(50);
    while budget.more() {
        let i = budget.done() - 1;
        let mut v = valid(&mut r);
        if i % 2 == 1 {
            let other = valid(&mut r);
            mutate(&mut r, &mut v, &other);
        }
        let mut slots = [Header::EMPTY; HEADER_SLOTS];
        let ours = parse_head(&v, &limits, &mut slots);
        let mut theirs_h = [httparse::EMPTY_HEADER; 130];
        let mut theirs = httparse::Request::new(&mut theirs_h);
        let t = theirs.parse(&v);
        if i.is_multiple_of(2) {
            assert!(matches!(ours, Ok(Some(_))), "valid request refused: {:?} {:?}", String::from_utf8_lossy(&v), ours.err());
        }
        // Where we accept, httparse must accept and see the same request.
        if let Ok(Some(h)) = ours {
            let len = match t {
                Ok(httparse::Status::Complete(len)) => len,
                other => panic!("httparse disagrees ({other:?}) on {:?}", String::from_utf8_lossy(&v)),
            };
            assert_eq!(len, h.len);
            assert_eq!(theirs.method.unwrap().as_bytes(), method_token(&v));
            assert_eq!(theirs.path.unwrap().as_bytes(), h.request.target);
            assert_eq!(theirs.version.unwrap(), if h.request.http10 { 0 } else { 1 });
            assert_eq!(theirs.headers.len(), h.request.headers.len());
            for (a, b) in theirs.headers.iter().zip(h.request.headers) {
                assert_eq!(a.name.as_bytes(), b.name);
                assert_eq!(a.value, b.value, "{:?}", String::from_utf8_lossy(&v));
            }
            compared += 1;
        }
    }
    assert!(compared >= budget.done() / 2);
}

fn method_token(v: &[u8]) -> &[u8] {
    let start = v.iter().position(|&b| b != b'\r' && b != b'\n').unwrap_or(0);
    let end = start + v[start..].iter().position(|&b| b == b' ').unwrap_or(0);
    &v[start..end]
}

#[test]
fn parse_errors_have_distinct_statuses() {
    let limits = Limits::DEFAULT;
    let mut slots = [Header::EMPTY; HEADER_SLOTS];
    assert_eq!(parse_head(b"GET / HTTP/1.1\r\nHost: a\r\nExpect: x\r\n\r\n", &limits, &mut slots).unwrap_err(), ParseError::Expectation);
}
