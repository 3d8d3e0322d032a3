//! Whether anyone committed, known without SQLite doing any work: the header of the
//! wal-index (the `-shm` file next to a WAL database), read through a shared mapping.
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
use crate::sys::shared_map::SharedMap;

/// 32-bit words in one copy of the header.
const WORDS: usize = 12;
/// Byte offset of the second copy.
const SECOND: usize = WORDS * 4;

/// The wal-index header's content at one moment.
pub type Header = [u32; WORDS];

/// A read-only view of one database's wal-index header.
pub struct CommitWatch {
    map: SharedMap,
}

impl CommitWatch {
    /// Watches the database `conn` reads, if it is a file in WAL mode whose `-shm` file
    /// exists and is initialised (it is once any connection has read the database).
    pub fn open(conn: &Conn) -> Option<CommitWatch> {
        let mut shm = conn.filename()?.into_os_string();
        shm.push("-shm");
        let map = SharedMap::open(std::path::Path::new(&shm), 2 * SECOND).ok()?;
        Some(CommitWatch { map })
    }

    /// The header as of now, or `None` when a commit is updating it at this very moment or it
    /// is not initialised (callers then ask SQLite instead).
    pub fn header(&self) -> Option<Header> {
        let mut first = [0u32; WORDS];
        let mut second = [0u32; WORDS];
        for (i, w) in first.iter_mut().enumerate() {
            *w = self.map.word(i * 4)?;
        }
        // The writer updates the second copy first: read in the opposite order so a header
        // caught mid-update shows as two different copies.
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        for (i, w) in second.iter_mut().enumerate() {
            *w = self.map.word(SECOND + i * 4)?;
        }
        // Word 3 holds isInit (its first byte), bigEndCksum and szPage.
        let initialised = first[3].to_ne_bytes()[0] != 0;
        (first == second && initialised).then_some(first)
    }
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
        let watch = CommitWatch::open(&r).expect("a WAL database has a -shm file");
        let h0 = watch.header().unwrap();
        r.exec("SELECT count(*) FROM t").unwrap();
        assert_eq!(watch.header(), Some(h0), "a read commits nothing");
        w.exec("INSERT INTO t VALUES (1)").unwrap();
        let h1 = watch.header().unwrap();
        assert_ne!(h1, h0);
        w.exec("UPDATE t SET x = 5").unwrap();
        assert_ne!(watch.header().unwrap(), h1, "another commit");
        // a checkpoint that restarts the WAL: the next commit still differs
        let h2 = watch.header().unwrap();
        w.exec("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
        w.exec("INSERT INTO t VALUES (2)").unwrap();
        assert_ne!(watch.header().unwrap(), h2);
        drop((w, r, watch));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn no_watch_without_a_file() {
        let mem = Conn::open(":memory:", Mode::ReadWrite).unwrap();
        assert!(CommitWatch::open(&mem).is_none());
    }
}
