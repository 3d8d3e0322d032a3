//! Read-only memory maps of whole files: how a request body spooled to disk (a large upload)
//! is handed to the handler as a byte slice without being read into the heap. The pages
//! belong to the page cache, which the kernel can drop under memory pressure.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// A private, read-only mapping of a file, unmapped on drop.
pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and never remapped while shared; reading the same bytes
// from several threads is sound.
unsafe impl Send for Mapped {}
// SAFETY: as above: `&Mapped` only gives out `&[u8]`.
unsafe impl Sync for Mapped {}

impl Mapped {
    /// Maps the first `len` bytes of `file` (which must be at least that long and must not be
    /// truncated while mapped: spool files are ours alone). An empty length maps nothing.
    pub fn of(file: &File, len: usize) -> io::Result<Mapped> {
        if len == 0 {
            return Ok(Mapped { ptr: std::ptr::null_mut(), len: 0 });
        }
        // SAFETY: a fresh mapping chosen by the kernel (addr NULL), read-only and private, of a
        // valid open descriptor; the result is checked against MAP_FAILED before use.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapped { ptr, len })
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` is a live read-only mapping of `len` bytes until `drop`; the file is
        // never truncated while mapped (the spool owns it), so every page stays readable.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping exactly the region `of` mapped; no slice of it outlives `self`
            // (they borrow `self`).
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_a_file_read_only() {
        let path = std::env::temp_dir().join(format!("cr-mmap-{}", std::process::id()));
        let mut f = File::create(&path).unwrap();
        f.write_all(b"hello, map").unwrap();
        let f = File::open(&path).unwrap();
        let m = Mapped::of(&f, 10).unwrap();
        assert_eq!(m.bytes(), b"hello, map");
        assert_eq!(Mapped::of(&f, 0).unwrap().bytes(), b"");
        drop(m);
        let _ = std::fs::remove_file(&path);
    }
}
