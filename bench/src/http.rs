//! A small blocking HTTP/1.1 client for the load generator: one keep-alive connection per client
//! (plain or TLS, `stream.rs`), TCP_NODELAY, requests written in one call, responses framed by
//! Content-Length, chunked encoding or connection close. It keeps the body exactly as sent
//! (still content-encoded).

use crate::stream::{Endpoint, Stream};
use std::io::{Read, Write};

const MAX_HEAD: usize = 64 * 1024;

/// A parsed response.
#[derive(Debug, Default, Clone)]
pub struct Response {
    pub status: u16,
    /// (lowercase name, value), in order.
    pub headers: Vec<(String, String)>,
    /// The body bytes as framed on the wire, de-chunked.
    pub body: Vec<u8>,
    /// The server asked to close the connection (or it closed it).
    pub close: bool,
}

impl Response {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every Set-Cookie `name=value` pair.
    pub fn cookies(&self) -> Vec<(String, String)> {
        self.headers
            .iter()
            .filter(|(k, _)| k == "set-cookie")
            .filter_map(|(_, v)| {
                let pair = v.split(';').next()?.trim();
                let (n, val) = pair.split_once('=')?;
                Some((n.to_string(), val.to_string()))
            })
            .collect()
    }
}

/// One client connection.
pub struct Client {
    endpoint: Endpoint,
    stream: Option<Stream>,
    buf: Vec<u8>,
}

impl Client {
    /// A client for `endpoint`; it connects lazily on the first request.
    pub fn new(endpoint: &Endpoint) -> Client {
        Client { endpoint: endpoint.clone(), stream: None, buf: Vec::with_capacity(64 * 1024) }
    }

    fn connect(&mut self) -> Result<&mut Stream, String> {
        if self.stream.is_none() {
            self.stream = Some(self.endpoint.connect()?);
            self.buf.clear();
        }
        self.stream.as_mut().ok_or_else(|| "no connection".to_string())
    }

    /// Drops the connection; the next request reconnects.
    pub fn reset(&mut self) {
        self.stream = None;
        self.buf.clear();
    }

    /// Sends one complete request and reads its response. `head_only` is for HEAD requests.
    /// On any error the connection is dropped.
    pub fn send(&mut self, request: &[u8]) -> Result<Response, String> {
        let r = self.exchange(request);
        match &r {
            Ok(resp) if !resp.close => {}
            _ => self.reset(),
        }
        r
    }

    fn exchange(&mut self, request: &[u8]) -> Result<Response, String> {
        self.connect()?.write_all(request).map_err(|e| format!("write: {e}"))?;
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i;
            }
            if self.buf.len() > MAX_HEAD {
                return Err("response head too large".into());
            }
            if self.fill()? == 0 {
                return Err("connection closed before a response".into());
            }
        };
        let mut resp = parse_head(&self.buf[..head_end])?;
        let mut pos = head_end + 4;
        let chunked = resp.header("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        if resp.status == 204 || resp.status == 304 || (100..200).contains(&resp.status) {
        } else if chunked {
            loop {
                let line_end = loop {
                    if let Some(i) = find(&self.buf[pos..], b"\r\n") {
                        break pos + i;
                    }
                    if self.fill()? == 0 {
                        return Err("truncated chunked body".into());
                    }
                };
                let size_text = std::str::from_utf8(&self.buf[pos..line_end]).map_err(|_| "bad chunk size")?;
                let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16).map_err(|_| "bad chunk size")?;
                pos = line_end + 2;
                while self.buf.len() < pos + size + 2 {
                    if self.fill()? == 0 {
                        return Err("truncated chunk".into());
                    }
                }
                if size == 0 {
                    // Trailers are not expected; consume the final CRLF.
                    pos += 2;
                    break;
                }
                resp.body.extend_from_slice(&self.buf[pos..pos + size]);
                pos += size + 2;
            }
        } else if let Some(cl) = resp.header("content-length") {
            let n: usize = cl.trim().parse().map_err(|_| format!("bad content-length {cl:?}"))?;
            while self.buf.len() < pos + n {
                if self.fill()? == 0 {
                    return Err(format!("body truncated: {} of {n} bytes", self.buf.len() - pos));
                }
            }
            resp.body.extend_from_slice(&self.buf[pos..pos + n]);
            pos += n;
        } else {
            while self.fill()? != 0 {}
            resp.body.extend_from_slice(&self.buf[pos..]);
            pos = self.buf.len();
            resp.close = true;
        }
        self.buf.drain(..pos);
        if resp.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")) {
            resp.close = true;
        }
        Ok(resp)
    }

    fn fill(&mut self) -> Result<usize, String> {
        let mut chunk = [0u8; 64 * 1024];
        let s = self.stream.as_mut().ok_or("no connection")?;
        let n = s.read(&mut chunk).map_err(|e| format!("read: {e}"))?;
        self.buf.extend_from_slice(&chunk[..n]);
        Ok(n)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn parse_head(head: &[u8]) -> Result<Response, String> {
    let text = std::str::from_utf8(head).map_err(|_| "response head is not UTF-8")?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let version = parts.next().unwrap_or("");
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let status = parts.next().and_then(|s| s.parse().ok()).ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let mut headers = Vec::new();
    for line in lines {
        let (k, v) = line.split_once(':').ok_or_else(|| format!("bad header line {line:?}"))?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    Ok(Response { status, headers, body: Vec::new(), close: version == "HTTP/1.0" })
}

/// Percent-encodes every byte outside `A-Z a-z 0-9 - _ . ~` (the harness's form encoding).
pub fn form_encode(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

/// Builds a request: the request line, `Host`, the given headers in order, and the body with its
/// Content-Length when there is one.
pub fn request(method: &str, target: &str, host: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut r = format!("{method} {target} HTTP/1.1\r\nhost: {host}\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        r.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    r.push_str("\r\n");
    let mut out = r.into_bytes();
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, TcpListener};

    // Serves the given raw responses, one per request read, on one connection.
    fn serve(responses: Vec<&'static [u8]>) -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            for r in responses {
                let mut buf = [0u8; 4096];
                let _ = s.read(&mut buf).unwrap();
                s.write_all(r).unwrap();
            }
        });
        addr
    }

    #[test]
    fn frames_length_chunked_and_keeps_alive() {
        let addr = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: a=1; path=/\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            b"HTTP/1.1 302 Found\r\nLocation: /\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ]);
        let mut c = Client::new(&Endpoint::plain(addr, "x"));
        let r = c.send(&request("GET", "/", "x", &[], b"")).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, b"hello".as_slice()));
        assert_eq!(r.cookies(), vec![("a".to_string(), "1".to_string())]);
        let r = c.send(&request("GET", "/", "x", &[], b"")).unwrap();
        assert_eq!(r.body, b"abcde");
        let r = c.send(&request("POST", "/", "x", &[], b"k=v")).unwrap();
        assert_eq!(r.status, 302);
        assert!(r.close);
    }

    #[test]
    fn reports_truncation() {
        let addr = serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"]);
        let mut c = Client::new(&Endpoint::plain(addr, "x"));
        assert!(c.send(&request("GET", "/", "x", &[], b"")).unwrap_err().contains("truncated"));
    }

    #[test]
    fn encodes_forms_like_the_harness() {
        assert_eq!(form_encode("message[body]"), "message%5Bbody%5D");
        assert_eq!(form_encode("a b~c"), "a%20b~c");
    }
}
