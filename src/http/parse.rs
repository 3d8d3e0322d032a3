//! The request-head parser: request line and header fields, parsed in place into slices of the
//! read buffer. No allocation; the caller provides the header array.
//!
//! `parse_head` is called on whatever bytes have arrived. It answers `Ok(None)` until the blank
//! line ending the head is there, and fails early (before the head is complete) when a limit is
//! already exceeded, so a client cannot make us buffer more than the limits allow.
//!
//! Grammar (RFC 9112), strictly: lines end in CRLF (a bare CR or LF is a 400), no whitespace
//! before the colon, no obs-fold, tokens and field values restricted to their character sets.
//! Empty lines before the request line are skipped, as RFC 9112 §2.2 recommends.

use super::limits::Limits;
use super::request::{Header, Method, Request};

/// How the body that follows the head is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    None,
    Length(usize),
    Chunked,
}

/// Why a request was refused; `status()` is the code to answer with (then close).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// 400: malformed syntax or an ambiguous message (smuggling shapes).
    Bad(&'static str),
    /// 414: request-target longer than the limit.
    UriTooLong,
    /// 431: too many header bytes or fields.
    HeadersTooLarge,
    /// 413: the declared or received body is larger than the limit.
    BodyTooLarge,
    /// 501: a transfer coding we do not implement.
    NotImplemented,
    /// 505: an HTTP version other than 1.0 and 1.1.
    Version,
    /// 417: an Expect other than 100-continue.
    Expectation,
    /// 503: the request is fine but cannot be taken now (an upload that cannot be spooled).
    Unavailable(&'static str),
    /// 507: the same, because the disk holding the upload spool is full.
    NoSpace(&'static str),
}

impl ParseError {
    pub fn status(&self) -> u16 {
        match self {
            ParseError::Bad(_) => 400,
            ParseError::UriTooLong => 414,
            ParseError::HeadersTooLarge => 431,
            ParseError::BodyTooLarge => 413,
            ParseError::NotImplemented => 501,
            ParseError::Version => 505,
            ParseError::Expectation => 417,
            ParseError::Unavailable(_) => 503,
            ParseError::NoSpace(_) => 507,
        }
    }

    /// A short reason for the log line.
    pub fn why(&self) -> &'static str {
        match self {
            ParseError::Bad(why) => why,
            ParseError::UriTooLong => "request-target too long",
            ParseError::HeadersTooLarge => "header section too large",
            ParseError::BodyTooLarge => "body too large",
            ParseError::NotImplemented => "unsupported transfer coding",
            ParseError::Version => "unsupported HTTP version",
            ParseError::Expectation => "unsupported expectation",
            ParseError::Unavailable(why) | ParseError::NoSpace(why) => why,
        }
    }
}

/// A complete request head: the request as handlers will see it, but for what only the loop
/// knows (the body read after the head, the peer, whether it came over our TLS), and how the
/// connection goes on.
#[derive(Debug)]
pub struct Head<'a> {
    /// `body` empty, `spooled` None, `peer` unspecified and `tls` false until the loop fills
    /// them in (`Request { body, peer, .. head.request }`).
    pub request: Request<'a>,
    /// Bytes of the buffer the head occupies, including skipped empty lines and the final CRLF.
    pub len: usize,
    pub framing: Framing,
    /// Whether the connection may carry another request after this one (before the server's own
    /// reasons to close).
    pub keep_alive: bool,
    /// The client sent `Expect: 100-continue` (honoured for HTTP/1.1 only).
    pub expect_continue: bool,
}

/// tchar (RFC 9110 §5.6.2).
const fn is_tchar(b: u8) -> bool {
    matches!(b,
        b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`'
        | b'|' | b'~' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
}

/// Bytes allowed inside a field value: VCHAR, obs-text, SP, HTAB.
const fn is_value_byte(b: u8) -> bool {
    b == b'\t' || (b >= 0x20 && b != 0x7f)
}

const TCHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = is_tchar(i as u8);
        i += 1;
    }
    t
};

const VALUE: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = is_value_byte(i as u8);
        i += 1;
    }
    t
};

/// How many bytes at the start of `bytes` satisfy `ok` (an iterator, so the loop carries no
/// bounds checks: these loops run over every byte of every head).
#[inline]
fn run(bytes: &[u8], ok: impl Fn(u8) -> bool) -> usize {
    bytes.iter().position(|&b| !ok(b)).unwrap_or(bytes.len())
}

/// Parses the head at the start of `buf` into `slots` (which bounds the header count together
/// with `limits.max_headers`).
///
/// Returns `Ok(Some(head))` when the head is complete and valid, `Ok(None)` when more bytes are
/// needed (and none of the limits is exceeded yet), or the error to answer with.
pub fn parse_head<'a>(
    buf: &'a [u8],
    limits: &Limits,
    slots: &'a mut [Header<'a>],
) -> Result<Option<Head<'a>>, ParseError> {
    match parse_inner(buf, limits, slots) {
        Ok(Some(h)) => Ok(Some(h)),
        Ok(None) if buf.len() > limits.max_header_bytes => Err(ParseError::HeadersTooLarge),
        other => other,
    }
}

fn parse_inner<'a>(
    buf: &'a [u8],
    limits: &Limits,
    slots: &'a mut [Header<'a>],
) -> Result<Option<Head<'a>>, ParseError> {
    let n = buf.len();
    let mut i = 0;

    // Empty lines before the request line.
    loop {
        match buf.get(i) {
            None => return Ok(None),
            Some(b'\r') => match buf.get(i + 1) {
                None => return Ok(None),
                Some(b'\n') => i += 2,
                Some(_) => return Err(ParseError::Bad("bare CR")),
            },
            Some(b'\n') => return Err(ParseError::Bad("bare LF")),
            Some(_) => break,
        }
    }
    let start = i;

    // Method.
    while i < n && TCHAR[buf[i] as usize] {
        i += 1;
    }
    if i == n {
        return if i - start > 32 { Err(ParseError::Bad("method too long")) } else { Ok(None) };
    }
    if buf[i] != b' ' || i == start {
        return Err(ParseError::Bad("invalid method"));
    }
    let method_tok = &buf[start..i];
    if method_tok.len() > 32 {
        return Err(ParseError::Bad("method too long"));
    }
    i += 1;

    // Request-target: visible ASCII only.
    let tstart = i;
    i += run(&buf[i..], |b| b > 0x20 && b < 0x7f);
    if i - tstart > limits.max_url {
        return Err(ParseError::UriTooLong);
    }
    if i == n {
        return Ok(None);
    }
    if buf[i] != b' ' || i == tstart {
        return Err(ParseError::Bad("invalid request-target"));
    }
    let target = &buf[tstart..i];
    i += 1;

    // Version and the end of the request line.
    if n < i + 10 {
        // Check what is there so far, to fail early on garbage.
        let have = &buf[i..];
        let k = have.len().min(5);
        if have[..k] != b"HTTP/"[..k] {
            return Err(ParseError::Bad("bad HTTP version"));
        }
        return Ok(None);
    }
    let version = &buf[i..i + 8];
    let http10 = match version {
        b"HTTP/1.1" => false,
        b"HTTP/1.0" => true,
        _ => return Err(version_error(version)),
    };
    if &buf[i + 8..i + 10] != b"\r\n" {
        return Err(ParseError::Bad("bad request line ending"));
    }
    i += 10;

    let (path, query) = split_target(target, method_tok)?;

    // Header fields.
    let mut count = 0;
    let mut host_count = 0;
    let mut content_length: Option<usize> = None;
    let mut multipart = false;
    let mut te_seen = false;
    let mut conn_close = false;
    let mut conn_keep_alive = false;
    let mut expect_continue = false;
    loop {
        if i - start > limits.max_header_bytes {
            return Err(ParseError::HeadersTooLarge);
        }
        match buf.get(i) {
            None => return Ok(None),
            Some(b'\r') => match buf.get(i + 1) {
                None => return Ok(None),
                Some(b'\n') => {
                    i += 2;
                    break;
                }
                Some(_) => return Err(ParseError::Bad("bare CR")),
            },
            Some(b'\n') => return Err(ParseError::Bad("bare LF")),
            Some(b' ') | Some(b'\t') => return Err(ParseError::Bad("obs-fold or leading whitespace")),
            Some(_) => {}
        }
        let nstart = i;
        i += run(&buf[i..], |b| TCHAR[b as usize]);
        if i == n {
            return Ok(None);
        }
        if buf[i] != b':' || i == nstart {
            return Err(ParseError::Bad("invalid header name"));
        }
        let name = &buf[nstart..i];
        i += 1;
        while i < n && (buf[i] == b' ' || buf[i] == b'\t') {
            i += 1;
        }
        let vstart = i;
        i = super::scan::skip_plain_text(buf, i);
        i += run(&buf[i..], |b| VALUE[b as usize]);
        if i == n {
            return Ok(None);
        }
        if buf[i] != b'\r' {
            return Err(ParseError::Bad(if buf[i] == b'\n' { "bare LF" } else { "control byte in header" }));
        }
        match buf.get(i + 1) {
            None => return Ok(None),
            Some(b'\n') => {}
            Some(_) => return Err(ParseError::Bad("bare CR")),
        }
        let mut vend = i;
        while vend > vstart && (buf[vend - 1] == b' ' || buf[vend - 1] == b'\t') {
            vend -= 1;
        }
        let value = &buf[vstart..vend];
        i += 2;

        if count >= limits.max_headers || count >= slots.len() {
            return Err(ParseError::HeadersTooLarge);
        }
        slots[count] = Header { name, value };
        count += 1;

        // The fields that decide framing and connection handling.
        match name.len() {
            4 if name.eq_ignore_ascii_case(b"host") => host_count += 1,
            6 if name.eq_ignore_ascii_case(b"expect") => {
                if value.eq_ignore_ascii_case(b"100-continue") {
                    expect_continue = true;
                } else {
                    return Err(ParseError::Expectation);
                }
            }
            10 if name.eq_ignore_ascii_case(b"connection") => {
                for tok in value.split(|&b| b == b',') {
                    let tok = tok.trim_ascii();
                    if tok.eq_ignore_ascii_case(b"close") {
                        conn_close = true;
                    } else if tok.eq_ignore_ascii_case(b"keep-alive") {
                        conn_keep_alive = true;
                    }
                }
            }
            14 if name.eq_ignore_ascii_case(b"content-length") => {
                if content_length.is_some() {
                    return Err(ParseError::Bad("duplicate Content-Length"));
                }
                content_length = Some(parse_length(value)?);
            }
            12 if name.eq_ignore_ascii_case(b"content-type") => {
                multipart = value.len() >= 19 && value[..19].eq_ignore_ascii_case(b"multipart/form-data");
            }
            17 if name.eq_ignore_ascii_case(b"transfer-encoding") => {
                if te_seen {
                    return Err(ParseError::Bad("duplicate Transfer-Encoding"));
                }
                te_seen = true;
                transfer_coding_is_chunked(value)?;
            }
            _ => {}
        }
    }
    if i - start > limits.max_header_bytes {
        return Err(ParseError::HeadersTooLarge);
    }

    if !http10 && host_count == 0 {
        return Err(ParseError::Bad("missing Host"));
    }
    if host_count > 1 {
        return Err(ParseError::Bad("duplicate Host"));
    }
    let framing = if te_seen {
        if content_length.is_some() {
            return Err(ParseError::Bad("both Transfer-Encoding and Content-Length"));
        }
        if http10 {
            return Err(ParseError::Bad("Transfer-Encoding in HTTP/1.0"));
        }
        Framing::Chunked
    } else {
        // Uploads (multipart with a length) have their own, larger bound.
        let max = if multipart { limits.max_upload } else { limits.max_body };
        match content_length {
            Some(n) if n > max => return Err(ParseError::BodyTooLarge),
            Some(0) | None => Framing::None,
            Some(len) => Framing::Length(len),
        }
    };
    let keep_alive = if http10 { conn_keep_alive && !conn_close } else { !conn_close };

    Ok(Some(Head {
        request: Request {
            method: Method::from_token(method_tok),
            target,
            path,
            query,
            http10,
            headers: &slots[..count],
            body: b"",
            spooled: None,
            peer: std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
            tls: false,
        },
        len: i,
        framing,
        keep_alive,
        expect_continue: expect_continue && !http10,
    }))
}

fn version_error(v: &[u8]) -> ParseError {
    // "HTTP/x.y" with other digits is a version we do not speak; anything else is garbage.
    if v.len() >= 8 && v.starts_with(b"HTTP/") && v[5].is_ascii_digit() && v[6] == b'.' && v[7].is_ascii_digit() {
        ParseError::Version
    } else {
        ParseError::Bad("bad HTTP version")
    }
}

/// Splits the target into path and query. Origin-form (`/p?q`) is the norm; absolute-form
/// (`http://host/p?q`) is accepted as RFC 9112 requires; `*` only for OPTIONS.
fn split_target<'a>(target: &'a [u8], method: &[u8]) -> Result<(&'a [u8], &'a [u8]), ParseError> {
    let origin: &'a [u8] = if target[0] == b'/' {
        target
    } else if target == b"*" && method == b"OPTIONS" {
        return Ok((target, b""));
    } else {
        let rest = if target.len() > 7 && target[..7].eq_ignore_ascii_case(b"http://") {
            &target[7..]
        } else if target.len() > 8 && target[..8].eq_ignore_ascii_case(b"https://") {
            &target[8..]
        } else {
            return Err(ParseError::Bad("invalid request-target"));
        };
        match rest.iter().position(|&b| b == b'/' || b == b'?') {
            Some(p) if rest[p] == b'/' => &rest[p..],
            // Authority only, or authority then query: the path is "/".
            Some(p) => return Ok((b"/", &rest[p + 1..])),
            None => return Ok((b"/", b"")),
        }
    };
    match origin.iter().position(|&b| b == b'?') {
        Some(q) => Ok((&origin[..q], &origin[q + 1..])),
        None => Ok((origin, b"")),
    }
}

/// Content-Length: 1*DIGIT, nothing else (no sign, no list, no spaces inside). The caller
/// checks it against the limit that applies to the body's type.
fn parse_length(v: &[u8]) -> Result<usize, ParseError> {
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return Err(ParseError::Bad("invalid Content-Length"));
    }
    if v.len() > 15 {
        return Err(ParseError::BodyTooLarge);
    }
    Ok(v.iter().fold(0usize, |acc, &d| acc * 10 + (d - b'0') as usize))
}

/// Transfer-Encoding must be exactly `chunked` (case-insensitive). A list ending in chunked names
/// codings we do not decode (501); anything else cannot be framed (400).
fn transfer_coding_is_chunked(v: &[u8]) -> Result<(), ParseError> {
    if v.eq_ignore_ascii_case(b"chunked") {
        return Ok(());
    }
    let last = v.rsplit(|&b| b == b',').next().unwrap_or(b"").trim_ascii();
    if last.eq_ignore_ascii_case(b"chunked") && v.split(|&b| b == b',').filter(|t| t.trim_ascii().eq_ignore_ascii_case(b"chunked")).count() == 1 {
        Err(ParseError::NotImplemented)
    } else {
        Err(ParseError::Bad("Transfer-Encoding is not a final chunked"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::limits::HEADER_SLOTS;

    fn head(req: &[u8], f: impl FnOnce(&Head)) {
        let mut slots = [Header::EMPTY; HEADER_SLOTS];
        let h = parse_head(req, &Limits::DEFAULT, &mut slots).unwrap().unwrap();
        f(&h)
    }

    fn err(req: &[u8]) -> ParseError {
        let mut slots = [Header::EMPTY; HEADER_SLOTS];
        parse_head(req, &Limits::DEFAULT, &mut slots).unwrap_err()
    }

    #[test]
    fn targets_split_into_path_and_query() {
        head(b"GET /rooms/1?a=b&c HTTP/1.1\r\nHost: x\r\n\r\n", |h| {
            assert_eq!((h.request.path, h.request.query), (&b"/rooms/1"[..], &b"a=b&c"[..]));
        });
        head(b"GET http://h:3000/p/q?z HTTP/1.1\r\nHost: x\r\n\r\n", |h| {
            assert_eq!((h.request.path, h.request.query, h.request.target), (&b"/p/q"[..], &b"z"[..], &b"http://h:3000/p/q?z"[..]));
        });
        head(b"GET https://h?z HTTP/1.1\r\nHost: x\r\n\r\n", |h| assert_eq!((h.request.path, h.request.query), (&b"/"[..], &b"z"[..])));
        head(b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", |h| assert_eq!(h.request.path, b"*"));
        assert!(matches!(err(b"GET * HTTP/1.1\r\nHost: x\r\n\r\n"), ParseError::Bad(_)));
    }

    #[test]
    fn keep_alive_rules() {
        head(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", |h| assert!(h.keep_alive));
        head(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive, CLOSE\r\n\r\n", |h| assert!(!h.keep_alive));
        head(b"GET / HTTP/1.0\r\n\r\n", |h| assert!(!h.keep_alive && h.request.http10));
        head(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", |h| assert!(h.keep_alive));
        head(b"POST / HTTP/1.0\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n", |h| assert!(!h.expect_continue));
    }

    #[test]
    fn framing() {
        head(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n", |h| assert_eq!(h.framing, Framing::Length(12)));
        head(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", |h| assert_eq!(h.framing, Framing::None));
        head(b"POST / HTTP/1.1\r\nHost: x\r\ntransfer-encoding: chunked\r\n\r\n", |h| assert_eq!(h.framing, Framing::Chunked));
        assert_eq!(err(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"), ParseError::NotImplemented);
        assert_eq!(err(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1048577\r\n\r\n"), ParseError::BodyTooLarge);
        // An upload may be bigger, up to its own limit, whichever header comes first.
        let up = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\nContent-Type: multipart/form-data; boundary=b\r\n\r\n";
        head(up, |h| assert_eq!(h.framing, Framing::Length(5_000_000)));
        let too_big = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: Multipart/Form-Data; boundary=b\r\nContent-Length: 1074790401\r\n\r\n";
        assert_eq!(err(too_big), ParseError::BodyTooLarge, "one byte over MAX_UPLOAD");
    }

    #[test]
    fn versions_and_incomplete_input() {
        assert_eq!(err(b"GET / HTTP/1.2\r\n"), ParseError::Version);
        assert!(matches!(err(b"GET / HTTX"), ParseError::Bad(_)));
        let full = b"GET /a HTTP/1.1\r\nHost: x\r\nA: b\r\n\r\n";
        for cut in 0..full.len() {
            let mut slots = [Header::EMPTY; HEADER_SLOTS];
            assert!(matches!(parse_head(&full[..cut], &Limits::DEFAULT, &mut slots), Ok(None)), "cut {cut}");
        }
        head(full, |h| assert_eq!(h.len, full.len()));
    }
}
