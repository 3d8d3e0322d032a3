//! Serving embedded assets: lookup by URL and plain path, and the conditional/range/encoding
//! decisions (200, 206, 304, 416) that `assets::serve` writes.

use campfire::assets::{self, accepts_gzip, decide, Asset, Reply};
use campfire::http::{Header, Method, Request};

static BODY: &[u8] = b"0123456789";
static GZ: &[u8] = b"\x1f\x8b pretend";
static ZIPPED: Asset = Asset {
    name: "app.css",
    url: "/assets/app-0000aaaa.css",
    content_type: "text/css; charset=utf-8",
    etag: "\"0000aaaa00000000\"",
    etag_gzip: "\"0000aaaa00000000-gz\"",
    body: BODY,
    gzip: Some(GZ),
};
static PLAIN: Asset = Asset {
    name: "ding.mp3",
    url: "/assets/ding-0000bbbb.mp3",
    content_type: "audio/mpeg",
    etag: "\"0000bbbb00000000\"",
    etag_gzip: "\"0000bbbb00000000-gz\"",
    body: BODY,
    gzip: None,
};

fn reply(a: &Asset, method: Method, headers: &[(&str, &str)]) -> Reply {
    let headers: Vec<Header> =
        headers.iter().map(|(n, v)| Header { name: n.as_bytes(), value: v.as_bytes() }).collect();
    let req = Request {
        method,
        target: a.url.as_bytes(),
        path: a.url.as_bytes(),
        query: b"",
        http10: false,
        headers: &headers,
        body: b"",
        spooled: None,
        peer: std::net::IpAddr::from([127, 0, 0, 1]),
        tls: false,
    };
    decide(&req, a)
}

fn get(a: &Asset, headers: &[(&str, &str)]) -> Reply {
    reply(a, Method::Get, headers)
}

#[test]
fn lookup_finds_fingerprinted_and_plain_paths_only() {
    let robots = assets::by_name("robots.txt").unwrap();
    assert!(std::ptr::eq(assets::lookup(robots.url.as_bytes()).unwrap(), robots));
    assert!(std::ptr::eq(assets::lookup(b"/robots.txt").unwrap(), robots));
    assert_eq!(assets::url("robots.txt"), Some(robots.url));
    assert!(robots.url.starts_with("/assets/robots-") && robots.url.ends_with(".txt"));
    for miss in [&b"/assets/robots.txt"[..], b"/assets/", b"/", b"", b"robots.txt", b"/assets/robots-00000000.txt", b"/up"] {
        assert!(assets::lookup(miss).is_none(), "{:?}", String::from_utf8_lossy(miss));
    }
    assert!(assets::url("nope.css").is_none());
}

#[test]
fn error_pages_share_a_plain_stylesheet() {
    let css = assets::lookup(b"/error.css").expect("/error.css is served at its plain path");
    assert_eq!(css.content_type, "text/css; charset=utf-8");
    for page in ["404.html", "422.html", "500.html"] {
        let body = std::str::from_utf8(assets::by_name(page).unwrap().body).unwrap();
        assert!(body.contains(r#"<link rel="stylesheet" href="/error.css">"#), "{page}");
        assert!(!body.contains("<style>"), "{page} keeps no copy of the style");
    }
}

#[test]
fn gzip_is_chosen_only_when_accepted_and_available() {
    assert_eq!(get(&ZIPPED, &[]), Reply::Full { gzip: false });
    assert_eq!(get(&ZIPPED, &[("Accept-Encoding", "gzip, deflate, br")]), Reply::Full { gzip: true });
    assert_eq!(get(&ZIPPED, &[("accept-encoding", "br;q=1.0, gzip;q=0")]), Reply::Full { gzip: false });
    assert_eq!(get(&PLAIN, &[("Accept-Encoding", "gzip")]), Reply::Full { gzip: false });
    assert_eq!(reply(&ZIPPED, Method::Head, &[("Accept-Encoding", "gzip")]), Reply::Full { gzip: true });
}

#[test]
fn accept_encoding_parsing() {
    assert!(accepts_gzip(b"gzip"));
    assert!(accepts_gzip(b"deflate, GZIP;q=0.5"));
    assert!(accepts_gzip(b"x-gzip"));
    assert!(accepts_gzip(b"*"));
    assert!(accepts_gzip(b"gzip;q=0.001"));
    assert!(!accepts_gzip(b"gzip;q=0.000"));
    assert!(!accepts_gzip(b"gzip; q=0, *"));
    assert!(!accepts_gzip(b"*;q=0"));
    assert!(!accepts_gzip(b"br, deflate"));
    assert!(!accepts_gzip(b"identity"));
    assert!(!accepts_gzip(b""));
    assert!(!accepts_gzip(b"gzipx"));
}

#[test]
fn if_none_match_gives_304_for_the_representation_it_names() {
    let nm = |tag: &'static str, ae: &'static str| get(&ZIPPED, &[("If-None-Match", tag), ("Accept-Encoding", ae)]);
    assert_eq!(nm("\"0000aaaa00000000\"", ""), Reply::NotModified { gzip: false });
    assert_eq!(nm("\"0000aaaa00000000-gz\"", "gzip"), Reply::NotModified { gzip: true });
    assert_eq!(nm("W/\"0000aaaa00000000\"", ""), Reply::NotModified { gzip: false });
    assert_eq!(nm("\"other\", \"0000aaaa00000000\"", ""), Reply::NotModified { gzip: false });
    assert_eq!(nm("*", "gzip"), Reply::NotModified { gzip: true });
    // the identity tag does not validate the gzip body, and vice versa
    assert_eq!(nm("\"0000aaaa00000000\"", "gzip"), Reply::Full { gzip: true });
    assert_eq!(nm("\"0000aaaa00000000-gz\"", ""), Reply::Full { gzip: false });
    assert_eq!(nm("\"0000aaaa\"", ""), Reply::Full { gzip: false });
}

#[test]
fn not_modified_wins_over_range() {
    let r = get(&PLAIN, &[("If-None-Match", "\"0000bbbb00000000\""), ("Range", "bytes=0-1")]);
    assert_eq!(r, Reply::NotModified { gzip: false });
}

#[test]
fn single_ranges_give_206_on_the_identity_body() {
    let range = |v: &'static str| get(&ZIPPED, &[("Range", v), ("Accept-Encoding", "gzip")]);
    assert_eq!(range("bytes=0-0"), Reply::Partial { start: 0, end: 0 });
    assert_eq!(range("bytes=2-5"), Reply::Partial { start: 2, end: 5 });
    assert_eq!(range("bytes=7-"), Reply::Partial { start: 7, end: 9 });
    assert_eq!(range("bytes=5-999999999999999999999999"), Reply::Partial { start: 5, end: 9 });
    assert_eq!(range("bytes=-3"), Reply::Partial { start: 7, end: 9 });
    assert_eq!(range("bytes=-50"), Reply::Partial { start: 0, end: 9 });
    assert_eq!(range("Bytes = 9-9"), Reply::Partial { start: 9, end: 9 });
}

#[test]
fn unsatisfiable_ranges_give_416() {
    for v in ["bytes=10-", "bytes=10-20", "bytes=-0", "bytes=99999999999999999999999-"] {
        assert_eq!(get(&PLAIN, &[("Range", v)]), Reply::Unsatisfiable, "{v}");
    }
}

#[test]
fn malformed_multi_and_non_get_ranges_are_ignored() {
    for v in ["bytes=0-1,3-4", "bytes=5-2", "bytes=a-b", "bytes=1", "items=0-1", "bytes=", "bytes=-", "bytes=1-x", "bytes=+1-2"] {
        assert_eq!(get(&PLAIN, &[("Range", v)]), Reply::Full { gzip: false }, "{v}");
    }
    assert_eq!(reply(&PLAIN, Method::Head, &[("Range", "bytes=0-1")]), Reply::Full { gzip: false });
    assert_eq!(reply(&PLAIN, Method::Post, &[("Range", "bytes=0-1")]), Reply::Full { gzip: false });
}

#[test]
fn if_range_must_name_the_identity_body() {
    let ir = |tag: &'static str| get(&PLAIN, &[("Range", "bytes=1-2"), ("If-Range", tag)]);
    assert_eq!(ir("\"0000bbbb00000000\""), Reply::Partial { start: 1, end: 2 });
    assert_eq!(ir("\"0000bbbb00000000-gz\""), Reply::Full { gzip: false });
    assert_eq!(ir("W/\"0000bbbb00000000\""), Reply::Full { gzip: false });
    assert_eq!(ir("Sun, 29 Nov 2026 10:00:00 GMT"), Reply::Full { gzip: false });
}
