//! The access log: one line per request (`GET /up 200 41us`) to stdout, collected in a per-loop
//! buffer and written when it fills or FLUSH_MS after its first line, so logging costs no system
//! call per request even when requests come one at a time.
//! Refused requests get the reason appended; those lines are written even with CAMPFIRE_LOG=0.

use crate::http::response::push_u64;

pub(super) struct AccessLog {
    pub enabled: bool,
    buf: Vec<u8>,
    /// When the oldest unwritten line was added (monotonic ms).
    since: u64,
}

/// The longest a line waits in the buffer.
const FLUSH_MS: u64 = 100;

/// Each write stays within PIPE_BUF (4096), so lines from different loops never interleave when
/// stdout is a pipe; a line is at most 512 bytes of path plus a short reason.
const FLUSH_AT: usize = 4096 - 640;

impl AccessLog {
    pub fn new(enabled: bool) -> AccessLog {
        AccessLog { enabled, buf: Vec::new(), since: 0 }
    }

    /// Records a served request. `path` is the raw path (no query); at most 512 bytes are kept.
    pub fn request(&mut self, method: &str, path: &[u8], status: u16, micros: u64) {
        if !self.enabled {
            return;
        }
        self.line(method, path, status, micros, "");
    }

    /// Records a refused request or connection (always, since it is an anomaly worth seeing).
    pub fn refused(&mut self, status: u16, why: &str) {
        self.line("-", b"-", status, 0, why);
    }

    fn line(&mut self, method: &str, path: &[u8], status: u16, micros: u64, why: &str) {
        if self.buf.len() >= FLUSH_AT {
            self.flush();
        }
        if self.buf.is_empty() {
            self.since = crate::sys::clock::now_ms();
        }
        let b = &mut self.buf;
        b.extend_from_slice(method.as_bytes());
        b.push(b' ');
        // The parser admits only visible ASCII in targets, so the line cannot be split.
        b.extend_from_slice(&path[..path.len().min(512)]);
        b.push(b' ');
        push_u64(b, status as u64);
        b.push(b' ');
        push_u64(b, micros);
        b.extend_from_slice(b"us");
        if !why.is_empty() {
            b.push(b' ');
            b.extend_from_slice(why.as_bytes());
        }
        b.push(b'\n');
    }

    /// When the buffered lines must be written (u64::MAX: nothing buffered).
    pub fn deadline(&self) -> u64 {
        if self.buf.is_empty() { u64::MAX } else { self.since + FLUSH_MS }
    }

    /// Writes out what has been collected.
    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            crate::sys::process::write_stdout(&self.buf);
            self.buf.clear();
        }
    }
}
