//! The bounds on what a client may send. Each is a named constant with an environment override
//! (read by `config`), documented in README.md.

/// Longest request-target accepted (414 beyond). Env: CAMPFIRE_MAX_URL.
pub const MAX_URL: usize = 8 * 1024;
/// Most bytes in the request line plus headers (431 beyond). Env: CAMPFIRE_MAX_HEADER_BYTES.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Most header fields in one request (431 beyond). Env: CAMPFIRE_MAX_HEADERS, at most
/// `HEADER_SLOTS`.
pub const MAX_HEADERS: usize = 64;
/// Hard ceiling for MAX_HEADERS: the parser's header array lives on the stack.
pub const HEADER_SLOTS: usize = 128;
/// Largest request body, after de-chunking (413 beyond). File uploads get their own limit.
/// Env: CAMPFIRE_MAX_BODY.
pub const MAX_BODY: usize = 1024 * 1024;
/// Largest `multipart/form-data` body sent with a Content-Length (file uploads: message
/// attachments, avatars, logos); 413 beyond. From 256 KiB on the body is spooled to an
/// unnamed file as it arrives, not held in memory, and read from there in pieces; blobs are
/// streamed back from disk, so the size costs no memory either way. A 1 GiB file with the
/// form around it (a phone's video is 50–500 MB). Avatars and logos have their own bound
/// (`app::form_file::MAX_BYTES`). Chunked multipart bodies stay under MAX_BODY.
/// Env: CAMPFIRE_MAX_UPLOAD.
pub const MAX_UPLOAD: usize = (1 << 30) + (1 << 20);

/// The limits one loop applies; copied into each loop at start.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_url: usize,
    pub max_header_bytes: usize,
    pub max_headers: usize,
    pub max_body: usize,
    pub max_upload: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_url: MAX_URL,
        max_header_bytes: MAX_HEADER_BYTES,
        max_headers: MAX_HEADERS,
        max_body: MAX_BODY,
        max_upload: MAX_UPLOAD,
    };

    /// Most raw bytes a chunked body may occupy before de-chunking: chunk framing can legally
    /// add overhead, but not without bound.
    pub fn max_chunked_raw(&self) -> usize {
        self.max_body.saturating_mul(2).saturating_add(64 * 1024)
    }

    /// The largest body of any framing held in a connection's buffer (bigger uploads are
    /// spooled to disk).
    pub fn max_any_body(&self) -> usize {
        self.max_chunked_raw().max(self.max_upload.min(super::spool::SPOOL_MIN))
    }
}
