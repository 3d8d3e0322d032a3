//! Request bodies spooled to disk: an upload larger than `SPOOL_MIN` is written to an unnamed
//! file under the storage folder as it arrives, instead of growing the connection's buffer to
//! its size, and handed to the handler as a read-only memory map (`SpooledBody`). Memory per
//! upload stays at one read chunk however large the file, and a handler can keep the body
//! (an `Arc`) past the request, for the worker to store it, without copying it.
//!
//! The file is unlinked as soon as it is created, so nothing is left behind by a crash, a
//! dropped connection or a refused request: the data lives exactly as long as its descriptor
//! and mapping.

use crate::sys::mmap::Mapped;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

/// Bodies at least this large (multipart uploads only) are spooled to disk.
pub const SPOOL_MIN: usize = 256 * 1024;
/// A spooled upload must deliver this many bytes per request-timeout window to stay open
/// (so a slowloris cannot hold an upload slot forever by trickling).
pub const PROGRESS_BYTES: usize = 64 * 1024;

/// A body being written to disk: the request head (copied out of the read buffer, which is
/// reused meanwhile) and how much of the body has arrived.
pub struct Spool {
    file: File,
    pub head: Vec<u8>,
    pub want: usize,
    pub got: usize,
    /// Bytes since the connection's timeout was last pushed back.
    pub progress: usize,
}

impl Spool {
    /// Starts spooling a body of `want` bytes for the request whose head is `head`, in a new
    /// unnamed file under `dir` (created when missing).
    pub fn create(dir: &Path, head: &[u8], want: usize) -> io::Result<Spool> {
        fs::create_dir_all(dir)?;
        let mut name = [0u8; 12];
        crate::sys::random::fill(&mut name);
        let hex: String = name.iter().map(|b| format!("{b:02x}")).collect();
        let path = dir.join(format!("upload-{hex}"));
        let file = OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
        fs::remove_file(&path)?;
        Ok(Spool { file, head: head.to_vec(), want, got: 0, progress: 0 })
    }

    /// Writes as much of `data` as the body still needs; returns how many bytes it took.
    pub fn feed(&mut self, data: &[u8]) -> io::Result<usize> {
        let take = data.len().min(self.want - self.got);
        self.file.write_all(data.get(..take).unwrap_or(&[]))?;
        self.got += take;
        self.progress += take;
        Ok(take)
    }

    /// Whether the whole body has arrived.
    pub fn complete(&self) -> bool {
        self.got == self.want
    }

    /// The finished body, mapped.
    pub fn finish(self) -> io::Result<(Vec<u8>, Arc<SpooledBody>)> {
        let map = Mapped::of(&self.file, self.want)?;
        Ok((self.head, Arc::new(SpooledBody { map, _file: self.file })))
    }
}

/// A complete spooled body: read-only bytes backed by an unnamed file.
pub struct SpooledBody {
    map: Mapped,
    _file: File,
}

impl SpooledBody {
    /// The whole body.
    pub fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }
}

impl std::fmt::Debug for SpooledBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SpooledBody({} bytes)", self.map.bytes().len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spools_in_pieces_and_leaves_no_file() {
        let dir = std::env::temp_dir().join(format!("cr-spool-{}", std::process::id()));
        let mut s = Spool::create(&dir, b"POST / HTTP/1.1\r\n\r\n", 10).unwrap();
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "the file has no name");
        assert_eq!(s.feed(b"hello").unwrap(), 5);
        assert!(!s.complete());
        assert_eq!(s.feed(b", world and more").unwrap(), 5, "takes only what the body needs");
        assert!(s.complete());
        let (head, body) = s.finish().unwrap();
        assert_eq!(head, b"POST / HTTP/1.1\r\n\r\n");
        assert_eq!(body.bytes(), b"hello, wor");
        let _ = fs::remove_dir_all(&dir);
    }
}
