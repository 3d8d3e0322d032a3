//! A small safe wrapper over libsqlite3-sys for the benchmark kit: open a file, run SQL text,
//! prepare statements, bind, step and read columns. The only `unsafe` of the bench crate lives here.

use libsqlite3_sys as ffi;
use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr;

/// One SQLite connection. Closed on drop.
pub struct Conn {
    db: *mut ffi::sqlite3,
}

/// A prepared statement borrowed from its connection. Finalized on drop.
pub struct Stmt<'c> {
    st: *mut ffi::sqlite3_stmt,
    conn: &'c Conn,
}

/// A value bound to a statement parameter.
pub enum Val<'a> {
    Null,
    Int(i64),
    Text(&'a str),
}

impl Conn {
    /// Opens (creating when `create`) the database at `path`; read-only when `!create && readonly`.
    pub fn open(path: &str, create: bool, readonly: bool) -> Result<Conn, String> {
        let c = CString::new(path).map_err(|_| format!("bad path {path:?}"))?;
        let flags = if readonly {
            ffi::SQLITE_OPEN_READONLY
        } else if create {
            ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE
        } else {
            ffi::SQLITE_OPEN_READWRITE
        };
        let mut db = ptr::null_mut();
        // SAFETY: the library is built without automatic initialization (.cargo/config.toml);
        // sqlite3_initialize is thread-safe and does nothing after its first success.
        if unsafe { ffi::sqlite3_initialize() } != ffi::SQLITE_OK {
            return Err("sqlite3_initialize failed".to_owned());
        }
        // SAFETY: `c` is a valid NUL-terminated string and `db` a valid out-pointer.
        let rc = unsafe { ffi::sqlite3_open_v2(c.as_ptr(), &mut db, flags, ptr::null()) };
        let conn = Conn { db };
        if rc != ffi::SQLITE_OK {
            return Err(format!("open {path}: {}", conn.errmsg()));
        }
        // SAFETY: `db` is an open connection.
        unsafe { ffi::sqlite3_busy_timeout(db, 10_000) };
        Ok(conn)
    }

    fn errmsg(&self) -> String {
        if self.db.is_null() {
            return "out of memory".into();
        }
        // SAFETY: `db` is a connection handle; sqlite3_errmsg returns a NUL-terminated string it owns.
        unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.db)) }.to_string_lossy().into_owned()
    }

    /// Runs one or more SQL statements that return no rows we care about.
    pub fn exec(&self, sql: &str) -> Result<(), String> {
        let c = CString::new(sql).map_err(|_| "NUL in SQL".to_string())?;
        // SAFETY: `db` is open, `c` NUL-terminated; no callback, so no user data.
        let rc = unsafe { ffi::sqlite3_exec(self.db, c.as_ptr(), None, ptr::null_mut(), ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("{}: {}", self.errmsg(), first_line(sql)));
        }
        Ok(())
    }

    /// Prepares one statement.
    pub fn prepare(&self, sql: &str) -> Result<Stmt<'_>, String> {
        let mut st = ptr::null_mut();
        let len = c_int::try_from(sql.len()).map_err(|_| "SQL too long".to_string())?;
        // SAFETY: the pointer/length pair describes `sql`, which outlives the call; `st` is an out-pointer.
        let rc = unsafe { ffi::sqlite3_prepare_v2(self.db, sql.as_ptr().cast(), len, &mut st, ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            return Err(format!("{}: {}", self.errmsg(), first_line(sql)));
        }
        Ok(Stmt { st, conn: self })
    }

    /// Runs a statement with parameters, discarding rows; returns the last insert rowid.
    pub fn run(&self, sql: &str, params: &[Val]) -> Result<i64, String> {
        let mut st = self.prepare(sql)?;
        st.bind_all(params)?;
        while st.step()? {}
        // SAFETY: `db` is open.
        Ok(unsafe { ffi::sqlite3_last_insert_rowid(self.db) })
    }

    /// The rowid of the last INSERT on this connection.
    pub fn last_insert_rowid(&self) -> i64 {
        // SAFETY: `db` is open.
        unsafe { ffi::sqlite3_last_insert_rowid(self.db) }
    }

    /// Returns the first column of the first row as an integer (0 when no row).
    pub fn int(&self, sql: &str, params: &[Val]) -> Result<i64, String> {
        let mut st = self.prepare(sql)?;
        st.bind_all(params)?;
        Ok(if st.step()? { st.int(0) } else { 0 })
    }

    /// Returns the first column of the first row as text, if there is a row.
    pub fn text(&self, sql: &str, params: &[Val]) -> Result<Option<String>, String> {
        let mut st = self.prepare(sql)?;
        st.bind_all(params)?;
        Ok(if st.step()? { Some(st.text(0)) } else { None })
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        // SAFETY: statements borrow the connection, so all are finalized before it is closed.
        unsafe { ffi::sqlite3_close(self.db) };
    }
}

impl Stmt<'_> {
    /// Binds parameters 1..=n in order.
    pub fn bind_all(&mut self, params: &[Val]) -> Result<(), String> {
        for (i, p) in params.iter().enumerate() {
            let idx = c_int::try_from(i + 1).map_err(|_| "too many parameters".to_string())?;
            // SAFETY: `st` is a live statement; text is copied by SQLite (SQLITE_TRANSIENT).
            let rc = unsafe {
                match p {
                    Val::Null => ffi::sqlite3_bind_null(self.st, idx),
                    Val::Int(v) => ffi::sqlite3_bind_int64(self.st, idx, *v),
                    Val::Text(s) => ffi::sqlite3_bind_text64(
                        self.st,
                        idx,
                        s.as_ptr().cast(),
                        s.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                }
            };
            if rc != ffi::SQLITE_OK {
                return Err(format!("bind {idx}: {}", self.conn.errmsg()));
            }
        }
        Ok(())
    }

    /// Advances; true when a row is available.
    pub fn step(&mut self) -> Result<bool, String> {
        // SAFETY: `st` is a live statement.
        match unsafe { ffi::sqlite3_step(self.st) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            _ => Err(self.conn.errmsg()),
        }
    }

    /// Column `i` of the current row as an integer.
    pub fn int(&self, i: c_int) -> i64 {
        // SAFETY: `st` is live and positioned on a row; out-of-range columns yield 0.
        unsafe { ffi::sqlite3_column_int64(self.st, i) }
    }

    /// Column `i` of the current row as text (empty for NULL).
    pub fn text(&self, i: c_int) -> String {
        // SAFETY: `st` is on a row; the pointer/length pair stays valid until the next step,
        // and we copy it out at once.
        unsafe {
            let p = ffi::sqlite3_column_text(self.st, i);
            if p.is_null() {
                return String::new();
            }
            let n = ffi::sqlite3_column_bytes(self.st, i);
            let bytes = std::slice::from_raw_parts(p, usize::try_from(n).unwrap_or(0));
            String::from_utf8_lossy(bytes).into_owned()
        }
    }

    /// Rewinds the statement and clears its bindings so it can run again.
    pub fn reset(&mut self) {
        // SAFETY: `st` is a live statement.
        unsafe {
            ffi::sqlite3_reset(self.st);
            ffi::sqlite3_clear_bindings(self.st);
        }
    }
}

impl Drop for Stmt<'_> {
    fn drop(&mut self) {
        // SAFETY: `st` was returned by prepare and is finalized exactly once.
        unsafe { ffi::sqlite3_finalize(self.st) };
    }
}

fn first_line(sql: &str) -> &str {
    sql.trim().lines().next().unwrap_or("")
}
