//! Process lifecycle: SIGTERM drains in-flight requests and exits 0; bad configuration exits 2;
//! the secret key base is generated once.

mod http_support;
use http_support::*;
use std::io::Write;
use std::process::Command;

#[test]
fn sigterm_drains_and_exits_zero() {
    let mut srv = Server::start(&[]);
    let mut inflight = srv.connect();
    inflight.write_all(b"GET /__park?ms=500 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let idle = srv.connect();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let code = srv.terminate();
    // The parked request was answered, with Connection: close, before the exit.
    let r = read_to_close(&mut inflight);
    assert!(r.starts_with("HTTP/1.1 200 OK\r\n"), "{r}");
    assert!(r.contains("Connection: close\r\n"));
    assert!(r.ends_with("parked 500ms\n"));
    assert_eq!(code, Some(0), "{}", srv.stderr());
    drop(idle);
    // The port is closed now.
    assert!(std::net::TcpStream::connect(("127.0.0.1", srv.port)).is_err());
}

#[test]
fn malformed_configuration_exits_2() {
    for (k, v) in [("PORT", "eighty"), ("CAMPFIRE_LOOPS", "0"), ("CAMPFIRE_LOG", "loud"), ("CAMPFIRE_MAX_BODY", "-1")] {
        let dir = temp_dir("cfg");
        let out = Command::new(binary())
            .env_clear()
            .env("STORAGE_PATH", dir.join("s"))
            .env(k, v)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{k}={v}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(k), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn secret_key_base_generated_once() {
    let srv = Server::start(&[]);
    let path = srv.dir.join("storage/secret_key_base");
    let secret = std::fs::read_to_string(&path).unwrap();
    assert_eq!(secret.len(), 128);
    assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(srv.dir.join("storage/db").is_dir());
}
