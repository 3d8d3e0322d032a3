//! The whole-response cache and gzip against the real binary (design §6, issue 7): gzip
//! framing, 304 on a cached page's ETag, and invalidation by our own writes, by a commit of
//! another process (the `sqlite3` CLI) and by revocation (sign-out, removal from a room).

mod support;
use std::io::{Read, Write};
use std::net::TcpStream;
use support::*;

/// One raw exchange, body kept as bytes (gzip is not text).
struct Raw {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.split("\r\n").skip(1).filter_map(|l| l.split_once(": ")).find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }
}

/// One cookie per user for the whole run, as a browser keeps it (`Seeded::jar` signs anew on
/// each call, and a different cookie is a different cache key).
fn jar_of(s: &Seeded, user: i64) -> Jar {
    static JARS: std::sync::Mutex<Vec<(i64, Jar)>> = std::sync::Mutex::new(Vec::new());
    let mut jars = JARS.lock().unwrap();
    if !jars.iter().any(|(u, _)| *u == user) {
        jars.push((user, s.jar(user)));
    }
    jars.iter().find(|(u, _)| *u == user).map(|(_, j)| j.clone()).unwrap()
}

fn raw_get(s: &Seeded, user: i64, path: &str, extra: &[(&str, &str)]) -> Raw {
    let jar = jar_of(s, user);
    let mut cookie: Vec<String> = jar.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    // A browser that has seen the room sends its last_room cookie back (else each view sets it).
    if let Some(room) = path.strip_prefix("/rooms/").and_then(|r| r.split(['/', '?']).next()) {
        cookie.push(format!("last_room={room}"));
    }
    raw_get_cookie(s, &cookie.join("; "), path, extra)
}

/// `raw_get` with the whole Cookie header given.
fn raw_get_cookie(s: &Seeded, cookie: &str, path: &str, extra: &[(&str, &str)]) -> Raw {
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nCookie: {cookie}\r\n", s.srv.port);
    for (k, v) in extra {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut c = TcpStream::connect(("127.0.0.1", s.srv.port)).unwrap();
    c.write_all(req.as_bytes()).unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8(all[..split].to_vec()).unwrap();
    let status = head.split(' ').nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
    Raw { status, head, body: all[split + 4..].to_vec() }
}

/// Decodes one complete gzip member and checks its trailer.
fn gunzip(b: &[u8]) -> Vec<u8> {
    assert_eq!(&b[..3], &[0x1f, 0x8b, 8], "gzip magic");
    assert_eq!(b[3], 0, "no optional fields");
    let n = b.len();
    let body = miniz_oxide::inflate::decompress_to_vec(&b[10..n - 8]).expect("a complete deflate stream");
    assert_eq!(&b[n - 8..n - 4], &campfire::gzip::crc32(0, &body).to_le_bytes(), "CRC-32");
    assert_eq!(&b[n - 4..], &(body.len() as u32).to_le_bytes(), "ISIZE");
    body
}

/// One loop: each loop has its own cache, and these tests open a connection per request.
fn one_loop() -> Seeded {
    start_with(&[("CAMPFIRE_LOOPS", "1"), ("CAMPFIRE_TEST_ROUTES", "1")])
}

/// The loop's cache counters (hits, misses), from the test route.
fn counters(s: &Seeded) -> (u64, u64) {
    let body = s.get(DAVID, "/__cache").body;
    let field = |k: &str| body.split(' ').find_map(|f| f.strip_prefix(k)).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{k} in {body}"));
    (field("hits="), field("misses="))
}

const GZ: (&str, &str) = ("Accept-Encoding", "gzip, deflate, br");

#[test]
fn pages_are_gzipped_when_accepted_and_byte_stable() {
    let s = one_loop();
    let plain = raw_get(&s, DAVID, "/users/me/sidebar", &[]);
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("Content-Encoding"), None);
    assert_eq!(plain.header("Vary"), Some("Accept-Encoding"));
    let gz = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
    assert_eq!(gz.status, 200);
    assert_eq!(gz.header("Content-Encoding"), Some("gzip"));
    assert_eq!(gz.header("Vary"), Some("Accept-Encoding"));
    assert_eq!(gz.header("Content-Length").unwrap().parse::<usize>().unwrap(), gz.body.len(), "framing");
    assert_eq!(gunzip(&gz.body), plain.body, "the same page");
    assert!(gz.body.len() * 3 < plain.body.len());
    // refused gzip gets the identity body
    let refused = raw_get(&s, DAVID, "/users/me/sidebar", &[("Accept-Encoding", "gzip;q=0, identity")]);
    assert_eq!(refused.header("Content-Encoding"), None);
    assert_eq!(refused.body, plain.body);
    // repeats are byte-identical (cached or not) and carry one strong ETag
    let again = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
    assert_eq!(again.body, gz.body);
    let etag = again.header("ETag").expect("an ETag on a cached page").to_string();
    assert!(etag.starts_with('"'), "strong: {etag}");
    // the identity and gzip forms have different validators
    let plain_again = raw_get(&s, DAVID, "/users/me/sidebar", &[]);
    assert_ne!(plain_again.header("ETag"), Some(etag.as_str()));
}

#[test]
fn a_cached_page_answers_304_to_its_etag() {
    let s = one_loop();
    let first = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
    let etag = first.header("ETag").expect("ETag").to_string();
    let nm = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ, ("If-None-Match", &etag)]);
    assert_eq!(nm.status, 304, "{}", s.srv.stderr());
    assert!(nm.body.is_empty());
    assert_eq!(nm.header("ETag"), Some(etag.as_str()));
    // another user never gets David's validator honoured, nor his page
    let jason = raw_get(&s, JASON, "/users/me/sidebar", &[GZ, ("If-None-Match", &etag)]);
    assert_eq!(jason.status, 200);
    assert_ne!(gunzip(&jason.body), gunzip(&first.body));
}

/// Warms the cache for `path` and returns the decoded page (two identical answers in a row;
/// the first view of a room may itself write, e.g. marking it read).
fn warm(s: &Seeded, user: i64, path: &str) -> String {
    let mut last = Vec::new();
    for _ in 0..4 {
        let r = raw_get(s, user, path, &[GZ]);
        assert_eq!(r.status, 200, "{path}");
        let body = gunzip(&r.body);
        if body == last {
            let etag = r.header("ETag").unwrap_or_else(|| panic!("no ETag: {}", r.head)).to_string();
            let (hits, _) = counters(s);
            assert_eq!(raw_get(s, user, path, &[GZ, ("If-None-Match", &etag)]).status, 304, "served from the cache");
            assert_eq!(counters(s).0, hits + 1, "the 304 was a cache hit");
            return String::from_utf8(body).unwrap();
        }
        last = body;
    }
    panic!("{path} never settled");
}

#[test]
fn our_own_writes_invalidate() {
    let s = one_loop();
    let path = format!("/rooms/{HQ}");
    let before = warm(&s, DAVID, &path);
    assert!(!before.contains("cache buster one"));
    // Unchanged data: the same request again is a hit, not a render.
    let (hits, misses) = counters(&s);
    raw_get(&s, DAVID, &path, &[GZ]);
    assert_eq!(counters(&s), (hits + 1, misses));
    let posted = s.post(DAVID, &format!("/rooms/{HQ}/messages"), &[("message[body]", "cache buster one")]);
    assert!(posted.status < 400, "{}", posted.status);
    let (hits, misses) = counters(&s);
    let after = gunzip(&raw_get(&s, DAVID, &path, &[GZ]).body);
    assert!(String::from_utf8(after).unwrap().contains("cache buster one"));
    assert_eq!(counters(&s), (hits, misses + 1), "the commit ended the entry: a miss, rendered afresh");
}

/// Runs `sql` through the sqlite3 CLI: another process's commit, not our writer's.
fn sqlite3_cli(s: &Seeded, sql: &str) {
    let out = std::process::Command::new("sqlite3").arg(s.srv.db_path()).arg(sql).output().expect("the sqlite3 CLI");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_commit_by_the_sqlite3_cli_invalidates() {
    let s = one_loop();
    let before = warm(&s, DAVID, "/users/me/sidebar");
    assert!(before.contains(">HQ</span>"));
    sqlite3_cli(&s, &format!("UPDATE rooms SET name = 'Renamed Outside' WHERE id = {HQ};"));
    let (hits, misses) = counters(&s);
    let after = String::from_utf8(gunzip(&raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]).body)).unwrap();
    assert!(after.contains(">Renamed Outside</span>"), "the next request sees the other process's commit");
    assert!(!after.contains(">HQ</span>"));
    assert_eq!(counters(&s), (hits, misses + 1), "a miss: the other process's commit ended the entry");
    // And the fresh page is cached again.
    raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
    assert_eq!(counters(&s).0, hits + 1);
}

/// The commit watch reads SQLite's own mapping of the `-shm` file. It once opened and closed a
/// descriptor of its own, and closing any descriptor of a file drops all of the process's POSIX
/// locks on it, SQLite's "in use" lock too: the next sqlite3 CLI then took itself for the first
/// user, truncated the `-shm` under the server and the server died of SIGBUS now and then.
#[test]
fn sqlite3_cli_commits_between_requests_leave_the_server_standing() {
    let s = one_loop();
    warm(&s, DAVID, "/users/me/sidebar");
    // SQLite marks a wal-index in use with a shared lock on its DMS byte (offset 128 of the
    // -shm file: 120 + 8 lock bytes). Another process asking for a write lock there must be told
    // that the server holds it.
    let shm = format!("{}-shm", s.srv.db_path().display());
    let probe = "import fcntl, os, struct, sys\n\
        fd = os.open(sys.argv[1], os.O_RDWR)\n\
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack('hhqqi4x', fcntl.F_WRLCK, 0, 128, 1, 0))\n\
        kind, _, _, _, pid = struct.unpack('hhqqi4x', got)\n\
        print('free' if kind == fcntl.F_UNLCK else pid)\n";
    let out = std::process::Command::new("python3").args(["-c", probe, &shm]).output().expect("python3");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let holder = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(holder, s.srv.pid().to_string(), "the server holds SQLite's in-use lock on the wal-index");
    for i in 0..40 {
        sqlite3_cli(&s, &format!("UPDATE rooms SET name = 'Outside {i}' WHERE id = {HQ};"));
        let r = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
        assert_eq!(r.status, 200, "round {i}");
        let page = String::from_utf8(gunzip(&r.body)).unwrap();
        assert!(page.contains(&format!(">Outside {i}</span>")), "round {i} sees the CLI's commit");
    }
}

#[test]
fn revocation_takes_effect_on_the_next_request() {
    let s = one_loop();
    // removal from a room (another connection's commit)
    let room = format!("/rooms/{DESIGNERS}");
    warm(&s, JZ, &room);
    s.srv.sql(&format!("DELETE FROM memberships WHERE room_id = {DESIGNERS} AND user_id = {JZ}"));
    let r = raw_get(&s, JZ, &room, &[GZ]);
    assert_ne!(r.status, 200, "no longer a member");

    // sign-out through our own writer: the old cookie no longer opens the cached page
    warm(&s, KEVIN, "/users/me/sidebar");
    let out = s.srv.send(
        &Request { method: "DELETE", path: "/session".into(), headers: vec![("Sec-Fetch-Site".into(), "same-origin".into())], body: Vec::new() }
            .cookies(&jar_of(&s, KEVIN)),
    );
    assert!(out.status < 400, "sign-out answered {}", out.status);
    let r = raw_get(&s, KEVIN, "/users/me/sidebar", &[GZ]);
    assert_eq!(r.status, 302, "signed out");
    assert!(r.header("Location").unwrap_or("").contains("/session/new"));

    // a session deleted by another process
    warm(&s, JASON, "/users/me/sidebar");
    s.srv.sql(&format!("DELETE FROM sessions WHERE user_id = {JASON}"));
    assert_eq!(raw_get(&s, JASON, "/users/me/sidebar", &[GZ]).status, 302);
}

/// The loop remembers each verified session cookie and the session it names (issue 7); none
/// of that may outlive the cookie's expiry, its exact bytes, or the session, user and
/// memberships behind it.
#[test]
fn the_session_memo_never_outlives_what_it_remembers() {
    let s = one_loop();
    let sidebar = "/users/me/sidebar";
    let cookie = |user: i64| format!("session_token={}", jar_of(&s, user).get("session_token").unwrap());

    // A cookie one byte away from a remembered one is verified on its own, and refused.
    warm(&s, JASON, sidebar);
    let good = cookie(JASON);
    let mut forged = good.clone().into_bytes();
    let last = forged.len() - 1;
    forged[last] = if forged[last] == b'0' { b'1' } else { b'0' };
    let forged = String::from_utf8(forged).unwrap();
    assert_eq!(raw_get_cookie(&s, &forged, sidebar, &[GZ]).status, 302, "a forged signature");
    assert_eq!(raw_get_cookie(&s, &good, sidebar, &[GZ]).status, 200, "the real one still works");

    // The user behind a remembered session is read again after another process's commit.
    s.srv.sql(&format!("UPDATE users SET name = 'Jason Memo' WHERE id = {JASON}"));
    let page = String::from_utf8(gunzip(&raw_get(&s, JASON, &format!("/rooms/{HQ}"), &[GZ]).body)).unwrap();
    assert!(page.contains("Jason Memo"), "the renamed user, not the remembered one");

    // A cookie is remembered only until its signed expiry.
    let keys = campfire::crypto::Keys::derive(b"dummy");
    let expires = campfire::crypto::time::now_ms() + 1500;
    let mut signed = Vec::new();
    campfire::crypto::cookies::session_token_value(&keys, b"KevinSessionToken0000001", expires, &mut signed);
    let mut escaped = Vec::new();
    campfire::crypto::cookies::form_escape(&signed, &mut escaped);
    let short = format!("session_token={}", String::from_utf8(escaped).unwrap());
    assert_eq!(raw_get_cookie(&s, &short, sidebar, &[GZ]).status, 200);
    assert_eq!(raw_get_cookie(&s, &short, sidebar, &[GZ]).status, 200, "remembered");
    while campfire::crypto::time::now_ms() <= expires {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(raw_get_cookie(&s, &short, sidebar, &[GZ]).status, 302, "expired, memo or not");

    // A ban and a deactivation through the app end the remembered sessions at once (Kevin's
    // session gets a public address, the kind a ban also blocks).
    s.srv.sql(&format!("UPDATE sessions SET ip_address = '203.0.113.9' WHERE user_id = {KEVIN}"));
    warm(&s, KEVIN, sidebar);
    let banned = s.post(DAVID, &format!("/users/{KEVIN}/ban"), &[]);
    assert!(banned.status < 400, "ban answered {}", banned.status);
    assert_eq!(raw_get(&s, KEVIN, sidebar, &[GZ]).status, 302, "banned");
    warm(&s, JZ, sidebar);
    let gone = s.post(DAVID, &format!("/account/users/{JZ}"), &[("_method", "delete")]);
    assert!(gone.status < 400, "deactivation answered {}", gone.status);
    assert_eq!(raw_get(&s, JZ, sidebar, &[GZ]).status, 302, "deactivated");
}

#[test]
fn the_cache_can_be_turned_off() {
    let s = start_with(&[("CAMPFIRE_CACHE_BYTES", "0"), ("CAMPFIRE_LOOPS", "1")]);
    let first = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
    assert_eq!(first.header("Content-Encoding"), Some("gzip"));
    assert_eq!(first.header("ETag"), None, "no cache, no validator");
    let again = raw_get(&s, DAVID, "/users/me/sidebar", &[GZ]);
    assert_eq!(again.body, first.body, "byte-stable without the cache too");
}
