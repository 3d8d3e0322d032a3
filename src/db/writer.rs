//! The writer: one thread owning the only read-write connection, committing in groups.
//!
//! Loops never write. A handler that must write builds a `Job` (the work, run on the
//! writer's connection, and a `done` callback) and `submit`s it. The writer thread takes
//! everything queued, runs it in ONE `BEGIN IMMEDIATE` transaction with a `SAVEPOINT` per
//! job after the first (a failing job is rolled back alone), runs the work the jobs deferred to
//! the end of the transaction (`Conn::defer`: the search rows), commits, bumps `epoch()`, and then calls each
//! job's `done` in commit order: with the work's value if it committed, with the error if
//! the job, the transaction or the commit failed. Every submitted job hears back exactly
//! once, including jobs submitted after the writer stopped.
//!
//! Another process holding the write lock (the `sqlite3` CLI, a backup) makes BEGIN wait
//! (busy timeout) and then retry with backoff; jobs are never dropped while waiting.
//! A checkpointer thread checkpoints on its own connection every `CHECKPOINT_EVERY` commits,
//! `CHECKPOINT_FRAMES` WAL frames or `CHECKPOINT_INTERVAL`, so the writer never checkpoints.
//! A passive checkpoint alone never lets the WAL start over while commits keep coming (SQLite
//! rewinds it only when a transaction begins with every frame already copied), so under a
//! stream of posts the WAL grew by ~60 MB/s, every write extending the file into fresh page-cache
//! folios the kernel zeroes first (5% of the CPU in the cable fan-out). So after the passive
//! copy, a WAL past `RESTART_FRAMES` is rewound: the writer holds off its next transaction while
//! the checkpointer copies the few frames committed since and waits (briefly) for readers.

use super::conn::{Checkpoint, Conn, Mode};
use super::error::{Error, Result};
use super::schema;
use super::wal_index;
use libsqlite3_sys as ffi;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

/// Most jobs committed in one transaction (bounds the latency of the first one).
pub const MAX_BATCH: usize = 512;
/// Checkpoint after this many commits...
pub const CHECKPOINT_EVERY: u64 = 256;
/// ...or once the WAL holds this many frames (about 1 MiB of 4 KiB pages: the WAL is rewritten
/// all the time, so it stays in the page cache, and in a 15 MB container a 4 MiB one left too
/// little room for the executable's code, which thrashed: docs/bench.md "Memory")...
pub const CHECKPOINT_FRAMES: u64 = 256;
/// ...or this long after the first commit not yet checkpointed.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(2);
/// A WAL this long (frames) after a passive checkpoint is rewound with a RESTART checkpoint.
const RESTART_FRAMES: i32 = 256;
/// How long a RESTART checkpoint waits for readers still using the WAL (another process's
/// open read transaction, say) before it gives up until next time: the writer waits meanwhile.
const RESTART_WAIT_MS: i32 = 20;
/// Longest pause between retries of a BEGIN/COMMIT that found the database locked.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Number of commits made by this process's writer(s). Bumped after each COMMIT, before
/// any `done` callback of that commit runs, so a callback that observes its own commit
/// also observes the new epoch. Other processes' commits are seen through `DataVersion`.
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// The type-erased body of a job: run once on the writer connection, then finished once.
trait Work: Send {
    fn run(&mut self, conn: &Conn) -> Result<()>;
    fn finish(self: Box<Self>, outcome: Result<()>);
}

struct Pending<T, W, D> {
    work: Option<W>,
    value: Option<T>,
    done: D,
}

impl<T, W, D> Work for Pending<T, W, D>
where
    T: Send,
    W: FnOnce(&Conn) -> Result<T> + Send,
    D: FnOnce(Result<T>) + Send,
{
    fn run(&mut self, conn: &Conn) -> Result<()> {
        let work = self.work.take().ok_or_else(|| Error::new(ffi::SQLITE_MISUSE, "job run twice"))?;
        self.value = Some(work(conn)?);
        Ok(())
    }

    fn finish(self: Box<Self>, outcome: Result<()>) {
        let Pending { value, done, .. } = *self;
        done(match (outcome, value) {
            (Ok(()), Some(v)) => Ok(v),
            (Err(e), _) => Err(e),
            (Ok(()), None) => Err(Error::new(ffi::SQLITE_MISUSE, "job finished without running")),
        })
    }
}

/// A unit of writing: `work` runs on the writer's connection, undone alone if it fails;
/// `done` is called exactly once afterwards, on the writer thread, with `Ok(value)` only
/// after the transaction holding the work has committed. `done` is where broadcasts go
/// out and where the parked connection's `Resume` is queued; keep it short.
/// A job dropped without being finished (e.g. still queued when the writer stopped)
/// finishes itself with an error, so `done` runs exactly once whatever happens.
pub struct Job(Option<Box<dyn Work>>);

impl Job {
    /// Builds a job from its work and its completion callback.
    pub fn new<T, W, D>(work: W, done: D) -> Job
    where
        T: Send + 'static,
        W: FnOnce(&Conn) -> Result<T> + Send + 'static,
        D: FnOnce(Result<T>) + Send + 'static,
    {
        Job(Some(Box::new(Pending { work: Some(work), value: None, done })))
    }

    fn run(&mut self, conn: &Conn) -> Result<()> {
        match &mut self.0 {
            Some(w) => w.run(conn),
            None => Err(Error::new(ffi::SQLITE_MISUSE, "job already finished")),
        }
    }

    fn finish(mut self, outcome: Result<()>) {
        if let Some(w) = self.0.take() {
            w.finish(outcome);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(w) = self.0.take() {
            w.finish(Err(Error::new(ffi::SQLITE_MISUSE, "writer stopped before running the job")));
        }
    }
}

enum Msg {
    Job(Job),
    /// An `Outbox`'s jobs: one message, so the writer wakes once and takes them all.
    Jobs(Vec<Job>),
    Stop(mpsc::Sender<()>),
}

struct Stats {
    transactions: AtomicU64,
    jobs: AtomicU64,
}

/// A handle to the writer thread. Cheap to clone and `Send`; the thread runs until
/// `stop` is called or every handle is dropped. Jobs submitted after that are finished
/// with an error.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Msg>,
    stats: Arc<Stats>,
}

impl Writer {
    /// Opens `path` read-write (creating it), makes sure the tables exist
    /// (`schema::ensure_tables`), and starts the writer and checkpointer threads; the writer
    /// builds any missing extra index (`schema::build_indexes`) before its first job.
    pub fn start(path: &str) -> Result<Writer> {
        let conn = Conn::open(path, Mode::ReadWrite)?;
        // Jobs' deferred writes (search rows) run once per transaction, after the last job.
        conn.defer_to_commit();
        // The tables now; the extra indexes on the writer thread, before its first job, so a
        // large database's first start answers at once (reads without the new indexes meanwhile).
        schema::ensure_tables(&conn)?;
        // The checkpointer does this work on its own connection.
        conn.exec("PRAGMA wal_autocheckpoint = 0;")?;
        let ckpt = Checkpointer::start(path)?;
        let (tx, rx) = mpsc::channel();
        let stats = Arc::new(Stats { transactions: AtomicU64::new(0), jobs: AtomicU64::new(0) });
        let st = Arc::clone(&stats);
        thread::Builder::new()
            .name("writer".into())
            .spawn(move || writer_main(conn, rx, &st, ckpt))
            .map_err(|e| Error::new(ffi::SQLITE_ERROR, format!("cannot start writer thread: {e}")))?;
        Ok(Writer { tx, stats })
    }

    /// Queues `job`. Never blocks on the database. If the writer has stopped, the job's
    /// `done` is called at once (on this thread) with an error.
    pub fn submit(&self, job: Job) {
        // If the writer is gone the message comes back and dropping it finishes the job
        // with an error (see `impl Drop for Job`).
        let _ = self.tx.send(Msg::Job(job));
    }

    /// Commits everything submitted before this call, runs its callbacks, checkpoints,
    /// and stops the writer and checkpointer threads (for a clean SIGTERM). Returns when done.
    pub fn stop(&self) {
        let (ack_tx, ack_rx) = mpsc::channel();
        if self.tx.send(Msg::Stop(ack_tx)).is_ok() {
            let _ = ack_rx.recv();
        }
    }

    /// Transactions committed so far by this writer (group commit makes this much smaller
    /// than `jobs()` under load).
    pub fn transactions(&self) -> u64 {
        self.stats.transactions.load(Ordering::Acquire)
    }

    /// Jobs finished so far by this writer (committed or failed).
    pub fn jobs(&self) -> u64 {
        self.stats.jobs.load(Ordering::Acquire)
    }
}

fn writer_main(conn: Conn, rx: mpsc::Receiver<Msg>, stats: &Stats, ckpt: Checkpointer) {
    {
        let _turn = ckpt.writer_turn();
        if let Err(e) = schema::build_indexes(&conn) {
            // Queries still work without them, only slower.
            eprintln!("schema: cannot build the extra indexes: {e}");
        }
    }
    let mut batch: Vec<Job> = Vec::with_capacity(64);
    let mut stop: Option<mpsc::Sender<()>> = None;
    while stop.is_none() {
        match rx.recv() {
            Ok(Msg::Job(j)) => batch.push(j),
            Ok(Msg::Jobs(js)) => batch.extend(js),
            Ok(Msg::Stop(ack)) => stop = Some(ack),
            Err(_) => break,
        }
        while stop.is_none() && batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(Msg::Job(j)) => batch.push(j),
                Ok(Msg::Jobs(js)) => batch.extend(js),
                Ok(Msg::Stop(ack)) => stop = Some(ack),
                Err(_) => break,
            }
        }
        if !batch.is_empty() {
            let commits = {
                let _turn = ckpt.writer_turn();
                commit_batch(&conn, &mut batch, stats)
            };
            // Word 4 of the wal-index header: the frames in the WAL.
            let frames = wal_index::header(&conn).map_or(0, |h| u64::from(h[4]));
            ckpt.note_commits(commits, frames);
        }
    }
    ckpt.stop();
    drop(conn);
    if let Some(ack) = stop {
        let _ = ack.send(());
    }
}

/// The jobs one event-loop thread submits, handed to the writer together when the loop would
/// wait for events and none is ready at once (`send`, from `Handler::turn_end`; the loop holds
/// them at most a few turns, and not at all while output waits). Sent one by one, each job
/// woke the writer, and on a machine where the loop and the writer share a core the writer
/// then ran at once with that job alone: a commit, its WAL frames and two context switches
/// for every post. Held to the end of the turn, the posts one turn reads committed together
/// (issue 18: 12% less CPU per post at 16 clients); held while more requests are ready, the
/// posts of a burst do (5% less again). Not `Sync`: each loop has its own, and other threads
/// submit to the `Writer` directly.
pub struct Outbox {
    writer: Writer,
    held: std::cell::RefCell<Vec<Job>>,
}

impl Outbox {
    pub fn new(writer: Writer) -> Outbox {
        Outbox { writer, held: std::cell::RefCell::new(Vec::new()) }
    }

    /// Queues `job` until `send`.
    pub fn submit(&self, job: Job) {
        self.held.borrow_mut().push(job);
    }

    /// Whether some job waits for `send`.
    pub fn holds_jobs(&self) -> bool {
        !self.held.borrow().is_empty()
    }

    /// Hands every held job to the writer in one message (nothing when none is held).
    pub fn send(&self) {
        let jobs = std::mem::take(&mut *self.held.borrow_mut());
        if !jobs.is_empty() {
            // If the writer is gone the message comes back and dropping the jobs finishes
            // each with an error.
            let _ = self.writer.tx.send(Msg::Jobs(jobs));
        }
    }
}

impl Drop for Outbox {
    /// A loop that stops sends what it still holds, so `Writer::stop` commits it too.
    fn drop(&mut self) {
        self.send();
    }
}

/// Sleeps before the next attempt at a locked database, doubling up to MAX_BACKOFF.
fn backoff(delay: &mut Duration, what: &str, e: &Error) {
    eprintln!("db: {what} found the database locked ({e}); retrying in {delay:?}");
    thread::sleep(*delay);
    *delay = (*delay * 2).min(MAX_BACKOFF);
}

/// Runs `batch` (emptied) in as few transactions as possible (one, unless a job's error
/// ended the transaction) and finishes every job in order. Returns the commits made.
fn commit_batch(conn: &Conn, batch: &mut Vec<Job>, stats: &Stats) -> u64 {
    let mut results: Vec<(Job, Result<()>)> = Vec::with_capacity(batch.len());
    let mut txn_start = 0; // index in `results` of the first job of the open transaction
    let mut in_txn = false;
    let mut commits = 0;
    for mut job in batch.drain(..) {
        if !in_txn {
            if let Err(e) = begin(conn) {
                results.push((job, Err(e)));
                continue;
            }
            in_txn = true;
            txn_start = results.len();
        }
        // Each job in its own savepoint, so a failing one is undone alone; the first of a
        // transaction needs none (rolling the transaction back undoes just it).
        let mark = conn.deferred_len();
        let r = if results.len() == txn_start {
            conn.first_in_transaction(|c| job.run(c))
        } else {
            conn.savepoint(|c| job.run(c))
        };
        if let Err(e) = &r {
            // What the undone job deferred goes with it.
            conn.forget_deferred(mark);
            if conn.is_autocommit() {
                conn.forget_deferred(0);
                // The error ended the whole transaction: the earlier jobs of it are undone.
                for (_, earlier) in results.iter_mut().skip(txn_start) {
                    if earlier.is_ok() {
                        *earlier = Err(e.clone());
                    }
                }
                in_txn = false;
            }
        }
        results.push((job, r));
    }
    if in_txn {
        // The group's deferred writes, then COMMIT: if either fails, the whole group is undone.
        match conn.run_deferred().and_then(|()| commit(conn)) {
            Ok(()) => {
                commits += 1;
                stats.transactions.fetch_add(1, Ordering::AcqRel);
                EPOCH.fetch_add(1, Ordering::AcqRel);
            }
            Err(e) => {
                eprintln!("db: commit failed: {e}");
                let _ = conn.rollback();
                for (_, r) in results.iter_mut().skip(txn_start) {
                    if r.is_ok() {
                        *r = Err(e.clone());
                    }
                }
            }
        }
    }
    for (job, r) in results {
        if let Err(e) = &r {
            if !e.is_constraint() {
                eprintln!("db: job failed: {e}");
            }
        }
        stats.jobs.fetch_add(1, Ordering::AcqRel);
        job.finish(r);
    }
    commits
}

fn begin(conn: &Conn) -> Result<()> {
    let mut delay = Duration::from_millis(1);
    loop {
        match conn.begin_immediate() {
            Err(e) if e.is_busy() => backoff(&mut delay, "BEGIN IMMEDIATE", &e),
            other => return other,
        }
    }
}

fn commit(conn: &Conn) -> Result<()> {
    let mut delay = Duration::from_millis(1);
    loop {
        match conn.commit() {
            Err(e) if e.is_busy() && !conn.is_autocommit() => backoff(&mut delay, "COMMIT", &e),
            other => return other,
        }
    }
}

/// Tracks commits by other connections (our writer, other processes) as seen by one
/// read connection, through `PRAGMA data_version`.
pub struct DataVersion {
    last: i64,
    generation: u64,
}

impl DataVersion {
    /// Starts tracking from `conn`'s current data version.
    pub fn new(conn: &Conn) -> Result<DataVersion> {
        Ok(DataVersion { last: conn.data_version()?, generation: 0 })
    }

    /// Returns a counter that has grown iff another connection committed since the
    /// previous call on the same `conn` (one cheap statement; no table is read).
    pub fn check(&mut self, conn: &Conn) -> Result<u64> {
        let v = conn.data_version()?;
        if v != self.last {
            self.last = v;
            self.generation += 1;
        }
        Ok(self.generation)
    }
}

struct CkShared {
    pending: AtomicU64,
    stop: AtomicBool,
    /// Held by the writer for each group of transactions, by the checkpointer for a RESTART.
    gate: Mutex<()>,
    /// Set while the checkpointer wants the gate (the writer, which would otherwise take it
    /// straight back, waits on `rewound` until it clears).
    rewinding: Mutex<bool>,
    rewound: Condvar,
}

/// The checkpointer thread: copies committed WAL frames into the database file without
/// blocking the writer or readers (PASSIVE), and rewinds a long WAL (RESTART, see the top).
struct Checkpointer {
    shared: Arc<CkShared>,
    handle: thread::JoinHandle<()>,
}

impl Checkpointer {
    fn start(path: &str) -> Result<Checkpointer> {
        let conn = Conn::open(path, Mode::ReadWrite)?;
        conn.exec("PRAGMA wal_autocheckpoint = 0;")?;
        // Only a RESTART waits on locks (PASSIVE never does), and the writer waits with it.
        conn.set_busy_retry(RESTART_WAIT_MS);
        let shared = Arc::new(CkShared {
            pending: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            gate: Mutex::new(()),
            rewinding: Mutex::new(false),
            rewound: Condvar::new(),
        });
        let sh = Arc::clone(&shared);
        let handle = thread::Builder::new()
            .name("checkpointer".into())
            .spawn(move || checkpointer_main(&conn, &sh))
            .map_err(|e| Error::new(ffi::SQLITE_ERROR, format!("cannot start checkpointer thread: {e}")))?;
        Ok(Checkpointer { shared, handle })
    }

    /// Waits out a RESTART in progress, then holds the gate for one group of transactions.
    fn writer_turn(&self) -> Option<MutexGuard<'_, ()>> {
        if let Ok(mut r) = self.shared.rewinding.lock() {
            while *r {
                match self.shared.rewound.wait(r) {
                    Ok(g) => r = g,
                    Err(_) => break,
                }
            }
        }
        // Poisoned only if a holder panicked, which aborts release builds.
        self.shared.gate.lock().ok()
    }

    /// Counts `n` more commits, after which the WAL holds `frames` frames.
    fn note_commits(&self, n: u64, frames: u64) {
        if n > 0 && (self.shared.pending.fetch_add(n, Ordering::AcqRel) + n >= CHECKPOINT_EVERY || frames >= CHECKPOINT_FRAMES) {
            self.handle.thread().unpark();
        }
    }

    fn stop(self) {
        self.shared.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        let _ = self.handle.join();
    }
}

fn checkpointer_main(conn: &Conn, shared: &CkShared) {
    loop {
        thread::park_timeout(CHECKPOINT_INTERVAL);
        let stopping = shared.stop.load(Ordering::Acquire);
        if shared.pending.swap(0, Ordering::AcqRel) > 0 || stopping {
            match conn.wal_checkpoint(Checkpoint::Passive) {
                Ok((log, _)) if log >= RESTART_FRAMES => rewind(conn, shared),
                Ok(_) => {}
                Err(e) => eprintln!("db: checkpoint failed: {e}"),
            }
        }
        if stopping {
            return;
        }
    }
}

/// A RESTART checkpoint with the writer held off: it copies what the passive one could not
/// and waits for readers still in the WAL, so the next commit writes the WAL from its start.
/// BUSY (a reader stayed longer than `RESTART_WAIT_MS`) leaves the WAL for next time.
fn rewind(conn: &Conn, shared: &CkShared) {
    let set = |v: bool| {
        if let Ok(mut r) = shared.rewinding.lock() {
            *r = v;
        }
    };
    set(true);
    let outcome = shared.gate.lock().map(|_gate| conn.wal_checkpoint(Checkpoint::Restart));
    set(false);
    shared.rewound.notify_all();
    if let Ok(Err(e)) = outcome {
        if !e.is_busy() {
            eprintln!("db: checkpoint failed: {e}");
        }
    }
}
