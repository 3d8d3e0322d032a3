//! HTTP/1.1 behaviour of the real binary: pipelining, keep-alive rules, HEAD, chunked bodies,
//! Expect: 100-continue, the health check.

mod http_support;
use http_support::*;
use std::io::Write;

#[test]
fn up_is_a_green_page() {
    let srv = Server::start(&[]);
    let r = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&r), 200, "{r}");
    assert!(r.contains("Content-Type: text/html; charset=utf-8\r\n"));
    assert!(r.contains("background-color: green"));
    assert!(r.contains("Connection: close\r\n"));
    let r = srv.raw(b"GET /nothing-here HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status(&r), 404);
}

#[test]
fn hundred_pipelined_requests_answered_in_order() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    let mut req = Vec::new();
    for i in 0..100 {
        if i % 3 == 0 {
            req.extend_from_slice(b"GET /missing HTTP/1.1\r\nHost: x\r\n\r\n");
        } else {
            let body = format!("req-{i:03}");
            req.extend_from_slice(format!("POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
        }
    }
    s.write_all(&req).unwrap();
    // The last request is a 404; its body ("Not Found\n", unlike the status line's
    // "Not Found\r\n") ends the stream: 34 of them in all.
    let text = read_until(&mut s, "Not Found\n", 34);
    let codes = statuses(&text);
    assert_eq!(codes.len(), 100, "{text}");
    let mut last = 0;
    for (i, code) in codes.iter().enumerate() {
        if i % 3 == 0 {
            assert_eq!(*code, 404, "response {i}");
        } else {
            assert_eq!(*code, 200, "response {i}");
            let at = text.find(&format!("7 req-{i:03}")).unwrap_or_else(|| panic!("body {i} missing"));
            assert!(at > last, "response {i} out of order");
            last = at;
        }
    }
    // The connection is still usable afterwards.
    s.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(read_until(&mut s, "</html>", 1).starts_with("HTTP/1.1 200 "));
}

#[test]
fn http10_and_connection_close() {
    let srv = Server::start(&[]);
    // HTTP/1.0 without keep-alive: answered in 1.0 and closed (read_to_close would time out).
    let mut s = srv.connect();
    s.write_all(b"GET /up HTTP/1.0\r\n\r\n").unwrap();
    let r = read_to_close(&mut s);
    assert!(r.starts_with("HTTP/1.0 200 OK\r\n"), "{r}");
    assert!(r.contains("Connection: close\r\n"));
    // HTTP/1.0 with keep-alive: stays open for a second request.
    let mut s = srv.connect();
    s.write_all(b"GET /up HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").unwrap();
    let r = read_until(&mut s, "</html>", 1);
    assert!(r.contains("Connection: keep-alive\r\n"), "{r}");
    s.write_all(b"GET /up HTTP/1.0\r\n\r\n").unwrap();
    let r = read_to_close(&mut s);
    assert_eq!(status(&r), 200);
    // HTTP/1.1 Connection: close: the pipelined request after it is never answered.
    let mut s = srv.connect();
    s.write_all(b"GET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let r = read_to_close(&mut s);
    assert_eq!(statuses(&r), vec![200], "{r}");
}

#[test]
fn head_has_no_body() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    s.write_all(b"HEAD /up HTTP/1.1\r\nHost: x\r\n\r\nGET /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
    let r = read_to_close(&mut s);
    let first = &r[..r.find("\r\n\r\n").unwrap() + 4];
    // The second response starts right after the first head: HEAD sent no body bytes.
    let second = &r[first.len()..];
    assert!(second.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
    // HEAD announces the length GET sends.
    let get_body = &second[second.find("\r\n\r\n").unwrap() + 4..];
    assert!(first.contains(&format!("Content-Length: {}\r\n", get_body.len())), "{first}");
}

#[test]
fn chunked_body_is_dechunked() {
    let srv = Server::start(&[]);
    let r = srv.raw(
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
          5\r\nhello\r\n1;name=val\r\n \r\nA\r\nchunked!!!\r\n0\r\nX-Trailer: yes\r\n\r\n",
    );
    assert_eq!(status(&r), 200, "{r}");
    assert!(r.ends_with("\r\n\r\n16 hello chunked!!!"), "{r}");
    // A chunked body arriving in pieces, with the next request behind it.
    let mut s = srv.connect();
    s.write_all(b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nab").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    s.write_all(b"c\r\n0\r\n\r\nGET /up HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let r = read_until(&mut s, "</html>", 1);
    assert_eq!(statuses(&r), vec![200, 200], "{r}");
    assert!(r.contains("\r\n\r\n3 abc"));
    // A large chunked body across many reads.
    let big: Vec<u8> = (0..200_000).map(|i| b'a' + (i % 26) as u8).collect();
    let mut req = b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
    for part in big.chunks(7_001) {
        req.extend_from_slice(format!("{:x}\r\n", part.len()).as_bytes());
        req.extend_from_slice(part);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    let r = srv.raw(&req);
    assert!(r.contains("\r\n\r\n200000 abcdefghijklmnopqrstuvwxyz"), "{}", &r[..r.len().min(300)]);
}

#[test]
fn expect_100_continue() {
    let srv = Server::start(&[]);
    let mut s = srv.connect();
    s.write_all(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n").unwrap();
    let r = read_until(&mut s, "\r\n\r\n", 1);
    assert_eq!(r, "HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(b"data").unwrap();
    let r = read_until(&mut s, "4 data", 1);
    assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
    // With the body already there, no 100 is sent.
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhi");
    assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
    // Other expectations are refused.
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: magic\r\n\r\nhi");
    assert_eq!(status(&r), 417);
}

#[test]
fn parked_request_does_not_block_the_loop() {
    let srv = Server::start(&[("CAMPFIRE_LOOPS", "1")]);
    let mut slow = srv.connect();
    slow.write_all(b"GET /__park?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let t0 = std::time::Instant::now();
    let r = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(status(&r), 200);
    assert!(t0.elapsed() < std::time::Duration::from_millis(300), "served behind the parked request");
    let r = read_until(&mut slow, "parked 300ms", 1);
    assert!(r.starts_with("HTTP/1.1 200 OK"), "{r}");
}

#[test]
fn access_log_line_per_request() {
    let srv = Server::start(&[("CAMPFIRE_LOG", "1")]);
    srv.raw(b"GET /up?x=1 HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
    // Lines are written within 100 ms of being logged.
    let t0 = std::time::Instant::now();
    while srv.stdout().lines().count() < 2 && t0.elapsed() < std::time::Duration::from_secs(2) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let log = srv.stdout();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].starts_with("GET /up 200 ") && lines[0].ends_with("us"), "{log}");
    assert!(lines[1].starts_with("GET /nope 404 "), "{log}");
}
