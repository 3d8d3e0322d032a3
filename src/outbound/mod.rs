//! The outbound HTTP(S) client: a blocking HTTP/1.1 client for the job threads (webhooks,
//! Web Push, link unfurling), never for a loop.
//!
//! - `url`: absolute http/https URLs; `dns`: our own stub resolver (no NSS in a static
//!   binary); `http1`: one request/response exchange; `tls`: rustls, configured on first use;
//!   `jobs`: the two job threads and their bounded queue; `ssrf`: the address policy link
//!   unfurling applies (webhooks deliberately do not).
//! - `send` resolves, connects (addresses in order, IPv4 first), exchanges, and returns the
//!   response as it came: redirects are not followed, the caller decides.
//!   `send_pinned` connects to one given address instead (DNS-rebinding-safe fetching).

pub mod dns;
pub mod http1;
pub mod jobs;
pub mod ssrf;
pub mod tls;
pub mod url;

use crate::sys::client::Socket;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

/// One request. `timeout` bounds the connect and each read (and the name lookup).
pub struct Request<'a> {
    pub method: &'a str,
    pub url: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
    /// Connect and read each.
    pub timeout: Duration,
    /// A body longer than this is `Error::TooLarge`.
    pub max_body: usize,
}

/// A response as received (body de-chunked).
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
    /// Not an absolute http/https URL we can send to.
    Url(String),
    /// The name did not resolve.
    Dns(String),
    /// Every address refused or was unreachable.
    Connect(String),
    /// Handshake or certificate failure.
    Tls(String),
    /// Connect or a read took longer than the timeout (or the whole exchange too long).
    Timeout,
    /// The peer spoke something other than HTTP/1.x, or closed mid-response.
    Protocol(String),
    /// The body exceeded `max_body`.
    TooLarge,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Url(m) => write!(f, "bad URL: {m}"),
            Error::Dns(m) => write!(f, "DNS: {m}"),
            Error::Connect(m) => write!(f, "connect: {m}"),
            Error::Tls(m) => write!(f, "TLS: {m}"),
            Error::Timeout => f.write_str("timed out"),
            Error::Protocol(m) => write!(f, "protocol: {m}"),
            Error::TooLarge => f.write_str("response too large"),
        }
    }
}

/// Sends `req` and returns the response, whatever its status. Blocks: job threads only.
pub fn send(req: &Request<'_>) -> Result<Response, Error> {
    send_via(req, None, None)
}

/// Like `send`, but connects only to `ip` (the `Host` header, SNI and certificate check still
/// use the URL's host): the caller resolved and vetted the address itself.
pub fn send_pinned(req: &Request<'_>, ip: IpAddr) -> Result<Response, Error> {
    send_via(req, Some(ip), None)
}

/// Runs `job` on the outbound job threads (bounded queue; false when full, job dropped and logged).
pub fn spawn(job: Box<dyn FnOnce() + Send>) -> bool {
    jobs::spawn(job)
}

/// `send` with an optional pinned address and TLS configuration (tests bring their own roots).
pub(crate) fn send_via(req: &Request<'_>, pinned: Option<IpAddr>, tls_config: Option<Arc<rustls::ClientConfig>>) -> Result<Response, Error> {
    let url = url::parse(req.url).map_err(Error::Url)?;
    let addrs = match (pinned, url.ip) {
        (Some(ip), _) | (None, Some(ip)) => vec![ip],
        // A lookup that times out is a DNS failure, not the peer's slowness: webhooks post
        // their timeout reply only for connect and read timeouts (spec/04 §4.3).
        (None, None) => dns::resolve(&url.host, req.timeout).map_err(|e| match e {
            Error::Timeout => Error::Dns(format!("{}: lookup timed out", url.host)),
            e => e,
        })?,
    };
    let sock = connect_any(&addrs, url.port, req.timeout)?;
    if url.https {
        let config = match tls_config {
            Some(c) => c,
            None => tls::config()?,
        };
        let mut stream = tls::connect(sock, &url.host, config)?;
        http1::exchange(&mut stream, req, &url)
    } else {
        let mut sock = sock;
        http1::exchange(&mut sock, req, &url)
    }
}

/// Connects to the first address that accepts. A timeout on the last one is `Timeout`.
fn connect_any(addrs: &[IpAddr], port: u16, timeout: Duration) -> Result<Socket, Error> {
    let mut last = Error::Connect("no address".into());
    for &ip in addrs {
        match Socket::connect_tcp(SocketAddr::new(ip, port), timeout, timeout) {
            Ok(s) => return Ok(s),
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => last = Error::Timeout,
            Err(e) => last = Error::Connect(format!("{ip}:{port}: {e}")),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests;
