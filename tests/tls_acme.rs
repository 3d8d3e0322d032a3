//! Certificates over ACME against a real RFC 8555 server: Debian's `pebble`, validating our
//! HTTP-01 answers over loopback. Then curl, trusting only pebble's root, gets 200 from
//! https://localhost:HTTPS_PORT/up; HTTP_PORT redirects; the account key and certificate are
//! stored with mode 0600 and a restart serves the stored certificate without a new order; a
//! stored certificate within 30 days of expiry keeps being served while renewal fails, and is
//! replaced once the ACME server answers.
//! Skipped (with a reason) when pebble is not installed, except under CI=true.

mod tls_support;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tls_support::*;

struct Pebble {
    child: Child,
}

impl Drop for Pebble {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pebble_available() -> bool {
    Command::new("pebble").arg("-version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// GET over HTTPS, read to the end.
fn fetch(port: u16, client: &std::sync::Arc<rustls::ClientConfig>, path: &str) -> std::io::Result<Response> {
    https(port, client, &format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\nConnection: close\r\n\r\n"))
}

#[test]
fn pebble_issues_a_certificate_over_http_01() {
    if !pebble_available() {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "pebble is required under CI (.ci/run installs it)");
        eprintln!("skipped: pebble is not installed (apt-get install pebble)");
        return;
    }
    let dir = temp_dir("acme");
    // Pebble's own API certificate: a leaf for localhost and the CA that signed it, which our
    // ACME client trusts through ACME_CA_FILE.
    let api_ca = Ca::new();
    let (chain, key) = api_ca.leaf(&["localhost", "127.0.0.1"], (2025, 1, 1), (2099, 1, 1));
    std::fs::write(dir.join("pebble-chain.pem"), chain).unwrap();
    std::fs::write(dir.join("pebble-key.pem"), key).unwrap();
    std::fs::write(dir.join("pebble-ca.pem"), api_ca.pem()).unwrap();
    let (acme_port, mgmt_port, https_port, http_port, tls_alpn_port) = (free_port(), free_port(), free_port(), free_port(), free_port());
    let config = format!(
        r#"{{"pebble":{{"listenAddress":"127.0.0.1:{acme_port}","managementListenAddress":"127.0.0.1:{mgmt_port}","certificate":"{}","privateKey":"{}","httpPort":{http_port},"tlsPort":{tls_alpn_port},"ocspResponderURL":"","externalAccountBindingRequired":false}}}}"#,
        dir.join("pebble-chain.pem").display(),
        dir.join("pebble-key.pem").display()
    );
    std::fs::write(dir.join("pebble.json"), config).unwrap();
    let log = std::fs::File::create(dir.join("pebble.log")).unwrap();
    let _pebble = Pebble {
        child: Command::new("pebble")
            .arg("-config")
            .arg(dir.join("pebble.json"))
            .env("PEBBLE_VA_NOSLEEP", "1")
            .env("PEBBLE_WFE_NONCEREJECT", "0")
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start pebble"),
    };
    let api = api_ca.client();
    let deadline = Instant::now() + Duration::from_secs(20);
    let root = loop {
        if let Ok(r) = fetch(mgmt_port, &api, "/roots/0") {
            if r.status == 200 {
                break r.body;
            }
        }
        assert!(Instant::now() < deadline, "pebble did not start: {}", std::fs::read_to_string(dir.join("pebble.log")).unwrap_or_default());
        std::thread::sleep(Duration::from_millis(100));
    };
    std::fs::write(dir.join("pebble-root.pem"), &root).unwrap();
    let issued = client_trusting(&root);

    let directory = format!("https://localhost:{acme_port}/dir");
    let ca_file = dir.join("pebble-ca.pem").to_string_lossy().into_owned();
    let env = [("SSL_DOMAIN", "localhost"), ("ACME_DIRECTORY", directory.as_str()), ("ACME_CA_FILE", ca_file.as_str())];
    let srv = Server::start_on(&dir, https_port, http_port, &env, &issued, Duration::from_secs(90))
        .unwrap_or_else(|e| panic!("no certificate from pebble: {e}\npebble: {}", std::fs::read_to_string(dir.join("pebble.log")).unwrap_or_default()));
    assert!(srv.stderr().contains("ACME: certificate for localhost installed"), "{}", srv.stderr());

    let out = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
        .arg(dir.join("pebble-root.pem"))
        .arg(format!("https://localhost:{https_port}/up"))
        .output();
    match out {
        Ok(out) => assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "curl: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "curl: {e}"),
    }
    let mut plain = std::net::TcpStream::connect(("127.0.0.1", http_port)).unwrap();
    plain.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(plain, "GET /up HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let r = read_response(&mut plain).unwrap();
    assert_eq!((r.status, r.header("location")), (301, Some(format!("https://localhost:{https_port}/up").as_str())));

    for f in ["account_key.pem", "private_key.pem", "certificate.pem"] {
        let mode = std::fs::metadata(dir.join("storage/tls").join(f)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{f}");
    }
    let served = connect(https_port, &issued).unwrap().conn.peer_certificates().unwrap()[0].to_vec();
    drop(srv);

    // A restart serves the stored certificate at once: no new order.
    let srv = Server::start_on(&dir, https_port, http_port, &env, &issued, Duration::from_secs(20)).unwrap();
    assert!(!srv.stderr().contains("ordering one"), "{}", srv.stderr());
    let again = connect(https_port, &client_trusting(&root)).unwrap().conn.peer_certificates().unwrap()[0].to_vec();
    assert_eq!(served, again);
    drop(srv);

    // A stored certificate 10 days from expiry is served at once and is due for renewal. With
    // the ACME server unreachable, the failure is logged and retried while it keeps serving.
    let soon = ymd(campfire::crypto::time::now_ms() / 1000 + 10 * 86_400);
    let (short_chain, short_key) = api_ca.leaf(&["localhost"], (2025, 1, 1), soon);
    std::fs::write(dir.join("storage/tls/certificate.pem"), &short_chain).unwrap();
    std::fs::write(dir.join("storage/tls/private_key.pem"), &short_key).unwrap();
    let either = client_trusting(format!("{}{}", api_ca.pem(), String::from_utf8_lossy(&root)).as_bytes());
    let dead = format!("https://localhost:{}/dir", free_port());
    let down = [("SSL_DOMAIN", "localhost"), ("ACME_DIRECTORY", dead.as_str()), ("ACME_CA_FILE", ca_file.as_str())];
    let srv = Server::start_on(&dir, https_port, http_port, &down, &api_ca.client(), Duration::from_secs(20)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !srv.stderr().contains("retrying in") {
        assert!(Instant::now() < deadline, "{}", srv.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(fetch(https_port, &api_ca.client(), "/up").unwrap().status, 200, "the running certificate stays");
    drop(srv);

    // With the ACME server back, the due certificate is renewed and replaced while serving.
    let srv = Server::start_on(&dir, https_port, http_port, &env, &either, Duration::from_secs(20)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while connect(https_port, &client_trusting(&root)).is_err() {
        assert!(Instant::now() < deadline, "not renewed: {}", srv.stderr());
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(srv.stderr().contains("ACME: certificate for localhost installed"), "{}", srv.stderr());
    let renewed = std::fs::read_to_string(dir.join("storage/tls/certificate.pem")).unwrap();
    assert_ne!(renewed, short_chain);
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

fn ymd(t: i64) -> (i32, u8, u8) {
    let mut out = Vec::new();
    campfire::crypto::time::write_iso8601(t * 1000, &mut out);
    let s = String::from_utf8(out).unwrap();
    (s[0..4].parse().unwrap(), s[5..7].parse().unwrap(), s[8..10].parse().unwrap())
}
