//! Shared by the tests/http_*.rs integration tests: start the real binary on a free port with its
//! own temporary storage, and talk raw HTTP/1.1 to it over real sockets.
#![allow(dead_code, unused_imports)] // each test file uses a different part of this helper

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[path = "../auth_support/mod.rs"]
mod auth_support;

pub use auth_support::binary;

pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    pub child: Child,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh temporary directory for one test.
pub fn temp_dir(tag: &str) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("campfire-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A port nobody listens on, below the kernel's ephemeral range (32768+) so that the thousands
/// of client sockets some tests open cannot collide with it. Checked by binding without
/// SO_REUSEPORT: that fails if another server (which would share the port) holds it.
fn free_port() -> u16 {
    let seed = std::process::id() as usize * 7919 + std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as usize)
        .unwrap_or(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let port = 10_000 + ((seed + n * 104_729) % 20_000) as u16;
        if std::net::TcpListener::bind(("0.0.0.0", port)).is_ok() && std::net::TcpListener::bind(("::", port)).is_ok() {
            return port;
        }
    }
}

impl Server {
    /// Starts the binary with test routes on, the access log off, and `env` on top; waits until
    /// it accepts connections.
    pub fn start(env: &[(&str, &str)]) -> Server {
        let dir = temp_dir("srv");
        for _attempt in 0..5 {
            let port = free_port();
            let mut cmd = auth_support::command(port, &dir);
            cmd.env("CAMPFIRE_TEST_ROUTES", "1");
            for (k, v) in env {
                cmd.env(k, v);
            }
            let out = std::fs::File::create(dir.join("stdout.log")).unwrap();
            let err = std::fs::File::create(dir.join("stderr.log")).unwrap();
            let mut child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn().unwrap();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(5) {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // port taken meanwhile, or a startup error: try again / report below
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Server { port, dir, child };
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("server did not start: {}", std::fs::read_to_string(dir.join("stderr.log")).unwrap_or_default());
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.set_nodelay(true).unwrap();
        s
    }

    /// Sends `req` on a new connection, half-closes, and returns everything the server sent
    /// until it closed.
    pub fn raw(&self, req: &[u8]) -> String {
        let mut s = self.connect();
        s.write_all(req).unwrap();
        let _ = s.shutdown(Shutdown::Write);
        read_to_close(&mut s)
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(self.dir.join("stdout.log")).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.join("stderr.log")).unwrap_or_default()
    }

    /// Sends SIGTERM and waits for the exit code.
    pub fn terminate(&mut self) -> Option<i32> {
        Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().unwrap();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(20) {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads until the peer closes (or the read timeout passes).
pub fn read_to_close(s: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

/// Reads until `needle` has arrived `count` times.
pub fn read_until(s: &mut TcpStream, needle: &str, count: usize) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 16384];
    while String::from_utf8_lossy(&got).matches(needle).count() < count {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => got.extend_from_slice(&buf[..k]),
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

/// Status code of the first response in `text` (0 if none).
pub fn status(text: &str) -> u16 {
    text.strip_prefix("HTTP/1.1 ")
        .or_else(|| text.strip_prefix("HTTP/1.0 "))
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Status codes of every response in `text`, in order.
pub fn statuses(text: &str) -> Vec<u16> {
    text.match_indices("HTTP/1.").map(|(i, _)| status(&text[i..])).filter(|&s| s != 0).collect()
}
