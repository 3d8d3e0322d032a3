//! `db::Error`: an SQLite failure as a value (result code + message), never a panic.
//!
//! Every fallible function in `src/db/` returns `db::Result<T>`. The code is SQLite's
//! extended result code (connections are opened with `SQLITE_OPEN_EXRESCODE`), so callers
//! can tell a constraint violation from a busy database from a disk error.

use libsqlite3_sys as ffi;
use std::fmt;

/// An SQLite error: the extended result code and the message SQLite gave with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: i32,
    pub message: String,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with our own message (used for misuse detected on our side, e.g. bad UTF-8).
    pub fn new(code: i32, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// The primary result code (extended code with the high bits stripped).
    pub fn primary(&self) -> i32 {
        self.code & 0xff
    }

    /// SQLITE_BUSY or SQLITE_LOCKED: another connection holds the lock; retrying may succeed.
    pub fn is_busy(&self) -> bool {
        matches!(self.primary(), ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED)
    }

    /// SQLITE_FULL: the disk (or the file system holding the database) is full; the write
    /// may succeed once space returns.
    pub fn is_full(&self) -> bool {
        self.primary() == ffi::SQLITE_FULL
    }

    /// A UNIQUE / NOT NULL / FOREIGN KEY / CHECK violation.
    pub fn is_constraint(&self) -> bool {
        self.primary() == ffi::SQLITE_CONSTRAINT
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sqlite error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}
