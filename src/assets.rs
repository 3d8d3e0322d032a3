//! Embedded static assets: every file under `public/` and the browser files listed in
//! `vendor/manifest.txt`, hashed and gzipped by build.rs and compiled into the binary.
//!
//! Each is served at `/assets/<stem>-<first 8 hex of sha256>.<ext>` with a strong ETag and a
//! year of immutable caching: a changed file gets a new URL. A few root files keep a plain,
//! stable URL (`PLAIN`) because browsers or crawlers ask for them by name; those are served with
//! the same ETag but must be revalidated. Nothing here allocates or copies a body.

use crate::http::{Method, Request, Response};

/// One embedded file.
pub struct Asset {
    /// Path under public/, or the served name from vendor/manifest.txt (`app.css`, `turbo.js`).
    pub name: &'static str,
    /// Fingerprinted URL (`/assets/app-1a2b3c4d.css`).
    pub url: &'static str,
    pub content_type: &'static str,
    /// Strong ETag of the identity body, quotes included.
    pub etag: &'static str,
    /// Strong ETag of the gzip body (a different representation, so a different tag).
    pub etag_gzip: &'static str,
    pub body: &'static [u8],
    /// The gzip form, present only when it is smaller.
    pub gzip: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// Root files served at `/<name>` as well as at their fingerprinted URL.
const PLAIN: [&str; 4] = ["error.css", "favicon.ico", "robots.txt", "service-worker.js"];

const IMMUTABLE: &[u8] = b"public, max-age=31536000, immutable";
const REVALIDATE: &[u8] = b"public, max-age=0, must-revalidate";

/// Every embedded asset, sorted by URL.
pub fn all() -> &'static [Asset] {
    &ASSETS
}

/// The asset served at `path` (still percent-encoded; asset names never need encoding), or None.
pub fn lookup(path: &[u8]) -> Option<&'static Asset> {
    if path.starts_with(b"/assets/") {
        let i = ASSETS.binary_search_by(|a| a.url.as_bytes().cmp(path)).ok()?;
        return ASSETS.get(i);
    }
    let name = path.strip_prefix(b"/")?;
    let plain = PLAIN.iter().find(|p| p.as_bytes() == name)?;
    by_name(plain)
}

/// The asset named `name` (path under public/ or vendor served name), or None.
pub fn by_name(name: &str) -> Option<&'static Asset> {
    let i = BY_NAME.binary_search_by(|(n, _)| (*n).cmp(name)).ok()?;
    let (_, index) = BY_NAME.get(i)?;
    ASSETS.get(*index)
}

/// The fingerprinted URL of the asset named `name`, or None.
pub fn url(name: &str) -> Option<&'static str> {
    by_name(name).map(|a| a.url)
}

/// What to answer to a request for an asset; `decide` computes it, `serve` writes it.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// 200 with the whole body, gzip-encoded when `gzip`.
    Full { gzip: bool },
    /// 206 with the identity bytes `start..=end`.
    Partial { start: usize, end: usize },
    /// 304: the client's copy (of the gzip form when `gzip`) is current.
    NotModified { gzip: bool },
    /// 416: the single range asked for starts past the end.
    Unsatisfiable,
}

/// Chooses the answer, in the order RFC 9110 §13.2.2 evaluates preconditions: the encoding
/// (gzip when accepted and available), then `If-None-Match` against that representation's tag,
/// then a single `Range: bytes=` on GET (honoured on the identity body unless `If-Range` names
/// another version; multi-range and malformed ranges are ignored).
pub fn decide(req: &Request, a: &Asset) -> Reply {
    let gzip = a.gzip.is_some() && req.header(b"accept-encoding").is_some_and(accepts_gzip);
    let etag = if gzip { a.etag_gzip } else { a.etag };
    if let Some(inm) = req.header(b"if-none-match") {
        if etag_listed(inm, etag.as_bytes()) {
            return Reply::NotModified { gzip };
        }
    }
    if !matches!(req.method, Method::Get) {
        return Reply::Full { gzip };
    }
    let Some(range) = req.header(b"range") else { return Reply::Full { gzip } };
    if req.header(b"if-range").is_some_and(|t| t != a.etag.as_bytes()) {
        return Reply::Full { gzip };
    }
    match parse_range(range, a.body.len()) {
        RangeSpec::Ignore => Reply::Full { gzip },
        RangeSpec::Unsatisfiable => Reply::Unsatisfiable,
        RangeSpec::Span(start, end) => Reply::Partial { start, end },
    }
}

/// Answers a GET or HEAD for `a` (found by `lookup(req.path)`): status, caching headers and the
/// body, pointing at the embedded bytes without copying.
pub fn serve(req: &Request, res: &mut Response, a: &Asset) {
    let cache = if req.path == a.url.as_bytes() { IMMUTABLE } else { REVALIDATE };
    let reply = decide(req, a);
    let status = match reply {
        Reply::Full { .. } => 200,
        Reply::Partial { .. } => 206,
        Reply::NotModified { .. } => 304,
        Reply::Unsatisfiable => 416,
    };
    res.status(status);
    res.header("Cache-Control", cache);
    if a.gzip.is_some() {
        res.header("Vary", b"Accept-Encoding");
    }
    let mut line = [0u8; 80];
    match reply {
        Reply::Full { gzip } => {
            res.header("Content-Type", a.content_type.as_bytes());
            res.header("Accept-Ranges", b"bytes");
            match a.gzip.filter(|_| gzip) {
                Some(body) => {
                    res.header("ETag", a.etag_gzip.as_bytes());
                    res.header("Content-Encoding", b"gzip");
                    res.set_static_body(body);
                }
                None => {
                    res.header("ETag", a.etag.as_bytes());
                    res.set_static_body(a.body);
                }
            }
        }
        Reply::Partial { start, end } => {
            res.header("Content-Type", a.content_type.as_bytes());
            res.header("ETag", a.etag.as_bytes());
            let n = format_into(&mut line, format_args!("bytes {}-{}/{}", start, end, a.body.len()));
            res.header("Content-Range", n);
            res.set_static_body(a.body.get(start..=end).unwrap_or_default());
        }
        Reply::NotModified { gzip } => {
            res.header("ETag", if gzip { a.etag_gzip } else { a.etag }.as_bytes());
        }
        Reply::Unsatisfiable => {
            let n = format_into(&mut line, format_args!("bytes */{}", a.body.len()));
            res.header("Content-Range", n);
        }
    }
}

/// Formats into a stack buffer (no allocation); the buffers used here always fit.
fn format_into<'b>(buf: &'b mut [u8], args: std::fmt::Arguments) -> &'b [u8] {
    use std::io::Write;
    let cap = buf.len();
    let mut w = &mut buf[..];
    let _ = w.write_fmt(args);
    let used = cap - w.len();
    buf.get(..used).unwrap_or_default()
}

/// True when `Accept-Encoding` allows gzip: listed (or `*` without gzip listed) with q > 0.
pub fn accepts_gzip(value: &[u8]) -> bool {
    let mut star = false;
    for item in value.split(|&b| b == b',') {
        let mut parts = item.split(|&b| b == b';');
        let coding = parts.next().map(|c| c.trim_ascii()).unwrap_or_default();
        let refused = parts.any(|p| {
            let p = p.trim_ascii();
            let q = p.strip_prefix(b"q=").or_else(|| p.strip_prefix(b"Q="));
            q.is_some_and(|q| q.first() == Some(&b'0') && q.iter().all(|&c| c == b'0' || c == b'.'))
        });
        if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
            return !refused;
        }
        if coding == b"*" {
            star = !refused;
        }
    }
    star
}

/// True when the `If-None-Match` list holds `*` or `etag` (weak comparison: `W/` is ignored).
fn etag_listed(list: &[u8], etag: &[u8]) -> bool {
    list.split(|&b| b == b',').any(|t| {
        let t = t.trim_ascii();
        t == b"*" || t.strip_prefix(b"W/").unwrap_or(t) == etag
    })
}

enum RangeSpec {
    Ignore,
    Unsatisfiable,
    /// Inclusive byte positions, both < len.
    Span(usize, usize),
}

/// Parses one `bytes=first-last`, `bytes=first-` or `bytes=-suffix` against a body of `len`.
fn parse_range(value: &[u8], len: usize) -> RangeSpec {
    let Some(eq) = value.iter().position(|&b| b == b'=') else { return RangeSpec::Ignore };
    let (unit, spec) = value.split_at(eq);
    let spec = spec.get(1..).unwrap_or_default().trim_ascii();
    if !unit.trim_ascii().eq_ignore_ascii_case(b"bytes") || spec.contains(&b',') {
        return RangeSpec::Ignore;
    }
    let Some(dash) = spec.iter().position(|&b| b == b'-') else { return RangeSpec::Ignore };
    let (first, last) = (spec.get(..dash).unwrap_or_default(), spec.get(dash + 1..).unwrap_or_default());
    match (number(first), number(last)) {
        (Some(first), last) if last.is_some() || last_is_empty(spec, dash) => {
            if let Some(l) = last {
                if l < first {
                    return RangeSpec::Ignore;
                }
            }
            if first >= len as u64 {
                return RangeSpec::Unsatisfiable;
            }
            let end = last.map_or(len - 1, |l| l.min(len as u64 - 1) as usize);
            RangeSpec::Span(first as usize, end)
        }
        (None, Some(suffix)) if first.is_empty() => {
            if suffix == 0 || len == 0 {
                return RangeSpec::Unsatisfiable;
            }
            let n = suffix.min(len as u64) as usize;
            RangeSpec::Span(len - n, len - 1)
        }
        _ => RangeSpec::Ignore,
    }
}

fn last_is_empty(spec: &[u8], dash: usize) -> bool {
    dash + 1 == spec.len()
}

/// Decimal digits only; saturates instead of overflowing (a huge position is past any body).
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0u64, |n, &d| n.saturating_mul(10).saturating_add(u64::from(d - b'0'))))
}
