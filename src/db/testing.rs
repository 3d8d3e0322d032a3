//! Test helpers: a throw-away database file (with its -wal/-shm) removed on drop.

use super::conn::{Conn, Mode};
use super::schema;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

pub struct TempDb {
    pub path: String,
}

impl TempDb {
    /// A path in the temp dir unique to this process and call; no file yet.
    pub fn new() -> TempDb {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir();
        let path = dir.join(format!("campfire-db-test-{}-{}.sqlite3", std::process::id(), n));
        let t = TempDb { path: path.to_string_lossy().into_owned() };
        t.remove();
        t
    }

    /// A fresh database with the full schema, and a read-write connection to it.
    pub fn with_schema() -> (TempDb, Conn) {
        let t = TempDb::new();
        let c = t.open(Mode::ReadWrite);
        schema::ensure(&c).expect("schema");
        (t, c)
    }

    pub fn open(&self, mode: Mode) -> Conn {
        Conn::open(&self.path, mode).expect("open test db")
    }

    fn remove(&self) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(format!("{}{}", self.path, suffix));
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        self.remove();
    }
}

/// 2025-12-12 15:43:40 UTC: the clock of the model tests.
pub const T0: i64 = 1_765_554_220_000_000;
/// One second in µs.
pub const SEC: i64 = 1_000_000;

/// Creates an active member named `name` (e-mail `<name>@example.com`); returns the id.
pub fn user(c: &Conn, name: &str) -> i64 {
    let email = format!("{}@example.com", name.to_lowercase());
    super::users::create(
        c,
        &super::users::NewUser { name, email_address: Some(&email), password_digest: Some("$2a$12$x"), ..Default::default() },
        T0,
    )
    .expect("create user")
}

/// Runs a single-value query (test assertions).
pub fn one_int(c: &Conn, sql: &str) -> i64 {
    let mut s = c.prepare(sql).expect("prepare");
    assert!(s.row().expect("step"), "no row: {sql}");
    s.int(0)
}

/// Runs a single-text query (test assertions); NULL → None.
pub fn one_text(c: &Conn, sql: &str) -> Option<String> {
    let mut s = c.prepare(sql).expect("prepare");
    assert!(s.row().expect("step"), "no row: {sql}");
    s.opt_string(0).expect("text")
}
