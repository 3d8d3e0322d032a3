//! Tests of the connection wrapper: binding, columns, the statement cache, errors,
//! transactions and savepoints, read-only connections.

use super::testing::TempDb;
use super::{Mode, Null, Step};

const CREATE: &str = "CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, f REAL, s TEXT, b BLOB, u TEXT UNIQUE)";
const INSERT: &str = "INSERT INTO t (i, f, s, b, u) VALUES (?1, ?2, ?3, ?4, ?5)";
const SELECT: &str = "SELECT i, f, s, b, u FROM t WHERE id = ?1";

#[test]
fn binds_and_reads_every_type() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    c.exec(CREATE).unwrap();
    let owned = String::from("héllo");
    {
        let mut s = c.prepare_cached(INSERT).unwrap();
        s.bind(1, 42i64).unwrap();
        s.bind(2, 1.5f64).unwrap();
        s.bind(3, owned.as_str()).unwrap();
        s.bind(4, &b"\x00\x01\xff"[..]).unwrap();
        s.bind(5, Some("x")).unwrap();
        s.run().unwrap();
    }
    let id = c.last_insert_rowid();
    assert_eq!(c.changes(), 1);
    {
        let mut s = c.prepare_cached(INSERT).unwrap();
        s.bind(1, None::<i64>).unwrap();
        s.bind(2, Null).unwrap();
        s.bind(3, None::<&str>).unwrap();
        s.bind(4, Null).unwrap();
        s.bind(5, Null).unwrap();
        s.run().unwrap();
    }
    let id2 = c.last_insert_rowid();
    let mut s = c.prepare_cached(SELECT).unwrap();
    s.bind(1, id).unwrap();
    assert_eq!(s.step().unwrap(), Step::Row);
    assert_eq!(s.int(0), 42);
    assert_eq!(s.opt_int(0), Some(42));
    assert_eq!(s.float(1), 1.5);
    assert_eq!(s.text(2).unwrap(), "héllo");
    assert_eq!(s.blob(3), b"\x00\x01\xff");
    assert_eq!(s.opt_text(4).unwrap(), Some("x"));
    assert_eq!(s.column_count(), 5);
    // Out-of-range columns read as NULL instead of misbehaving.
    assert!(s.is_null(9));
    assert_eq!(s.int(9), 0);
    assert_eq!(s.step().unwrap(), Step::Done);
    drop(s);
    let mut s = c.prepare_cached(SELECT).unwrap();
    s.bind(1, id2).unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.opt_int(0), None);
    assert!(s.is_null(1));
    assert_eq!(s.opt_text(2).unwrap(), None);
    assert_eq!(s.text(2).unwrap(), "");
    assert_eq!(s.blob(3), b"");
}

#[test]
fn cache_reuses_statements_and_resets_them_on_drop() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    c.exec(CREATE).unwrap();
    c.exec("INSERT INTO t (i) VALUES (1), (2), (3)").unwrap();
    const ALL: &str = "SELECT i FROM t ORDER BY i";
    // Stop after the first row: dropping must reset, so the next use starts over.
    for _ in 0..3 {
        let mut s = c.prepare_cached(ALL).unwrap();
        assert!(s.row().unwrap());
        assert_eq!(s.int(0), 1);
    }
    assert_eq!(c.cache.borrow().stmts.len(), 1);
    // The same SQL used while already borrowed (nested loop) gets its own statement.
    let mut outer = c.prepare_cached(ALL).unwrap();
    let mut seen = Vec::new();
    while outer.step().unwrap() == Step::Row {
        let mut inner = c.prepare_cached(ALL).unwrap();
        let mut n = 0;
        while inner.step().unwrap() == Step::Row {
            n += 1;
        }
        seen.push((outer.int(0), n));
    }
    assert_eq!(seen, vec![(1, 3), (2, 3), (3, 3)]);
    drop(outer);
    assert_eq!(c.cache.borrow().stmts.len(), 1);
    // Bindings are cleared between uses.
    const ONE: &str = "SELECT ?1 IS NULL";
    {
        let mut s = c.prepare_cached(ONE).unwrap();
        s.bind(1, 5i64).unwrap();
        assert!(s.row().unwrap());
        assert_eq!(s.int(0), 0);
    }
    let mut s = c.prepare_cached(ONE).unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.int(0), 1);
}

#[test]
fn errors_are_values() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    c.exec(CREATE).unwrap();
    let e = c.prepare("SELEC nonsense").err().expect("syntax error");
    assert_eq!(e.primary(), 1);
    assert!(e.message.contains("syntax error"), "{}", e.message);
    assert!(c.exec("CREATE TABLE t (x)").is_err());
    c.exec("INSERT INTO t (u) VALUES ('dup')").unwrap();
    let mut s = c.prepare_cached("INSERT INTO t (u) VALUES (?1)").unwrap();
    s.bind(1, "dup").unwrap();
    let e = s.run().unwrap_err();
    assert!(e.is_constraint(), "{e}");
    assert_eq!(e.code, 2067, "SQLITE_CONSTRAINT_UNIQUE, an extended code");
    // The statement is usable again after the error.
    s.bind(1, "other").unwrap();
    s.run().unwrap();
    // Parameter index out of range.
    let mut s = c.prepare_cached("SELECT ?1").unwrap();
    assert!(s.bind(7, 1i64).is_err());
    // Invalid UTF-8 stored by someone else is an error, not a panic.
    c.exec("INSERT INTO t (s) VALUES (CAST(x'ff' AS TEXT))").unwrap();
    let mut s = c.prepare_cached("SELECT s FROM t WHERE s IS NOT NULL").unwrap();
    assert!(s.row().unwrap());
    assert!(s.text(0).is_err());
    assert_eq!(s.bytes(0), b"\xff");
    // A missing read-only database is an error.
    let missing = TempDb::new();
    assert!(super::Conn::open(&missing.path, Mode::ReadOnly).is_err());
}

#[test]
fn transactions_and_savepoints() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    c.exec(CREATE).unwrap();
    let count = |c: &super::Conn| {
        let mut s = c.prepare_cached("SELECT count(*) FROM t").unwrap();
        assert!(s.row().unwrap());
        s.int(0)
    };
    let r: super::Result<()> = c.transaction(|c| {
        c.exec("INSERT INTO t (i) VALUES (1)")?;
        Err(super::Error::new(1, "nope"))
    });
    assert!(r.is_err());
    assert!(c.is_autocommit());
    assert_eq!(count(&c), 0);
    c.transaction(|c| {
        c.exec("INSERT INTO t (i) VALUES (1)")?;
        let inner: super::Result<()> = c.savepoint(|c| {
            c.exec("INSERT INTO t (i) VALUES (2)")?;
            Err(super::Error::new(1, "undo me"))
        });
        assert!(inner.is_err());
        c.savepoint(|c| c.exec("INSERT INTO t (i) VALUES (3)"))?;
        assert!(!c.is_autocommit());
        Ok(())
    })
    .unwrap();
    let mut s = c.prepare_cached("SELECT group_concat(i) FROM (SELECT i FROM t ORDER BY i)").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.text(0).unwrap(), "1,3");
}

#[test]
fn read_only_connections_cannot_write() {
    let db = TempDb::new();
    let w = db.open(Mode::ReadWrite);
    w.exec(CREATE).unwrap();
    let r = db.open(Mode::ReadOnly);
    assert_eq!(r.mode(), Mode::ReadOnly);
    let e = r.exec("INSERT INTO t (i) VALUES (1)").unwrap_err();
    assert!(e.primary() == 8 || e.message.contains("readonly") || e.message.contains("query_only"), "{e}");
    let mut s = r.prepare_cached("SELECT count(*) FROM t").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.int(0), 0);
}

#[test]
fn pragmas_are_applied() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    let one = |sql: &'static str| {
        let mut s = c.prepare_cached(sql).unwrap();
        assert!(s.row().unwrap());
        s.string(0).unwrap()
    };
    assert_eq!(one("PRAGMA journal_mode"), "wal");
    assert_eq!(one("PRAGMA synchronous"), "1");
    assert_eq!(one("PRAGMA foreign_keys"), "1");
    assert_eq!(one("PRAGMA busy_timeout"), "5000");
    assert_eq!(one("PRAGMA temp_store"), "2");
    assert_eq!(one("PRAGMA cache_size"), format!("-{}", super::conn::CACHE_KIB));
    assert_eq!(one("PRAGMA mmap_size"), super::conn::MMAP_BYTES.to_string());
    let r = db.open(Mode::ReadOnly);
    let mut s = r.prepare_cached("PRAGMA query_only").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.int(0), 1);
    drop(s);
    let mut s = r.prepare_cached("PRAGMA mmap_size").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.int(0), super::conn::READ_MMAP_BYTES, "a reader maps the file (the bundled SQLite allows that much)");
}

#[test]
fn a_lazy_read_transaction_opens_with_the_first_statement() {
    let db = TempDb::new();
    let w = db.open(Mode::ReadWrite);
    w.exec(CREATE).unwrap();
    let r = db.open(Mode::ReadOnly);
    let count = |c: &super::Conn| {
        let mut s = c.prepare_cached("SELECT count(*) FROM t").unwrap();
        assert!(s.row().unwrap());
        s.int(0)
    };
    // No statement: no transaction was ever opened.
    r.begin_lazily();
    assert!(r.is_autocommit());
    r.end_lazy().unwrap();
    assert!(r.is_autocommit());
    // The first statement opens it; a commit made afterwards is not seen until it ends.
    r.begin_lazily();
    assert_eq!(count(&r), 0);
    assert!(!r.is_autocommit());
    w.exec("INSERT INTO t (i) VALUES (1)").unwrap();
    assert_eq!(count(&r), 0, "one snapshot for the whole request");
    r.end_lazy().unwrap();
    assert!(r.is_autocommit());
    assert_eq!(count(&r), 1);
    // A pending BEGIN that never ran is forgotten: the next statement is autocommit.
    r.begin_lazily();
    r.end_lazy().unwrap();
    assert_eq!(count(&r), 1);
    assert!(r.is_autocommit());
    // snapshot() inside a lazy transaction joins it.
    r.begin_lazily();
    assert_eq!(r.snapshot(|c| Ok(count(c))).unwrap(), 1);
    assert!(!r.is_autocommit());
    r.end_lazy().unwrap();
}

#[test]
fn a_read_connection_keeps_its_mapping_while_the_file_keeps_its_size() {
    use super::keep_map::{KEPT, PASSED};
    use super::testing::one_int;
    use std::sync::atomic::Ordering::Relaxed;
    let db = TempDb::new();
    let w = db.open(Mode::ReadWrite);
    w.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT NOT NULL)").unwrap();
    w.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) INSERT INTO t (s) SELECT printf('%.2000c', 'a') FROM n").unwrap();
    w.exec("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    let r = db.open(Mode::ReadOnly);
    let total = |c: &super::Conn| one_int(c, "SELECT count(*) * 1000000 + sum(length(s)) FROM t");
    assert_eq!(total(&r), 200 * 1_000_000 + 200 * 2000);
    // Commits that only reach the WAL leave the file's size alone: after the first (whose
    // unmap goes through and notes the size), the mapping stays.
    let mut kept = 0;
    for n in 1..=10 {
        w.exec("INSERT INTO t (s) VALUES ('b')").unwrap();
        if n == 2 {
            kept = KEPT.load(Relaxed);
        }
        assert_eq!(total(&r), (200 + n) * 1_000_000 + 200 * 2000 + n, "every commit is seen");
    }
    assert!(KEPT.load(Relaxed) - kept >= 9, "nine commits, nine unmaps skipped");
    // The file grows (a checkpoint copies new pages into it): the unmap goes through, and
    // the new pages read right.
    let passed = PASSED.load(Relaxed);
    w.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) INSERT INTO t (s) SELECT printf('%.3000c', 'c') FROM n").unwrap();
    w.exec("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    assert_eq!(total(&r), 310 * 1_000_000 + 200 * 2000 + 10 + 100 * 3000);
    assert!(PASSED.load(Relaxed) > passed, "a new size is mapped anew");
    // The file shrinks (VACUUM, then a checkpoint truncates it): nothing reads past its end.
    w.exec("DELETE FROM t WHERE length(s) > 1").unwrap();
    w.exec("VACUUM").unwrap();
    w.exec("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    assert_eq!(total(&r), 10 * 1_000_000 + 10);
    assert_eq!(one_int(&r, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"), 1);
}
