//! `campfire-bench startup`: exec to the first `/up` 200, measured without shell or curl in the
//! way (issue 7's goal: ≤ 20 ms). Each run spawns the server command (through `sh -c`, with the
//! environment the caller set up; `exec` in the command keeps the shell out of the timing),
//! polls `GET /up` on a fresh connection every 250 µs from the moment of the spawn, and stops it
//! with SIGTERM once answered. The clock starts just before the spawn, so fork and exec count.

use crate::http::{request, Client};
use crate::stream::Endpoint;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Options {
    pub server: String,
    pub port: u16,
    pub runs: usize,
}

pub fn run(o: &Options) -> Result<(), String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], o.port));
    let mut times = Vec::with_capacity(o.runs);
    for _ in 0..o.runs {
        if up(addr) {
            return Err(format!("something already answers /up on port {}", o.port));
        }
        let t0 = Instant::now();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&o.server)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", o.server))?;
        let answered = loop {
            if up(addr) {
                break Some(t0.elapsed());
            }
            if t0.elapsed() > Duration::from_secs(10) || child.try_wait().ok().flatten().is_some() {
                break None;
            }
            std::thread::sleep(Duration::from_micros(250));
        };
        // SIGTERM: the server drains and exits cleanly, so the next run finds the port free.
        crate::sys::signal(child.id(), libc::SIGTERM);
        let _ = child.wait();
        let t = answered.ok_or("the server did not answer /up within 10 s (or exited)")?;
        times.push(t.as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "startup: exec to the first /up 200 over {} runs: median {median:.1} ms, min {:.1} ms, max {:.1} ms",
        times.len(),
        times[0],
        times[times.len() - 1]
    );
    Ok(())
}

/// One `GET /up` on a new connection (refused at once while nothing listens): true on a 200.
fn up(addr: SocketAddr) -> bool {
    Client::new(&Endpoint::plain(addr, "127.0.0.1")).send(&request("GET", "/up", "127.0.0.1", &[], b"")).is_ok_and(|r| r.status == 200)
}
