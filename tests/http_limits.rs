//! Limits and malformed input against the real binary: each limit's status, request-smuggling
//! shapes refused with 400 and the connection closed.

mod http_support;
use http_support::*;

#[test]
fn each_limit_has_its_status() {
    let srv = Server::start(&[
        ("CAMPFIRE_MAX_URL", "100"),
        ("CAMPFIRE_MAX_HEADER_BYTES", "1000"),
        ("CAMPFIRE_MAX_HEADERS", "10"),
        ("CAMPFIRE_MAX_BODY", "50"),
    ]);
    let long = "a".repeat(101);
    let r = srv.raw(format!("GET /{long} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes());
    assert_eq!(status(&r), 414, "{r}");
    assert!(r.contains("Connection: close\r\n"));
    // The 414 comes before the request line is even complete.
    let mut s = srv.connect();
    std::io::Write::write_all(&mut s, format!("GET /{long}").as_bytes()).unwrap();
    assert_eq!(status(&read_to_close(&mut s)), 414);

    let r = srv.raw(format!("GET /up HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(1000)).as_bytes());
    assert_eq!(status(&r), 431, "{r}");
    let many: String = (0..10).map(|i| format!("X-{i}: v\r\n")).collect();
    let r = srv.raw(format!("GET /up HTTP/1.1\r\nHost: x\r\n{many}\r\n").as_bytes());
    assert_eq!(status(&r), 431, "{r}");
    let r = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\nX-1: v\r\n\r\n");
    assert_eq!(status(&r), 200, "{r}");

    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 51\r\n\r\n");
    assert_eq!(status(&r), 413, "{r}");
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n");
    assert_eq!(status(&r), 413, "{r}");
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n01234567890123456789012345678901\r\n20\r\n");
    assert_eq!(status(&r), 413, "{r}");
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n01234567890123456789012345678901234567890123456789");
    assert_eq!(status(&r), 200, "{r}");
}

#[test]
fn smuggling_shapes_are_400_and_close() {
    let srv = Server::start(&[]);
    let bad: &[&[u8]] = &[
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0x3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length : 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\n Content-Length: 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\nContent-Length: 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\nHost: x\nContent-Length: 3\n\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\nContent-Length: 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\rContent-Length: 3\r\n\r\nabc",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZ\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
        b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n\r\n",
        b"POST /__echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        b"GET /up HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
        b"GET /up HTTP/1.1\r\n\r\n",
        b"GET  /up HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /up  HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /u\x01p HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /up HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n",
        b"GET /up HTTP/1.1\r\nHost: x\r\nX\x7f: 1\r\n\r\n",
        b"G(T /up HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET up HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET /up HTTP/1.1 \r\nHost: x\r\n\r\n",
        b"GET /up http/1.1\r\nHost: x\r\n\r\n",
        b"\nGET /up HTTP/1.1\r\nHost: x\r\n\r\n",
    ];
    for req in bad {
        let r = srv.raw(req);
        assert_eq!(status(&r), 400, "{:?} -> {r}", String::from_utf8_lossy(req));
        assert!(r.contains("Connection: close\r\n"));
        assert_eq!(statuses(&r).len(), 1, "answered past a framing error: {r}");
    }
    // Codings we do not implement, versions we do not speak, methods we do not know.
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
    assert_eq!(status(&r), 501, "{r}");
    let r = srv.raw(b"GET /up HTTP/2.0\r\nHost: x\r\n\r\n");
    assert_eq!(status(&r), 505, "{r}");
    let r = srv.raw(b"BREW /up HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status(&r), 501, "{r}");
    // The server is still fine.
    assert_eq!(status(&srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\n\r\n")), 200);
}

#[test]
fn accepted_edge_shapes() {
    let srv = Server::start(&[]);
    // Empty lines before a request, absolute-form target, tabs around values, mixed-case names.
    let r = srv.raw(b"\r\n\r\nGET http://example.com/up?x=1 HTTP/1.1\r\nhOsT:\texample.com \t\r\n\r\n");
    assert_eq!(status(&r), 200, "{r}");
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n");
    assert_eq!(status(&r), 200, "{r}");
    let r = srv.raw(b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    assert!(r.contains("\r\n\r\n0 "), "{r}");
    let r = srv.raw(b"GET /up HTTP/1.1\r\nHost: x\r\nX-Utf8: caf\xc3\xa9\r\n\r\n");
    assert_eq!(status(&r), 200, "{r}");
}

#[test]
fn refusal_mid_upload_is_a_lingering_close() {
    // The server answers 413 after the head while the client is still sending the body. It must
    // then shut down its side and discard the rest rather than close with unread input, which
    // sends a reset: the client reads the 413 and finishes writing without an error.
    let srv = Server::start(&[("CAMPFIRE_MAX_BODY", "1000")]);
    for _ in 0..3 {
        let mut s = srv.connect();
        std::io::Write::write_all(&mut s, b"POST /__echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4000000\r\n\r\n").unwrap();
        let mut w = s.try_clone().unwrap();
        let writer = std::thread::spawn(move || {
            let chunk = [b'z'; 65536];
            (0..61).all(|_| std::io::Write::write_all(&mut w, &chunk).is_ok())
        });
        let r = read_until(&mut s, "Content Too Large\n", 1);
        assert_eq!(status(&r), 413, "{r:?}");
        assert!(writer.join().unwrap(), "the upload was reset instead of discarded");
    }
}
