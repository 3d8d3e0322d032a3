//! STAND-IN on the `build` branch only: the core helper's HTTP module replaces this file at
//! merge. It has exactly the `Request`, `Header`, `Method` and `Response` signatures of
//! docs/architecture.md so `assets::serve` compiles and can be tested; nothing here is the real
//! parser or writer.

pub enum Method { Get, Head, Post, Put, Patch, Delete, Options, Other }

pub struct Request<'a> {
    pub method: Method,
    pub target: &'a [u8],
    pub path: &'a [u8],
    pub query: &'a [u8],
    pub http10: bool,
    pub headers: &'a [Header<'a>],
    pub body: &'a [u8],
    pub peer: std::net::IpAddr,
}

pub struct Header<'a> {
    pub name: &'a [u8],
    pub value: &'a [u8],
}

impl Request<'_> {
    /// The value of the first header named `lowercase_name` (matched case-insensitively).
    pub fn header(&self, lowercase_name: &[u8]) -> Option<&[u8]> {
        self.headers.iter().find(|h| h.name.eq_ignore_ascii_case(lowercase_name)).map(|h| h.value)
    }
}

/// Collects what a handler writes; the real one frames and sends it.
#[derive(Default)]
pub struct Response {
    pub code: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub buf: Vec<u8>,
    pub static_body: Option<&'static [u8]>,
    pub shared_body: Option<std::sync::Arc<[u8]>>,
}

impl Response {
    pub fn status(&mut self, code: u16) {
        self.code = code;
    }
    pub fn header(&mut self, name: &str, value: &[u8]) {
        self.headers.push((name.to_string(), value.to_vec()));
    }
    pub fn body(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
    pub fn set_static_body(&mut self, b: &'static [u8]) {
        self.static_body = Some(b);
    }
    pub fn set_shared_body(&mut self, b: std::sync::Arc<[u8]>) {
        self.shared_body = Some(b);
    }
}
