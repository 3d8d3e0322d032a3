//! Issue 14 §3: `./campfire-room COMMAND` — backup while the server writes, restore, a sign-in
//! link or a password for a locked-out user, admin, VAPID keys, --help and --version. Each runs
//! the real binary as a second process on the server's files; the copies are read by the
//! `sqlite3` CLI, a third.

mod auth_support;
use auth_support::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The binary as the server in `dir` is configured, with `args`.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = auth_support::command(0, dir);
    cmd.env("SECRET_KEY_BASE", "dummy").args(args);
    cmd
}

fn run(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().expect("run campfire-room")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn sqlite(db: &Path, sql: &str) -> String {
    let out = Command::new("sqlite3").arg(db).arg(sql).output().expect("the sqlite3 CLI");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

fn post(srv: &Server, jar: &Jar, body: &str) -> bool {
    let r = srv.send(
        &Request::post_form("/rooms/1/messages", &[("message[body]", body), ("message[client_message_id]", body)]).cookies(jar),
    );
    (200..400).contains(&r.status)
}

#[test]
fn help_version_and_bad_usage() {
    let dir = std::env::temp_dir().join(format!("campfire-cli-help-{}", std::process::id()));
    let help = run(&dir, &["--help"]);
    assert!(help.status.success());
    for cmd in ["backup DEST", "restore SRC", "reset-password EMAIL", "admin EMAIL", "vapid-keys", "--version"] {
        assert!(text(&help.stdout).contains(cmd), "{cmd} in {}", text(&help.stdout));
    }
    let version = run(&dir, &["--version"]);
    assert_eq!(text(&version.stdout), format!("campfire-room {}\n", env!("CARGO_PKG_VERSION")));
    let bad = run(&dir, &["backup"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("unknown command or arguments"), "{}", text(&bad.stderr));
    assert_eq!(run(&dir, &["frobnicate"]).status.code(), Some(2));
    // The version is also the default X-Version (no more "Campfire 0").
    let srv = Server::start(&[]);
    let r = srv.send(&Request::get("/session/new"));
    assert_eq!(r.header("X-Version"), Some(env!("CARGO_PKG_VERSION")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn backup_while_posting_holds_every_message_acknowledged_before_it_began() {
    let srv = Server::start(&[]);
    let jar = first_run(&srv);
    // A file under STORAGE_PATH besides the database, as an attachment's would be.
    let blob = srv.dir.join("storage/ab/cd/abcdtestkey");
    std::fs::create_dir_all(blob.parent().unwrap()).unwrap();
    std::fs::write(&blob, b"attachment bytes").unwrap();
    let acknowledged = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    let (dir_copy, tar_copy) = (srv.dir.join("backup-dir"), srv.dir.join("backup.tar"));
    let before: Vec<String> = std::thread::scope(|s| {
        s.spawn(|| {
            let mut n = 0;
            while !stop.load(Ordering::Acquire) {
                let body = format!("during-{n}");
                if post(&srv, &jar, &body) {
                    acknowledged.lock().unwrap().push(body);
                }
                n += 1;
            }
        });
        while acknowledged.lock().unwrap().len() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let before = acknowledged.lock().unwrap().clone();
        let a = run(&srv.dir, &["backup", dir_copy.to_str().unwrap()]);
        let b = run(&srv.dir, &["backup", tar_copy.to_str().unwrap()]);
        stop.store(true, Ordering::Release);
        assert!(a.status.success(), "{}", text(&a.stderr));
        assert!(b.status.success(), "{}", text(&b.stderr));
        before
    });
    let copy = dir_copy.join("database.sqlite3");
    assert_eq!(sqlite(&copy, "PRAGMA integrity_check"), "ok");
    let found: i64 = sqlite(&copy, &format!(
        "SELECT count(*) FROM messages WHERE client_message_id IN ({})",
        before.iter().map(|b| format!("'{b}'")).collect::<Vec<_>>().join(",")
    ))
    .parse()
    .unwrap();
    assert_eq!(found, before.len() as i64, "every message acknowledged before the backup began");
    // The search index came along too (it is part of the database).
    let indexed: i64 = sqlite(&copy, "SELECT count(*) FROM message_search_index WHERE message_search_index MATCH 'during'").parse().unwrap();
    assert!(indexed >= found, "{indexed} indexed");
    assert_eq!(std::fs::read(dir_copy.join("storage/ab/cd/abcdtestkey")).unwrap(), b"attachment bytes");
    assert!(!dir_copy.join("storage/db/test.sqlite3").exists(), "the live database is not copied as a file");
    // The archive holds the same, readable by tar(1).
    let list = Command::new("tar").arg("-tf").arg(&tar_copy).output().unwrap();
    let list = text(&list.stdout);
    assert!(list.lines().any(|l| l == "database.sqlite3") && list.contains("storage/ab/cd/abcdtestkey"), "{list}");
    // A backup never overwrites.
    let again = run(&srv.dir, &["backup", tar_copy.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn restore_refuses_a_live_server_checks_the_copy_and_switches() {
    let srv = Server::start(&[]);
    let jar = first_run(&srv);
    assert!(post(&srv, &jar, "kept-1") && post(&srv, &jar, "kept-2"));
    let tar = srv.dir.join("b.tar");
    assert!(run(&srv.dir, &["backup", tar.to_str().unwrap()]).status.success());
    assert!(post(&srv, &jar, "after-backup"));
    let live = run(&srv.dir, &["restore", tar.to_str().unwrap()]);
    assert_eq!(live.status.code(), Some(1));
    assert!(text(&live.stderr).contains("a server is running"), "{}", text(&live.stderr));
    // A second server on the same files is refused too.
    let second = run(&srv.dir, &[]);
    assert_eq!(second.status.code(), Some(1));
    assert!(text(&second.stderr).contains("another campfire-room is serving"), "{}", text(&second.stderr));

    let dir = srv.stop_keeping_files();
    // A damaged copy is refused before anything is touched.
    let broken = dir.join("broken.tar");
    let mut bytes = std::fs::read(&tar).unwrap();
    let at = bytes.len() / 2;
    let end = (at + 4096).min(bytes.len());
    bytes[at..end].fill(0x5a);
    std::fs::write(&broken, &bytes).unwrap();
    let refused = run(&dir, &["restore", broken.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused.stderr));
    let db: PathBuf = dir.join("storage/db/test.sqlite3");
    assert_eq!(sqlite(&db, "SELECT count(*) FROM messages WHERE client_message_id = 'after-backup'"), "1", "untouched");

    let ok = run(&dir, &["restore", tar.to_str().unwrap()]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    let srv = Server::start_in(&dir, &[]);
    assert_eq!(srv.query_int("SELECT count(*) FROM messages WHERE client_message_id IN ('kept-1', 'kept-2')"), 2);
    assert_eq!(srv.query_int("SELECT count(*) FROM messages WHERE client_message_id = 'after-backup'"), 0);
    // The restored database serves: the old session cookie still signs in.
    let room = srv.send(&Request::get("/rooms/1").cookies(&jar));
    assert_eq!(room.status, 200, "{room:?}");
    assert!(room.body.contains("kept-2"));
}

#[test]
fn reset_password_prints_a_sign_in_link_or_sets_a_password_from_stdin() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let out = run(&srv.dir, &["reset-password", "ada@example.com"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let link = text(&out.stdout).trim().to_string();
    let path = link.strip_prefix("http://localhost:").and_then(|l| l.split_once('/')).map(|(_, p)| format!("/{p}")).expect(&link);
    assert!(path.starts_with("/session/transfers/"), "{link}");
    let mut jar = Jar::default();
    let page = jar.send(&srv, Request::get(&path));
    assert_eq!(page.status, 200, "the transfer page: {page:?}");
    let r = jar.send(&srv, Request::post_form(&path, &[("_method", "put")]));
    assert!(jar.get("session_token").is_some(), "the link signs Ada in: {r:?}");

    let mut set = command(&srv.dir, &["reset-password", "ada@example.com", "--stdin"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    use std::io::Write;
    set.stdin.take().unwrap().write_all(b"a new password 1\n").unwrap();
    let out = set.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sign_in = |pw: &str| srv.send(&Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", pw)])).status;
    assert_eq!(sign_in("a new password 1"), 302);
    assert_eq!(sign_in("secret123456"), 401);

    let unknown = run(&srv.dir, &["reset-password", "nobody@example.com"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(text(&unknown.stderr).contains("no user with the e-mail address nobody@example.com"));
}

#[test]
fn admin_promotes_a_member_while_the_server_runs() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let code = srv.query_text("SELECT join_code FROM accounts");
    let mut kevin = Jar::default();
    let r = kevin.send(
        &srv,
        Request::post_form(
            &format!("/join/{code}"),
            &[("user[name]", "Kevin"), ("user[email_address]", "kevin@example.com"), ("user[password]", "secret123456")],
        ),
    );
    assert_eq!(r.status, 302);
    assert_eq!(kevin.send(&srv, Request::post_form("/account/join_code", &[])).status, 403, "not yet an administrator");
    let out = run(&srv.dir, &["admin", "kevin@example.com"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(srv.query_int("SELECT role FROM users WHERE email_address = 'kevin@example.com'"), 1);
    assert_eq!(kevin.send(&srv, Request::post_form("/account/join_code", &[])).status, 302, "now one");
}

#[test]
fn vapid_keys_are_a_pair_the_server_takes() {
    let dir = std::env::temp_dir().join(format!("campfire-cli-vapid-{}", std::process::id()));
    let out = run(&dir, &["vapid-keys"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let value = |k: &str| stdout.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).map(str::to_owned).expect(k);
    let (public, private) = (value("VAPID_PUBLIC_KEY"), value("VAPID_PRIVATE_KEY"));
    assert_eq!((public.len(), private.len()), (88, 44));
    let srv = Server::start(&[("VAPID_PUBLIC_KEY", &public), ("VAPID_PRIVATE_KEY", &private)]);
    let jar = first_run(&srv);
    let page = srv.send(&Request::get("/rooms/1").cookies(&jar));
    assert!(page.body.contains(public.trim_end_matches('=')), "the public key is offered to browsers");
    assert!(!srv.stderr().contains("Web Push is off"), "{}", srv.stderr());
    let _ = std::fs::remove_dir_all(&dir);
}
