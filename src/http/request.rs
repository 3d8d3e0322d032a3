//! The parsed request as handlers see it: slices into the connection's read buffer.

use std::net::IpAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
    /// A syntactically valid method we do not implement (the server answers 501).
    Other,
}

impl Method {
    /// Maps a method token (case-sensitive, as RFC 9110 says) to a Method.
    pub fn from_token(t: &[u8]) -> Method {
        match t {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            b"PATCH" => Method::Patch,
            b"DELETE" => Method::Delete,
            b"OPTIONS" => Method::Options,
            _ => Method::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Other => "OTHER",
        }
    }
}

/// One header field; `name` as sent (compare with `eq_ignore_ascii_case`), `value` without the
/// surrounding whitespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    pub name: &'a [u8],
    pub value: &'a [u8],
}

impl Header<'static> {
    pub const EMPTY: Header<'static> = Header { name: b"", value: b"" };
}

#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub method: Method,
    /// The raw request-target.
    pub target: &'a [u8],
    /// The part before '?', still percent-encoded; "/" for an absolute-form target without path.
    pub path: &'a [u8],
    /// The part after '?', empty when none.
    pub query: &'a [u8],
    pub http10: bool,
    pub headers: &'a [Header<'a>],
    /// The complete body, de-chunked; empty when it was spooled to disk.
    pub body: &'a [u8],
    /// A large upload's body, spooled to disk (then `body` is empty), read in pieces; a handler
    /// may keep a clone to use it after the request without copying.
    pub spooled: Option<&'a std::sync::Arc<super::spool::SpooledBody>>,
    pub peer: IpAddr,
    /// The request arrived over this server's own TLS (not a proxy's claim about it).
    pub tls: bool,
}

impl<'a> Request<'a> {
    /// A bodiless GET of `target` (no query) from loopback over plain TCP: what the tests of
    /// the layers that read requests (cache keys, WebSocket offers) start from.
    pub fn loopback_get(target: &'a [u8], headers: &'a [Header<'a>]) -> Self {
        Request { method: Method::Get, target, path: target, query: b"", http10: false, headers, body: b"", spooled: None, peer: IpAddr::from([127, 0, 0, 1]), tls: false }
    }

    /// The first header named `lowercase_name` (given in lower case; matched case-insensitively).
    pub fn header(&self, lowercase_name: &[u8]) -> Option<&'a [u8]> {
        self.headers.iter().find(|h| h.name.eq_ignore_ascii_case(lowercase_name)).map(|h| h.value)
    }

    /// The value of cookie `name` from the Cookie header(s), if sent.
    pub fn cookie(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(b"cookie"))
            .find_map(|h| super::cookies::get(h.value, name))
    }

    /// Whether the body is `application/x-www-form-urlencoded` (decode it with `Arena::params`).
    pub fn is_form(&self) -> bool {
        match self.header(b"content-type") {
            Some(ct) => {
                let base = ct.split(|&b| b == b';').next().unwrap_or(b"");
                base.trim_ascii().eq_ignore_ascii_case(b"application/x-www-form-urlencoded")
            }
            None => false,
        }
    }
}
