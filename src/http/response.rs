//! The response a handler fills: status, header lines, and a body that is either rendered into a
//! reused buffer, a `&'static` slice (embedded assets) or a shared `Arc` (cached pages). The loop
//! frames it (status line, Content-Length, Connection) and sends head and body with one writev.
//! A body may also be a range of an open file (`set_file_body`, blob downloads): the loop then
//! sends it in bounded chunks as the socket drains, so a download of any size holds one chunk.
//!
//! The buffers belong to the loop and are reused for every request, so a steady state allocates
//! nothing; `reset` drops oversized buffers so one huge page does not pin memory forever.

use std::fs::File;
use std::sync::Arc;

enum Body {
    Owned,
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
    File(FileBody),
}

/// `len` bytes of `file` from `offset` on, sent as the body.
pub struct FileBody {
    pub file: File,
    pub offset: u64,
    pub len: u64,
}

/// A body that outlives its response without a copy: what a connection keeps of a cached page
/// or an embedded asset its client has not taken yet costs a reference.
#[derive(Clone)]
pub enum Kept {
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
}

impl Kept {
    pub fn bytes(&self) -> &[u8] {
        match self {
            Kept::Static(b) => b,
            Kept::Shared(b) => b,
        }
    }
}

pub struct Response {
    status: u16,
    headers: Vec<u8>,
    body: Vec<u8>,
    kind: Body,
    close: bool,
}

/// Buffers above this size are freed on reset instead of kept for the next request.
const KEEP_CAPACITY: usize = 256 * 1024;

impl Default for Response {
    fn default() -> Self {
        Response::new()
    }
}

impl Response {
    pub fn new() -> Response {
        Response { status: 200, headers: Vec::new(), body: Vec::new(), kind: Body::Owned, close: false }
    }

    /// Sets the status code (200 unless set).
    pub fn status(&mut self, code: u16) {
        self.status = code;
    }

    /// The status code set so far.
    pub fn code(&self) -> u16 {
        self.status
    }

    /// Adds a header line. A value holding CR, LF or NUL would let data from a request split the
    /// response; such a header is dropped and logged instead of sent. The loop writes
    /// Content-Length and Connection itself; do not add them.
    pub fn header(&mut self, name: &str, value: &[u8]) {
        if value.iter().any(|&b| b == b'\r' || b == b'\n' || b == 0) || name.bytes().any(|b| b <= b' ' || b == b':') {
            eprintln!("response: dropped header {name:?}: a bad name, or CR, LF or NUL in its value");
            return;
        }
        self.headers.extend_from_slice(name.as_bytes());
        self.headers.extend_from_slice(b": ");
        self.headers.extend_from_slice(value);
        self.headers.extend_from_slice(b"\r\n");
    }

    /// The body buffer to render into (replaces a static or shared body).
    pub fn body(&mut self) -> &mut Vec<u8> {
        self.kind = Body::Owned;
        &mut self.body
    }

    /// The value of the first header line named `name` (ASCII case-insensitive), if any.
    pub fn header_value(&self, name: &str) -> Option<&[u8]> {
        self.headers.split(|&b| b == b'\n').find_map(|line| {
            let line = line.strip_suffix(b"\r")?;
            let colon = line.iter().position(|&b| b == b':')?;
            let (n, v) = line.split_at(colon);
            n.eq_ignore_ascii_case(name.as_bytes()).then(|| v.get(1..).unwrap_or_default().trim_ascii())
        })
    }

    /// The header lines added so far, each ending in CRLF (what a response cache stores).
    pub fn headers_raw(&self) -> &[u8] {
        &self.headers
    }

    /// Appends header lines taken from `headers_raw` of an earlier response.
    pub fn extend_headers_raw(&mut self, lines: &[u8]) {
        self.headers.extend_from_slice(lines);
    }

    /// Sends `b` as the body without copying it.
    pub fn set_static_body(&mut self, b: &'static [u8]) {
        self.kind = Body::Static(b);
    }

    /// Sends a shared, reference-counted body without copying it.
    pub fn set_shared_body(&mut self, b: Arc<[u8]>) {
        self.kind = Body::Shared(b);
    }

    /// Sends `len` bytes of `file` from `offset` as the body, read and written a chunk at a time
    /// by the loop as the client takes them (the file must hold them: a shorter file ends the
    /// connection early rather than send a wrong Content-Length).
    pub fn set_file_body(&mut self, file: File, offset: u64, len: u64) {
        self.kind = Body::File(FileBody { file, offset, len });
    }

    /// The file body, taken out for the loop to stream (the response keeps its length for the
    /// head only until `reset`).
    pub fn take_file_body(&mut self) -> Option<FileBody> {
        match std::mem::replace(&mut self.kind, Body::Owned) {
            Body::File(f) => Some(f),
            other => {
                self.kind = other;
                None
            }
        }
    }

    /// The body's length in bytes, whatever kind it is.
    pub fn body_len(&self) -> u64 {
        match &self.kind {
            Body::File(f) => f.len,
            _ => self.body_bytes().len() as u64,
        }
    }

    /// Asks the loop to close the connection after sending this response.
    pub fn close(&mut self) {
        self.close = true;
    }

    /// Whether `close` was called.
    pub fn wants_close(&self) -> bool {
        self.close
    }

    /// The body bytes as they will be sent (before HEAD or bodiless statuses strip them); empty
    /// for a file body, which is not in memory.
    pub fn body_bytes(&self) -> &[u8] {
        match &self.kind {
            Body::Owned => &self.body,
            Body::File(_) => b"",
            Body::Static(b) => b,
            Body::Shared(b) => b,
        }
    }

    /// The body as a reference the connection may keep, when it is static or shared.
    pub fn kept_body(&self) -> Option<Kept> {
        match &self.kind {
            Body::Owned | Body::File(_) => None,
            Body::Static(b) => Some(Kept::Static(b)),
            Body::Shared(b) => Some(Kept::Shared(b.clone())),
        }
    }

    /// Writes the status line and headers into `out`: the handler's lines, then Content-Length
    /// (omitted for 1xx/204/304), then the Connection header the framing needs: `close` when
    /// this is the last response, `keep-alive` for an HTTP/1.0 client that keeps the connection.
    pub fn write_head(&self, out: &mut Vec<u8>, http10: bool, keep_alive: bool) {
        out.extend_from_slice(if http10 { b"HTTP/1.0 " } else { b"HTTP/1.1 " });
        push_u64(out, self.status as u64);
        out.push(b' ');
        out.extend_from_slice(super::status::reason(self.status).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.headers);
        if !super::status::bodiless(self.status) {
            out.extend_from_slice(b"Content-Length: ");
            push_u64(out, self.body_len());
            out.extend_from_slice(b"\r\n");
        }
        if !keep_alive {
            out.extend_from_slice(b"Connection: close\r\n");
        } else if http10 {
            out.extend_from_slice(b"Connection: keep-alive\r\n");
        }
        out.extend_from_slice(b"\r\n");
    }

    /// Makes the response ready for the next request, keeping buffers of reasonable size.
    pub fn reset(&mut self) {
        self.status = 200;
        self.close = false;
        self.kind = Body::Owned;
        self.headers.clear();
        self.body.clear();
        if self.body.capacity() > KEEP_CAPACITY {
            self.body = Vec::new();
        }
        if self.headers.capacity() > KEEP_CAPACITY {
            self.headers = Vec::new();
        }
    }
}

/// Appends `n` in decimal, two digits per division (every response writes its status and
/// length, every log line its status and time).
pub fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    while n >= 100 && i >= 2 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    }
    // n < 100 here (u64::MAX has 20 digits: the loop never runs out of room).
    if n >= 10 && i >= 2 {
        let d = n as usize * 2;
        i -= 2;
        tmp[i..i + 2].copy_from_slice(&PAIRS[d..d + 2]);
    } else if i >= 1 {
        i -= 1;
        tmp[i] = b'0' + n as u8;
    }
    out.extend_from_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_digits_are_exact() {
        let mut edges = vec![0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 104_074, u64::MAX - 1, u64::MAX];
        edges.extend((0..64).map(|k| 1u64 << k));
        edges.extend((1..20).map(|k| 10u64.pow(k) - 1));
        for n in edges {
            let mut out = b"x".to_vec();
            push_u64(&mut out, n);
            assert_eq!(out, format!("x{n}").into_bytes());
        }
    }

    #[test]
    fn frames_head() {
        let mut r = Response::new();
        r.status(404);
        r.header("Content-Type", b"text/plain");
        r.header("X-Evil", b"a\r\nSet-Cookie: x=1");
        r.body().extend_from_slice(b"nope");
        let mut out = Vec::new();
        r.write_head(&mut out, false, true);
        assert_eq!(out, b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\n");
        out.clear();
        r.write_head(&mut out, true, false);
        assert!(out.ends_with(b"Content-Length: 4\r\nConnection: close\r\n\r\n"));
        r.reset();
        r.status(304);
        r.set_static_body(b"x");
        out.clear();
        r.write_head(&mut out, false, true);
        assert_eq!(out, b"HTTP/1.1 304 Not Modified\r\n\r\n");
    }
}
