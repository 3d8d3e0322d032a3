//! End-to-end tests of `send` against loopback servers: plain HTTP, timeouts, refused
//! connections, and HTTPS with a test-only certificate authority.

use super::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread;

/// Serves one connection: reads the request head (and a Content-Length body), reports it, then
/// runs `answer` on the stream.
fn one_shot(answer: impl FnOnce(&mut TcpStream) + Send + 'static) -> (u16, mpsc::Receiver<String>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let req = read_request(&mut s);
        let _ = tx.send(req);
        answer(&mut s);
    });
    (port, rx)
}

fn read_request(s: &mut impl Read) -> String {
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        if s.read(&mut b).unwrap_or(0) == 0 {
            break;
        }
        got.push(b[0]);
    }
    let head = String::from_utf8_lossy(&got).into_owned();
    let len = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse::<usize>().unwrap()))
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    head + &String::from_utf8_lossy(&body)
}

fn post<'a>(url: &'a str, body: &'a [u8], timeout_ms: u64) -> Request<'a> {
    Request {
        method: "POST",
        url,
        headers: &[("Content-Type", "application/json")],
        body,
        timeout: Duration::from_millis(timeout_ms),
        max_body: 1 << 20,
    }
}

#[test]
fn posts_over_plain_http() {
    let (port, seen) = one_shot(|s| {
        s.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n0\r\n\r\n").unwrap();
    });
    let url = format!("http://127.0.0.1:{port}/hook");
    let r = send(&post(&url, b"{\"a\":1}", 2000)).unwrap();
    assert_eq!((r.status, r.header("content-type"), r.body.as_slice()), (200, Some("text/plain; charset=utf-8"), &b"Hello"[..]));
    let req = seen.recv().unwrap();
    assert!(req.starts_with("POST /hook HTTP/1.1\r\n"), "{req}");
    assert!(req.contains(&format!("\r\nHost: 127.0.0.1:{port}\r\n")), "{req}");
    assert!(req.ends_with("\r\n\r\n{\"a\":1}"), "{req}");
}

#[test]
fn a_silent_server_times_out() {
    let (port, _seen) = one_shot(|_| thread::sleep(Duration::from_millis(1500)));
    let url = format!("http://127.0.0.1:{port}/");
    let t = std::time::Instant::now();
    assert!(matches!(send(&post(&url, b"", 200)), Err(Error::Timeout)));
    assert!(t.elapsed() < Duration::from_millis(1400));
}

#[test]
fn a_closed_port_is_a_connect_error() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/");
    assert!(matches!(send(&post(&url, b"", 500)), Err(Error::Connect(_))));
    assert!(matches!(send(&post("gopher://x/", b"", 500)), Err(Error::Url(_))));
}

#[test]
fn redirects_come_back_unfollowed() {
    let (port, _seen) = one_shot(|s| {
        s.write_all(b"HTTP/1.1 302 Found\r\nLocation: http://elsewhere/\r\nContent-Length: 0\r\n\r\n").unwrap();
    });
    let url = format!("http://localhost:{port}/");
    // Through /etc/hosts' localhost (pinned to IPv4 so a ::1 entry cannot get in the way).
    let r = send_pinned(&post(&url, b"", 2000), "127.0.0.1".parse().unwrap()).unwrap();
    assert_eq!((r.status, r.header("location")), (302, Some("http://elsewhere/")));
}

/// A CA and a `localhost` leaf certificate signed by it.
fn test_pki() -> (rustls::pki_types::CertificateDer<'static>, rustls::pki_types::CertificateDer<'static>, Vec<u8>) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&leaf_key, &ca, &ca_key).unwrap();
    (ca.der().clone(), leaf.der().clone(), leaf_key.serialize_der())
}

/// An HTTPS server for `conns` connections on loopback; each gets `answer` after its request.
fn tls_server(leaf: rustls::pki_types::CertificateDer<'static>, key: Vec<u8>, conns: usize, answer: &'static [u8]) -> u16 {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf], rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()))
        .unwrap();
    let config = Arc::new(config);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    thread::spawn(move || {
        for _ in 0..conns {
            let Ok((tcp, _)) = l.accept() else { return };
            let conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let _ = read_request(&mut tls);
            let _ = tls.write_all(answer);
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    port
}

#[test]
fn https_with_a_trusted_root_and_not_without() {
    let (ca, leaf, key) = test_pki();
    let port = tls_server(leaf, key, 3, b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>secure</p>");
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).unwrap();
    let trusting = tls::with_roots(roots).unwrap();
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();

    let url = format!("https://localhost:{port}/page");
    let r = send_via(&post(&url, b"x", 3000), Some(loopback), Some(Arc::clone(&trusting))).unwrap();
    assert_eq!((r.status, r.body.as_slice()), (200, &b"<p>secure</p>"[..]), "read to close_notify");

    // The public roots do not know our test CA.
    assert!(matches!(send_via(&post(&url, b"x", 3000), Some(loopback), None), Err(Error::Tls(_))));
    // The certificate names localhost, not 127.0.0.1.
    let by_ip = format!("https://127.0.0.1:{port}/page");
    assert!(matches!(send_via(&post(&by_ip, b"x", 3000), None, Some(trusting)), Err(Error::Tls(_))));
}

#[test]
fn jobs_run_off_the_calling_thread() {
    let (tx, rx) = mpsc::channel();
    let me = thread::current().id();
    assert!(spawn(Box::new(move || tx.send(thread::current().id()).unwrap())));
    let ran_on = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_ne!(ran_on, me);
}
