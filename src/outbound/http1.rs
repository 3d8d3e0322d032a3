//! One HTTP/1.1 exchange over any byte stream (a plain socket or a TLS stream): write the
//! request with `Connection: close`, read the response head, then the body framed by
//! `Transfer-Encoding: chunked`, `Content-Length`, or the end of the stream. No keep-alive
//! and no pooling: outbound requests are rare, and a fresh connection per request keeps the
//! client simple and stateless. Redirects are returned, not followed.

use super::url::Url;
use super::{Error, Request, Response};
use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

/// A response head larger than this is refused.
pub const MAX_HEAD: usize = 64 * 1024;
/// Headers beyond this many are refused.
pub const MAX_HEADERS: usize = 100;
/// Whatever the per-read timeout, one exchange never takes longer than this, so a server that
/// trickles a byte every few seconds cannot hold a job thread for long.
pub const MAX_EXCHANGE: Duration = Duration::from_secs(60);

/// Sends `req` (addressed to `url`) over `s` and reads the answer.
pub fn exchange<S: Read + Write>(s: &mut S, req: &Request<'_>, url: &Url) -> Result<Response, Error> {
    let deadline = Instant::now() + MAX_EXCHANGE;
    let head = request_head(req, url)?;
    s.write_all(&head).map_err(io_error)?;
    if !req.body.is_empty() {
        s.write_all(req.body).map_err(io_error)?;
    }
    s.flush().map_err(io_error)?;
    let mut r = Reader { s, buf: Vec::with_capacity(8192), pos: 0, deadline, eof: false };
    loop {
        let (status, headers) = r.head()?;
        // Interim answers (100 Continue, 103 Early Hints) precede the real one.
        if (100..200).contains(&status) && status != 101 {
            continue;
        }
        let mut res = Response { status, headers, body: Vec::new() };
        let bodiless = req.method.eq_ignore_ascii_case("HEAD") || (100..200).contains(&status) || status == 204 || status == 304;
        if !bodiless {
            res.body = r.body(&res, req.max_body)?;
        }
        return Ok(res);
    }
}

/// The request line and headers. Our defaults (`Host`, `Content-Length`, `Connection`,
/// `User-Agent`) give way to a caller header of the same name, except `Connection`, which is
/// always `close`.
fn request_head(req: &Request<'_>, url: &Url) -> Result<Vec<u8>, Error> {
    let bad = |s: &str| s.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0);
    if req.method.is_empty() || !req.method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(Error::Protocol(format!("bad method {:?}", req.method)));
    }
    let mut h = Vec::with_capacity(256 + req.headers.len() * 48);
    h.extend_from_slice(format!("{} {} HTTP/1.1\r\n", req.method, url.target).as_bytes());
    let given = |name: &str| req.headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    if !given("host") {
        h.extend_from_slice(format!("Host: {}\r\n", url.host_header()).as_bytes());
    }
    if !given("user-agent") {
        h.extend_from_slice(b"User-Agent: campfire-room\r\n");
    }
    let sends_body = !req.body.is_empty() || matches!(req.method, "POST" | "PUT" | "PATCH");
    if sends_body && !given("content-length") {
        h.extend_from_slice(format!("Content-Length: {}\r\n", req.body.len()).as_bytes());
    }
    h.extend_from_slice(b"Connection: close\r\n");
    for (name, value) in req.headers {
        if name.eq_ignore_ascii_case("connection") {
            continue;
        }
        if name.is_empty() || bad(name) || bad(value) || name.contains(':') {
            return Err(Error::Protocol(format!("header {name:?} cannot be sent")));
        }
        h.extend_from_slice(name.as_bytes());
        h.extend_from_slice(b": ");
        h.extend_from_slice(value.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    Ok(h)
}

/// Maps a stream error: a timeout is `Timeout`, a TLS failure `Tls`, anything else `Protocol`.
pub fn io_error(e: io::Error) -> Error {
    if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) {
        return Error::Timeout;
    }
    if let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        return Error::Tls(tls.to_string());
    }
    Error::Protocol(e.to_string())
}

/// Buffered reading of the response.
struct Reader<'s, S> {
    s: &'s mut S,
    buf: Vec<u8>,
    /// Bytes of `buf` before this are consumed.
    pos: usize,
    deadline: Instant,
    eof: bool,
}

impl<S: Read> Reader<'_, S> {
    /// Reads more into the buffer; false at the end of the stream.
    fn fill(&mut self) -> Result<bool, Error> {
        if self.eof {
            return Ok(false);
        }
        if Instant::now() > self.deadline {
            return Err(Error::Timeout);
        }
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
        }
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match self.s.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.buf.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // A TLS peer that closes without close_notify: the end of the stream. Framed
                // bodies still detect truncation (their length is known).
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.eof = true;
                    return Ok(false);
                }
                Err(e) => return Err(io_error(e)),
            }
        }
    }

    fn pending(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// One CRLF- (or LF-) terminated line, without its terminator.
    fn line(&mut self, limit: usize) -> Result<Vec<u8>, Error> {
        loop {
            if let Some(i) = self.pending().iter().position(|&b| b == b'\n') {
                let mut line = self.pending().get(..i).unwrap_or(&[]).to_vec();
                self.pos += i + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if self.pending().len() > limit {
                return Err(Error::Protocol("line too long".into()));
            }
            if !self.fill()? {
                return Err(Error::Protocol("connection closed mid-response".into()));
            }
        }
    }

    /// The status line and headers.
    fn head(&mut self) -> Result<(u16, Vec<(String, String)>), Error> {
        let status_line = self.line(MAX_HEAD)?;
        let status = parse_status(&status_line).ok_or_else(|| {
            Error::Protocol(format!("bad status line {:?}", String::from_utf8_lossy(status_line.get(..80).unwrap_or(&status_line))))
        })?;
        let mut headers = Vec::new();
        let mut size = status_line.len();
        loop {
            let line = self.line(MAX_HEAD)?;
            size += line.len() + 2;
            if size > MAX_HEAD || headers.len() > MAX_HEADERS {
                return Err(Error::Protocol("response head too large".into()));
            }
            if line.is_empty() {
                return Ok((status, headers));
            }
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                return Err(Error::Protocol("header line without a colon".into()));
            };
            let (name, value) = line.split_at(colon);
            let value = value.get(1..).unwrap_or(&[]).trim_ascii();
            headers.push((String::from_utf8_lossy(name.trim_ascii()).into_owned(), String::from_utf8_lossy(value).into_owned()));
        }
    }

    /// The body as the head frames it, at most `max` bytes (else `TooLarge`).
    fn body(&mut self, res: &Response, max: usize) -> Result<Vec<u8>, Error> {
        let chunked = res
            .header("transfer-encoding")
            .is_some_and(|te| te.split(',').any(|t| t.trim().eq_ignore_ascii_case("chunked")));
        if chunked {
            return self.chunked(max);
        }
        if let Some(cl) = res.header("content-length") {
            let n: u64 = cl.trim().parse().map_err(|_| Error::Protocol(format!("bad Content-Length {cl:?}")))?;
            if n > max as u64 {
                return Err(Error::TooLarge);
            }
            return self.exactly(n as usize);
        }
        let mut body = Vec::new();
        loop {
            body.extend_from_slice(self.pending());
            self.pos = self.buf.len();
            if body.len() > max {
                return Err(Error::TooLarge);
            }
            if !self.fill()? {
                return Ok(body);
            }
        }
    }

    fn exactly(&mut self, n: usize) -> Result<Vec<u8>, Error> {
        while self.pending().len() < n {
            if !self.fill()? {
                return Err(Error::Protocol("body shorter than its length".into()));
            }
        }
        let body = self.pending().get(..n).unwrap_or(&[]).to_vec();
        self.pos += n;
        Ok(body)
    }

    fn chunked(&mut self, max: usize) -> Result<Vec<u8>, Error> {
        let mut body = Vec::new();
        loop {
            let line = self.line(1024)?;
            let hex = line.split(|&b| b == b';').next().unwrap_or(&[]).trim_ascii();
            let size = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| usize::from_str_radix(h, 16).ok())
                .ok_or_else(|| Error::Protocol("bad chunk size".into()))?;
            if size == 0 {
                // Trailers, up to the empty line; a server that just closes is fine too.
                loop {
                    match self.line(MAX_HEAD) {
                        Ok(l) if l.is_empty() => return Ok(body),
                        Ok(_) => {}
                        Err(_) => return Ok(body),
                    }
                }
            }
            if size > max.saturating_sub(body.len()) {
                return Err(Error::TooLarge);
            }
            body.extend_from_slice(&self.exactly(size)?);
            if !self.line(2)?.is_empty() {
                return Err(Error::Protocol("chunk not followed by CRLF".into()));
            }
        }
    }
}

/// `HTTP/1.x NNN reason` → NNN.
fn parse_status(line: &[u8]) -> Option<u16> {
    let rest = line.strip_prefix(b"HTTP/1.")?;
    let code = rest.get(2..5)?;
    if rest.get(1) != Some(&b' ') || !code.iter().all(u8::is_ascii_digit) || rest.get(5).is_some_and(|&b| b != b' ') {
        return None;
    }
    std::str::from_utf8(code).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A canned server side: reads go to `input`, writes are recorded.
    struct Fake {
        input: io::Cursor<Vec<u8>>,
        sent: Vec<u8>,
    }
    impl Read for Fake {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            // One byte at a time, to exercise every boundary.
            let n = b.len().min(1);
            self.input.read(&mut b[..n])
        }
    }
    impl Write for Fake {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.sent.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn run(method: &str, answer: &[u8], max: usize) -> (Result<Response, Error>, String) {
        let url = super::super::url::parse("http://example.com:8080/hook?x=1").unwrap();
        let req = Request {
            method,
            url: "unused",
            headers: &[("Content-Type", "application/json")],
            body: b"{}",
            timeout: Duration::from_secs(1),
            max_body: max,
        };
        let mut f = Fake { input: io::Cursor::new(answer.to_vec()), sent: Vec::new() };
        let r = exchange(&mut f, &req, &url);
        (r, String::from_utf8(f.sent).unwrap())
    }

    #[test]
    fn writes_the_request() {
        let (_, sent) = run("POST", b"HTTP/1.1 204 No Content\r\n\r\n", 10);
        assert_eq!(
            sent,
            "POST /hook?x=1 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: campfire-room\r\nContent-Length: 2\r\n\
             Connection: close\r\nContent-Type: application/json\r\n\r\n{}"
        );
    }

    #[test]
    fn reads_content_length_chunked_and_close_delimited_bodies() {
        let (r, _) = run("POST", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhelloEXTRA", 100);
        let r = r.unwrap();
        assert_eq!((r.status, r.body.as_slice(), r.header("CONTENT-type")), (200, &b"hello"[..], Some("text/plain")));
        let (r, _) = run("POST", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: 1\r\n\r\n", 100);
        assert_eq!(r.unwrap().body, b"abc0123456789");
        let (r, _) = run("POST", b"HTTP/1.0 500 Oops\nX: y\n\nuntil the end", 100);
        let r = r.unwrap();
        assert_eq!((r.status, r.body.as_slice()), (500, &b"until the end"[..]));
        let (r, _) = run("HEAD", b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", 100);
        assert!(r.unwrap().body.is_empty(), "HEAD answers have no body");
        let (r, _) = run("POST", b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 100);
        assert_eq!(r.unwrap().status, 201);
    }

    #[test]
    fn caps_bodies() {
        let (r, _) = run("GET", b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n", 100);
        assert!(matches!(r, Err(Error::TooLarge)));
        let (r, _) = run("GET", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n65\r\n", 100);
        assert!(matches!(r, Err(Error::TooLarge)));
        let (r, _) = run("GET", &[&b"HTTP/1.1 200 OK\r\n\r\n"[..], &[b'x'; 101]].concat(), 100);
        assert!(matches!(r, Err(Error::TooLarge)));
        let (r, _) = run("GET", &[&b"HTTP/1.1 200 OK\r\n\r\n"[..], &[b'x'; 100]].concat(), 100);
        assert_eq!(r.unwrap().body.len(), 100);
    }

    #[test]
    fn refuses_broken_answers() {
        for bad in [&b"HTTP/2 200\r\n\r\n"[..], b"HTTP/1.1 2000 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", b"", b"HTTP/1.1 200 OK\r\n"] {
            let (r, _) = run("GET", bad, 100);
            assert!(matches!(r, Err(Error::Protocol(_))), "{:?} -> {r:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn refuses_headers_that_would_inject() {
        let url = super::super::url::parse("http://h/").unwrap();
        let headers = [("X-A", "b\r\nEvil: 1")];
        let req = Request { method: "GET", url: "", headers: &headers, body: b"", timeout: Duration::from_secs(1), max_body: 1 };
        assert!(matches!(request_head(&req, &url), Err(Error::Protocol(_))));
    }
}
