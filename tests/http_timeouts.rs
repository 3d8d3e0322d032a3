//! Slow and idle clients: a slowloris is cut off after the request timeout while others are
//! served; thousands of idle keep-alive connections do not slow down /up.

mod http_support;
use http_support::*;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

#[test]
fn slow_client_is_closed_while_others_are_served() {
    let srv = Server::start(&[("CAMPFIRE_REQUEST_TIMEOUT_MS", "1000"), ("CAMPFIRE_LOOPS", "1")]);
    let mut slow = srv.connect();
    let req = b"GET /up HTTP/1.1\r\nHost: x\r\nX-Padding: 0123456789\r\n\r\n";
    let t0 = Instant::now();
    let mut closed_at = None;
    let mut served = 0;
    for (i, b) in req.iter().enumerate() {
        if slow.write_all(&[*b]).is_err() {
            closed_at = Some(i);
            break;
        }
        // Another client gets its answer at once meanwhile.
        let r = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(status(&r), 200);
        served += 1;
        std::thread::sleep(Duration::from_millis(100));
        if t0.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    // Whether or not a write failed yet, the server has closed: we read its 408 and EOF.
    slow.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut got = Vec::new();
    let _ = slow.read_to_end(&mut got);
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408 "), "slow client got {text:?}");
    assert!(t0.elapsed() < Duration::from_secs(4), "closed only after {:?}", t0.elapsed());
    assert!(closed_at.unwrap_or(req.len()) < req.len() || text.contains("408"));
    assert!(served >= 5);
}

#[test]
fn idle_keep_alive_connection_is_closed() {
    let srv = Server::start(&[("CAMPFIRE_IDLE_TIMEOUT_MS", "300")]);
    let mut s = srv.connect();
    s.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let t0 = Instant::now();
    let r = read_to_close(&mut s);
    assert_eq!(status(&r), 200);
    assert!(t0.elapsed() < Duration::from_secs(3));
    // A connection that never sends anything is closed too.
    let mut s = srv.connect();
    assert_eq!(read_to_close(&mut s), "");
}

#[test]
fn five_thousand_idle_connections() {
    // Our own descriptors: 5,000 client sockets.
    campfire::sys::process::raise_nofile_limit().unwrap();
    let srv = Server::start(&[]);
    let mut idle = Vec::with_capacity(5000);
    for i in 0..5000 {
        let mut s = srv.connect();
        if i % 2 == 0 {
            // Half have made a request and now sit in keep-alive.
            s.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        }
        idle.push(s);
    }
    for s in idle.iter_mut().step_by(2) {
        let r = read_until(s, "</html>", 1);
        assert_eq!(status(&r), 200);
    }
    let mut times = Vec::new();
    for _ in 0..9 {
        let t0 = Instant::now();
        let mut s = srv.connect();
        s.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let r = read_until(&mut s, "</html>", 1);
        times.push(t0.elapsed());
        assert_eq!(status(&r), 200);
    }
    times.sort();
    assert!(times[4] < Duration::from_millis(10), "median /up with 5,000 idle connections: {:?}", times[4]);
    // Every idle connection is still open and usable.
    let last = idle.last_mut().unwrap();
    last.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert_eq!(status(&read_until(last, "</html>", 1)), 200);
}

#[test]
fn connection_cap_answers_503() {
    let srv = Server::start(&[("CAMPFIRE_MAX_CONNECTIONS", "3"), ("CAMPFIRE_LOOPS", "1"), ("CAMPFIRE_LOG", "1")]);
    // Let the server see the start-up probe's connection close before counting.
    std::thread::sleep(Duration::from_millis(100));
    let held: Vec<_> = (0..3).map(|_| srv.connect()).collect();
    std::thread::sleep(Duration::from_millis(50));
    let mut s = srv.connect();
    let r = read_to_close(&mut s);
    assert!(r.starts_with("HTTP/1.1 503 "), "{r} {} {}", srv.stdout(), srv.stderr());
    assert!(r.contains("Retry-After: 1\r\n"));
    drop(held);
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(status(&srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n")), 200);
}

#[test]
fn partial_requests_do_not_pin_full_buffers() {
    campfire::sys::process::raise_nofile_limit().unwrap();
    let srv = Server::start(&[]);
    let before = campfire::sys::process::rss_bytes(srv.child.id()).unwrap();
    let mut slow = Vec::new();
    for _ in 0..2000 {
        let mut s = srv.connect();
        s.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\nX-Slow: ").unwrap();
        slow.push(s);
    }
    // All of them are waiting; another client is still served.
    assert_eq!(status(&srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n")), 200);
    let after = campfire::sys::process::rss_bytes(srv.child.id()).unwrap();
    // 2,000 full 16 KiB read buffers would be 32 MB; small copies are about 4 MB.
    assert!(after - before.min(after) < 12 << 20, "RSS grew from {before} to {after}");
    // And each can still finish its request.
    let s = slow.last_mut().unwrap();
    s.write_all(b"1\r\n\r\n").unwrap();
    assert_eq!(status(&read_until(s, "</html>", 1)), 200);
}
