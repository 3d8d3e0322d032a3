//! The generator's connections: plain TCP for `http://` URLs, TLS through rustls for `https://`
//! ones (the root to trust from `--cacert`). The HTTP client and the WebSocket handshakes use a
//! `Stream` like a blocking socket; the cable readers, whose sockets are non-blocking, read it
//! with `read_nonblocking`, which never leaves decrypted bytes behind where epoll cannot see them.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The longest a connect, read or write may take before it counts as an error (workloads.md §4).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Where the server is and how to talk to it.
#[derive(Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    /// The Host header value: `host:port` as the URL gave it.
    pub host: String,
    /// For https://: the client configuration and the name the certificate must carry.
    tls: Option<(Arc<ClientConfig>, ServerName<'static>)>,
}

impl Endpoint {
    /// Parses `http://host:port` or `https://host:port`; an https:// URL needs `cacert`, the
    /// PEM file of the root (or roots) the server's certificate chains to.
    pub fn parse(url: &str, cacert: Option<&Path>) -> Result<Endpoint, String> {
        let (rest, tls, default_port) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(r), _) => (r, false, 80),
            (_, Some(r)) => (r, true, 443),
            _ => return Err(format!("{url}: only http:// and https:// URLs are supported")),
        };
        let host = rest.split('/').next().unwrap_or("");
        let (name, hostport) = match host.rsplit_once(':') {
            Some((n, _)) => (n, host.to_string()),
            None => (host, format!("{host}:{default_port}")),
        };
        // `localhost` may resolve to ::1 first while the server listens on IPv4 only.
        let addrs: Vec<SocketAddr> = hostport.to_socket_addrs().map_err(|e| format!("{host}: {e}"))?.collect();
        let addr = *addrs.iter().find(|a| a.is_ipv4()).or(addrs.first()).ok_or_else(|| format!("{host}: no address"))?;
        let tls = if tls {
            let cacert = cacert.ok_or("an https:// URL needs --cacert FILE (the PEM root to trust)")?;
            let server_name = ServerName::try_from(name.to_string()).map_err(|e| format!("{name}: {e}"))?;
            Some((client_config(cacert)?, server_name))
        } else {
            None
        };
        Ok(Endpoint { addr, host: host.to_string(), tls })
    }

    /// A plain-HTTP endpoint (the nginx floor, the startup probe).
    pub fn plain(addr: SocketAddr, host: &str) -> Endpoint {
        Endpoint { addr, host: host.to_string(), tls: None }
    }

    /// The same server over plain HTTP at `addr` (the floor beside it serves plain HTTP).
    pub fn with_plain_addr(&self, addr: SocketAddr) -> Endpoint {
        Endpoint::plain(addr, &self.host)
    }

    /// `scheme://host`, what a browser on this URL sends as Origin.
    pub fn origin(&self) -> String {
        format!("{}://{}", if self.tls.is_some() { "https" } else { "http" }, self.host)
    }

    /// A new blocking connection with TCP_NODELAY and the timeouts set. For TLS the handshake
    /// runs on the first read or write.
    pub fn connect(&self) -> Result<Stream, String> {
        let s = TcpStream::connect_timeout(&self.addr, TIMEOUT).map_err(|e| format!("connect: {e}"))?;
        s.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
        s.set_read_timeout(Some(TIMEOUT)).map_err(|e| format!("timeout: {e}"))?;
        s.set_write_timeout(Some(TIMEOUT)).map_err(|e| format!("timeout: {e}"))?;
        Ok(match &self.tls {
            None => Stream::Plain(s),
            Some((config, name)) => {
                let conn = ClientConnection::new(config.clone(), name.clone()).map_err(|e| format!("tls: {e}"))?;
                Stream::Tls(Box::new(StreamOwned::new(conn, s)))
            }
        })
    }
}

/// TLS 1.2/1.3 with the ring provider (as the server), trusting only the roots in `cacert`.
fn client_config(cacert: &Path) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(cacert).map_err(|e| format!("{}: {e}", cacert.display()))? {
        let c = c.map_err(|e| format!("{}: {e}", cacert.display()))?;
        roots.add(c).map_err(|e| format!("{}: {e}", cacert.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("{}: no certificate", cacert.display()));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// One connection.
pub enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// Room a non-blocking TLS read keeps free before it takes more records: more than the
/// plaintext one `read_tls` (at most one 16 KiB record plus the tail of the one before)
/// can decrypt, so the session's plaintext always fits and is never left inside it.
const TLS_READ_ROOM: usize = 40 * 1024;

impl Stream {
    /// The TCP socket under it (for its descriptor, non-blocking mode and shutdown).
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => &t.sock,
        }
    }

    /// Moves plaintext the TLS session already decrypted into `into` (a blocking read may
    /// have brought in more records than it returned).
    pub fn take_buffered(&mut self, into: &mut Vec<u8>) -> io::Result<()> {
        let Stream::Tls(t) = self else { return Ok(()) };
        let mut chunk = [0u8; 4096];
        loop {
            match t.conn.reader().read(&mut chunk) {
                Ok(0) => return Ok(()),
                Ok(n) => into.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    }

    /// On a non-blocking socket: reads what has arrived, up to `buf.len()`. `Ok(0)` is the end
    /// of the stream; `WouldBlock` means nothing has arrived. With TLS, records are read until
    /// the socket is drained or `buf` has less than `TLS_READ_ROOM` left, and every decrypted
    /// byte is returned, so level-triggered epoll reports the socket again whenever there is
    /// more (for a plain socket: one read, as before).
    pub fn read_nonblocking(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let t = match self {
            Stream::Plain(s) => return s.read(buf),
            Stream::Tls(t) => t,
        };
        let mut got = 0;
        loop {
            match t.conn.reader().read(&mut buf[got..]) {
                Ok(0) if got < buf.len() => return Ok(got), // close_notify
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(got),
                Err(e) => return Err(e),
            }
            if buf.len() - got < TLS_READ_ROOM {
                return Ok(got);
            }
            match t.conn.read_tls(&mut t.sock) {
                Ok(0) => {
                    // The end of the stream: rustls says whether it ended cleanly.
                    let _ = t.conn.process_new_packets();
                    return Ok(got);
                }
                Ok(_) => {
                    t.conn.process_new_packets().map_err(|e| io::Error::new(ErrorKind::InvalidData, e))?;
                    // Alerts or key updates: a few bytes that an idle socket takes.
                    while t.conn.wants_write() {
                        match t.conn.write_tls(&mut t.sock) {
                            Ok(_) => {}
                            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                            Err(e) => return Err(e),
                        }
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return if got > 0 { Ok(got) } else { Err(e) },
                Err(e) => return Err(e),
            }
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::{request, Client};
    use rustls::pki_types::PrivateKeyDer;
    use std::net::TcpListener;

    /// A CA (its PEM in a file, for --cacert) and a `localhost` leaf it signs (DER, key).
    fn pki(name: &str) -> (std::path::PathBuf, CertificateDer<'static>, Vec<u8>) {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap().signed_by(&leaf_key, &ca, &ca_key).unwrap();
        let path = std::env::temp_dir().join(format!("campfire-bench-{name}-{}.pem", std::process::id()));
        std::fs::write(&path, ca.pem()).unwrap();
        (path, leaf.der().clone(), leaf_key.serialize_der())
    }

    /// A one-connection HTTPS server on loopback: reads one request head, then runs `then` on
    /// the session.
    fn serve(leaf: CertificateDer<'static>, key: Vec<u8>, then: fn(&mut StreamOwned<rustls::ServerConnection, TcpStream>)) -> (u16, std::thread::JoinHandle<()>) {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf], PrivateKeyDer::Pkcs8(key.into()))
            .unwrap();
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let h = std::thread::spawn(move || {
            let (tcp, _) = l.accept().unwrap();
            let mut tls = StreamOwned::new(rustls::ServerConnection::new(Arc::new(config)).unwrap(), tcp);
            let mut head = Vec::new();
            let mut b = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if tls.read(&mut b).unwrap_or(0) == 0 {
                    return;
                }
                head.push(b[0]);
            }
            then(&mut tls);
        });
        (port, h)
    }

    #[test]
    fn the_http_client_speaks_https_to_a_server_the_ca_vouches_for() {
        let (ca, leaf, key) = pki("https-ok");
        let (port, h) = serve(leaf, key, |tls| {
            tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: s=1; secure\r\n\r\nhello").unwrap();
            tls.flush().unwrap();
        });
        let ep = Endpoint::parse(&format!("https://localhost:{port}"), Some(&ca)).unwrap();
        assert_eq!((ep.addr.port(), ep.host.as_str(), ep.origin()), (port, format!("localhost:{port}").as_str(), format!("https://localhost:{port}")));
        let r = Client::new(&ep).send(&request("GET", "/up", &ep.host, &[], b"")).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, b"hello".as_slice()));
        assert_eq!(r.cookies(), vec![("s".to_string(), "1".to_string())]);
        h.join().unwrap();
        let _ = std::fs::remove_file(ca);
    }

    #[test]
    fn a_certificate_from_another_ca_is_refused() {
        let (ca, _, _) = pki("https-other");
        let (unused, leaf, key) = pki("https-server");
        let (port, _h) = serve(leaf, key, |_| {});
        let ep = Endpoint::parse(&format!("https://localhost:{port}"), Some(&ca)).unwrap();
        let e = Client::new(&ep).send(&request("GET", "/up", &ep.host, &[], b"")).unwrap_err();
        assert!(e.contains("certificate"), "{e}");
        assert!(Endpoint::parse("https://localhost:1", None).err().is_some_and(|e| e.contains("--cacert")));
        assert!(Endpoint::parse("ftp://localhost:1", None).is_err());
        let _ = std::fs::remove_file(ca);
        let _ = std::fs::remove_file(unused);
    }

    #[test]
    fn a_nonblocking_read_leaves_no_plaintext_inside_the_session() {
        let (ca, leaf, key) = pki("https-nb");
        // 600 KB in writes of many sizes, so records arrive in bursts larger than one read.
        let (port, h) = serve(leaf, key, |tls| {
            let mut n = 0u32;
            for size in (0..400).map(|i| 1 + (i * 7919) % 3000) {
                let chunk: Vec<u8> = (0..size).map(|_| { n += 1; (n % 251) as u8 }).collect();
                tls.write_all(&chunk).unwrap();
            }
            tls.conn.send_close_notify();
            tls.flush().unwrap();
        });
        let ep = Endpoint::parse(&format!("https://localhost:{port}"), Some(&ca)).unwrap();
        let mut s = ep.connect().unwrap();
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        s.tcp().set_nonblocking(true).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let mut buf = vec![0u8; 256 * 1024];
        let mut got: Vec<u8> = Vec::new();
        loop {
            match s.read_nonblocking(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    got.extend_from_slice(&buf[..n]);
                    let Stream::Tls(t) = &mut s else { unreachable!() };
                    let mut probe = [0u8; 1];
                    assert!(!matches!(t.conn.reader().read(&mut probe), Ok(1)), "plaintext left in the session");
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => panic!("{e}"),
            }
        }
        let want: Vec<u8> = (1..=got.len() as u32).map(|n| (n % 251) as u8).collect();
        assert!(got.len() > 500_000 && got == want, "{} bytes", got.len());
        h.join().unwrap();
        let _ = std::fs::remove_file(ca);
    }
}
