//! A test hook: I/O errors on demand (issue 15 "Faults injected"). A full disk is easy to make
//! for real (the tests mount a small tmpfs); a failing disk is not. When the server is started
//! with `CAMPFIRE_FAULT_FILE=<path>`, `install` makes a VFS wrapping SQLite's own the default
//! one, and every write SQLite makes to a database, WAL or journal file fails while `<path>`
//! exists: with `SQLITE_FULL` if the file says `full`, else `SQLITE_IOERR_WRITE`; if it also
//! says `main`, only writes to main database files fail (the checkpointer's, not the WAL's
//! commits). The file is
//! looked at on each write (one failed `open` when it is absent), which only a test pays for:
//! without the variable nothing is installed.

use libsqlite3_sys as ffi;
use std::ffi::{c_int, c_void, CString};
use std::path::PathBuf;
use std::ptr;
use std::sync::{Mutex, OnceLock};

struct Hook {
    flag: PathBuf,
    /// The VFS we wrap (SQLite's default, "unix").
    real: *mut ffi::sqlite3_vfs,
    /// (real methods table, for main database files, ours): a copy of each table the real
    /// VFS gave a file (unix has one for main databases, another for journals and WALs) with
    /// `xWrite` ours. Tables live as long as the process.
    tables: Mutex<Vec<(usize, bool, usize)>>,
}

// SAFETY: `real` points to SQLite's static default VFS, which lives as long as the process
// and is only read here; the other fields are Sync themselves.
unsafe impl Send for Hook {}
// SAFETY: as above.
unsafe impl Sync for Hook {}

static HOOK: OnceLock<Hook> = OnceLock::new();

/// Makes the failing VFS the default for every connection opened after this call. Call it
/// once, before the first `Conn::open`.
pub fn install(flag: PathBuf) {
    // The library's own settings go first: finding the VFS initializes it.
    super::conn::configure_library();
    // SAFETY: sqlite3_vfs_find(NULL) returns the default VFS (SQLite's static "unix" one)
    // or NULL; it initializes the library first.
    let real = unsafe { ffi::sqlite3_vfs_find(ptr::null()) };
    if real.is_null() || HOOK.set(Hook { flag, real, tables: Mutex::new(Vec::new()) }).is_err() {
        return;
    }
    let name = CString::new("campfire-fault").unwrap_or_default();
    // SAFETY: `real` is a valid VFS; ours is a copy of it (same file size, same app data)
    // with xOpen replaced, leaked so it outlives every connection, as sqlite3_vfs_register
    // requires (it links it into its list through pNext).
    unsafe {
        let mut vfs = *real;
        vfs.zName = name.into_raw();
        vfs.pNext = ptr::null_mut();
        vfs.xOpen = Some(open);
        let vfs = Box::into_raw(Box::new(vfs));
        ffi::sqlite3_vfs_register(vfs, 1);
    }
    eprintln!("db: test hook: SQLite writes fail while {} exists", HOOK.get().map_or(String::new(), |h| h.flag.display().to_string()));
}

/// The error a write to a main database file (`main`) or another gets now, if any.
fn failing(h: &Hook, main: bool) -> Option<c_int> {
    let said = std::fs::read(&h.flag).ok()?;
    if !main && said.windows(4).any(|w| w == b"main") {
        return None;
    }
    Some(if said.starts_with(b"full") { ffi::SQLITE_FULL } else { ffi::SQLITE_IOERR_WRITE })
}

unsafe extern "C" fn open(_vfs: *mut ffi::sqlite3_vfs, name: ffi::sqlite3_filename, file: *mut ffi::sqlite3_file, flags: c_int, out: *mut c_int) -> c_int {
    let Some(h) = HOOK.get() else { return ffi::SQLITE_ERROR };
    // SAFETY: SQLite calls xOpen with `file` pointing to szOsFile bytes (the real VFS's size,
    // copied into ours), so the real xOpen fills it as it would its own; it is given its own
    // VFS, which the file keeps.
    let rc = unsafe {
        match (*h.real).xOpen {
            Some(real_open) => real_open(h.real, name, file, flags, out),
            None => return ffi::SQLITE_ERROR,
        }
    };
    // SAFETY: after a successful open `file` is initialized and pMethods is the real
    // methods table (static in SQLite) or NULL.
    unsafe {
        if rc != ffi::SQLITE_OK || (*file).pMethods.is_null() {
            return rc;
        }
        let methods = (*file).pMethods;
        let main = flags & ffi::SQLITE_OPEN_MAIN_DB != 0;
        let Ok(mut tables) = h.tables.lock() else { return rc };
        let ours = match tables.iter().find(|t| t.0 == methods as usize && t.1 == main) {
            Some(t) => t.2,
            None => {
                let mut m = *methods;
                m.xWrite = Some(if main { write_main } else { write_other });
                let ours = Box::into_raw(Box::new(m)) as usize;
                tables.push((methods as usize, main, ours));
                ours
            }
        };
        (*file).pMethods = ours as *const ffi::sqlite3_io_methods;
    }
    rc
}

unsafe extern "C" fn write_main(file: *mut ffi::sqlite3_file, data: *const c_void, n: c_int, offset: ffi::sqlite3_int64) -> c_int {
    // SAFETY: SQLite's own arguments, passed on.
    unsafe { write(true, file, data, n, offset) }
}

unsafe extern "C" fn write_other(file: *mut ffi::sqlite3_file, data: *const c_void, n: c_int, offset: ffi::sqlite3_int64) -> c_int {
    // SAFETY: SQLite's own arguments, passed on.
    unsafe { write(false, file, data, n, offset) }
}

unsafe fn write(main: bool, file: *mut ffi::sqlite3_file, data: *const c_void, n: c_int, offset: ffi::sqlite3_int64) -> c_int {
    let Some(h) = HOOK.get() else { return ffi::SQLITE_IOERR_WRITE };
    if let Some(rc) = failing(h, main) {
        return rc;
    }
    // SAFETY: `file` is open (SQLite calls xWrite on open files only) and its pMethods is one
    // of our tables, made from the real table in `tables`, whose xWrite takes the same file.
    unsafe {
        let ours = (*file).pMethods as usize;
        let real = h.tables.lock().ok().and_then(|t| t.iter().find(|t| t.2 == ours).map(|t| t.0));
        match real.and_then(|r| (*(r as *const ffi::sqlite3_io_methods)).xWrite) {
            Some(real_write) => real_write(file, data, n, offset),
            None => ffi::SQLITE_IOERR_WRITE,
        }
    }
}
