//! The closed-loop load engine: N client threads, each on its own keep-alive connection, sending
//! the next request as soon as the previous response is read and validated. Measures validated
//! successes, latency, bytes, and the server's CPU and memory across the timed sample.

use crate::account::Target;
use crate::contract::{Captured, Route};
use crate::http::{form_encode, request, Client, Response};
use crate::validate;
use crate::stream::Endpoint;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How many validated responses each client remembers to accept byte-identical repeats cheaply.
const REUSE: usize = 8;

/// Where and as whom to send requests.
#[derive(Clone)]
pub struct Env {
    pub endpoint: Endpoint,
    pub jar: String,
    pub csrf: String,
}

/// One measured sample of one route at one concurrency.
#[derive(Clone, Debug, Default)]
pub struct Sample {
    pub secs: f64,
    pub ok: u64,
    pub errors: u64,
    pub invalid: u64,
    /// Up to a few distinct reasons with counts.
    pub reasons: Vec<(String, u64)>,
    pub statuses: Vec<(u16, u64)>,
    /// Sorted latencies of validated responses, µs.
    pub lat_us: Vec<u32>,
    pub wire_bytes: u64,
    pub decoded_bytes: u64,
    pub cpu_us: Option<u64>,
    pub rss_kib: Option<u64>,
    pub peak_kib: Option<u64>,
    /// CPU the load generator itself used over the sample, µs (to see when it is the bottleneck).
    pub loadgen_cpu_us: Option<u64>,
    /// (message id, posted text) of every acknowledged post.
    pub acks: Vec<(i64, String)>,
    /// Posts made by the paced writer of the mixed profile (also in `acks`).
    pub writer_ok: u64,
    /// One validated response as it came over the wire (for the nginx floor).
    pub captured: Option<Captured>,
}

impl Sample {
    /// Validated responses per second.
    pub fn rps(&self) -> f64 {
        if self.secs > 0.0 { self.ok as f64 / self.secs } else { 0.0 }
    }

    /// The q-quantile latency in ms.
    pub fn lat_ms(&self, q: f64) -> f64 {
        if self.lat_us.is_empty() {
            return 0.0;
        }
        let i = ((self.lat_us.len() as f64 - 1.0) * q).round() as usize;
        self.lat_us[i.min(self.lat_us.len() - 1)] as f64 / 1000.0
    }

    /// Server CPU µs per validated response.
    pub fn cpu_per_req(&self) -> Option<f64> {
        let total = self.ok + self.writer_ok;
        self.cpu_us.filter(|_| total > 0).map(|c| c as f64 / total as f64)
    }

    /// True when every response was a validated 200.
    pub fn clean(&self) -> bool {
        self.errors == 0 && self.invalid == 0 && self.ok > 0
    }

    fn merge(&mut self, o: Tally) {
        self.ok += o.ok;
        self.errors += o.errors;
        self.invalid += o.invalid;
        self.lat_us.extend(o.lat_us);
        self.wire_bytes += o.wire;
        self.decoded_bytes += o.decoded;
        self.acks.extend(o.acks);
        if self.captured.is_none() {
            self.captured = o.captured;
        }
        for (r, n) in o.reasons {
            bump(&mut self.reasons, r, n);
        }
        for (s, n) in o.statuses {
            match self.statuses.iter_mut().find(|(k, _)| *k == s) {
                Some(e) => e.1 += n,
                None => self.statuses.push((s, n)),
            }
        }
    }
}

fn bump(v: &mut Vec<(String, u64)>, r: String, n: u64) {
    if let Some(e) = v.iter_mut().find(|(k, _)| *k == r) {
        e.1 += n;
    } else if v.len() < 8 {
        v.push((r, n));
    }
}

#[derive(Default)]
struct Tally {
    ok: u64,
    errors: u64,
    invalid: u64,
    reasons: Vec<(String, u64)>,
    statuses: Vec<(u16, u64)>,
    lat_us: Vec<u32>,
    wire: u64,
    decoded: u64,
    acks: Vec<(i64, String)>,
    captured: Option<Captured>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A unique post nonce: hex Unix nanoseconds followed by hex of a process-wide counter.
pub fn nonce() -> String {
    let ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{ns:x}{:x}", COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The request for `route`, and for posts the exact text that must come back.
pub fn build_request(route: &Route, env: &Env) -> (Vec<u8>, Option<String>) {
    if route.method == "POST" {
        let n = nonce();
        let text = format!("bench write {n}");
        let body = format!(
            "{}={}&{}={}&authenticity_token={}",
            form_encode("message[body]"),
            form_encode(&text),
            form_encode("message[client_message_id]"),
            n,
            form_encode(&env.csrf)
        );
        let req = request(
            "POST",
            &route.target,
            &env.endpoint.host,
            &[
                ("cookie", &env.jar),
                ("content-type", "application/x-www-form-urlencoded"),
                ("accept", "text/vnd.turbo-stream.html, text/html, application/xhtml+xml"),
                ("x-csrf-token", &env.csrf),
                ("sec-fetch-site", "same-origin"),
                ("accept-encoding", "gzip"),
            ],
            body.as_bytes(),
        );
        (req, Some(text))
    } else {
        (request("GET", &route.target, &env.endpoint.host, &[("cookie", &env.jar), ("accept-encoding", "gzip")], b""), None)
    }
}

/// Validates one response, using `seen` (the client's recent validated responses) for exact repeats.
/// Returns (decoded length, posted message id).
fn validate_one(route: &Route, resp: &Response, posted: Option<&str>, seen: &mut Vec<(Option<String>, String, Vec<u8>, usize)>) -> Result<(usize, Option<i64>), String> {
    let enc = resp.header("content-encoding").map(str::to_string);
    let ct = resp.header("content-type").unwrap_or("").to_string();
    if posted.is_none() && resp.status == 200 {
        if let Some(hit) = seen.iter().find(|(e, c, w, _)| *e == enc && *c == ct && *w == resp.body) {
            if resp.header("content-length").is_none_or(|cl| cl.trim().parse::<usize>().ok() == Some(resp.body.len())) {
                return Ok((hit.3, None));
            }
        }
    }
    let checked = validate::check(&route.contract, &validate::Response { status: resp.status, headers: &resp.headers, wire: &resp.body }, posted)?;
    if posted.is_none() {
        if seen.len() == REUSE {
            seen.remove(0);
        }
        seen.push((enc, ct, resp.body.clone(), checked.decoded_len));
    }
    Ok((checked.decoded_len, checked.message_id))
}

/// Options of one sample.
pub struct Run<'a> {
    pub route: &'a Route,
    pub env: &'a Env,
    pub clients: usize,
    pub duration: Duration,
    pub target: &'a Target,
    /// Stop everything at the first failure (the benchmark); otherwise count and continue (overload).
    pub strict: bool,
    /// The mixed profile: a paced writer posting `writes_per_sec` to this route while the readers run.
    pub writer: Option<(&'a Route, f64)>,
}

/// Runs one sample and returns its measurements. In strict mode the sample stops at the first
/// failure (check `Sample::clean`). CPU and memory are read just before the clients start and
/// just after the last one finished.
pub fn drive(r: &Run) -> Sample {
    let abort = AtomicBool::new(false);
    let barrier = Barrier::new(r.clients + 1 + usize::from(r.writer.is_some()));
    let me = Target::Pids(vec![std::process::id()]);
    let (mut cpu0, mut gen0) = (None, None);
    let mut start = Instant::now();
    let (tallies, writer) = std::thread::scope(|scope| {
        let (abort, barrier) = (&abort, &barrier);
        let handles: Vec<_> = (0..r.clients)
            .map(|_| {
                scope.spawn(move || {
                    barrier.wait();
                    client_loop(r.route, r.env, r.duration, abort, r.strict, None)
                })
            })
            .collect();
        let w = r.writer.map(|(route, rate)| {
            scope.spawn(move || {
                barrier.wait();
                client_loop(route, r.env, r.duration, abort, r.strict, Some(rate))
            })
        });
        cpu0 = r.target.cpu_us();
        gen0 = me.cpu_us();
        start = Instant::now();
        barrier.wait();
        let tallies: Vec<Tally> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        (tallies, w.and_then(|h| h.join().ok()))
    });
    let secs = start.elapsed().as_secs_f64();
    let cpu1 = r.target.cpu_us();
    let gen1 = me.cpu_us();
    let mut s = Sample { secs, ..Sample::default() };
    for t in tallies {
        s.merge(t);
    }
    if let Some(w) = writer {
        s.writer_ok = w.ok;
        s.errors += w.errors;
        s.invalid += w.invalid;
        for (r, n) in w.reasons {
            bump(&mut s.reasons, r, n);
        }
        s.acks.extend(w.acks);
    }
    s.lat_us.sort_unstable();
    s.cpu_us = cpu0.zip(cpu1).map(|(a, b)| b.saturating_sub(a));
    s.loadgen_cpu_us = gen0.zip(gen1).map(|(a, b)| b.saturating_sub(a));
    s.rss_kib = r.target.rss_kib();
    s.peak_kib = r.target.peak_kib();
    s
}

// One client's closed loop. With `pace`, at most that many requests per second and no catch-up.
fn client_loop(route: &Route, env: &Env, duration: Duration, abort: &AtomicBool, strict: bool, pace: Option<f64>) -> Tally {
    let mut t = Tally::default();
    let mut c = Client::new(&env.endpoint);
    let mut seen = Vec::with_capacity(REUSE);
    // GETs are the same bytes every time; posts need a fresh nonce each.
    let fixed = (route.method != "POST").then(|| build_request(route, env).0);
    let start = Instant::now();
    let mut next = start;
    while start.elapsed() < duration && !abort.load(Ordering::Relaxed) {
        if let Some(rate) = pace {
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            }
            next = next.max(Instant::now()) + Duration::from_secs_f64(1.0 / rate);
            if start.elapsed() >= duration {
                break;
            }
        }
        let (owned, posted) = if fixed.is_some() { (Vec::new(), None) } else { build_request(route, env) };
        let req = fixed.as_deref().unwrap_or(&owned);
        let t0 = Instant::now();
        match c.send(req) {
            Err(e) => {
                t.errors += 1;
                bump(&mut t.reasons, e, 1);
                if strict {
                    abort.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(resp) => {
                let us = t0.elapsed().as_micros().min(u32::MAX as u128) as u32;
                match t.statuses.iter_mut().find(|(k, _)| *k == resp.status) {
                    Some(e) => e.1 += 1,
                    None => t.statuses.push((resp.status, 1)),
                }
                match validate_one(route, &resp, posted.as_deref(), &mut seen) {
                    Ok((decoded, id)) => {
                        t.ok += 1;
                        t.lat_us.push(us);
                        t.wire += resp.body.len() as u64;
                        t.decoded += decoded as u64;
                        if t.captured.is_none() {
                            t.captured = Some(Captured {
                                wire: resp.body.clone(),
                                content_type: resp.header("content-type").unwrap_or("").to_string(),
                                encoding: resp.header("content-encoding").map(str::to_string),
                            });
                        }
                        if let (Some(id), Some(p)) = (id, posted) {
                            t.acks.push((id, p));
                        }
                    }
                    Err(e) => {
                        t.invalid += 1;
                        bump(&mut t.reasons, format!("{}: {e}", route.name), 1);
                        if strict {
                            abort.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
        }
    }
    t
}
