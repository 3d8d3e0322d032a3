//! A read-only, shared mapping of the start of a file that other processes rewrite in place:
//! SQLite's `-shm` wal-index, whose header says whether anyone committed (db/wal_index.rs).
//! Reading it is a memory load, no system call, which is the point.
//!
//! Known limit: a file-backed mapping raises SIGBUS when a page it covers no longer exists in
//! the file. SQLite only truncates a `-shm` file when no process has it open, and ours always
//! does while this mapping lives (the loop's connection), so only a hand truncating the file to
//! zero bytes under a running server could do that.

use std::os::fd::AsRawFd;

pub struct SharedMap {
    ptr: *const u8,
    len: usize,
}

impl SharedMap {
    /// Maps the first `len` bytes of `path` read-only and shared (`PROT_READ`, `MAP_SHARED`),
    /// so writes by any process show through. Fails if the file is shorter than `len` or
    /// `len` is 0. The file descriptor is closed again at once; the mapping keeps the file.
    pub fn open(path: &std::path::Path, len: usize) -> std::io::Result<SharedMap> {
        let file = std::fs::File::open(path)?;
        if len == 0 || file.metadata()?.len() < len as u64 {
            return Err(std::io::Error::other("file shorter than the mapping"));
        }
        // SAFETY: a fresh read-only shared mapping of a file we hold open; the kernel chooses
        // the address; the result is checked against MAP_FAILED before use.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
        };
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(SharedMap { ptr: p as *const u8, len })
    }

    /// The native-endian 32-bit word at byte `offset` (a multiple of 4 inside the mapping),
    /// read once from memory another process may be writing; `None` outside the mapping.
    /// Consistency is the caller's business (SQLite's wal-index keeps two copies of its
    /// header for exactly this kind of lock-free reader).
    pub fn word(&self, offset: usize) -> Option<u32> {
        if !offset.is_multiple_of(4) || offset.checked_add(4)? > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above) of a live, page-aligned mapping, so the u32 is
        // aligned; a volatile load because other processes change this memory behind our back
        // (the compiler must neither cache nor merge the reads).
        Some(unsafe { std::ptr::read_volatile(self.ptr.add(offset) as *const u32) })
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the region `open` mapped; nothing borrows it past `self`.
        unsafe {
            libc::munmap(self.ptr as *mut libc::c_void, self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_writes_made_after_mapping() {
        let path = std::env::temp_dir().join(format!("campfire-shared-map-{}", std::process::id()));
        std::fs::write(&path, [1u8, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        let map = SharedMap::open(&path, 8).unwrap();
        assert_eq!(map.word(0), Some(u32::from_ne_bytes([1, 0, 0, 0])));
        assert_eq!(map.word(8), None, "past the end");
        assert_eq!(map.word(2), None, "unaligned");
        std::fs::write(&path, [7u8, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        assert_eq!(map.word(0), Some(u32::from_ne_bytes([7, 0, 0, 0])), "a later write shows through");
        assert!(SharedMap::open(&path, 9).is_err(), "longer than the file");
        drop(map);
        let _ = std::fs::remove_file(&path);
    }
}
