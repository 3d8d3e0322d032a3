//! Tests of the writer (group commit, savepoints, exactly-once completion) and of what
//! read connections see (our commits, other processes' commits).

use super::testing::TempDb;
use super::writer::{epoch, DataVersion, Job, Outbox, Writer};
use super::{Conn, Error, Mode, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

const CREATE: &str = "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, tag TEXT NOT NULL UNIQUE)";
const INSERT: &str = "INSERT INTO t (tag) VALUES (?1)";

fn insert(c: &Conn, tag: &str) -> Result<i64> {
    let mut s = c.prepare_cached(INSERT)?;
    s.bind(1, tag)?;
    s.run()?;
    Ok(c.last_insert_rowid())
}

fn count(c: &Conn, sql: &'static str) -> i64 {
    let mut s = c.prepare_cached(sql).unwrap();
    assert!(s.row().unwrap());
    s.int(0)
}

/// The tags stored in `t`, in insertion order, joined by commas.
fn tags(r: &Conn) -> String {
    let mut s = r.prepare_cached("SELECT group_concat(tag, ',') FROM (SELECT tag FROM t ORDER BY id)").unwrap();
    assert!(s.row().unwrap());
    s.text(0).unwrap().to_owned()
}

/// Lets the held writer go on and collects every job's report (the senders must be dropped).
fn release<T>(release_tx: mpsc::Sender<()>, rx: mpsc::Receiver<T>) -> Vec<T> {
    release_tx.send(()).unwrap();
    rx.iter().collect()
}

fn start(db: &TempDb) -> Writer {
    let w = Writer::start(&db.path).unwrap();
    let (tx, rx) = mpsc::channel();
    w.submit(Job::new(|c| c.exec(CREATE), move |r| tx.send(r).unwrap()));
    rx.recv().unwrap().unwrap();
    w
}

/// Holds the writer inside a job (which inserts `tag` if given) until the returned sender is
/// used: whatever is submitted meanwhile is queued and committed as one group after it.
fn hold(w: &Writer, tag: Option<&'static str>) -> mpsc::Sender<()> {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (started_tx, started_rx) = mpsc::channel::<()>();
    w.submit(Job::new(
        move |c| {
            started_tx.send(()).unwrap();
            release_rx.recv().unwrap();
            match tag {
                Some(tag) => insert(c, tag).map(|_| ()),
                None => Ok(()),
            }
        },
        |_| {},
    ));
    started_rx.recv().unwrap();
    release_tx
}

#[test]
fn concurrent_submitters_each_get_their_own_result() {
    let db = TempDb::new();
    let w = start(&db);
    let (tx, rx) = mpsc::channel::<(String, Result<i64>)>();
    let mut threads = Vec::new();
    for t in 0..8 {
        let w = w.clone();
        let tx = tx.clone();
        threads.push(thread::spawn(move || {
            for i in 0..125 {
                let tag = format!("t{t}-{i}");
                let tx = tx.clone();
                let fail = t == 3 && i == 60;
                let job_tag = tag.clone();
                w.submit(Job::new(
                    move |c| {
                        let id = insert(c, &job_tag)?;
                        if fail {
                            // Fails after writing: its savepoint must undo only its own row.
                            return Err(Error::new(1, "deliberate failure"));
                        }
                        Ok(id)
                    },
                    move |r| tx.send((tag, r)).unwrap(),
                ));
            }
        }));
    }
    drop(tx);
    for t in threads {
        t.join().unwrap();
    }
    let results: Vec<(String, Result<i64>)> = rx.iter().collect();
    assert_eq!(results.len(), 1000, "every submitter hears back exactly once");
    let reader = db.open(Mode::ReadOnly);
    let mut ok = 0;
    for (tag, r) in &results {
        match r {
            Ok(id) => {
                ok += 1;
                let mut s = reader.prepare_cached("SELECT tag FROM t WHERE id = ?1").unwrap();
                s.bind(1, *id).unwrap();
                assert!(s.row().unwrap(), "row {id} of {tag} committed");
                assert_eq!(s.text(0).unwrap(), tag, "each caller got its own rowid");
            }
            Err(e) => {
                assert_eq!(tag, "t3-60");
                assert_eq!(e.message, "deliberate failure");
            }
        }
    }
    assert_eq!(ok, 999);
    assert_eq!(count(&reader, "SELECT count(*) FROM t"), 999);
    assert_eq!(count(&reader, "SELECT count(*) FROM t WHERE tag = 't3-60'"), 0);
    assert_eq!(w.jobs(), 1001);
    assert!(w.transactions() <= 1001);
}

#[test]
fn queued_jobs_commit_in_one_transaction_in_order() {
    let db = TempDb::new();
    let w = start(&db);
    let before = w.transactions();
    // Hold the writer inside a job until everything below is queued.
    let release_tx = hold(&w, Some("blocker"));
    let (done_tx, done_rx) = mpsc::channel::<(usize, Result<i64>, u64)>();
    for i in 0..200 {
        let tx = done_tx.clone();
        w.submit(Job::new(move |c| insert(c, &format!("q{i}")), move |r| tx.send((i, r, epoch())).unwrap()));
    }
    drop(done_tx);
    release_tx.send(()).unwrap();
    let got: Vec<(usize, Result<i64>, u64)> = done_rx.iter().collect();
    // Callbacks run in commit order, after the commit (so after the epoch bump).
    assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), (0..200).collect::<Vec<_>>());
    assert!(got.iter().all(|g| g.1.is_ok()));
    let ids: Vec<i64> = got.iter().map(|g| *g.1.as_ref().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(w.transactions() - before, 2, "blocker alone, then the 200 queued jobs together");
    assert!(got.iter().all(|g| g.2 >= 1));
}

#[test]
fn a_failing_first_job_of_a_batch_is_undone_alone() {
    // The first job of a transaction runs without a savepoint: its failure must still undo
    // its own writes and nothing of the jobs after it.
    let db = TempDb::new();
    let w = start(&db);
    let release_tx = hold(&w, Some("blocker"));
    let (tx, rx) = mpsc::channel();
    let t = tx.clone();
    w.submit(Job::new(
        |c| {
            insert(c, "half-done")?;
            insert(c, "blocker")
        },
        move |r| t.send(("first", r.is_ok())).unwrap(),
    ));
    for tag in ["second", "third"] {
        let t = tx.clone();
        w.submit(Job::new(move |c| insert(c, tag), move |r| t.send((tag, r.is_ok())).unwrap()));
    }
    drop(tx);
    let got: Vec<(&str, bool)> = release(release_tx, rx);
    assert_eq!(got, vec![("first", false), ("second", true), ("third", true)]);
    let r = db.open(Mode::ReadOnly);
    assert_eq!(tags(&r), "blocker,second,third");
}

#[test]
fn deferred_work_runs_once_per_group_in_order_and_goes_with_an_undone_job() {
    let db = TempDb::new();
    let w = start(&db);
    let release_tx = hold(&w, Some("blocker"));
    let (tx, rx) = mpsc::channel();
    // Each job inserts a row now and defers one; the second then fails, so its row and its
    // deferred row are undone; the rest commit, the deferred rows after every job's own.
    for (tag, fail) in [("a", false), ("b", true), ("c", false)] {
        let t = tx.clone();
        w.submit(Job::new(
            move |c| {
                insert(c, tag)?;
                c.defer(move |c| insert(c, &format!("{tag}-deferred")).map(|_| ()))?;
                if fail {
                    insert(c, "blocker")?;
                }
                Ok(())
            },
            move |r| t.send((tag, r.is_ok())).unwrap(),
        ));
    }
    drop(tx);
    let got: Vec<(&str, bool)> = release(release_tx, rx);
    assert_eq!(got, vec![("a", true), ("b", false), ("c", true)]);
    let r = db.open(Mode::ReadOnly);
    assert_eq!(tags(&r), "blocker,a,c,a-deferred,c-deferred");
    // Deferred work that fails undoes its whole group, reported to every job of it.
    let (tx, rx) = mpsc::channel();
    w.submit(Job::new(|c| c.defer(|c| insert(c, "a").map(|_| ())), move |r| tx.send(r.is_ok()).unwrap()));
    assert!(!rx.recv().unwrap());
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 5);
}

#[test]
fn constraint_failure_is_reported_and_isolated() {
    let db = TempDb::new();
    let w = start(&db);
    let (tx, rx) = mpsc::channel();
    for tag in ["a", "b", "a", "c"] {
        let tx = tx.clone();
        w.submit(Job::new(move |c| insert(c, tag), move |r| tx.send((tag, r)).unwrap()));
    }
    drop(tx);
    let got: Vec<(&str, Result<i64>)> = rx.iter().collect();
    assert_eq!(got.len(), 4);
    assert!(got[0].1.is_ok() && got[1].1.is_ok() && got[3].1.is_ok());
    assert!(got[2].1.as_ref().unwrap_err().is_constraint());
    let r = db.open(Mode::ReadOnly);
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 3);
}

#[test]
fn an_outbox_holds_its_jobs_until_sent_and_they_commit_together() {
    let db = TempDb::new();
    let w = start(&db);
    let before = w.transactions();
    let outbox = Outbox::new(w.clone());
    let (tx, rx) = mpsc::channel();
    for i in 0..5 {
        let tx = tx.clone();
        outbox.submit(Job::new(move |c| insert(c, &format!("o{i}")), move |r| tx.send(r.is_ok()).unwrap()));
    }
    assert!(rx.recv_timeout(Duration::from_millis(200)).is_err(), "nothing reaches the writer before send");
    outbox.send();
    let done: Vec<bool> = (0..5).map(|_| rx.recv_timeout(Duration::from_secs(5)).unwrap()).collect();
    assert_eq!(done, [true; 5]);
    assert_eq!(w.transactions() - before, 1, "one message, one group, one commit");
    // Dropped with a job still held: it is sent, not lost.
    outbox.submit(Job::new(|c| insert(c, "last"), move |r| tx.send(r.is_ok()).unwrap()));
    drop(outbox);
    assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap());
    assert_eq!(tags(&db.open(Mode::ReadOnly)), "o0,o1,o2,o3,o4,last");
}

#[test]
fn stop_commits_everything_then_refuses_with_an_error() {
    let db = TempDb::new();
    let w = start(&db);
    let (tx, rx) = mpsc::channel();
    for i in 0..50 {
        let tx = tx.clone();
        w.submit(Job::new(move |c| insert(c, &format!("s{i}")), move |r| tx.send(r.is_ok()).unwrap()));
    }
    w.stop();
    assert_eq!(rx.try_iter().filter(|ok| *ok).count(), 50, "all done before stop returned");
    let (tx2, rx2) = mpsc::channel();
    w.submit(Job::new(|c| insert(c, "late"), move |r| tx2.send(r).unwrap()));
    assert!(rx2.recv_timeout(Duration::from_secs(1)).unwrap().is_err());
    let r = db.open(Mode::ReadOnly);
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 50);
}

#[test]
fn waits_for_another_process_lock_without_losing_jobs() {
    let db = TempDb::new();
    let w = start(&db);
    // Another connection (as another process would) holds the write lock longer than the
    // busy timeout, so the writer must back off and retry.
    let other = db.open(Mode::ReadWrite);
    other.exec("BEGIN IMMEDIATE; INSERT INTO t (tag) VALUES ('other');").unwrap();
    let (tx, rx) = mpsc::channel();
    w.submit(Job::new(|c| insert(c, "mine"), move |r| tx.send(r).unwrap()));
    assert!(rx.recv_timeout(Duration::from_millis(5300)).is_err(), "still waiting on the lock");
    other.exec("COMMIT").unwrap();
    assert!(rx.recv_timeout(Duration::from_secs(5)).unwrap().is_ok());
    let r = db.open(Mode::ReadOnly);
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 2);
}

#[test]
fn read_connection_sees_writer_commits_on_next_statement() {
    let db = TempDb::new();
    let w = start(&db);
    let r = db.open(Mode::ReadOnly);
    let mut dv = DataVersion::new(&r).unwrap();
    let g0 = dv.check(&r).unwrap();
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 0);
    let (tx, rx) = mpsc::channel();
    w.submit(Job::new(|c| insert(c, "x"), move |r| tx.send(r).unwrap()));
    rx.recv().unwrap().unwrap();
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 1);
    let g1 = dv.check(&r).unwrap();
    assert!(g1 > g0, "data_version saw the writer's commit");
    assert_eq!(dv.check(&r).unwrap(), g1, "no commit, no change");
}

#[test]
fn read_connection_sees_another_process_commit() {
    let db = TempDb::new();
    let w = start(&db);
    let r = db.open(Mode::ReadOnly);
    let mut dv = DataVersion::new(&r).unwrap();
    let g0 = dv.check(&r).unwrap();
    let e0 = epoch();
    let cli = std::process::Command::new("sqlite3")
        .arg(&db.path)
        .arg("INSERT INTO t (tag) VALUES ('from-cli');")
        .status();
    match cli {
        Ok(st) => assert!(st.success()),
        Err(_) => {
            // No sqlite3 CLI here: a second connection stands in for the other process.
            let other = db.open(Mode::ReadWrite);
            other.exec("INSERT INTO t (tag) VALUES ('from-cli')").unwrap();
        }
    }
    assert_eq!(count(&r, "SELECT count(*) FROM t WHERE tag = 'from-cli'"), 1);
    assert!(dv.check(&r).unwrap() > g0);
    // And the writer keeps working on top of the other process's commit.
    let (tx, rx) = mpsc::channel();
    w.submit(Job::new(|c| insert(c, "after"), move |r| tx.send(r).unwrap()));
    assert!(rx.recv().unwrap().is_ok());
    assert!(epoch() > e0);
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 2);
}

#[test]
fn a_job_that_ends_the_transaction_fails_its_batch_mates_honestly() {
    let db = TempDb::new();
    let w = start(&db);
    let release_tx = hold(&w, None);
    let (tx, rx) = mpsc::channel();
    let t1 = tx.clone();
    w.submit(Job::new(|c| insert(c, "before"), move |r| t1.send(("before", r.is_ok())).unwrap()));
    let t2 = tx.clone();
    // Stands in for an error that makes SQLite roll back the whole transaction (IOERR, FULL).
    w.submit(Job::new(
        |c| {
            c.exec("ROLLBACK")?;
            Err::<i64, _>(Error::new(10, "disk I/O error"))
        },
        move |r| t2.send(("breaker", r.is_ok())).unwrap(),
    ));
    let t3 = tx.clone();
    w.submit(Job::new(|c| insert(c, "after"), move |r| t3.send(("after", r.is_ok())).unwrap()));
    drop(tx);
    let got: Vec<(&str, bool)> = release(release_tx, rx);
    // "before" was undone with the transaction, so it must not be reported as committed.
    assert_eq!(got, vec![("before", false), ("breaker", false), ("after", true)]);
    let r = db.open(Mode::ReadOnly);
    assert_eq!(tags(&r), "after");
}

#[test]
fn a_snapshot_sees_one_state_of_the_database() {
    let db = TempDb::new();
    let w = start(&db);
    let r = db.open(Mode::ReadOnly);
    let commit = |tag: &'static str| {
        let (tx, rx) = mpsc::channel();
        w.submit(Job::new(move |c| insert(c, tag), move |r| tx.send(r).unwrap()));
        rx.recv().unwrap().unwrap();
    };
    commit("a");
    let (inside, after_commit) = r
        .snapshot(|r| {
            let before = count(r, "SELECT count(*) FROM t");
            commit("b");
            Ok((before, count(r, "SELECT count(*) FROM t")))
        })
        .unwrap();
    assert_eq!((inside, after_commit), (1, 1), "the snapshot does not move");
    assert!(r.is_autocommit());
    assert_eq!(count(&r, "SELECT count(*) FROM t"), 2);
    // An error inside ends the snapshot too, and is returned.
    let e = r.snapshot(|r| r.exec("SELECT nope FROM t")).unwrap_err();
    assert!(e.message.contains("nope"));
    assert!(r.is_autocommit());
}

#[test]
fn a_stream_of_commits_keeps_the_wal_short_while_readers_come_and_go() {
    let db = TempDb::new();
    let w = start(&db);
    let stop = Arc::new(AtomicBool::new(false));
    // A reader that keeps starting short read transactions, as the loops do.
    let reader = {
        let (path, stop) = (db.path.clone(), stop.clone());
        thread::spawn(move || {
            let r = Conn::open(&path, Mode::ReadOnly).unwrap();
            while !stop.load(Ordering::Relaxed) {
                count(&r, "SELECT count(*) FROM t");
            }
        })
    };
    // One commit at a time, each writing about three pages: some 36 MB of WAL if it never
    // started over.
    let (tx, rx) = mpsc::channel();
    for i in 0..3000 {
        let tx = tx.clone();
        let tag = format!("{i:08}{}", "x".repeat(8000));
        w.submit(Job::new(move |c| insert(c, &tag).map(|_| ()), move |r| tx.send(r).unwrap()));
        rx.recv().unwrap().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    // The WAL file is never truncated, so its length is the longest it got between rewinds, and
    // a rewind gives up (20 ms of readers) whenever the machine is loaded: its length is a flaky
    // measure. What the writer promises is that the WAL starts over; SQLite counts each start-over
    // in the WAL header's checkpoint sequence number (bytes 12..16, big-endian). The ~10,000
    // frames written here pass `RESTART_FRAMES` some 35 times: without the rewind it stays 0.
    let wal = std::fs::read(format!("{}-wal", db.path)).unwrap();
    let restarts = u32::from_be_bytes([wal[12], wal[13], wal[14], wal[15]]);
    assert!(restarts >= 3, "the WAL started over {restarts} times and grew to {} bytes", wal.len());
    let c = Conn::open(&db.path, Mode::ReadOnly).unwrap();
    assert_eq!(count(&c, "SELECT count(*) FROM t"), 3000);
    w.stop();
}
