//! A full disk under the real binary (issue 15 "Faults injected"): the storage folder (database,
//! WAL, upload spool, files) is a small tmpfs this test mounts, then fills. Every post the
//! server acknowledged must be in the database afterwards (read with the `sqlite3` CLI after a
//! kill -9), every refused one answered 507 and absent, reads served meanwhile, the log saying
//! why, and writes working again as soon as space returns. Covered: the writer's failed
//! statement and failed COMMIT, the checkpointer's failed copy into a database file that
//! cannot grow, ENOSPC part-way through an upload's spool, and ENOSPC in the files directory.
//!
//! Needs root (mount); the file system is the test's own, unmounted when it ends.

mod support;
use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;

/// A tmpfs of `size` mounted on `<dir>/storage`, the server's STORAGE_PATH.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn mount(tag: &str, size: &str) -> Option<Tmpfs> {
        // Who we are, from /proc (the tests do not link libc for geteuid).
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let uid = status.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2)).unwrap_or("");
        if uid != "0" {
            eprintln!("faults_disk_full: skipped, mounting a tmpfs needs root");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("campfire-faults-{tag}-{}", std::process::id()));
        let storage = dir.join("storage");
        fs::create_dir_all(&storage).unwrap();
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(&storage).status().unwrap();
        assert!(ok.success(), "mount tmpfs on {}", storage.display());
        Some(Tmpfs { dir })
    }

    fn storage(&self) -> PathBuf {
        self.dir.join("storage")
    }

    /// Fills the file system, keeping `spare` bytes free: a filler file written until ENOSPC,
    /// after which a reserve written first is deleted.
    fn fill(&self, spare: usize) {
        let reserve = self.storage().join("reserve");
        if spare > 0 {
            fs::write(&reserve, vec![7u8; spare]).unwrap();
        }
        let mut f = fs::OpenOptions::new().create(true).append(true).open(self.storage().join("filler")).unwrap();
        let chunk = vec![1u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        drop(f);
        let _ = fs::remove_file(&reserve);
    }

    /// Gives the space back.
    fn free(&self) {
        let _ = fs::remove_file(self.storage().join("filler"));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.storage()).status();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The server on the tmpfs, seeded with the fixture.
fn start_on(t: &Tmpfs) -> Seeded {
    let srv = Server::start_in(&t.dir, &[]);
    let now = campfire::db::time::now_us();
    let conn = campfire::db::Conn::open(srv.db_path().to_str().unwrap(), campfire::db::Mode::ReadWrite).unwrap();
    conn.transaction(|c| c.exec(&sql(now))).expect("seed");
    Seeded { srv, now }
}

/// A message body `n` bytes long, tagged `tag-k` so it can be found again.
fn text(tag: &str, k: usize, n: usize) -> String {
    let mut s = format!("{tag}-{k} ");
    let mut x = (k as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    while s.len() < n {
        // Words, so the search index gets real terms and SQLite cannot squeeze the rows.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(&format!("w{:x} ", x & 0xff_ffff));
    }
    s
}

fn post(s: &Seeded, body: &str) -> Response {
    s.srv.send(
        &Request::post_form(&format!("/rooms/{HQ}/messages"), &[("message[body]", body)])
            .cookies(&s.jar(DAVID))
            .header("Accept", "text/vnd.turbo-stream.html, text/html"),
    )
}

/// Posts `tag-k` bodies and sorts them into acknowledged (200) and refused (507) until `enough`
/// says stop or `most` were sent. Any other answer fails the test.
fn posts(s: &Seeded, tag: &str, size: usize, most: usize, acked: &mut Vec<usize>, refused: &mut Vec<usize>, enough: impl Fn(&[usize], &[usize]) -> bool) {
    for _ in 0..most {
        let k = acked.len() + refused.len();
        let r = post(s, &text(tag, k, size));
        match r.status {
            200 => acked.push(k),
            507 => {
                assert_eq!(r.header("Retry-After"), Some("5"), "a full disk asks to retry later");
                refused.push(k)
            }
            other => panic!("post {tag}-{k}: {other} {}\n{}", r.body, s.srv.stderr()),
        }
        if enough(acked, refused) {
            return;
        }
    }
}

/// The tag numbers of the messages the database holds, read by the `sqlite3` CLI.
fn stored(db: &Path, tag: &str) -> Vec<usize> {
    let q = format!("SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND body LIKE '{tag}-%' ORDER BY id");
    let out = cli(db, &q);
    let mut found: Vec<usize> = out.lines().filter_map(|l| l.strip_prefix(&format!("{tag}-"))?.split(' ').next()?.parse().ok()).collect();
    found.sort_unstable();
    found
}

fn cli(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3").arg(db).arg(sql).output().expect("the sqlite3 CLI");
    assert!(out.status.success(), "sqlite3 {sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// After the server is gone: integrity, the search index consistent with the messages, and
/// exactly the acknowledged `tag` messages stored (each with its search row).
fn check_database(db: &Path, tag: &str, acked: &[usize]) {
    assert_eq!(cli(db, "PRAGMA integrity_check").trim(), "ok");
    cli(db, "INSERT INTO message_search_index(message_search_index) VALUES('integrity-check')");
    let mut want = acked.to_vec();
    want.sort_unstable();
    assert_eq!(stored(db, tag), want, "exactly the acknowledged messages are stored");
    let searchable = cli(db, &format!("SELECT count(*) FROM message_search_index WHERE body LIKE '{tag}-%'"));
    assert_eq!(searchable.trim().parse::<usize>().unwrap(), acked.len(), "each stored message has its search row");
    let orphans = cli(db, "SELECT count(*) FROM message_search_index WHERE rowid NOT IN (SELECT id FROM messages)");
    assert_eq!(orphans.trim(), "0", "no search row without its message");
}

fn reads_still_served(s: &Seeded) {
    assert_eq!(s.srv.send(&Request::get("/up")).status, 200);
    let room = s.get(DAVID, &format!("/rooms/{HQ}"));
    assert_eq!(room.status, 200, "the room page is served on a full disk");
    assert_eq!(s.get(DAVID, "/searches?q=bench").status, 200, "search is served on a full disk");
}

#[test]
fn posts_on_a_full_disk_are_refused_and_every_acknowledged_one_is_kept() {
    let Some(t) = Tmpfs::mount("posts", "6m") else { return };
    let s = start_on(&t);
    let (mut acked, mut refused) = (Vec::new(), Vec::new());
    posts(&s, "before", 2000, 5, &mut acked, &mut refused, |_, _| false);
    assert_eq!(acked.len(), 5);
    t.fill(0);
    // Some commits may still fit in WAL pages already allocated; the disk fills soon after.
    posts(&s, "full", 6000, 400, &mut acked, &mut refused, |_, r| r.len() >= 12);
    assert!(refused.len() >= 12, "the full disk refused nothing: acked {acked:?}");
    reads_still_served(&s);
    let log = s.srv.stderr();
    assert!(log.contains("507 database error") && log.contains("disk is full"), "the log says why:\n{log}");
    t.free();
    let after = post(&s, &text("full", 100_000, 6000));
    assert_eq!(after.status, 200, "writes work again once space returns: {}", after.body);
    acked.push(100_000);
    let n = acked.len();
    posts(&s, "full", 6000, 30, &mut acked, &mut refused, |a, _| a.len() >= n + 30);
    assert_eq!(acked.len(), n + 30, "refused after space returned: {refused:?}");
    let full_acked: Vec<usize> = acked[5..].to_vec();
    let dir = s.srv.stop_keeping_files();
    let db = dir.join("storage/db/test.sqlite3");
    check_database(&db, "full", &full_acked);
    assert_eq!(stored(&db, "before").len(), 5);
}

/// The checkpointer: a reader of our own pins the WAL so it grows, the disk is filled leaving
/// room for a few more WAL frames only, and the reader lets go. The next checkpoint must copy
/// frames into a database file that cannot grow: it fails (logged), the writer goes on until
/// the WAL too is full (507), and once space returns a checkpoint copies everything.
#[test]
fn a_checkpoint_on_a_full_disk_fails_without_loss_and_catches_up_later() {
    let Some(t) = Tmpfs::mount("ckpt", "16m") else { return };
    let s = start_on(&t);
    let (mut acked, mut refused) = (Vec::new(), Vec::new());
    let reader = campfire::db::Conn::open(s.srv.db_path().to_str().unwrap(), campfire::db::Mode::ReadOnly).unwrap();
    reader.exec("BEGIN; SELECT count(*) FROM messages;").unwrap();
    posts(&s, "ckpt", 4000, 40, &mut acked, &mut refused, |_, _| false);
    assert!(refused.is_empty(), "refused with space left: {refused:?}");
    t.fill(96 * 1024);
    reader.exec("COMMIT").unwrap();
    drop(reader);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !s.srv.stderr().contains("db: checkpoint failed") {
        assert!(Instant::now() < deadline, "no checkpoint failed on the full disk:\n{}", s.srv.stderr());
        // Small posts: each commit wakes the checkpointer; the WAL takes a few more frames.
        posts(&s, "ckpt", 100, 1, &mut acked, &mut refused, |_, _| false);
        std::thread::sleep(Duration::from_millis(200));
    }
    reads_still_served(&s);
    t.free();
    let n = acked.len();
    posts(&s, "ckpt", 6000, 20, &mut acked, &mut refused, |a, _| a.len() >= n + 20);
    assert_eq!(acked.len(), n + 20, "writes work again once space returns");
    // The checkpointer caught up: the database file alone (no WAL) holds every message.
    let db = s.srv.db_path();
    let alone = t.dir.join("alone.sqlite3");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let _ = fs::remove_file(t.dir.join("alone.sqlite3-wal"));
        fs::copy(&db, &alone).unwrap();
        if stored(&alone, "ckpt").len() == acked.len() {
            break;
        }
        assert!(Instant::now() < deadline, "the WAL was never checkpointed after space returned");
        posts(&s, "ckpt", 100, 1, &mut acked, &mut refused, |_, _| false);
        std::thread::sleep(Duration::from_millis(500));
    }
    let dir = s.srv.stop_keeping_files();
    check_database(&dir.join("storage/db/test.sqlite3"), "ckpt", &acked);
}

/// Sends an upload of `data` as a browser would and reads the answer, while the body may still
/// be going out: a server refusing part-way closes the connection, and the answer must arrive.
fn upload(s: &Seeded, name: &str, data: &[u8]) -> Response {
    let req = Request::multipart(&format!("/rooms/{HQ}/messages"), &[("message[client_message_id]", name)], Some(("message[attachment]", name, "application/octet-stream", data)))
        .cookies(&s.jar(DAVID))
        .header("Accept", "text/vnd.turbo-stream.html, text/html")
        .header("X-CSRF-Token", "token");
    let bytes = req.bytes(s.srv.port);
    let mut sock = TcpStream::connect(("127.0.0.1", s.srv.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut w = sock.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        for piece in bytes.chunks(64 * 1024) {
            if w.write_all(piece).is_err() {
                return;
            }
        }
    });
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match sock.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) => {
                assert!(!raw.is_empty(), "{name}: no answer before the connection failed: {e}");
                break;
            }
        }
    }
    let _ = sender.join();
    Response::parse(&raw)
}

fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Files under `root` other than the database and the filler: what uploads left on disk.
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name() != Some("db".as_ref()) {
                    todo.push(p);
                }
            } else if p.file_name() != Some("filler".as_ref()) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// ENOSPC part-way through the spool ($STORAGE_PATH/tmp) and then in the files directory:
/// 507 each time, nothing left on disk, no row; the same upload works once space returns.
#[test]
fn uploads_on_a_full_disk_are_refused_and_leave_nothing_behind() {
    let Some(t) = Tmpfs::mount("uploads", "8m") else { return };
    let s = start_on(&t);
    let ok = upload(&s, "first.bin", &noise(300 * 1024, 1));
    assert_eq!(ok.status, 200, "{}", ok.body);
    let kept = files(&t.storage());
    assert_eq!(kept.len(), 1, "one stored file: {kept:?}");
    let rows = || s.query_int("SELECT count(*) FROM active_storage_attachments WHERE record_type = 'Message'");
    let attachments = rows();

    // The spool: 2 MiB arriving with 512 KiB free.
    t.fill(512 * 1024);
    let big = noise(2 * 1024 * 1024, 2);
    let r = upload(&s, "spool.bin", &big);
    assert_eq!(r.status, 507, "ENOSPC in the spool: {}", r.body);
    assert!(s.srv.stderr().contains("spool write failed"), "the log says why:\n{}", s.srv.stderr());
    reads_still_served(&s);
    t.free();

    // The files directory: the spool (600 KiB) fits, its copy under storage/ does not.
    t.fill(900 * 1024);
    let mid = noise(600 * 1024, 3);
    let r = upload(&s, "files.bin", &mid);
    assert_eq!(r.status, 507, "ENOSPC in the files directory: {}", r.body);
    assert!(s.srv.stderr().contains("cannot store the attachment"), "the log says why:\n{}", s.srv.stderr());
    assert_eq!(files(&t.storage()), kept, "no half-written file left behind");
    assert_eq!(rows(), attachments, "no row for a refused upload");
    reads_still_served(&s);
    t.free();

    for (name, data) in [("spool.bin", &big), ("files.bin", &mid)] {
        let r = upload(&s, name, data);
        assert_eq!(r.status, 200, "{name} once space returned: {}", r.body);
    }
    assert_eq!(rows(), attachments + 2);
    assert_eq!(files(&t.storage()).len(), 3);
    let dir = s.srv.stop_keeping_files();
    assert_eq!(cli(&dir.join("storage/db/test.sqlite3"), "PRAGMA integrity_check").trim(), "ok");
}
