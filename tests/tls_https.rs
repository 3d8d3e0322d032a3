//! HTTPS in the process (issue 14 §2) with the operator's own certificate: a real TLS client
//! signs in, posts and receives the message over wss://; SIGHUP swaps the certificate; an
//! expired or mismatched one stops the start with exit code 2; a client that never finishes
//! its handshake is closed by the request timeout; HTTP_PORT only redirects; plain HTTP sent to
//! HTTPS_PORT gets a 400 saying so.

mod cable_support;
mod tls_support;

use campfire::db::rooms::Kind;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};
use tls_support::*;

fn write_pair(dir: &std::path::Path, (chain, key): &(String, String)) -> (String, String) {
    let (c, k) = (dir.join("chain.pem"), dir.join("key.pem"));
    std::fs::write(&c, chain).unwrap();
    std::fs::write(&k, key).unwrap();
    (c.to_string_lossy().into_owned(), k.to_string_lossy().into_owned())
}

fn own_cert_server(ca: &Ca, dir: &std::path::Path, extra: &[(&str, &str)]) -> Server {
    let (c, k) = write_pair(dir, &ca.localhost());
    let mut env = vec![("TLS_CERTIFICATE_PATH", c.as_str()), ("TLS_PRIVATE_KEY_PATH", k.as_str()), ("CAMPFIRE_TEST_ROUTES", "1")];
    env.extend_from_slice(extra);
    Server::start(dir, &env, &ca.client(), Duration::from_secs(15))
}

/// The next text frame from the server that is not a ping.
fn next_text(s: &mut Tls, buf: &mut Vec<u8>) -> Option<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if buf.len() >= 2 {
            let (len, at) = match buf[1] & 0x7f {
                126 if buf.len() >= 4 => (u16::from_be_bytes([buf[2], buf[3]]) as usize, 4),
                127 if buf.len() >= 10 => (u64::from_be_bytes(buf[2..10].try_into().unwrap()) as usize, 10),
                126 | 127 => (usize::MAX, 0),
                n => (n as usize, 2),
            };
            if len != usize::MAX && buf.len() >= at + len {
                let opcode = buf[0] & 0x0f;
                let text = String::from_utf8_lossy(&buf[at..at + len]).into_owned();
                buf.drain(..at + len);
                if opcode == 8 {
                    return None;
                }
                if opcode == 1 && !text.starts_with(r#"{"type":"ping""#) {
                    return Some(text);
                }
                continue;
            }
        }
        let mut chunk = [0u8; 16384];
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    None
}

#[test]
fn own_certificate_serves_sign_in_post_and_wss() {
    let dir = temp_dir("tls-own");
    let ca = Ca::new();
    let srv = own_cert_server(&ca, &dir, &[]);
    let (port, client) = (srv.https_port, ca.client());

    let s = connect(port, &browser_like(ca.pem().as_bytes())).unwrap();
    assert_eq!(s.conn.alpn_protocol(), Some(&b"http/1.1"[..]), "ALPN picks http/1.1 from h2,http/1.1");
    drop(s);
    if std::process::Command::new("curl").arg("--version").output().is_ok() {
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        let out = std::process::Command::new("curl")
            .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
            .arg(dir.join("ca.pem"))
            .arg(format!("https://localhost:{port}/up"))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "curl: {}", String::from_utf8_lossy(&out.stderr));
    }

    // Sign in: first run over HTTPS makes the administrator and her session.
    let form = "user%5Bname%5D=Ada&user%5Bemail_address%5D=ada%40example.com&user%5Bpassword%5D=secret123456";
    let r = https(
        port,
        &client,
        &format!(
            "POST /first_run HTTP/1.1\r\nHost: localhost:{port}\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{form}",
            form.len()
        ),
    )
    .unwrap();
    assert_eq!(r.status, 302, "{r:?}");
    let cookie = r
        .head
        .lines()
        .find_map(|l| l.strip_prefix("Set-Cookie: session_token="))
        .map(|v| v.split(';').next().unwrap().to_string())
        .expect("session cookie");

    // A socket over wss:// subscribed to the first room's messages.
    let mut ws = connect(port, &client).unwrap();
    write!(
        ws,
        "GET /cable HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: https://localhost:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: actioncable-v1-json\r\n\
         Cookie: session_token={cookie}\r\n\r\n"
    )
    .unwrap();
    let head = read_response(&mut ws).unwrap();
    assert_eq!(head.status, 101, "{head:?}");
    let mut buf = head.body;
    assert_eq!(next_text(&mut ws, &mut buf).as_deref(), Some(r#"{"type":"welcome"}"#));
    let room: i64 = 1;
    let ident = format!(
        r#"{{"channel":"RoomMessagesChannel","signed_stream_name":"{}"}}"#,
        cable_support::signed(cable_support::room_stream(Kind::Open, room).as_bytes())
    );
    ws.write_all(&cable_support::masked(true, 1, cable_support::command("subscribe", &ident, None).as_bytes())).unwrap();
    let reply = next_text(&mut ws, &mut buf).unwrap();
    assert!(reply.contains("confirm_subscription"), "{reply}");

    // Post, and the message comes back over the socket.
    let body = "message%5Bbody%5D=hello+over+tls&message%5Bclient_message_id%5D=tls1";
    let r = https(
        port,
        &client,
        &format!(
            "POST /rooms/{room}/messages HTTP/1.1\r\nHost: localhost:{port}\r\nSec-Fetch-Site: same-origin\r\nAccept: text/vnd.turbo-stream.html\r\n\
             Cookie: session_token={cookie}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
    .unwrap();
    assert!(r.status == 201 || r.status == 200, "{r:?}");
    let pushed = next_text(&mut ws, &mut buf).expect("the broadcast");
    assert!(pushed.contains("hello over tls"), "{pushed}");

    // Large bodies cross many records and socket buffers both ways, kept alive.
    let room_page = https(port, &client, &format!("GET /rooms/{room} HTTP/1.1\r\nHost: localhost\r\nCookie: session_token={cookie}\r\n\r\n")).unwrap();
    let html = String::from_utf8_lossy(&room_page.body).into_owned();
    let asset = html.split('"').find(|p| p.starts_with("/assets/trix-") && p.ends_with(".js")).expect("trix script").to_string();
    let mut kept = connect(port, &client).unwrap();
    for _ in 0..3 {
        write!(kept, "POST /__echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 300000\r\n\r\n").unwrap();
        kept.write_all(&vec![b'x'; 300_000]).unwrap();
        let r = read_response(&mut kept).unwrap();
        assert!(r.body.starts_with(b"300000 xxx"), "{r:?}");
        write!(kept, "GET {asset} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        let r = read_response(&mut kept).unwrap();
        assert_eq!(r.status, 200);
        assert!(r.body.len() > 100_000 && r.body.starts_with(b"/*"), "{} bytes", r.body.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// After the handshake the server keeps only the traffic keys (server::tls_records): records
/// still open and seal across requests on one kept-alive connection, small and larger than a
/// record both ways, over TLS 1.3 and 1.2; a TLS 1.3 client's KeyUpdate (asking the server to
/// update too) changes the keys of both directions; the client's close_notify ends the stream.
/// Every cipher suite the server offers is taken in turn (the record layer seals and opens
/// each itself: AES-128/256-GCM and ChaCha20-Poly1305, TLS 1.3's and TLS 1.2's formats).
#[test]
fn kept_alive_records_survive_key_updates_and_tls12() {
    let dir = temp_dir("tls-records");
    let ca = Ca::new();
    let srv = own_cert_server(&ca, &dir, &[]);
    let port = srv.https_port;
    let echo = |s: &mut Tls, len: usize| {
        write!(s, "POST /__echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len}\r\n\r\n").unwrap();
        s.write_all(&vec![b'x'; len]).unwrap();
        let r = read_response(s).unwrap();
        assert!(r.body.starts_with(format!("{len} xxx").as_bytes()), "{r:?}");
    };
    let page = https(port, &ca.client(), &get("/first_run", port)).unwrap();
    let html = String::from_utf8_lossy(&page.body).into_owned();
    let assets: Vec<String> = html.split('"').filter(|p| p.starts_with("/assets/")).map(str::to_string).collect();
    assert!(!assets.is_empty(), "{html}");
    let mut clients = vec![(ca.client(), rustls::ProtocolVersion::TLSv1_3), (tls12_client(ca.pem().as_bytes()), rustls::ProtocolVersion::TLSv1_2)];
    // The test certificate's key is ECDSA: TLS 1.2's RSA suites cannot be negotiated with it.
    for suite in rustls::crypto::ring::default_provider().cipher_suites.into_iter().filter(|s| !format!("{:?}", s.suite()).contains("_RSA_")) {
        let version = match suite {
            rustls::SupportedCipherSuite::Tls13(_) => rustls::ProtocolVersion::TLSv1_3,
            rustls::SupportedCipherSuite::Tls12(_) => rustls::ProtocolVersion::TLSv1_2,
        };
        clients.push((suite_client(ca.pem().as_bytes(), suite), version));
    }
    let mut suites_seen = Vec::new();
    for (client, version) in clients {
        let mut s = connect(port, &client).unwrap();
        assert_eq!(s.conn.protocol_version(), Some(version));
        suites_seen.push(s.conn.negotiated_cipher_suite().map(|c| c.suite()));
        let mut largest = 0;
        for (i, asset) in assets.iter().enumerate() {
            echo(&mut s, [10, 70_000][i % 2]);
            if version == rustls::ProtocolVersion::TLSv1_3 {
                s.conn.refresh_traffic_keys().unwrap();
            }
            write!(s, "GET {asset} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
            let r = read_response(&mut s).unwrap();
            assert_eq!(r.status, 200, "{asset}: {r:?}");
            largest = largest.max(r.body.len());
        }
        assert!(largest > 20_000, "no asset spans records: largest {largest} bytes");
        echo(&mut s, 10);
        s.conn.send_close_notify();
        s.flush().unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{} bytes after close_notify", rest.len());
    }
    suites_seen.sort_by_key(|s| format!("{s:?}"));
    suites_seen.dedup();
    assert_eq!(suites_seen.len(), 6, "{suites_seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The leaf a new full handshake gets (a fresh client: a resumed session would report the
/// certificate of the session it resumes).
fn peer_cert(port: u16, ca: &Ca) -> Vec<u8> {
    let s = connect(port, &ca.client()).unwrap();
    s.conn.peer_certificates().unwrap()[0].to_vec()
}

fn der_of(chain_pem: &str) -> Vec<u8> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(chain_pem.as_bytes()).next().unwrap().unwrap().to_vec()
}

#[test]
fn sighup_reloads_the_certificate_and_keeps_it_when_the_new_one_is_bad() {
    let dir = temp_dir("tls-hup");
    let ca = Ca::new();
    let first = ca.localhost();
    write_pair(&dir, &first);
    let (c, k) = (dir.join("chain.pem"), dir.join("key.pem"));
    let (cs, ks) = (c.to_string_lossy().into_owned(), k.to_string_lossy().into_owned());
    let srv = Server::start(&dir, &[("TLS_CERTIFICATE_PATH", &cs), ("TLS_PRIVATE_KEY_PATH", &ks)], &ca.client(), Duration::from_secs(15));
    let client = ca.client();
    assert_eq!(peer_cert(srv.https_port, &ca), der_of(&first.0));
    let kept = connect(srv.https_port, &client).unwrap();

    let second = ca.localhost();
    write_pair(&dir, &second);
    srv.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while peer_cert(srv.https_port, &ca) != der_of(&second.0) {
        assert!(Instant::now() < deadline, "not reloaded: {}", srv.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    // A connection made before the reload still works.
    let mut kept = kept;
    kept.write_all(get("/up", srv.https_port).as_bytes()).unwrap();
    assert_eq!(read_response(&mut kept).unwrap().status, 200);

    // An expired replacement is refused; the running certificate stays.
    write_pair(&dir, &ca.leaf(&["localhost"], (2020, 1, 1), (2021, 1, 1)));
    srv.signal("HUP");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !srv.stderr().contains("still serving the previous certificate") {
        assert!(Instant::now() < deadline, "{}", srv.stderr());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(peer_cert(srv.https_port, &ca), der_of(&second.0));
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn expired_mismatched_or_incomplete_settings_exit_2() {
    let dir = temp_dir("tls-bad");
    let ca = Ca::new();
    let expired = ca.leaf(&["localhost"], (2020, 1, 1), (2021, 1, 1));
    let (c, k) = write_pair(&dir, &expired);
    let (code, err) = exit_of(&dir, &[("TLS_CERTIFICATE_PATH", &c), ("TLS_PRIVATE_KEY_PATH", &k), ("HTTPS_PORT", "0"), ("HTTP_PORT", "0")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("expired"), "{err}");

    let (c, k) = write_pair(&dir, &ca.localhost());
    let env = [("TLS_CERTIFICATE_PATH", c.as_str()), ("TLS_PRIVATE_KEY_PATH", k.as_str()), ("SSL_DOMAIN", "chat.example.com"), ("HTTPS_PORT", "0"), ("HTTP_PORT", "0")];
    let (code, err) = exit_of(&dir, &env);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not chat.example.com"), "{err}");

    let (code, err) = exit_of(&dir, &[("TLS_CERTIFICATE_PATH", &c)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("TLS_PRIVATE_KEY_PATH"), "{err}");

    let other_key = ca.localhost().1;
    std::fs::write(dir.join("other.pem"), other_key).unwrap();
    let other = dir.join("other.pem").to_string_lossy().into_owned();
    let (code, err) = exit_of(&dir, &[("TLS_CERTIFICATE_PATH", &c), ("TLS_PRIVATE_KEY_PATH", &other), ("HTTPS_PORT", "0"), ("HTTP_PORT", "0")]);
    assert_eq!(code, Some(2), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_handshake_that_never_finishes_is_closed_by_the_request_timeout() {
    let dir = temp_dir("tls-stall");
    let ca = Ca::new();
    let srv = own_cert_server(&ca, &dir, &[("CAMPFIRE_REQUEST_TIMEOUT_MS", "300"), ("CAMPFIRE_IDLE_TIMEOUT_MS", "120000")]);
    for partial in [&b""[..], &[0x16, 0x03, 0x01, 0x02, 0x00, 0x01][..]] {
        let mut s = TcpStream::connect(("127.0.0.1", srv.https_port)).unwrap();
        s.write_all(partial).unwrap();
        // Far below the idle timeout: only the request timeout can close it in time.
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut b = [0u8; 64];
        match s.read(&mut b) {
            Ok(0) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            other => panic!("expected the server to close a stalled handshake, got {other:?}"),
        }
    }
    // A finished handshake that then idles gets the idle timeout, not the request one.
    let mut s = connect(srv.https_port, &ca.client()).unwrap();
    std::thread::sleep(Duration::from_millis(900));
    s.write_all(get("/up", srv.https_port).as_bytes()).unwrap();
    assert_eq!(read_response(&mut s).unwrap().status, 200);
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn http_port_redirects_everything_to_https() {
    let dir = temp_dir("tls-redirect");
    let ca = Ca::new();
    let srv = own_cert_server(&ca, &dir, &[]);
    let plain = |req: &str| {
        let mut s = TcpStream::connect(("127.0.0.1", srv.http_port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(req.as_bytes()).unwrap();
        read_response(&mut s).unwrap()
    };
    let r = plain(&format!("GET /rooms/1?x=y HTTP/1.1\r\nHost: localhost:{}\r\n\r\n", srv.http_port));
    assert_eq!(r.status, 301);
    assert_eq!(r.header("location"), Some(format!("https://localhost:{}/rooms/1?x=y", srv.https_port).as_str()));
    let r = plain("POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(r.status, 301, "the application never answers on HTTP_PORT");
    let r = plain("GET /.well-known/acme-challenge/nothing-pending HTTP/1.1\r\nHost: localhost\r\n\r\n");
    assert_eq!(r.status, 404);
    // Plain HTTP sent to the HTTPS port is told so in HTTP.
    let mut s = TcpStream::connect(("127.0.0.1", srv.https_port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /up HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let r = read_response(&mut s).unwrap();
    assert_eq!(r.status, 400);
    assert!(String::from_utf8_lossy(&r.body).contains("https://"), "{r:?}");
    let r = plain("GET / HTTP/1.1\r\nHost: evil.example/x\r\n\r\n");
    assert!(r.status == 400 || r.header("location").is_some_and(|l| !l.contains("evil")), "{r:?}");
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}
