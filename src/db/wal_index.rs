//! Whether anyone committed, known without SQLite doing any work: the header of the
//! wal-index (the `-shm` file next to a WAL database), read through SQLite's own mapping of it.
//!
//! SQLite keeps two copies of the wal-index header at the start of the `-shm` file; a writer
//! updates the second copy, then (after a memory barrier) the first, at every commit, and a
//! reader that finds both copies equal has a consistent header (SQLite's own lock-free readers
//! rely on this; see "wal-index header" in sqlite3.c). Each commit changes `iChange` and
//! `mxFrame`, and a WAL restart changes the salts, so equal headers at two moments mean no
//! commit in between, by any process. The cache (cache.rs) uses this to keep its data stamp
//! without starting a read transaction, which costs two `fcntl` locks and an `fstat` per request.
//!
//! Layout (native byte order, 48 bytes per copy): iVersion, unused, iChange, isInit/bigEndCksum/
//! szPage, mxFrame, nPage, aFrameCksum[2], aSalt[2], aCksum[2].

use super::conn::Conn;

/// 32-bit words in one copy of the header.
const WORDS: usize = 12;

/// The wal-index header's content at one moment.
pub type Header = [u32; WORDS];

/// Reads the wal-index header of the database `conn` reads (through SQLite's own mapping of
/// the `-shm` file, `Conn::wal_index_words`): the header as of now, or `None` when the
/// database is not in WAL mode, the wal-index is not initialised, or a commit is updating it at
/// this very moment (callers then ask SQLite instead).
pub fn header(conn: &Conn) -> Option<Header> {
    let mut first = [0u32; WORDS];
    let mut second = [0u32; WORDS];
    // A writer updates the second copy first, then the first: read in the opposite order so a
    // header caught mid-update shows as two different copies.
    if !conn.wal_index_words(&mut [(0, &mut first[..]), (WORDS, &mut second[..])]) {
        return None;
    }
    // Word 3 holds isInit (its first byte), bigEndCksum and szPage.
    let initialised = first[3].to_ne_bytes()[0] != 0;
    (first == second && initialised).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Mode;

    #[test]
    fn every_commit_changes_the_header_and_reads_do_not() {
        let dir = std::env::temp_dir().join(format!("campfire-wal-index-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.sqlite3");
        let path = path.to_str().unwrap();
        let w = Conn::open(path, Mode::ReadWrite).unwrap();
        w.exec("CREATE TABLE t (x)").unwrap();
        let r = Conn::open(path, Mode::ReadOnly).unwrap();
        let h0 = header(&r).expect("a WAL database has a wal-index");
        r.exec("SELECT count(*) FROM t").unwrap();
        assert_eq!(header(&r), Some(h0), "a read commits nothing");
        w.exec("INSERT INTO t VALUES (1)").unwrap();
        let h1 = header(&r).unwrap();
        assert_ne!(h1, h0);
        w.exec("UPDATE t SET x = 5").unwrap();
        assert_ne!(header(&r).unwrap(), h1, "another commit");
        // a checkpoint that restarts the WAL: the next commit still differs
        let h2 = header(&r).unwrap();
        w.exec("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        w.exec("INSERT INTO t VALUES (2)").unwrap();
        assert_ne!(header(&r).unwrap(), h2);
        drop((w, r));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_header_without_a_file() {
        let mem = Conn::open(":memory:", Mode::ReadWrite).unwrap();
        assert!(header(&mem).is_none());
    }
}
