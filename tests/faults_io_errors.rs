//! I/O errors under the real binary (issue 15 "Faults injected"), through the test hook of
//! `db::fault`: with CAMPFIRE_FAULT_FILE set, SQLite's writes fail while that file exists
//! (SQLITE_IOERR_WRITE, or SQLITE_FULL when it says `full`; only the main database file's when
//! it says `main`). The writer's failed statements and commits must refuse the post (500 for an
//! I/O error, 507 for a full disk), keep nothing of it, leave the writer working once the disk
//! does; the checkpointer's failed copies must lose nothing and catch up. Checked afterwards
//! with the `sqlite3` CLI after a kill -9.

mod support;
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use support::*;

fn start_faulty() -> (Seeded, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("campfire-ioerr-{}-{:?}", std::process::id(), std::thread::current().id()));
    fs::create_dir_all(&dir).unwrap();
    let flag = dir.join("fault");
    let srv = Server::start_in(&dir, &[("CAMPFIRE_FAULT_FILE", flag.to_str().unwrap())]);
    let now = campfire::db::time::now_us();
    let conn = campfire::db::Conn::open(srv.db_path().to_str().unwrap(), campfire::db::Mode::ReadWrite).unwrap();
    conn.transaction(|c| c.exec(&sql(now))).expect("seed");
    (Seeded { srv, now }, flag)
}

fn post(s: &Seeded, tag: &str) -> Response {
    let body = format!("{tag} {}", "io error words ".repeat(40));
    s.srv.send(
        &Request::post_form(&format!("/rooms/{HQ}/messages"), &[("message[body]", &body)])
            .cookies(&s.jar(DAVID))
            .header("Accept", "text/vnd.turbo-stream.html, text/html"),
    )
}

fn cli(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3").arg(db).arg(sql).output().expect("the sqlite3 CLI");
    assert!(out.status.success(), "sqlite3 {sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tags (`<prefix>N`) of the stored messages.
fn stored(db: &Path, prefix: &str) -> Vec<String> {
    let out = cli(db, &format!("SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND body LIKE '{prefix}%'"));
    let mut v: Vec<String> = out.lines().filter_map(|l| l.split(' ').next().map(str::to_string)).collect();
    v.sort();
    v
}

fn check(db: &Path, prefix: &str, acked: &[String]) {
    assert_eq!(cli(db, "PRAGMA integrity_check").trim(), "ok");
    cli(db, "INSERT INTO message_search_index(message_search_index) VALUES('integrity-check')");
    let mut want = acked.to_vec();
    want.sort();
    assert_eq!(stored(db, prefix), want, "exactly the acknowledged messages are stored");
    let indexed = cli(db, &format!("SELECT count(*) FROM message_search_index WHERE body LIKE '{prefix}%'"));
    assert_eq!(indexed.trim().parse::<usize>().unwrap(), acked.len(), "each with its search row");
}

fn reads_still_served(s: &Seeded) {
    assert_eq!(s.srv.send(&Request::get("/up")).status, 200);
    assert_eq!(s.get(DAVID, &format!("/rooms/{HQ}")).status, 200, "the room page is served");
}

#[test]
fn write_errors_refuse_the_post_keep_nothing_and_pass() {
    let (s, flag) = start_faulty();
    let mut acked = Vec::new();
    for k in 0..3 {
        let tag = format!("io{k}");
        assert_eq!(post(&s, &tag).status, 200);
        acked.push(tag);
    }
    for (what, status) in [("ioerr", 500), ("full", 507)] {
        fs::write(&flag, what).unwrap();
        for k in 0..5 {
            let r = post(&s, &format!("io{what}{k}"));
            assert_eq!(r.status, status, "{what}: {}\n{}", r.body, s.srv.stderr());
        }
        reads_still_served(&s);
        fs::remove_file(&flag).unwrap();
        // The writer is not wedged: the very next post is kept.
        let tag = format!("io{what}after");
        let r = post(&s, &tag);
        assert_eq!(r.status, 200, "after {what} cleared: {}\n{}", r.body, s.srv.stderr());
        acked.push(tag);
    }
    let log = s.srv.stderr();
    assert!(log.contains("500 database error") && log.contains("disk I/O error"), "the log says why:\n{log}");
    assert!(log.contains("507 database error"), "the log says why:\n{log}");
    let dir = s.srv.stop_keeping_files();
    check(&dir.join("storage/db/test.sqlite3"), "io", &acked);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn checkpoint_errors_lose_nothing_and_catch_up() {
    let (s, flag) = start_faulty();
    let mut acked = Vec::new();
    // Only the database file fails: commits (WAL writes) go on, checkpoints cannot copy.
    fs::write(&flag, "ioerr main").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut k = 0;
    while !s.srv.stderr().contains("db: checkpoint failed") {
        assert!(Instant::now() < deadline, "no checkpoint failed:\n{}", s.srv.stderr());
        let tag = format!("ck{k}");
        let r = post(&s, &tag);
        assert_eq!(r.status, 200, "commits go on while checkpoints fail: {}", r.body);
        acked.push(tag);
        k += 1;
        std::thread::sleep(Duration::from_millis(100));
    }
    reads_still_served(&s);
    fs::remove_file(&flag).unwrap();
    // The checkpointer catches up: the database file alone (without its WAL) holds them all.
    let alone = s.srv.dir.join("alone.sqlite3");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let _ = fs::remove_file(s.srv.dir.join("alone.sqlite3-wal"));
        fs::copy(s.srv.db_path(), &alone).unwrap();
        // Until the first checkpoint the file alone does not even hold the schema.
        let copied = Command::new("sqlite3").arg(&alone).arg("SELECT count(*) FROM action_text_rich_texts WHERE body LIKE 'ck%'").output().unwrap();
        if String::from_utf8_lossy(&copied.stdout).trim() == acked.len().to_string() {
            break;
        }
        assert!(Instant::now() < deadline, "the WAL was never checkpointed once writes worked again");
        let tag = format!("ck{k}");
        assert_eq!(post(&s, &tag).status, 200);
        acked.push(tag);
        k += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    let dir = s.srv.stop_keeping_files();
    check(&dir.join("storage/db/test.sqlite3"), "ck", &acked);
    let _ = fs::remove_dir_all(&dir);
}
