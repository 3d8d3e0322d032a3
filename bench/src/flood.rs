//! `campfire-bench flood`: clients that pipeline requests and never read the responses (issue 15,
//! "memory bounded by construction"). Signs in once, opens `conns` connections, writes `pipeline`
//! room-page GETs on each at once and never reads them; meanwhile a prober opens a fresh
//! connection every `probe_ms` for `GET /up` and times the whole answer. Prints the probe
//! latencies, how many flood connections the server closed, and the server's memory (VmHWM, and
//! RssAnon sampled every 50 ms) when `--pid` is given. Speed here is a figure to report, never
//! an assertion.

use crate::http::request;
use crate::login;
use crate::run::read_labels;
use crate::stream::Endpoint;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Options of `campfire-bench flood`.
pub struct Options {
    pub url: String,
    pub labels: PathBuf,
    pub pid: Option<u32>,
    pub conns: usize,
    pub pipeline: usize,
    /// How long the flood connections stay open after the last one was written.
    pub hold_secs: f64,
    pub probe_ms: u64,
    /// Ask for gzip (a smaller page the kernel buffers absorb more of).
    pub gzip: bool,
}

/// A field of /proc/PID/status in KiB, 0 when unreadable.
fn status_kib(pid: u32, field: &str) -> u64 {
    let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return 0 };
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap_or(0)
}

/// One fresh connection, `GET /up`, the whole answer read: its latency, or None on failure.
fn probe(addr: SocketAddr, host: &str) -> Option<Duration> {
    let t = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(format!("GET /up HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes()).ok()?;
    let mut got = Vec::new();
    s.read_to_end(&mut got).ok()?;
    got.starts_with(b"HTTP/1.1 200").then(|| t.elapsed())
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1000.0
}

/// Whether the server closed `s` (FIN or reset seen) without reading what it holds: with its
/// receive queue full of responses a peek sees data first, so closed ones are counted late.
fn closed(s: &TcpStream) -> bool {
    let _ = s.set_nonblocking(true);
    let mut one = [0u8; 1];
    match s.peek(&mut one) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
    }
}

pub fn run(o: &Options) -> Result<(), String> {
    // The flood's raw sockets speak plain HTTP only.
    let endpoint = Endpoint::parse(&o.url, None)?;
    let (addr, host) = (endpoint.addr, endpoint.host.clone());
    let (labels, password) = read_labels(&o.labels)?;
    crate::sys::raise_nofile(o.conns as u64 + 1024);
    let session = login::sign_in(&endpoint, &labels.email, &password, labels.watercooler)?;
    // No Accept-Encoding, as a crude client sends: the whole page, which the kernel's socket
    // buffers cannot absorb 50 times over, so the server is left holding the rest.
    let headers: &[(&str, &str)] = if o.gzip { &[("cookie", &session.jar), ("accept-encoding", "gzip")] } else { &[("cookie", &session.jar)] };
    let one = request("GET", &format!("/rooms/{}", labels.watercooler), &host, headers, b"");
    let burst = one.repeat(o.pipeline);
    let hwm_before = o.pid.map_or(0, |p| status_kib(p, "VmHWM"));

    let stop = AtomicBool::new(false);
    let max_anon = AtomicU64::new(0);
    let (lat, failed, flood) = std::thread::scope(|sc| {
        let prober = sc.spawn(|| {
            let (mut lat, mut failed) = (Vec::new(), 0u64);
            while !stop.load(Ordering::Relaxed) {
                match probe(addr, &host) {
                    Some(d) => lat.push(d),
                    None => failed += 1,
                }
                std::thread::sleep(Duration::from_millis(o.probe_ms));
            }
            (lat, failed)
        });
        if let Some(pid) = o.pid {
            let (stop, max_anon) = (&stop, &max_anon);
            sc.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    max_anon.fetch_max(status_kib(pid, "RssAnon"), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        }
        let t = Instant::now();
        let mut socks = Vec::with_capacity(o.conns);
        let mut refused = 0u64;
        for _ in 0..o.conns {
            let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10));
            match s {
                Ok(mut s) => {
                    // The burst fits the socket's send buffer; a server that stopped reading
                    // makes the write time out rather than hang the flood.
                    let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
                    if s.write_all(&burst).is_err() {
                        refused += 1;
                    }
                    socks.push(s);
                }
                Err(_) => refused += 1,
            }
        }
        let written = t.elapsed();
        std::thread::sleep(Duration::from_secs_f64(o.hold_secs));
        let dropped = socks.iter().filter(|s| closed(s)).count();
        stop.store(true, Ordering::Relaxed);
        let (lat, failed) = prober.join().unwrap_or_default();
        (lat, failed, (socks.len(), refused, dropped, written))
    });
    let mut lat = lat;
    lat.sort();
    let (opened, refused, dropped, written) = flood;
    println!(
        "flood: {} connections x {} pipelined GET /rooms/{} ({} bytes each burst), never read; {} opened, {} failed to connect or write, written in {:.0} ms, {} seen closed by the server after {:.1} s",
        o.conns,
        o.pipeline,
        labels.watercooler,
        burst.len(),
        opened,
        refused,
        written.as_secs_f64() * 1000.0,
        dropped,
        o.hold_secs
    );
    println!(
        "probe: {} fresh GET /up, {} failed; p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        lat.len(),
        failed,
        pct(&lat, 0.50),
        pct(&lat, 0.99),
        lat.last().map_or(f64::NAN, |d| d.as_secs_f64() * 1000.0)
    );
    if let Some(pid) = o.pid {
        println!(
            "server: VmHWM {} KiB before, {} KiB after; max RssAnon sampled {} KiB; RssAnon now {} KiB",
            hwm_before,
            status_kib(pid, "VmHWM"),
            max_anon.load(Ordering::Relaxed),
            status_kib(pid, "RssAnon")
        );
    }
    Ok(())
}
