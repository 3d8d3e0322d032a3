//! `campfire-bench run`: sign in, build the contracts, then for each route and concurrency run a
//! validated warm-up and timed sample against the server (and, with --floor, against nginx serving
//! the same bytes), audit the writes, and report medians over rounds as JSON and Markdown.

use crate::account::Target;
use crate::audit;
use crate::contract::{self, Labels, Route};
use crate::db::Conn;
use crate::floor;
use crate::json::{self, Scalar};
use crate::load::{self, Env, Run, Sample};
use crate::login;
use crate::report;
use crate::stream::Endpoint;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options of `campfire-bench run`.
pub struct Options {
    pub url: String,
    /// The PEM root to trust for an https:// URL.
    pub cacert: Option<PathBuf>,
    pub labels: PathBuf,
    pub db: Option<PathBuf>,
    pub target: Target,
    pub clients: Vec<usize>,
    pub secs: f64,
    pub warmup_secs: f64,
    pub routes: Vec<String>,
    pub rounds: usize,
    pub floor: bool,
    pub floor_cpu: Option<String>,
    pub mixed_write_rate: Option<f64>,
    /// The label of the room posts go to (default `rooms.hq`), e.g. `rooms.crew` of a scaled seed.
    pub post_room: Option<String>,
    /// Record failures instead of aborting (the overload profile).
    pub tolerate: bool,
    pub out: Option<PathBuf>,
}

/// One (route, clients) cell over all rounds.
pub struct Cell {
    pub route: String,
    pub clients: usize,
    pub ours: Vec<Sample>,
    pub floor: Vec<Sample>,
}

/// Everything a run measured.
pub struct Outcome {
    pub cells: Vec<Cell>,
    pub acks: usize,
    pub audit_failures: Vec<String>,
    pub idle_rss_kib: Option<u64>,
    pub peak_rss_kib: Option<u64>,
}

/// The number labelled `key` in the labels file.
pub fn label_num(path: &Path, key: &str) -> Result<i64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    match json::parse_flat(&text)?.into_iter().find(|(k, _)| k == key) {
        Some((_, Scalar::Num(n))) => Ok(n),
        _ => Err(format!("labels: no number {key}")),
    }
}

/// Reads the labels the workloads need.
pub fn read_labels(path: &Path) -> Result<(Labels, String), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let all = json::parse_flat(&text)?;
    let num = |k: &str| match all.iter().find(|(key, _)| key == k) {
        Some((_, Scalar::Num(n))) => Ok(*n),
        _ => Err(format!("labels: no number {k}")),
    };
    let string = |k: &str| match all.iter().find(|(key, _)| key == k) {
        Some((_, Scalar::Str(s))) => Ok(s.clone()),
        _ => Err(format!("labels: no string {k}")),
    };
    Ok((
        Labels { watercooler: num("rooms.watercooler")?, hq: num("rooms.hq")?, busy_060: num("messages.busy_060")?, email: string("emails.david")?, avatar_token: string("avatar_tokens.jason")? },
        string("passwords.all")?,
    ))
}

/// Runs the benchmark and prints/writes its report. Fails on any invalid response (unless
/// tolerating) or a failed write audit.
pub fn run(o: &Options) -> Result<Outcome, String> {
    let endpoint = Endpoint::parse(&o.url, o.cacert.as_deref())?;
    let (mut labels, password) = read_labels(&o.labels)?;
    if let Some(key) = &o.post_room {
        labels.hq = label_num(&o.labels, key)?;
    }
    let db_path = o.db.clone().unwrap_or_else(|| o.labels.parent().unwrap_or(Path::new(".")).join("db/production.sqlite3"));
    let db = Conn::open(&db_path.to_string_lossy(), false, true)?;
    let base = audit::baseline(&db, labels.hq)?;
    crate::sys::raise_nofile(65536);
    let idle_rss_kib = o.target.rss_kib();

    let session = login::sign_in(&endpoint, &labels.email, &password, labels.watercooler)?;
    let mut names = o.routes.clone();
    if o.mixed_write_rate.is_some() && !names.iter().any(|n| n == "post_message") {
        names.push("post_message".into());
    }
    let routes = contract::build(&names, &labels, &db, &endpoint, &session)?;
    let env = Env { endpoint: endpoint.clone(), jar: session.jar.clone(), csrf: session.csrf.clone() };
    let post_route = routes.iter().find(|r| r.name == "post_message").cloned();
    let measured: Vec<&Route> = routes
        .iter()
        .filter(|r| o.mixed_write_rate.is_none() || matches!(r.name.as_str(), "room_show" | "messages_page" | "sidebar" | "search"))
        .collect();

    let mut cells: Vec<Cell> = Vec::new();
    for r in &measured {
        for c in &o.clients {
            cells.push(Cell { route: r.name.clone(), clients: *c, ours: vec![], floor: vec![] });
        }
    }
    let mut acks: Vec<(i64, String)> = Vec::new();
    let mut captured_post: Option<crate::contract::Captured> = None;
    let floor_dir = std::env::temp_dir().join(format!("campfire-bench-floor-{}", std::process::id()));
    for round in 0..o.rounds {
        // Alternate which side goes first, as the harness alternates apps between rounds.
        let sides: &[bool] = if !o.floor { &[false] } else if round % 2 == 0 { &[false, true] } else { &[true, false] };
        for &is_floor in sides {
            if is_floor {
                let mut froutes: Vec<Route> = measured.iter().map(|r| (*r).clone()).collect();
                for fr in froutes.iter_mut() {
                    if fr.name == "post_message" {
                        if let Some(c) = &captured_post {
                            fr.captured = c.clone();
                        }
                    }
                }
                let nginx = floor::start(&froutes, &floor_dir, o.floor_cpu.as_deref())?;
                let fenv = Env { endpoint: endpoint.with_plain_addr(nginx.addr), ..env.clone() };
                let target = Target::Pids(nginx.pids.clone());
                for fr in froutes.iter().filter(|r| !r.captured.wire.is_empty()) {
                    let fr = floor::floor_route(fr);
                    sample_route(o, &fr, &fenv, &target, None, true, &mut cells, &mut Vec::new())?;
                }
                drop(nginx);
            } else {
                for r in &measured {
                    let writer = o.mixed_write_rate.and_then(|rate| post_route.as_ref().map(|p| (p, rate)));
                    let cap = sample_route(o, r, &env, &o.target, writer, false, &mut cells, &mut acks)?;
                    if r.name == "post_message" && captured_post.is_none() {
                        captured_post = cap;
                    }
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&floor_dir);
    let audit_failures = audit::audit(&db, labels.hq, base, "bench write ", &acks)?;
    Ok(Outcome { cells, acks: acks.len(), audit_failures, idle_rss_kib, peak_rss_kib: o.target.peak_kib() })
}

// Warm-up (4 clients) then one timed sample per concurrency for one route; returns one captured
// response of the route for the floor.
#[allow(clippy::too_many_arguments)]
fn sample_route(
    o: &Options,
    r: &Route,
    env: &Env,
    target: &Target,
    writer: Option<(&Route, f64)>,
    is_floor: bool,
    cells: &mut [Cell],
    acks: &mut Vec<(i64, String)>,
) -> Result<Option<crate::contract::Captured>, String> {
    let strict = !o.tolerate;
    let side = if is_floor { "floor" } else { "server" };
    let warm = load::drive(&Run { route: r, env, clients: 4, duration: Duration::from_secs_f64(o.warmup_secs), target, strict, writer });
    acks.extend(warm.acks.iter().cloned());
    if strict && !warm.clean() {
        return Err(format!("{side} {} warm-up failed: {}", r.name, describe(&warm)));
    }
    let captured = warm.captured.clone();
    for &clients in &o.clients {
        let s = load::drive(&Run { route: r, env, clients, duration: Duration::from_secs_f64(o.secs), target, strict, writer });
        acks.extend(s.acks.iter().cloned());
        eprintln!(
            "{side:6} {:14} c={clients:<5} {:>10.1} rps  p50 {:.3} ms  p99 {:.3} ms  cpu {} µs/req  ok {} err {} invalid {}",
            r.name,
            s.rps(),
            s.lat_ms(0.5),
            s.lat_ms(0.99),
            s.cpu_per_req().map_or("-".into(), |c| format!("{c:.1}")),
            s.ok,
            s.errors,
            s.invalid
        );
        if strict && !s.clean() {
            return Err(format!("{side} {} at {clients} clients failed: {}", r.name, describe(&s)));
        }
        if let Some(cell) = cells.iter_mut().find(|c| c.route == r.name && c.clients == clients) {
            let mut s = s;
            s.lat_us.shrink_to_fit();
            if is_floor { cell.floor.push(s) } else { cell.ours.push(s) }
        }
    }
    Ok(captured)
}

fn describe(s: &Sample) -> String {
    let reasons: Vec<String> = s.reasons.iter().map(|(r, n)| format!("{n}× {r}")).collect();
    format!("ok {} errors {} invalid {}; {}", s.ok, s.errors, s.invalid, reasons.join("; "))
}

/// Writes the JSON results and prints the Markdown table.
pub fn finish(o: &Options, out: &Outcome) -> Result<PathBuf, String> {
    let path = o.out.clone().unwrap_or_else(report::default_path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&path, report::json(o, out)).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{}", report::markdown(o, out));
    Ok(path)
}
