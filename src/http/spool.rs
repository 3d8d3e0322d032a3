//! Request bodies spooled to disk: an upload larger than `SPOOL_MIN` is written to an unnamed
//! file under the storage folder as it arrives, instead of growing the connection's buffer to
//! its size, and handed to the handler as that file (`SpooledBody`), which it reads in pieces
//! (`read_at`, `find`): never mapped or read whole, so memory per upload stays at a chunk or two
//! however large the file (a mapping's pages would count as resident as they are read). A
//! handler can keep the body (an `Arc`) past the request, for the worker to store it.
//!
//! The file is unlinked as soon as it is created, so nothing is left behind by a crash, a
//! dropped connection or a refused request: the data lives exactly as long as its descriptor
//! and mapping.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

/// How much of a spooled body `find` reads at a time.
const FIND_CHUNK: usize = 64 * 1024;

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

    /// The finished body.
    pub fn finish(self) -> (Vec<u8>, Arc<SpooledBody>) {
        (self.head, Arc::new(SpooledBody { file: self.file, len: self.want }))
    }
}

/// A complete spooled body: `len` bytes in an unnamed file.
pub struct SpooledBody {
    file: File,
    len: usize,
}

impl SpooledBody {
    /// The body's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the body is empty (it never is: small bodies are not spooled).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fills `buf` with the body's bytes from `offset` (an error past the end).
    pub fn read_at(&self, buf: &mut [u8], offset: usize) -> io::Result<()> {
        if offset.checked_add(buf.len()).is_none_or(|end| end > self.len) {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "read past the spooled body"));
        }
        self.file.read_exact_at(buf, offset as u64)
    }

    /// The bytes in `range` as a new vector.
    pub fn read_range(&self, range: std::ops::Range<usize>) -> io::Result<Vec<u8>> {
        let mut v = vec![0; range.len()];
        self.read_at(&mut v, range.start)?;
        Ok(v)
    }

    /// Where `pat` (non-empty) first occurs at or after `from`, reading the file a chunk at a
    /// time (the last `pat.len() - 1` bytes of a chunk are read again with the next, so a match
    /// across two chunks is found).
    pub fn find(&self, pat: &[u8], from: usize) -> io::Result<Option<usize>> {
        debug_assert!(!pat.is_empty() && pat.len() < FIND_CHUNK, "pattern of a sensible size");
        let mut buf = vec![0; FIND_CHUNK];
        let mut at = from;
        while at + pat.len() <= self.len {
            let n = FIND_CHUNK.min(self.len - at);
            self.read_at(&mut buf[..n], at)?;
            if let Some(i) = buf[..n].windows(pat.len()).position(|w| w == pat) {
                return Ok(Some(at + i));
            }
            if at + n == self.len {
                break;
            }
            at += n + 1 - pat.len();
        }
        Ok(None)
    }
}

impl std::fmt::Debug for SpooledBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SpooledBody({} bytes)", self.len)
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
        let (head, body) = s.finish();
        assert_eq!(head, b"POST / HTTP/1.1\r\n\r\n");
        assert_eq!(body.read_range(0..10).unwrap(), b"hello, wor");
        assert!(body.read_range(5..11).is_err(), "nothing past the end");
        assert_eq!(body.find(b"o", 0).unwrap(), Some(4));
        assert_eq!(body.find(b"o", 5).unwrap(), Some(8));
        assert_eq!(body.find(b"wor", 0).unwrap(), Some(7));
        assert_eq!(body.find(b"x", 0).unwrap(), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn finds_a_pattern_across_chunks() {
        let dir = std::env::temp_dir().join(format!("cr-spool-find-{}", std::process::id()));
        let mut data = vec![b'a'; FIND_CHUNK * 3];
        let at = FIND_CHUNK - 2;
        data[at..at + 5].copy_from_slice(b"--xyz");
        data[FIND_CHUNK * 3 - 5..].copy_from_slice(b"--xyz");
        let mut s = Spool::create(&dir, b"", data.len()).unwrap();
        s.feed(&data).unwrap();
        let (_, body) = s.finish();
        assert_eq!(body.find(b"--xyz", 0).unwrap(), Some(at));
        assert_eq!(body.find(b"--xyz", at + 1).unwrap(), Some(FIND_CHUNK * 3 - 5));
        assert_eq!(body.find(b"--xyzz", 0).unwrap(), None);
        let _ = fs::remove_dir_all(&dir);
    }
}
