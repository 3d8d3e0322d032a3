//! `Conn`: one SQLite connection, its pragmas and its prepared-statement cache.
//!
//! The writer thread owns the only read-write connection; every loop owns one read-only
//! connection (design.md §2). A `Conn` is `Send` (it can be moved into the thread that
//! will own it) but not `Sync`: exactly one thread uses it at a time, which is why it is
//! opened with `SQLITE_OPEN_NOMUTEX` (no per-call mutex).
//!
//! Statements are prepared once per connection and kept: `prepare_cached` is keyed by the
//! address and length of a `&'static str`, so the hot path is one hash lookup, no SQL
//! text comparison and no allocation. The returned `Stmt` resets itself when dropped.

use super::error::{Error, Result};
use super::stmt::Stmt;
use libsqlite3_sys as ffi;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::hash::{BuildHasherDefault, Hasher};
use std::os::raw::c_int;
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rollbacks (whole transactions and savepoints) on any connection of the process. What a
/// cache read inside a transaction may have seen is gone after one: such caches key on this
/// (memberships::user_ids_cached).
static ROLLBACKS: AtomicU64 = AtomicU64::new(0);

/// How many rollbacks the process has made so far.
pub fn rollbacks() -> u64 {
    ROLLBACKS.load(Ordering::Acquire)
}

/// How a connection is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Create the file if missing; WAL, foreign keys on. Only the writer (and tests) use this.
    ReadWrite,
    /// Read-only; a loop's connection. Sees every commit (ours and other processes').
    ReadOnly,
}

/// Per-connection page cache, in KiB (negative `cache_size`). Small on purpose: the whole
/// process must fit a 15 MB container; pages beyond it are read from the kernel's page cache.
pub const CACHE_KIB: i64 = 512;
/// Memory-mapped I/O window of the writer (and any read-write connection): off. Its reads are
/// the pages it is about to change, which the cache above holds.
pub const MMAP_BYTES: i64 = 0;
/// Memory-mapped I/O window of a read-only connection (a loop's): the first 1 GiB of the file.
/// A request that reads more pages than the 512 KiB cache holds (a search's 100 results: one
/// message page each, their creators, rooms and memberships, ~300 pages of a 392 MB file at
/// issue 18's ×100) read every one of them again with `pread` (381 calls per search); mapped,
/// SQLite reads them where the kernel's page cache already keeps them, with no system call and
/// no copy. The cost is RSS, not memory: the mapped pages are page cache, charged to a cgroup
/// whether read or mapped, clean and reclaimable; they show in `RssFile` (docs/bench.md
/// "Memory"). Pages past the window and pages in the WAL are still read with `pread`.
pub const READ_MMAP_BYTES: i64 = 1 << 30;
/// How long a statement waits on another connection's lock before failing with BUSY (ms).
pub const BUSY_TIMEOUT_MS: c_int = 5000;
/// WAL size kept after a checkpoint resets it (Rails uses the same limit).
pub const JOURNAL_SIZE_LIMIT: i64 = 64 * 1024 * 1024;

/// The busy handler of `Conn::set_busy_retry`: `limit` (the handler's argument) retries, 50 µs
/// apart.
extern "C" fn retry_soon(limit: *mut std::ffi::c_void, attempts: c_int) -> c_int {
    if attempts as isize >= limit as isize {
        return 0;
    }
    std::thread::sleep(std::time::Duration::from_micros(50));
    1
}

/// What `Conn::wal_checkpoint` may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checkpoint {
    /// Copy what it can without waiting for anyone.
    Passive,
    /// Take the write lock, copy everything, and wait until no reader uses the WAL, so the
    /// next commit writes the WAL from its start again.
    Restart,
}

/// Hasher for statement-cache keys: they are addresses, already well spread; one multiply
/// is enough and much cheaper than SipHash.
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The statement cache: key (sql address, sql length) → slot; a busy flag per slot so a
/// statement already borrowed (a query nested inside a loop over the same query) gets a
/// fresh, uncached statement instead of having its cursor reset under it.
pub(crate) struct Cache {
    map: HashMap<(usize, usize), usize, BuildHasherDefault<AddrHasher>>,
    pub(crate) stmts: Vec<*mut ffi::sqlite3_stmt>,
    pub(crate) busy: Vec<bool>,
}

/// An open SQLite connection. Closed (and its statements finalized) on drop.
pub struct Conn {
    pub(crate) db: *mut ffi::sqlite3,
    pub(crate) cache: RefCell<Cache>,
    mode: Mode,
    /// Set by `begin_lazily`: the next statement prepared opens a read transaction first.
    lazy_begin: std::cell::Cell<bool>,
    /// Region 0 of the wal-index as SQLite mapped it, found by `wal_index_words` on first use
    /// (null until then): SQLite keeps that mapping for as long as the connection has its WAL
    /// open, which for a WAL connection is until it closes.
    shm: std::cell::Cell<*const u32>,
    /// Work kept by `defer` for the end of the transaction, on a connection that defers (the
    /// writer's); `None` on the others, where `defer` runs the work at once.
    deferred: RefCell<Option<Vec<Deferred>>>,
}

/// Work `Conn::defer` keeps for the end of the transaction.
pub type Deferred = Box<dyn FnOnce(&Conn) -> Result<()> + Send>;

// SAFETY: the handle is opened in multi-thread mode (SQLITE_OPEN_NOMUTEX, library built
// with SQLITE_THREADSAFE=1): a connection may move between threads as long as only one
// uses it at a time. `Conn` is not `Sync` and `Stmt` borrows it, so that holds.
unsafe impl Send for Conn {}

/// The size of a wal-index region (SQLite's WALINDEX_PGSZ).
const WAL_INDEX_REGION: c_int = 32 * 1024;

impl Conn {
    /// Opens `path` in `mode` and applies the connection pragmas (WAL, synchronous=NORMAL,
    /// foreign_keys=ON, busy timeout, temp_store=MEMORY, small cache; mmap for reading only).
    /// ReadOnly fails if the file does not exist.
    pub fn open(path: &str, mode: Mode) -> Result<Conn> {
        configure_library();
        let cpath = CString::new(path)
            .map_err(|_| Error::new(ffi::SQLITE_MISUSE, "database path contains NUL"))?;
        let mut flags = ffi::SQLITE_OPEN_NOMUTEX | ffi::SQLITE_OPEN_EXRESCODE;
        flags |= match mode {
            Mode::ReadWrite => ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
            Mode::ReadOnly => ffi::SQLITE_OPEN_READONLY,
        };
        // Read connections keep their mapping of the file across commits (db::keep_map).
        let vfs = match mode {
            Mode::ReadOnly => super::keep_map::name().map_or(ptr::null(), CStr::as_ptr),
            Mode::ReadWrite => ptr::null(),
        };
        let mut db: *mut ffi::sqlite3 = ptr::null_mut();
        // SAFETY: cpath is NUL-terminated and outlives the call; db is a valid out-pointer;
        // vfs is NULL (the default) or the name of a registered VFS, static.
        let rc = unsafe { ffi::sqlite3_open_v2(cpath.as_ptr(), &mut db, flags, vfs) };
        if rc != ffi::SQLITE_OK {
            let err = if db.is_null() {
                Error::new(rc, "cannot allocate a connection")
            } else {
                error_from(db, rc)
            };
            // SAFETY: sqlite3_close accepts NULL and a handle from a failed open (no statements yet).
            unsafe { ffi::sqlite3_close(db) };
            return Err(Error::new(err.code, format!("{} ({})", err.message, path)));
        }
        let conn = Conn {
            db,
            cache: RefCell::new(Cache {
                map: HashMap::default(),
                stmts: Vec::new(),
                busy: Vec::new(),
            }),
            mode,
            lazy_begin: std::cell::Cell::new(false),
            shm: std::cell::Cell::new(ptr::null()),
            deferred: RefCell::new(None),
        };
        // SAFETY: db is an open handle owned by conn.
        unsafe { ffi::sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS) };
        // The bundled SQLite is built with STAT4, which re-prepares a statement whenever a
        // rebound parameter might change its plan: that made every cached join pay a full
        // re-prepare (5x slower). A stable plan per statement is what a cache wants.
        // SAFETY: db is open; ENABLE_QPSG takes an int and an int* (NULL allowed).
        let rc = unsafe {
            ffi::sqlite3_db_config(db, ffi::SQLITE_DBCONFIG_ENABLE_QPSG, 1 as c_int, ptr::null_mut::<c_int>())
        };
        if rc != ffi::SQLITE_OK {
            return Err(conn.error(rc));
        }
        let mmap = if mode == Mode::ReadOnly { READ_MMAP_BYTES } else { MMAP_BYTES };
        conn.exec(&format!(
            "PRAGMA cache_size = -{CACHE_KIB}; PRAGMA mmap_size = {mmap}; \
             PRAGMA temp_store = MEMORY;"
        ))?;
        match mode {
            Mode::ReadWrite => conn.exec(&format!(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; \
                 PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT};"
            ))?,
            Mode::ReadOnly => conn.exec("PRAGMA query_only = ON;")?,
        }
        Ok(conn)
    }

    /// Makes this connection wait on another's lock by retrying every 50 µs, up to `ms`, instead
    /// of SQLite's own busy timeout, whose first pause is a whole millisecond: for the
    /// checkpointer, whose wait for readers to leave the WAL also holds the writer back.
    pub fn set_busy_retry(&self, ms: c_int) {
        // SAFETY: self.db is open; the handler has the signature SQLite calls and its argument
        // is the retry limit cast to a pointer, never dereferenced.
        unsafe { ffi::sqlite3_busy_handler(self.db, Some(retry_soon), (ms as isize * 20) as *mut std::ffi::c_void) };
    }

    /// Checkpoints the main database's WAL in `mode`; returns the frames in the WAL and
    /// the frames now copied into the database (`sqlite3_wal_checkpoint_v2`). A checkpoint
    /// that could not take the locks it needs fails with BUSY after doing what it could.
    pub fn wal_checkpoint(&self, mode: Checkpoint) -> Result<(i32, i32)> {
        let mode = match mode {
            Checkpoint::Passive => ffi::SQLITE_CHECKPOINT_PASSIVE,
            Checkpoint::Restart => ffi::SQLITE_CHECKPOINT_RESTART,
        };
        let (mut log, mut done) = (0 as c_int, 0 as c_int);
        // SAFETY: self.db is open; "main" is NUL-terminated; both out-pointers are valid.
        let rc = unsafe { ffi::sqlite3_wal_checkpoint_v2(self.db, c"main".as_ptr(), mode, &mut log, &mut done) };
        if rc != ffi::SQLITE_OK {
            return Err(self.error(rc));
        }
        Ok((log, done))
    }

    /// The mode this connection was opened in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Returns the cached prepared statement for `sql` (preparing it on first use), reset
    /// and with no bindings. `sql` must be one statement. Allocation-free after the first
    /// call. If the cached statement is already borrowed, a fresh one is prepared for this
    /// use and finalized when dropped.
    pub fn prepare_cached(&self, sql: &'static str) -> Result<Stmt<'_>> {
        self.open_pending();
        let key = (sql.as_ptr() as usize, sql.len());
        let mut cache = self.cache.borrow_mut();
        if let Some(&slot) = cache.map.get(&key) {
            let raw = cache.stmts.get(slot).copied();
            if let (Some(raw), Some(busy)) = (raw, cache.busy.get_mut(slot)) {
                if !*busy {
                    *busy = true;
                    return Ok(Stmt::new(self, raw, Some(slot)));
                }
            }
            drop(cache);
            let raw = self.prepare_raw(sql, 0)?;
            return Ok(Stmt::new(self, raw, None));
        }
        let raw = self.prepare_raw(sql, ffi::SQLITE_PREPARE_PERSISTENT)?;
        let slot = cache.stmts.len();
        cache.stmts.push(raw);
        cache.busy.push(true);
        cache.map.insert(key, slot);
        Ok(Stmt::new(self, raw, Some(slot)))
    }

    /// Prepares `sql` without caching (for SQL that is not a `&'static str`; it must not
    /// contain values that came from outside: bind them). Finalized when dropped.
    pub fn prepare(&self, sql: &str) -> Result<Stmt<'_>> {
        self.open_pending();
        let raw = self.prepare_raw(sql, 0)?;
        Ok(Stmt::new(self, raw, None))
    }

    fn prepare_raw(&self, sql: &str, flags: u32) -> Result<*mut ffi::sqlite3_stmt> {
        let len = c_int::try_from(sql.len())
            .map_err(|_| Error::new(ffi::SQLITE_TOOBIG, "SQL text too long"))?;
        let mut raw: *mut ffi::sqlite3_stmt = ptr::null_mut();
        // SAFETY: sql points to len valid bytes (no NUL needed when nByte is given); raw is
        // a valid out-pointer; self.db is open.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(self.db, sql.as_ptr().cast(), len, flags, &mut raw, ptr::null_mut())
        };
        if rc != ffi::SQLITE_OK {
            return Err(self.error(rc));
        }
        if raw.is_null() {
            return Err(Error::new(ffi::SQLITE_MISUSE, "empty SQL statement"));
        }
        Ok(raw)
    }

    /// Runs one or more `;`-separated statements that return no rows we need (DDL, pragmas).
    pub fn exec(&self, sql: &str) -> Result<()> {
        self.open_pending();
        let csql = CString::new(sql).map_err(|_| Error::new(ffi::SQLITE_MISUSE, "SQL contains NUL"))?;
        let mut errmsg: *mut std::os::raw::c_char = ptr::null_mut();
        // SAFETY: csql is NUL-terminated; no callback; errmsg is a valid out-pointer.
        let rc = unsafe { ffi::sqlite3_exec(self.db, csql.as_ptr(), None, ptr::null_mut(), &mut errmsg) };
        if rc == ffi::SQLITE_OK {
            return Ok(());
        }
        let message = if errmsg.is_null() {
            self.error(rc).message
        } else {
            // SAFETY: errmsg is a NUL-terminated string allocated by SQLite; freed right after.
            let m = unsafe { CStr::from_ptr(errmsg) }.to_string_lossy().into_owned();
            // SAFETY: errmsg came from sqlite3_malloc inside sqlite3_exec.
            unsafe { ffi::sqlite3_free(errmsg.cast()) };
            m
        };
        // SAFETY: self.db is open.
        let code = unsafe { ffi::sqlite3_extended_errcode(self.db) };
        Err(Error::new(if code == ffi::SQLITE_OK { rc } else { code }, message))
    }

    /// Rows changed by the last INSERT/UPDATE/DELETE on this connection.
    pub fn changes(&self) -> i64 {
        // SAFETY: self.db is open.
        unsafe { ffi::sqlite3_changes64(self.db) }
    }

    /// Rowid of the last successful INSERT on this connection.
    pub fn last_insert_rowid(&self) -> i64 {
        // SAFETY: self.db is open.
        unsafe { ffi::sqlite3_last_insert_rowid(self.db) }
    }

    /// True when no transaction is open on this connection.
    pub fn is_autocommit(&self) -> bool {
        // SAFETY: self.db is open.
        unsafe { ffi::sqlite3_get_autocommit(self.db) != 0 }
    }

    /// `BEGIN IMMEDIATE` (what Rails uses for every transaction): takes the write lock now,
    /// so the transaction cannot fail later with BUSY on its first write.
    pub fn begin_immediate(&self) -> Result<()> {
        self.prepare_cached("BEGIN IMMEDIATE")?.run()
    }

    /// `COMMIT` the open transaction.
    pub fn commit(&self) -> Result<()> {
        self.prepare_cached("COMMIT")?.run()
    }

    /// `ROLLBACK` the open transaction; a no-op when none is open.
    pub fn rollback(&self) -> Result<()> {
        if self.is_autocommit() {
            return Ok(());
        }
        ROLLBACKS.fetch_add(1, Ordering::AcqRel);
        self.prepare_cached("ROLLBACK")?.run()
    }

    /// Runs `f` inside `BEGIN IMMEDIATE` … `COMMIT`; rolls back and returns the error if `f`
    /// or the commit fails. Must not be called inside another transaction (use `savepoint`).
    pub fn transaction<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        self.begin_immediate()?;
        match f(self).and_then(|v| self.commit().map(|()| v)) {
            Ok(v) => Ok(v),
            Err(e) => {
                // The original error is the one worth reporting; a failed rollback leaves
                // the connection in autocommit anyway (SQLite rolls back on close/next BEGIN).
                let _ = self.rollback();
                Err(e)
            }
        }
    }

    /// Runs `f` inside `SAVEPOINT sp` … `RELEASE sp`; on error rolls back to the savepoint
    /// (undoing only `f`'s changes) and returns the error. Nests (SQLite resolves a repeated
    /// name to the innermost savepoint). Outside a transaction it behaves like one
    /// (a deferred one, so prefer `transaction` at top level).
    pub fn savepoint<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        self.prepare_cached("SAVEPOINT sp")?.run()?;
        match f(self) {
            Ok(v) => {
                self.prepare_cached("RELEASE sp")?.run()?;
                Ok(v)
            }
            Err(e) => {
                // If the error already ended the whole transaction (IOERR, FULL...) the
                // savepoint is gone and these fail; the caller checks is_autocommit().
                ROLLBACKS.fetch_add(1, Ordering::AcqRel);
                if !self.is_autocommit() {
                    let _ = self.prepare_cached("ROLLBACK TO sp").and_then(|mut s| s.run());
                    let _ = self.prepare_cached("RELEASE sp").and_then(|mut s| s.run());
                }
                Err(e)
            }
        }
    }

    /// From now on `defer` keeps its work for `run_deferred` instead of running it at once.
    pub fn defer_to_commit(&self) {
        *self.deferred.borrow_mut() = Some(Vec::new());
    }

    /// Runs `f` now, or, on a connection that defers (`defer_to_commit`), keeps it for
    /// `run_deferred` at the end of the transaction. For writes whose cost falls per statement
    /// savepoint rather than per row: FTS5 writes its pending rows out as a new segment at every
    /// savepoint after them, so a group of posts each inserting its search row in its own job
    /// flushed a segment per post; deferred, the group's rows make one.
    pub fn defer(&self, f: impl FnOnce(&Conn) -> Result<()> + Send + 'static) -> Result<()> {
        if let Some(kept) = self.deferred.borrow_mut().as_mut() {
            kept.push(Box::new(f));
            return Ok(());
        }
        f(self)
    }

    /// How much deferred work is kept: a mark for `forget_deferred`.
    pub fn deferred_len(&self) -> usize {
        self.deferred.borrow().as_ref().map_or(0, Vec::len)
    }

    /// Drops the deferred work kept since `mark` (the work that kept it was rolled back).
    pub fn forget_deferred(&self, mark: usize) {
        if let Some(kept) = self.deferred.borrow_mut().as_mut() {
            kept.truncate(mark);
        }
    }

    /// Runs the deferred work in the order it was kept, and forgets it; stops at the first error.
    pub fn run_deferred(&self) -> Result<()> {
        let kept = self.deferred.borrow_mut().as_mut().map(std::mem::take).unwrap_or_default();
        for f in kept {
            f(self)?;
        }
        Ok(())
    }

    /// Runs `f` as the first work of the open transaction: on error the whole transaction is
    /// rolled back (if the error has not ended it already), which undoes `f` alone, as
    /// `savepoint` would without its cost: inside a savepoint SQLite copies every page `f` first
    /// writes into the sub-journal (a post writes ten or so: ~70k instructions).
    pub fn first_in_transaction<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        let r = f(self);
        if r.is_err() {
            if self.is_autocommit() {
                // SQLite already rolled back; caches keyed on `rollbacks()` must still hear of it.
                ROLLBACKS.fetch_add(1, Ordering::AcqRel);
            } else {
                let _ = self.rollback();
            }
        }
        r
    }

    /// Runs `f` inside one read transaction (`BEGIN` … `COMMIT`): every statement of `f` sees
    /// the same snapshot, and the WAL read lock is taken once instead of once per statement
    /// (the main cost of a small query). Use it around a request's reads. Inside an open
    /// transaction it simply runs `f`. Keep it short: a snapshot holds back checkpoints.
    pub fn snapshot<T>(&self, f: impl FnOnce(&Conn) -> Result<T>) -> Result<T> {
        self.open_pending();
        if !self.is_autocommit() {
            return f(self);
        }
        self.prepare_cached("BEGIN")?.run()?;
        let r = f(self);
        // Ending a read transaction cannot lose anything; its error (rare) is reported only
        // when f itself succeeded.
        let end = self.prepare_cached("COMMIT").and_then(|mut s| s.run());
        match (r, end) {
            (Ok(v), Ok(())) => Ok(v),
            (Ok(_), Err(e)) => {
                let _ = self.rollback();
                Err(e)
            }
            (Err(e), _) => {
                let _ = self.rollback();
                Err(e)
            }
        }
    }

    /// A read transaction (`BEGIN` … `end_lazy`) for everything this connection runs until
    /// `end_lazy`, opened only when the first statement is prepared: one snapshot and one WAL
    /// read lock for all of a request's queries, as `snapshot` gives, and nothing at all
    /// (not even the BEGIN) for a request that runs none, such as a response-cache hit.
    /// For loop connections (reads); not to be mixed with `transaction`/`savepoint`.
    pub fn begin_lazily(&self) {
        self.lazy_begin.set(self.is_autocommit());
    }

    /// Ends what `begin_lazily` started: commits the read transaction if a statement opened
    /// one, and forgets the pending BEGIN otherwise.
    pub fn end_lazy(&self) -> Result<()> {
        self.lazy_begin.set(false);
        if self.is_autocommit() {
            return Ok(());
        }
        self.prepare_cached("COMMIT")?.run()
    }

    /// Runs the BEGIN `begin_lazily` deferred, if it is still pending. Failing to begin only
    /// loses the shared snapshot: each statement then runs in its own transaction, as SQLite
    /// does by default, so the error is not passed on.
    fn open_pending(&self) {
        if self.lazy_begin.replace(false) {
            let _ = self.prepare_cached("BEGIN").and_then(|mut s| s.run());
        }
    }

    /// Fills each `(first word, words)` span of `spans`, in order and with an acquire fence
    /// between spans, from this connection's wal-index (the `-shm` file of a WAL database), read
    /// through SQLite's own shared mapping of it, with no system call. False when the database
    /// is not a file or its wal-index is not mapped. Only for WAL databases (ours always are):
    /// on another one SQLite would open a `-shm` file for it.
    ///
    /// Why SQLite's mapping and not one of our own: opening the `-shm` file ourselves and closing
    /// that descriptor would drop every POSIX lock this process holds on the file (fcntl locks
    /// belong to the process and go with any close), SQLite's "a connection is using this
    /// wal-index" lock among them; the next process to open the database would then take itself
    /// for the first, truncate the `-shm` and rebuild it under our connections (and a mapping of
    /// the truncated file raises SIGBUS).
    pub fn wal_index_words(&self, spans: &mut [(usize, &mut [u32])]) -> bool {
        if spans.iter().any(|(first, out)| (first + out.len()) * 4 > WAL_INDEX_REGION as usize) {
            return false;
        }
        let words = match self.shm.get() {
            p if !p.is_null() => p,
            _ => match self.map_wal_index() {
                Some(p) => {
                    self.shm.set(p);
                    p
                }
                None => return false,
            },
        };
        for (n, (first, out)) in spans.iter_mut().enumerate() {
            if n > 0 {
                std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            }
            for (i, w) in out.iter_mut().enumerate() {
                // SAFETY: in bounds ((first + len) * 4 <= WAL_INDEX_REGION, checked above) of a
                // page-aligned mapping that lives as long as this connection (`map_wal_index`),
                // so aligned and valid; volatile because other processes write this memory
                // (SQLite's own lock-free header readers read it the same way, relying on its
                // two copies).
                *w = unsafe { ptr::read_volatile(words.add(*first + i)) };
            }
        }
        true
    }

    /// SQLite's mapping of the first wal-index region, or `None` when the database is not a
    /// file or no read has mapped it yet. Asked once per connection: the lookup (a file-control
    /// call and `xShmMap`, each behind a mutex) cost more than the rest of a cached hit's
    /// database work together.
    fn map_wal_index(&self) -> Option<*const u32> {
        let mut file: *mut ffi::sqlite3_file = ptr::null_mut();
        // SAFETY: the handle is open; FILE_POINTER writes the main database's sqlite3_file
        // pointer (owned by SQLite, valid while the connection is open) into `file`.
        let rc = unsafe {
            ffi::sqlite3_file_control(
                self.db,
                c"main".as_ptr(),
                ffi::SQLITE_FCNTL_FILE_POINTER,
                &mut file as *mut *mut ffi::sqlite3_file as *mut std::ffi::c_void,
            )
        };
        if rc != ffi::SQLITE_OK || file.is_null() {
            return None;
        }
        // SAFETY: `file` is SQLite's live file object; pMethods is its method table, or NULL
        // when no file is open (an in-memory or temporary database).
        let methods = unsafe { (*file).pMethods };
        if methods.is_null() {
            return None;
        }
        // SAFETY: a non-null method table of SQLite's; xShmMap exists from iVersion 2 on.
        let shm_map = (unsafe { ((*methods).iVersion >= 2).then_some((*methods).xShmMap) }).flatten()?;
        let mut region: *mut std::ffi::c_void = ptr::null_mut();
        // SAFETY: region 0 of WAL_INDEX_REGION bytes, bExtend = 0 (never grows or creates
        // anything): SQLite returns the mapping it already holds for this connection (the WAL
        // layer maps the same region for every read), or NULL when there is none yet. The unix
        // VFS unmaps regions only when the last connection of the process using this `-shm`
        // closes its WAL, and a WAL connection closes its WAL only when it closes or leaves WAL
        // mode, which needs an exclusive lock that its own shared lock (held while it is open in
        // WAL mode) rules out for everyone else; we never change the journal mode of an open
        // connection. So the pointer stays valid for this connection's life.
        let rc = unsafe { shm_map(file, 0, WAL_INDEX_REGION, 0, &mut region) };
        (rc == ffi::SQLITE_OK && !region.is_null()).then_some(region as *const u32)
    }

    /// The path of the main database file, as SQLite resolved it (absolute); `None` for an
    /// in-memory or temporary database.
    pub fn filename(&self) -> Option<std::path::PathBuf> {
        // SAFETY: the handle is open; "main" is NUL-terminated; SQLite returns NULL or a
        // NUL-terminated string that lives as long as the connection, copied out at once.
        let p = unsafe { ffi::sqlite3_db_filename(self.db, c"main".as_ptr()) };
        if p.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated (see above).
        let name = unsafe { CStr::from_ptr(p) }.to_str().ok()?;
        (!name.is_empty()).then(|| std::path::PathBuf::from(name))
    }

    /// `PRAGMA data_version`: changes whenever another connection (our writer or another
    /// process) commits to the database this connection reads.
    pub fn data_version(&self) -> Result<i64> {
        let mut s = self.prepare_cached("PRAGMA data_version")?;
        if s.row()? {
            Ok(s.int(0))
        } else {
            Err(Error::new(ffi::SQLITE_ERROR, "PRAGMA data_version returned no row"))
        }
    }

    /// The current error of this connection as an `Error`, given the code a call returned.
    pub(crate) fn error(&self, rc: c_int) -> Error {
        error_from(self.db, rc)
    }
}

/// Process-wide SQLite settings, applied once before the library initializes: no memory
/// statistics, which otherwise take a global mutex on every SQLite allocation in every
/// thread (we never read them). Then the library is initialized here, explicitly: it is
/// built with `SQLITE_OMIT_AUTOINIT` (.cargo/config.toml), because the automatic check
/// each allocation makes ends in a memory barrier, and the in-memory savepoint journal
/// allocates for every page a post changes (1.5% of a post's CPU at 16 clients).
pub(super) fn configure_library() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config must run before sqlite3_initialize and not concurrently
        // with other SQLite calls; Once runs it before this process's first open. If SQLite
        // was already initialized it returns SQLITE_MISUSE and changes nothing.
        let _ = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int) };
        // SAFETY: called once, before any other use of the library in this process.
        let rc = unsafe { ffi::sqlite3_initialize() };
        // Without it every open fails (and says so); nothing else can be done here.
        if rc != ffi::SQLITE_OK {
            eprintln!("db: sqlite3_initialize failed ({rc})");
        }
    });
}

fn error_from(db: *mut ffi::sqlite3, rc: c_int) -> Error {
    // SAFETY: db is an open (possibly failed-open) handle; errmsg returns a NUL-terminated
    // string owned by SQLite, copied before any other call on db.
    let (code, message) = unsafe {
        let code = ffi::sqlite3_extended_errcode(db);
        let msg = ffi::sqlite3_errmsg(db);
        let message = if msg.is_null() {
            String::new()
        } else {
            CStr::from_ptr(msg).to_string_lossy().into_owned()
        };
        (code, message)
    };
    // The connection's errcode can lag behind for codes returned directly (e.g. MISUSE).
    let code = if code == ffi::SQLITE_OK || (code & 0xff) != (rc & 0xff) { rc } else { code };
    Error::new(code, message)
}

impl Drop for Conn {
    fn drop(&mut self) {
        let cache = self.cache.get_mut();
        for &raw in &cache.stmts {
            // SAFETY: every cached statement belongs to self.db and no Stmt borrows self
            // any more (Stmt holds &Conn), so finalizing cannot race a user.
            unsafe { ffi::sqlite3_finalize(raw) };
        }
        cache.stmts.clear();
        // SAFETY: every statement of db is finalized (cached ones above; one-off ones by their
        // Stmt, which cannot outlive self), so close succeeds and releases the handle.
        unsafe { ffi::sqlite3_close(self.db) };
    }
}
