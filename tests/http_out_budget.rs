//! Memory bounded by construction (issue 15): clients that pipeline requests and never read the
//! responses. A connection parses no further request while more than a little output waits, a
//! large embedded or cached body waits by reference, and past CAMPFIRE_OUT_BUDGET the
//! connections holding the most are dropped. Counted from the server's /proc/PID/status, the
//! way README's limits table states the worst case per connection.

mod http_support;
use http_support::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// README: a connection holds at most its read buffer (16 KiB), 16 KiB of unsent output and the
/// response in progress, which for an embedded asset or a cached page is a reference. Generous
/// for allocator slack; the old 256 KiB high-water mark held ~450 KiB per connection here.
const PER_CONNECTION_LIMIT_KIB: u64 = 48;

fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// The largest embedded asset the first-run page links (turbo's JavaScript, ~200 KB), and its
/// bytes fetched alone.
fn big_asset(srv: &Server) -> (String, Vec<u8>) {
    let page = srv.raw(b"GET /first_run HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&page), 200, "{page}");
    let mut best = (String::new(), Vec::new());
    for part in page.split("\"/assets/").skip(1) {
        let path = format!("/assets/{}", &part[..part.find('"').unwrap()]);
        if !path.ends_with(".js") {
            continue;
        }
        let body = body_of(&get_bytes(srv, &path));
        if body.len() > best.1.len() {
            best = (path, body);
        }
    }
    assert!(best.1.len() > 100_000, "no large asset linked from /first_run: {best:?}");
    best
}

fn get_bytes(srv: &Server, path: &str) -> Vec<u8> {
    let mut s = srv.connect();
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    got
}

fn body_of(response: &[u8]) -> Vec<u8> {
    let at = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    response[at + 4..].to_vec()
}

/// Opens `n` connections that each write `m` GETs of `path` at once and never read.
fn flood(srv: &Server, path: &str, n: usize, m: usize) -> Vec<TcpStream> {
    let burst = format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").repeat(m);
    (0..n)
        .map(|_| {
            let mut s = srv.connect();
            s.write_all(burst.as_bytes()).unwrap();
            s
        })
        .collect()
}

/// Waits until the server has had the time to answer what it will (it reads nothing more from
/// connections it stopped), then until its RSS stops moving.
fn settle(pid: u32) {
    std::thread::sleep(Duration::from_millis(500));
    let mut last = status_kib(pid, "VmRSS");
    for _ in 0..20 {
        std::thread::sleep(Duration::from_millis(100));
        let now = status_kib(pid, "VmRSS");
        if now == last {
            return;
        }
        last = now;
    }
}

#[test]
fn pipelining_clients_that_never_read_hold_a_bounded_amount_each() {
    // A budget no flood here reaches: this counts what each connection holds on its own.
    let srv = Server::start(&[("CAMPFIRE_LOOPS", "1"), ("CAMPFIRE_OUT_BUDGET", "1073741824")]);
    let pid = srv.child.id();
    let (path, _) = big_asset(&srv);
    // Warm: the asset's pages, the loop's buffers and the slab at this size are in the baseline.
    drop(flood(&srv, &path, 100, 1));
    settle(pid);
    // The high-water mark may still be startup's; the anonymous memory now is the flood's.
    let (before, anon_before) = (status_kib(pid, "VmHWM"), status_kib(pid, "RssAnon"));
    let n = 100;
    let held = flood(&srv, &path, n, 30);
    settle(pid);
    let (after, anon) = (status_kib(pid, "VmHWM"), status_kib(pid, "RssAnon"));
    let per = after.saturating_sub(before).max(anon.saturating_sub(anon_before)) / n as u64;
    eprintln!("{n} connections x 30 pipelined GET {path} never read: VmHWM {before} -> {after} KiB, RssAnon {anon_before} -> {anon} KiB: {per} KiB each");
    // Meanwhile a fresh request is answered.
    let up = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&up), 200, "{up}");
    assert!(per <= PER_CONNECTION_LIMIT_KIB, "{per} KiB per connection (VmHWM {before} -> {after} KiB, RssAnon {anon_before} -> {anon} KiB)");
    assert!(!srv.stdout().contains("CAMPFIRE_OUT_BUDGET"), "dropped under a budget of 1 GiB:\n{}", srv.stdout());
    drop(held);
}

#[test]
fn past_the_budget_the_largest_holders_are_dropped_and_fresh_requests_are_answered() {
    // 64 KiB, the least allowed: a connection stops above 16 KiB of unsent output, so at most a
    // few connections fit and the rest are dropped.
    let srv = Server::start(&[("CAMPFIRE_LOOPS", "1"), ("CAMPFIRE_OUT_BUDGET", "65536")]);
    let pid = srv.child.id();
    let (path, _) = big_asset(&srv);
    let n = 40;
    let held = flood(&srv, &path, n, 30);
    settle(pid);
    let up = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&up), 200, "{up}");
    let t0 = Instant::now();
    let drops = loop {
        // The access log is written in batches.
        let drops = srv.stdout().matches("over CAMPFIRE_OUT_BUDGET").count();
        if drops >= n - 4 || t0.elapsed() > Duration::from_secs(5) {
            break drops;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("{n} flooding connections, budget 64 KiB: {drops} dropped");
    // All of them may go: a response in progress counts whole until sent, so a connection that
    // the kernel took less than ~140 KB of the ~200 KB asset from is over 64 KiB by itself (it
    // happened in one clean-clone run of 6). That shedding stops under the budget is the test
    // above, where a budget no flood reaches drops nothing.
    assert!(drops >= n - 4, "{drops} of {n} connections dropped:\n{}", srv.stdout());
    drop(held);
}

#[test]
fn a_pipelining_client_that_reads_late_gets_every_response_whole_and_in_order() {
    let srv = Server::start(&[("CAMPFIRE_LOOPS", "1")]);
    let (path, asset) = big_asset(&srv);
    // Kept bodies (the asset) between copied ones (/up, a 404) and heads alone, so that output
    // queued behind a kept tail must copy its rest first.
    let kinds = ["GET", "GET", "HEAD", "UP", "GET", "404", "GET", "GET", "UP", "GET"];
    let mut burst = String::new();
    for k in kinds.iter().cycle().take(30) {
        burst.push_str(&match *k {
            "UP" => "GET /up HTTP/1.1\r\nHost: x\r\n\r\n".to_string(),
            "404" => "GET /assets/nothing-00000000.js HTTP/1.1\r\nHost: x\r\n\r\n".to_string(),
            m => format!("{m} {path} HTTP/1.1\r\nHost: x\r\n\r\n"),
        });
    }
    burst.push_str("GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut s = srv.connect();
    s.write_all(burst.as_bytes()).unwrap();
    // Let the server fill the socket and stop; then read it all.
    std::thread::sleep(Duration::from_millis(300));
    let mut got = Vec::new();
    s.read_to_end(&mut got).unwrap();
    let mut rest = &got[..];
    for (i, k) in kinds.iter().cycle().take(30).chain(["UP"].iter()).enumerate() {
        let at = rest.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or_else(|| panic!("response {i} missing"));
        let head = std::str::from_utf8(&rest[..at]).unwrap();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .map_or(0, |v| v.trim().parse().unwrap());
        let body_len = if *k == "HEAD" { 0 } else { len };
        let body = &rest[at + 4..at + 4 + body_len];
        match *k {
            "GET" | "HEAD" => {
                assert!(head.starts_with("HTTP/1.1 200"), "response {i}: {head}");
                assert_eq!(len, asset.len(), "response {i}: {head}");
                if *k == "GET" {
                    assert!(body == &asset[..], "response {i}: the body differs from the asset");
                }
            }
            "UP" => assert!(head.starts_with("HTTP/1.1 200"), "response {i}: {head}"),
            _ => assert!(head.starts_with("HTTP/1.1 404"), "response {i}: {head}"),
        }
        rest = &rest[at + 4 + body_len..];
    }
    assert!(rest.is_empty(), "{} bytes after the last response", rest.len());
}
