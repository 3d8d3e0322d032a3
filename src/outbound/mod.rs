//! PLACEHOLDER for the outbound HTTP client (branch `outbound` owns the real one and replaces
//! this file at merge). Same API; plain `http://` only, over `std::net::TcpStream`, one
//! request per connection, `Content-Length` responses or read-to-close; `spawn` runs each
//! job on a thread of its own. Enough for the push branch to build and test against a
//! loopback fake push service.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// One request. `timeout` bounds the connect and each read.
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
    pub timeout: Duration,
    pub max_body: usize,
}

/// A response as received.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The first header called `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// Why a request got no response.
#[derive(Debug)]
pub enum Error {
    Url(String),
    Dns(String),
    Connect(String),
    Tls(String),
    Timeout,
    Protocol(String),
    TooLarge,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

/// Sends `req` (plain http only in this placeholder) and returns the response.
pub fn send(req: &Request<'_>) -> Result<Response, Error> {
    let rest = req.url.strip_prefix("http://").ok_or_else(|| Error::Url(format!("not http: {}", req.url)))?;
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let addr = if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") };
    let sa = addr.to_socket_addrs().map_err(|e| Error::Dns(e.to_string()))?.next().ok_or_else(|| Error::Dns(addr.clone()))?;
    let mut s = TcpStream::connect_timeout(&sa, req.timeout).map_err(|e| Error::Connect(e.to_string()))?;
    s.set_read_timeout(Some(req.timeout)).map_err(|e| Error::Connect(e.to_string()))?;
    let mut head = format!("{} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: {}\r\n", req.method, req.body.len());
    for (n, v) in req.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).and_then(|_| s.write_all(req.body)).map_err(|e| Error::Connect(e.to_string()))?;
    let mut raw = Vec::new();
    s.take((req.max_body + 64 * 1024) as u64).read_to_end(&mut raw).map_err(|e| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => Error::Timeout,
        _ => Error::Protocol(e.to_string()),
    })?;
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n").ok_or_else(|| Error::Protocol("no header end".into()))?;
    let text = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| Error::Protocol("bad status line".into()))?;
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_string(), v.trim().to_string())).collect();
    let body = raw[end + 4..].to_vec();
    if body.len() > req.max_body {
        return Err(Error::TooLarge);
    }
    Ok(Response { status, headers, body })
}

/// Runs `job` off the caller's thread (placeholder: a thread per job).
pub fn spawn(job: Box<dyn FnOnce() + Send>) -> bool {
    std::thread::Builder::new().name("outbound".into()).spawn(job).is_ok()
}
