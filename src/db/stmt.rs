//! `Stmt`: a borrowed prepared statement with typed `bind` and `column` accessors.
//!
//! The lifetime `'a` covers both the connection and every value bound: text and blobs are
//! bound with `SQLITE_STATIC` (no copy, no allocation), which is sound because a bound
//! value must outlive the `Stmt`, and the `Stmt` clears its bindings and resets itself
//! when dropped. Column text and blobs borrow the `Stmt` and so cannot outlive the
//! current row: `step` takes `&mut self`.

use super::conn::Conn;
use super::error::{Error, Result};
use libsqlite3_sys as ffi;
use std::marker::PhantomData;
use std::os::raw::c_int;

/// What one `step` produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A row is current; read it with the column accessors.
    Row,
    /// The statement has finished.
    Done,
}

/// A prepared statement borrowed from a `Conn` (cached or one-off).
pub struct Stmt<'a> {
    conn: &'a Conn,
    raw: *mut ffi::sqlite3_stmt,
    slot: Option<usize>,
    columns: c_int,
    _values: PhantomData<&'a [u8]>,
}

/// A value that can be bound to a statement parameter.
pub trait Bind<'a> {
    /// Binds `self` to parameter `idx` (1-based) of `stmt`.
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()>;
}

/// SQL NULL, for binding.
#[derive(Clone, Copy, Debug)]
pub struct Null;

impl<'a> Stmt<'a> {
    pub(crate) fn new(conn: &'a Conn, raw: *mut ffi::sqlite3_stmt, slot: Option<usize>) -> Stmt<'a> {
        // SAFETY: raw is a valid prepared statement of conn.
        let columns = unsafe { ffi::sqlite3_column_count(raw) };
        Stmt { conn, raw, slot, columns, _values: PhantomData }
    }

    /// Binds `value` to parameter `idx` (1-based, as in `?1`).
    pub fn bind<V: Bind<'a>>(&mut self, idx: c_int, value: V) -> Result<()> {
        value.bind_to(self, idx)
    }

    fn check(&self, rc: c_int) -> Result<()> {
        if rc == ffi::SQLITE_OK {
            Ok(())
        } else {
            Err(self.conn.error(rc))
        }
    }

    /// Advances to the next row. After `Done` (or an error) the statement is reset, so the
    /// same `Stmt` can be stepped again from the start with the same bindings.
    pub fn step(&mut self) -> Result<Step> {
        // SAFETY: raw is valid; bound values outlive self ('a).
        let rc = unsafe { ffi::sqlite3_step(self.raw) };
        match rc {
            ffi::SQLITE_ROW => Ok(Step::Row),
            ffi::SQLITE_DONE => {
                // SAFETY: raw is valid. Resetting releases the read snapshot promptly.
                unsafe { ffi::sqlite3_reset(self.raw) };
                Ok(Step::Done)
            }
            _ => {
                let err = self.conn.error(rc);
                // SAFETY: raw is valid.
                unsafe { ffi::sqlite3_reset(self.raw) };
                Err(err)
            }
        }
    }

    /// Steps to completion, ignoring rows (INSERT/UPDATE/DELETE/DDL).
    pub fn run(&mut self) -> Result<()> {
        while self.step()? == Step::Row {}
        Ok(())
    }

    /// Steps once and reports whether a row is current (for single-row lookups).
    pub fn row(&mut self) -> Result<bool> {
        Ok(self.step()? == Step::Row)
    }

    /// Number of result columns.
    pub fn column_count(&self) -> usize {
        self.columns as usize
    }

    fn col(&self, i: usize) -> Option<c_int> {
        let i = c_int::try_from(i).ok()?;
        if i < self.columns {
            Some(i)
        } else {
            None
        }
    }

    /// True when column `i` of the current row is NULL (or out of range).
    pub fn is_null(&self, i: usize) -> bool {
        match self.col(i) {
            // SAFETY: raw is valid and i is in range.
            Some(i) => unsafe { ffi::sqlite3_column_type(self.raw, i) == ffi::SQLITE_NULL },
            None => true,
        }
    }

    /// Column `i` as an integer (NULL → 0, as SQLite converts).
    pub fn int(&self, i: usize) -> i64 {
        match self.col(i) {
            // SAFETY: raw is valid and i is in range.
            Some(i) => unsafe { ffi::sqlite3_column_int64(self.raw, i) },
            None => 0,
        }
    }

    /// Column `i` as an integer, `None` when NULL.
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        if self.is_null(i) {
            None
        } else {
            Some(self.int(i))
        }
    }

    /// Column `i` as a float (NULL → 0.0).
    pub fn float(&self, i: usize) -> f64 {
        match self.col(i) {
            // SAFETY: raw is valid and i is in range.
            Some(i) => unsafe { ffi::sqlite3_column_double(self.raw, i) },
            None => 0.0,
        }
    }

    /// Column `i` as bytes, borrowed until the next `step` (NULL → empty).
    pub fn bytes(&self, i: usize) -> &[u8] {
        let Some(i) = self.col(i) else { return &[] };
        // SAFETY: raw is valid, i in range. column_text must be called before
        // column_bytes (so the length is of the text form); the pointer stays valid until
        // the next step/reset/finalize, all of which need &mut self or drop.
        unsafe {
            let p = ffi::sqlite3_column_text(self.raw, i);
            let n = ffi::sqlite3_column_bytes(self.raw, i);
            if p.is_null() || n <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(p, n as usize)
            }
        }
    }

    /// Column `i` as a blob, borrowed until the next `step` (NULL → empty).
    pub fn blob(&self, i: usize) -> &[u8] {
        let Some(i) = self.col(i) else { return &[] };
        // SAFETY: as in `bytes`, with the blob accessor first.
        unsafe {
            let p = ffi::sqlite3_column_blob(self.raw, i);
            let n = ffi::sqlite3_column_bytes(self.raw, i);
            if p.is_null() || n <= 0 {
                &[]
            } else {
                std::slice::from_raw_parts(p.cast::<u8>(), n as usize)
            }
        }
    }

    /// Column `i` as UTF-8 text, borrowed until the next `step` (NULL → ""). Text that is
    /// not valid UTF-8 (another process may have written it) is an error, not a panic.
    pub fn text(&self, i: usize) -> Result<&str> {
        std::str::from_utf8(self.bytes(i))
            .map_err(|_| Error::new(ffi::SQLITE_MISMATCH, format!("column {i} is not valid UTF-8")))
    }

    /// Column `i` as text, `None` when NULL.
    pub fn opt_text(&self, i: usize) -> Result<Option<&str>> {
        if self.is_null(i) {
            Ok(None)
        } else {
            self.text(i).map(Some)
        }
    }

    /// Column `i` as a Rails timestamp (spec/01 §1.1), in µs since the epoch. NULL or text
    /// that is not a timestamp is an error.
    pub fn time(&self, i: usize) -> Result<i64> {
        super::time::parse_bytes(self.bytes(i))
            .ok_or_else(|| Error::new(ffi::SQLITE_MISMATCH, format!("column {i} is not a timestamp")))
    }

    /// Column `i` as a timestamp in µs, `None` when NULL.
    pub fn opt_time(&self, i: usize) -> Result<Option<i64>> {
        if self.is_null(i) {
            Ok(None)
        } else {
            self.time(i).map(Some)
        }
    }

    /// Column `i` as an owned `String` (NULL → "").
    pub fn string(&self, i: usize) -> Result<String> {
        self.text(i).map(str::to_owned)
    }

    /// Column `i` as an owned `String`, `None` when NULL.
    pub fn opt_string(&self, i: usize) -> Result<Option<String>> {
        Ok(self.opt_text(i)?.map(str::to_owned))
    }
}

impl Drop for Stmt<'_> {
    fn drop(&mut self) {
        match self.slot {
            Some(slot) => {
                // SAFETY: raw is a cached statement of conn; after reset and
                // clear_bindings it no longer refers to any bound value.
                unsafe {
                    ffi::sqlite3_reset(self.raw);
                    ffi::sqlite3_clear_bindings(self.raw);
                }
                if let Ok(mut cache) = self.conn.cache.try_borrow_mut() {
                    if let Some(b) = cache.busy.get_mut(slot) {
                        *b = false;
                    }
                }
            }
            // SAFETY: a one-off statement owned by this Stmt only.
            None => unsafe {
                ffi::sqlite3_finalize(self.raw);
            },
        }
    }
}

impl<'a> Bind<'a> for i64 {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        // SAFETY: raw is valid.
        stmt.check(unsafe { ffi::sqlite3_bind_int64(stmt.raw, idx, self) })
    }
}

impl<'a> Bind<'a> for i32 {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        (self as i64).bind_to(stmt, idx)
    }
}

impl<'a> Bind<'a> for bool {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        (self as i64).bind_to(stmt, idx)
    }
}

impl<'a> Bind<'a> for f64 {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        // SAFETY: raw is valid.
        stmt.check(unsafe { ffi::sqlite3_bind_double(stmt.raw, idx, self) })
    }
}

impl<'a> Bind<'a> for &'a str {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        // SAFETY: raw is valid; self lives for 'a, which outlives the Stmt, and the binding
        // is cleared on drop, so SQLITE_STATIC (no copy) never dangles.
        stmt.check(unsafe {
            ffi::sqlite3_bind_text64(
                stmt.raw,
                idx,
                self.as_ptr().cast(),
                self.len() as u64,
                ffi::SQLITE_STATIC(),
                ffi::SQLITE_UTF8 as u8,
            )
        })
    }
}

impl<'a> Bind<'a> for &'a String {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        self.as_str().bind_to(stmt, idx)
    }
}

impl<'a> Bind<'a> for &'a [u8] {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        // SAFETY: as for &str.
        stmt.check(unsafe {
            ffi::sqlite3_bind_blob64(stmt.raw, idx, self.as_ptr().cast(), self.len() as u64, ffi::SQLITE_STATIC())
        })
    }
}

impl<'a> Bind<'a> for Null {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        // SAFETY: raw is valid.
        stmt.check(unsafe { ffi::sqlite3_bind_null(stmt.raw, idx) })
    }
}

impl<'a, T: Bind<'a>> Bind<'a> for Option<T> {
    fn bind_to(self, stmt: &mut Stmt<'a>, idx: c_int) -> Result<()> {
        match self {
            Some(v) => v.bind_to(stmt, idx),
            None => Null.bind_to(stmt, idx),
        }
    }
}
