//! Memory regression guards (issue 7): an idle server stays well under the 15 MB container
//! goal, and the database file is read, not memory-mapped (mapped pages counted in RSS and grew
//! with the database). The bounds are generous on purpose: they catch a lost setting (mmap back
//! on, a cache allocated up front, a big buffer per loop), not a few hundred KiB of drift.

mod http_support;
use http_support::*;

/// Generous bound on an idle server's resident set (the goal is 4 MB), checked for the binary
/// `make test` names in CAMPFIRE_BIN (the static release build); a debug build's code is larger.
const IDLE_RSS_LIMIT_KIB: u64 = 8 * 1024;
/// Generous bound on an idle server's anonymous memory (heap, stacks), for any build.
const IDLE_ANON_LIMIT_KIB: u64 = 3 * 1024;

/// A field of /proc/PID/status in KiB ("VmRSS", "RssAnon", ...).
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

#[test]
fn idle_server_is_small_and_does_not_map_the_database() {
    let srv = Server::start(&[("CAMPFIRE_LOOPS", "2")]);
    let pid = srv.child.id();
    // Touch the database through a loop's connection and the writer (first run page, /up).
    for path in ["/up", "/", "/first_run", "/session/new", "/up"] {
        let r = srv.raw(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes());
        assert!(matches!(status(&r), 200 | 302 | 303), "{path}: {r}");
    }
    std::thread::sleep(std::time::Duration::from_millis(200));

    let rss = status_kib(pid, "VmRSS");
    let anon = status_kib(pid, "RssAnon");
    let file = status_kib(pid, "RssFile");
    eprintln!("idle: VmRSS {rss} KiB (anon {anon}, file {file})");
    assert!(anon < IDLE_ANON_LIMIT_KIB, "idle RssAnon {anon} KiB (VmRSS {rss}, file {file})");
    if std::env::var_os("CAMPFIRE_BIN").is_some() {
        assert!(rss < IDLE_RSS_LIMIT_KIB, "idle VmRSS {rss} KiB (anon {anon}, file {file})");
    }

    let db = srv.dir.join("storage/db/test.sqlite3");
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    // The -shm file is the WAL index SQLite always maps; the database itself must not be.
    let mapped: Vec<&str> = maps.lines().filter(|l| l.ends_with(db.to_str().unwrap())).collect();
    assert!(maps.contains("test.sqlite3-shm"), "the server never opened the database:\n{maps}");
    assert!(mapped.is_empty(), "database memory-mapped: {mapped:?}");
}

#[test]
fn the_executable_startup_code_is_not_kept_resident() {
    let srv = Server::start(&[("CAMPFIRE_LOOPS", "1")]);
    let pid = srv.child.id();
    let r = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&r), 200, "{r}");
    // Whatever is resident of the executable's code is what serving /up and idling touched
    // since startup. The kernel maps code in whole (large) folios around each touched page, so
    // that is a good part of the code still; kept after startup it was nearly all of it (87%).
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap();
    let (mut size, mut rss, mut in_code) = (0u64, 0u64, false);
    for line in smaps.lines() {
        let mut f = line.split_whitespace();
        let first = f.next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            in_code = f.next() == Some("r-xp") && line.trim_end().ends_with(exe.to_str().unwrap());
        } else if in_code {
            let kib: u64 = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            match first {
                "Size:" => size += kib,
                "Rss:" => rss += kib,
                _ => {}
            }
        }
    }
    eprintln!("executable code: {rss} KiB resident of {size} KiB");
    assert!(size > 0, "no code mapping of {exe:?} found");
    assert!(rss * 4 < size * 3, "{rss} KiB of {size} KiB of code resident after startup");
}
