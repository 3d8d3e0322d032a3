//! Shared by the HTTPS tests: certificates made with rcgen (a CA and leaves it signs), the
//! real binary started with TLS settings on free ports, and a rustls client trusting the CA.

#![allow(dead_code)]

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Ca {
    key: rcgen::KeyPair,
    cert: rcgen::Certificate,
}

impl Ca {
    pub fn new() -> Ca {
        let mut p = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        p.distinguished_name.push(rcgen::DnType::CommonName, "campfire test CA");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        Ca { key, cert }
    }

    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A leaf for `names` valid from `from` to `to` (years, months, days), with its key:
    /// (chain PEM leaf then CA, key PEM).
    pub fn leaf(&self, names: &[&str], from: (i32, u8, u8), to: (i32, u8, u8)) -> (String, String) {
        let mut p = rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        p.not_before = rcgen::date_time_ymd(from.0, from.1, from.2);
        p.not_after = rcgen::date_time_ymd(to.0, to.1, to.2);
        p.distinguished_name.push(rcgen::DnType::CommonName, names.first().copied().unwrap_or("leaf"));
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &self.cert, &self.key).unwrap();
        (format!("{}{}", cert.pem(), self.cert.pem()), key.serialize_pem())
    }

    /// A leaf for `localhost` valid now.
    pub fn localhost(&self) -> (String, String) {
        self.leaf(&["localhost"], (2025, 1, 1), (2099, 1, 1))
    }

    pub fn client(&self) -> Arc<rustls::ClientConfig> {
        client_trusting(self.pem().as_bytes())
    }
}

/// A client configuration trusting the PEM roots in `pem`, offering ALPN http/1.1.
pub fn client_trusting(pem: &[u8]) -> Arc<rustls::ClientConfig> {
    alpn_client(pem, &[b"http/1.1"])
}

/// The same offering ALPN h2 first, as browsers do.
pub fn browser_like(pem: &[u8]) -> Arc<rustls::ClientConfig> {
    alpn_client(pem, &[b"h2", b"http/1.1"])
}

/// The same speaking TLS 1.2 only.
pub fn tls12_client(pem: &[u8]) -> Arc<rustls::ClientConfig> {
    versions_client(pem, &[b"http/1.1"], &[&rustls::version::TLS12])
}

/// The same offering one cipher suite only (and so one protocol version).
pub fn suite_client(pem: &[u8], suite: rustls::SupportedCipherSuite) -> Arc<rustls::ClientConfig> {
    let mut provider = rustls::crypto::ring::default_provider();
    provider.cipher_suites = vec![suite];
    let versions: &[&'static rustls::SupportedProtocolVersion] = match suite {
        rustls::SupportedCipherSuite::Tls13(_) => &[&rustls::version::TLS13],
        rustls::SupportedCipherSuite::Tls12(_) => &[&rustls::version::TLS12],
    };
    provider_client(pem, &[b"http/1.1"], versions, provider)
}

fn alpn_client(pem: &[u8], alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    versions_client(pem, alpn, rustls::DEFAULT_VERSIONS)
}

fn versions_client(pem: &[u8], alpn: &[&[u8]], versions: &[&'static rustls::SupportedProtocolVersion]) -> Arc<rustls::ClientConfig> {
    provider_client(pem, alpn, versions, rustls::crypto::ring::default_provider())
}

fn provider_client(pem: &[u8], alpn: &[&[u8]], versions: &[&'static rustls::SupportedProtocolVersion], provider: rustls::crypto::CryptoProvider) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_slice_iter(pem) {
        roots.add(c.unwrap()).unwrap();
    }
    let mut c = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(c)
}

pub type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// Connects to localhost:`port` and finishes the handshake.
pub fn connect(port: u16, client: &Arc<rustls::ClientConfig>) -> std::io::Result<Tls> {
    let tcp = TcpStream::connect(("127.0.0.1", port))?;
    tcp.set_read_timeout(Some(Duration::from_secs(10)))?;
    let conn = rustls::ClientConnection::new(client.clone(), ServerName::try_from("localhost").unwrap()).unwrap();
    let mut s = rustls::StreamOwned::new(conn, tcp);
    while s.conn.is_handshaking() {
        s.conn.complete_io(&mut s.sock)?;
    }
    Ok(s)
}

/// A parsed response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads one response (Content-Length framed, or to the end) from `s`.
pub fn read_response(s: &mut impl Read) -> std::io::Result<Response> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16384];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut r = Response { status, head, body: buf[head_end..].to_vec() };
    match r.header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(len) => {
            while r.body.len() < len {
                let n = s.read(&mut chunk)?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                r.body.extend_from_slice(&chunk[..n]);
            }
        }
        None if status == 101 || status == 304 || status == 204 => {}
        None => {
            let _ = s.read_to_end(&mut r.body);
        }
    }
    Ok(r)
}

/// One request over a new TLS connection.
pub fn https(port: u16, client: &Arc<rustls::ClientConfig>, request: &str) -> std::io::Result<Response> {
    let mut s = connect(port, client)?;
    s.write_all(request.as_bytes())?;
    read_response(&mut s)
}

pub fn get(path: &str, port: u16) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n")
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub fn binary() -> PathBuf {
    match std::env::var_os("CAMPFIRE_BIN") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_BIN_EXE_campfire-room")),
    }
}

pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "campfire-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The binary with a clean environment, storage under `dir`, `env` on top.
pub fn command(dir: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(binary());
    cmd.env_clear()
        .env("STORAGE_PATH", dir.join("storage"))
        .env("DATABASE_PATH", dir.join("storage/db/test.sqlite3"))
        .env("SECRET_KEY_BASE", "dummy")
        .env("CAMPFIRE_LOG", "0")
        .env("CAMPFIRE_LOOPS", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(dir.join("stderr.txt")).unwrap()));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

pub struct Server {
    pub https_port: u16,
    pub http_port: u16,
    pub dir: PathBuf,
    pub child: Child,
}

impl Server {
    /// Starts with HTTPS_PORT/HTTP_PORT on free ports and `env`, and waits until
    /// `https://localhost/up` answers 200 with `client`.
    pub fn start(dir: &Path, env: &[(&str, &str)], client: &Arc<rustls::ClientConfig>, wait: Duration) -> Server {
        for _ in 0..10 {
            match Server::start_on(dir, free_port(), free_port(), env, client, wait) {
                Ok(srv) => return srv,
                Err(e) if e.contains("Address already in use") => continue,
                Err(e) => panic!("campfire-room did not serve HTTPS: {e}"),
            }
        }
        panic!("no free ports");
    }

    /// `start` on given ports; Err(stderr) when it did not come up.
    pub fn start_on(dir: &Path, https_port: u16, http_port: u16, env: &[(&str, &str)], client: &Arc<rustls::ClientConfig>, wait: Duration) -> Result<Server, String> {
        let (a, b) = (https_port.to_string(), http_port.to_string());
        let mut all = vec![("HTTPS_PORT", a.as_str()), ("HTTP_PORT", b.as_str())];
        all.extend_from_slice(env);
        let child = command(dir, &all).spawn().expect("start campfire-room");
        let mut srv = Server { https_port, http_port, dir: dir.to_path_buf(), child };
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = srv.child.try_wait() {
                break;
            }
            if https(https_port, client, &get("/up", https_port)).is_ok_and(|r| r.status == 200) {
                return Ok(srv);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = srv.child.kill();
        let _ = srv.child.wait();
        Err(srv.stderr())
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.txt")).unwrap_or_default()
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill").args([&format!("-{sig}"), &self.child.id().to_string()]).status().unwrap().success();
        assert!(ok);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the binary to its exit with `env` and returns (exit code, stderr).
pub fn exit_of(dir: &Path, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut child = command(dir, env).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st.code(), std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running: {}", std::fs::read_to_string(dir.join("stderr.txt")).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
