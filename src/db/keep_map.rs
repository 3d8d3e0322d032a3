//! The read connections' VFS: SQLite's default one, except that a database file's memory
//! mapping is kept across other connections' commits while the file keeps its size.
//!
//! A read connection whose next read transaction finds the WAL changed (any commit by the
//! writer or another process) drops its page cache and asks the VFS to unmap the whole file
//! (`xUnfetch(0, NULL)`), because the file may have been truncated meanwhile; the next page it
//! reads maps it again. Under a stream of posts that was munmap, fstat and mmap, and a page
//! fault for every page touched again, before each request's first statement: 4% of a post's
//! CPU at 16 clients (issue 18). A mapping is `MAP_SHARED`, so it always shows the file's
//! current bytes: what can go stale is only its length. So here `xUnfetch(0, NULL)` asks the
//! file's size first (`xFileSize`, one fstat) and passes the unmap on only when the size
//! differs from the one seen at the last unmap passed on; the next fetch then maps the new
//! length, as before.
//!
//! A kept mapping may be shorter than the file (it grew between that unmap and the next
//! mapping): pages past it are read with `pread`, as SQLite does for pages past its window,
//! until the size changes again. It may be longer (the file shrank in between): SQLite never
//! reads a page its snapshot does not have in the file, and a checkpoint shrinks the file only
//! once every reader's snapshot has the smaller size, so nothing reads past the end.

use libsqlite3_sys as ffi;
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::{Mutex, OnceLock};

/// The name read connections open with.
const NAME: &CStr = c"campfire-keep-map";

/// What this VFS keeps per open file, after the wrapped VFS's own file structure.
#[repr(C)]
struct Extra {
    /// The wrapped VFS's methods for this file (ours are a copy with `xUnfetch` replaced).
    real: *const ffi::sqlite3_io_methods,
    /// The size seen when the last whole-file unmap was passed on; -1 before the first.
    size: i64,
}

struct Vfs {
    /// Where `Extra` starts in a file structure: the wrapped VFS's size, rounded up.
    extra_at: usize,
    /// The wrapped VFS (the default when this one is registered).
    real: *mut ffi::sqlite3_vfs,
    /// (real methods table, ours): one copy per table the wrapped VFS hands out, alive as long
    /// as the process.
    tables: Mutex<Vec<(usize, usize)>>,
}

// SAFETY: `real` points to a registered VFS, which lives as long as the process and is only
// read here; the other fields are Sync themselves.
unsafe impl Send for Vfs {}
// SAFETY: as above.
unsafe impl Sync for Vfs {}

static VFS: OnceLock<Option<Vfs>> = OnceLock::new();

/// Unmaps passed on, and unmaps skipped because the size was unchanged (tests only).
#[cfg(test)]
pub(super) static PASSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
#[cfg(test)]
pub(super) static KEPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The VFS name to open read connections with, registering it on first use; `None` (open
/// with the default VFS) if the default cannot be found.
pub(super) fn name() -> Option<&'static CStr> {
    VFS.get_or_init(|| {
        // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS (SQLite's static "unix" one,
        // or the test hook wrapping it: db::fault) or NULL; the library is initialized.
        let real = unsafe { ffi::sqlite3_vfs_find(ptr::null()) };
        if real.is_null() {
            return None;
        }
        // SAFETY: `real` is a valid VFS. Ours is a copy of it (same app data) whose files are
        // larger by an `Extra`, with xOpen replaced, leaked so that it outlives every
        // connection, as sqlite3_vfs_register requires (it links it into its list).
        unsafe {
            let extra_at = ((*real).szOsFile as usize).next_multiple_of(std::mem::align_of::<Extra>());
            let mut vfs = *real;
            vfs.zName = NAME.as_ptr();
            vfs.pNext = ptr::null_mut();
            vfs.szOsFile = (extra_at + std::mem::size_of::<Extra>()) as c_int;
            vfs.xOpen = Some(open);
            if ffi::sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 0) != ffi::SQLITE_OK {
                return None;
            }
            Some(Vfs { extra_at, real, tables: Mutex::new(Vec::new()) })
        }
    })
    .as_ref()
    .map(|_| NAME)
}

unsafe extern "C" fn open(_vfs: *mut ffi::sqlite3_vfs, name: ffi::sqlite3_filename, file: *mut ffi::sqlite3_file, flags: c_int, out: *mut c_int) -> c_int {
    let Some(Some(v)) = VFS.get() else { return ffi::SQLITE_ERROR };
    // SAFETY: SQLite calls xOpen with `file` pointing to our szOsFile bytes, whose first part
    // is the wrapped VFS's size, so its xOpen fills that part as it would its own.
    let rc = unsafe {
        match (*v.real).xOpen {
            Some(real_open) => real_open(v.real, name, file, flags, out),
            None => return ffi::SQLITE_ERROR,
        }
    };
    // SAFETY: after a successful open `file` is initialized and pMethods is the wrapped VFS's
    // table (static or leaked, so it outlives the file) or NULL. `Extra` fits after the
    // wrapped structure at an aligned offset (szOsFile above).
    unsafe {
        let methods = (*file).pMethods;
        if rc != ffi::SQLITE_OK || methods.is_null() || flags & ffi::SQLITE_OPEN_MAIN_DB == 0 {
            return rc;
        }
        if (*methods).iVersion < 3 || (*methods).xUnfetch.is_none() || (*methods).xFileSize.is_none() {
            return rc;
        }
        let Ok(mut tables) = v.tables.lock() else { return rc };
        let ours = match tables.iter().find(|t| t.0 == methods as usize) {
            Some(t) => t.1,
            None => {
                let mut m = *methods;
                m.xUnfetch = Some(unfetch);
                let ours = Box::into_raw(Box::new(m)) as usize;
                tables.push((methods as usize, ours));
                ours
            }
        };
        file.cast::<u8>().add(v.extra_at).cast::<Extra>().write(Extra { real: methods, size: -1 });
        (*file).pMethods = ours as *const ffi::sqlite3_io_methods;
    }
    rc
}

unsafe extern "C" fn unfetch(file: *mut ffi::sqlite3_file, offset: ffi::sqlite3_int64, page: *mut c_void) -> c_int {
    let Some(Some(v)) = VFS.get() else { return ffi::SQLITE_IOERR };
    // SAFETY: `file` is open with our table (only `open` installs it, with the `Extra` written),
    // and the real table's functions take the same file.
    unsafe {
        let extra = file.cast::<u8>().add(v.extra_at).cast::<Extra>();
        let real = &*(*extra).real;
        if page.is_null() {
            let mut size: ffi::sqlite3_int64 = -1;
            let known = real.xFileSize.is_some_and(|f| f(file, &mut size) == ffi::SQLITE_OK);
            if known && size == (*extra).size {
                #[cfg(test)]
                KEPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return ffi::SQLITE_OK;
            }
            (*extra).size = if known { size } else { -1 };
            #[cfg(test)]
            PASSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        match real.xUnfetch {
            Some(real_unfetch) => real_unfetch(file, offset, page),
            None => ffi::SQLITE_IOERR,
        }
    }
}
