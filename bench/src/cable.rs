//! `campfire-bench cable`: the Action Cable fan-out workload (workloads.md §7). N WebSocket clients,
//! all signed in as the same user, subscribe the "chatter.js shape" of channels; one poster sends
//! paced messages, then several posters saturate; every client scans its frames for `bmk<n>z`
//! markers (`cable_reader`: a few epoll threads read all the clients). Reports readiness,
//! delivery latency to each and to all clients, and throughput.

use crate::account::Target;
use crate::audit;
use crate::cable_reader::{read_loop, Client as Reader, Tally};
use crate::contract;
use crate::db::Conn;
use crate::http::{form_encode, request, Client};
use crate::json;
use crate::login;
use crate::run::read_labels;
use crate::stream::Endpoint;
use crate::validate;
use crate::ws::Socket;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Options of `campfire-bench cable`.
pub struct Options {
    pub url: String,
    /// The PEM root to trust for an https:// (wss://) URL.
    pub cacert: Option<PathBuf>,
    pub labels: PathBuf,
    pub db: Option<PathBuf>,
    pub target: Target,
    pub clients: usize,
    pub latency_msgs: usize,
    pub interval_ms: u64,
    pub posters: usize,
    pub tput_secs: f64,
    pub hold_secs: f64,
    /// Offer permessage-deflate and report wire throughput.
    pub deflate: bool,
    /// Threads reading the clients' sockets (each an epoll over its share).
    pub readers: usize,
    pub out: Option<PathBuf>,
}

// (sequence number, sent at, acknowledged)
type Sent = Mutex<Vec<(u64, Instant, bool)>>;

fn phase(name: &str) {
    let ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    eprintln!("PHASE {name} {ms}");
}

/// Runs the fan-out workload and prints/writes its report.
pub fn run(o: &Options) -> Result<(), String> {
    let endpoint = Endpoint::parse(&o.url, o.cacert.as_deref())?;
    let host = endpoint.host.clone();
    let (labels, password) = read_labels(&o.labels)?;
    let room = labels.watercooler;
    let db_path = o.db.clone().unwrap_or_else(|| o.labels.parent().unwrap_or(Path::new(".")).join("db/production.sqlite3"));
    let db = Conn::open(&db_path.to_string_lossy(), false, true)?;
    let base = audit::baseline(&db, room)?;
    crate::sys::raise_nofile(o.clients as u64 * 2 + 1024);
    let session = login::sign_in(&endpoint, &labels.email, &password, room)?;
    let post = contract::post_route(room, &mut Client::new(&endpoint), &host, &session)?;

    let mut identifiers = vec![
        format!("{{\"channel\":\"PresenceChannel\",\"room_id\":{room}}}"),
        "{\"channel\":\"UnreadRoomsChannel\"}".to_string(),
        "{\"channel\":\"HeartbeatChannel\"}".to_string(),
    ];
    for (channel, name) in &session.stream_sources {
        identifiers.push(format!("{{\"channel\":{},\"signed_stream_name\":{}}}", json::str(channel), json::str(name)));
    }
    let commands: Vec<String> = identifiers.iter().map(|i| format!("{{\"command\":\"subscribe\",\"identifier\":{}}}", json::str(i))).collect();
    let origin = endpoint.origin();
    let sh = Tally::default();
    let t0 = Instant::now();
    let sent: Sent = Mutex::new(Vec::new());
    let seq = AtomicU64::new(0);
    let acks: Mutex<Vec<(i64, String)>> = Mutex::new(Vec::new());
    let post_lat: Mutex<(Vec<f64>, Vec<f64>)> = Mutex::new((Vec::new(), Vec::new()));

    // Resident memory before any client and again once all are ready and idle, each after the
    // server's heap trim (a second without events): the cost of an idle subscribed client.
    let settled_rss = || {
        std::thread::sleep(Duration::from_millis(2500));
        o.target.rss_kib()
    };
    let rss_before = settled_rss();
    let report = std::thread::scope(|scope| -> Result<String, String> {
        phase("connect");
        let t_connect = Instant::now();
        let mut readers = Vec::new();
        let mut failed = 0usize;
        for i in 0..o.clients {
            let headers = [("cookie", session.jar.as_str()), ("origin", origin.as_str()), ("sec-websocket-protocol", "actioncable-v1-json, actioncable-unsupported")];
            let sock = Socket::connect(&endpoint, "/cable", &headers, 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 1), o.deflate);
            let mut sock = match sock {
                Ok(s) => s,
                Err(e) => {
                    failed += 1;
                    if failed <= 3 {
                        eprintln!("cable client {i}: {e}");
                    }
                    continue;
                }
            };
            if commands.iter().try_for_each(|c| sock.send_text(c)).is_err() {
                failed += 1;
                continue;
            }
            match Reader::new(sock, commands.len()) {
                Ok(r) => readers.push(r),
                Err(_) => failed += 1,
            }
        }
        let connected = readers.len();
        let per_thread = connected.div_ceil(o.readers.max(1)).max(1);
        let mut handles = Vec::new();
        while !readers.is_empty() {
            let rest = readers.split_off(per_thread.min(readers.len()));
            let mut mine = std::mem::replace(&mut readers, rest);
            let sh = &sh;
            handles.push(scope.spawn(move || {
                read_loop(&mut mine, t0, sh);
                mine
            }));
        }
        let wait = Duration::from_secs_f64((o.clients as f64 / 200.0).max(120.0));
        while sh.ready.load(Ordering::Relaxed) + sh.rejected.load(Ordering::Relaxed) < connected && t_connect.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(20));
        }
        let connect_secs = t_connect.elapsed().as_secs_f64();
        let ready = sh.ready.load(Ordering::Relaxed);
        phase("connected");
        eprintln!("cable: {ready} ready of {} ({failed} failed to connect) in {connect_secs:.2} s", o.clients);
        let rss_idle = settled_rss();
        let idle_kib_per_client = match (rss_before, rss_idle) {
            (Some(b), Some(a)) if ready > 0 => Some((a as f64 - b as f64) / ready as f64),
            _ => None,
        };
        if let Some(k) = idle_kib_per_client {
            eprintln!("cable: idle clients cost {k:.2} KiB each ({} KiB before, {} KiB with {ready} ready)", rss_before.unwrap_or(0), rss_idle.unwrap_or(0));
        }
        if o.hold_secs > 0.0 {
            phase("hold");
            std::thread::sleep(Duration::from_secs_f64(o.hold_secs));
        }

        let post_one = |c: &mut Client, saturated: bool| -> Result<(), String> {
            let n = seq.fetch_add(1, Ordering::Relaxed) + 1;
            let text = format!("fanout bmk{n}z");
            let body = format!("{}={}&{}={}&authenticity_token={}", form_encode("message[body]"), form_encode(&text), form_encode("message[client_message_id]"), crate::load::nonce(), form_encode(&session.csrf));
            let req = request(
                "POST",
                &post.target,
                &host,
                &[("cookie", &session.jar), ("content-type", "application/x-www-form-urlencoded"), ("accept", "text/vnd.turbo-stream.html, text/html, application/xhtml+xml"), ("x-csrf-token", &session.csrf), ("sec-fetch-site", "same-origin"), ("accept-encoding", "gzip")],
                body.as_bytes(),
            );
            let t0 = Instant::now();
            if let Ok(mut s) = sent.lock() {
                s.push((n, t0, false));
            }
            let resp = c.send(&req)?;
            let checked = validate::check(&post.contract, &validate::Response { status: resp.status, headers: &resp.headers, wire: &resp.body }, Some(&text))?;
            let ms = t0.elapsed().as_secs_f64() * 1000.0;
            if let Ok(mut l) = post_lat.lock() {
                if saturated { l.1.push(ms) } else { l.0.push(ms) }
            }
            if let (Ok(mut a), Some(id)) = (acks.lock(), checked.message_id) {
                a.push((id, text));
            }
            if let Ok(mut s) = sent.lock() {
                if let Some(e) = s.iter_mut().rev().find(|e| e.0 == n) {
                    e.2 = true;
                }
            }
            Ok(())
        };
        let drain = |limit: Duration| -> f64 {
            let t = Instant::now();
            let posted = sent.lock().map_or(0, |s| s.iter().filter(|e| e.2).count()) as u64;
            while sh.receipts.load(Ordering::Relaxed) < posted * ready as u64 && t.elapsed() < limit {
                std::thread::sleep(Duration::from_millis(10));
            }
            t.elapsed().as_secs_f64()
        };

        phase("paced");
        let mut c = Client::new(&endpoint);
        let mut errors = Vec::new();
        let t = Instant::now();
        for k in 0..o.latency_msgs {
            let due = t + Duration::from_millis(o.interval_ms * k as u64);
            if let Some(d) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(d);
            }
            if let Err(e) = post_one(&mut c, false) {
                errors.push(e);
            }
        }
        let paced_drain = drain(Duration::from_secs(20));
        let paced_count = seq.load(Ordering::Relaxed);

        phase("saturated");
        let cpu0 = o.target.cpu_us();
        let frames0 = sh.frames.load(Ordering::Relaxed);
        let wire0 = sh.wire.load(Ordering::Relaxed);
        let sat_start = Instant::now();
        let sat_errors: Vec<String> = std::thread::scope(|s2| {
            let hs: Vec<_> = (0..o.posters)
                .map(|_| {
                    s2.spawn(|| {
                        let mut c = Client::new(&endpoint);
                        let mut errs = Vec::new();
                        while sat_start.elapsed().as_secs_f64() < o.tput_secs {
                            if let Err(e) = post_one(&mut c, true) {
                                errs.push(e);
                                std::thread::sleep(Duration::from_millis(10));
                            }
                        }
                        errs
                    })
                })
                .collect();
            hs.into_iter().filter_map(|h| h.join().ok()).flatten().collect()
        });
        errors.extend(sat_errors);
        let sat_drain = drain(Duration::from_secs(60));
        let cpu1 = o.target.cpu_us();
        let frames = sh.frames.load(Ordering::Relaxed) - frames0;
        let wire = sh.wire.load(Ordering::Relaxed) - wire0;
        phase("done");
        sh.stop.store(true, Ordering::Relaxed);
        let clients: Vec<Reader> = handles.into_iter().filter_map(|h| h.join().ok()).flatten().collect();

        // Latencies from the post's send time to each client and to the last ready client.
        let sent = sent.lock().map(|s| s.clone()).unwrap_or_default();
        let ready_clients: Vec<&Reader> = clients.iter().filter(|c| c.ready()).collect();
        let mut per_client = Vec::new();
        let mut all_clients = Vec::new();
        let mut complete_sat = 0u64;
        let mut last_receipt = sat_start;
        for (n, at, _) in sent.iter().filter(|e| e.2) {
            let times: Vec<Instant> = ready_clients.iter().filter_map(|c| c.receipt_us(*n)).map(|us| t0 + Duration::from_micros(us)).collect();
            for t in &times {
                per_client.push(t.saturating_duration_since(*at).as_secs_f64() * 1000.0);
            }
            if times.len() == ready && ready > 0 {
                if let Some(last) = times.iter().max() {
                    all_clients.push(last.saturating_duration_since(*at).as_secs_f64() * 1000.0);
                    if *n > paced_count {
                        complete_sat += 1;
                        last_receipt = last_receipt.max(*last);
                    }
                }
            }
        }
        let span = last_receipt.saturating_duration_since(sat_start).as_secs_f64();
        let delivered_per_sec = if span > 0.0 { complete_sat as f64 / span } else { 0.0 };
        let deliveries = complete_sat * ready as u64;
        let cpu_per_delivery = cpu0.zip(cpu1).filter(|_| deliveries > 0).map(|(a, b)| b.saturating_sub(a) as f64 / deliveries as f64);
        let q = |v: &[f64], p: f64| -> Option<f64> {
            let mut v = v.to_vec();
            v.sort_by(|a, b| a.total_cmp(b));
            (!v.is_empty()).then(|| v[(((v.len() - 1) as f64) * p).round() as usize])
        };
        let (paced_lat, sat_lat) = post_lat.lock().map(|l| l.clone()).unwrap_or_default();
        let f = |v: Option<f64>| v.map_or("null".into(), |x| format!("{x:.3}"));
        let acks = acks.lock().map(|a| a.clone()).unwrap_or_default();
        let audit_failures = audit::audit(&db, room, base, "fanout bmk", &acks)?;
        let errs: Vec<String> = errors.iter().take(5).map(|e| json::str(e)).collect();
        println!(
            "| clients | ready | connect s | paced post p50/p99 ms | per-client p50/p99 ms | all-clients p50/p99 ms | delivered msgs/s to all | frames/s | CPU µs/delivery |\n|---:|---:|---:|---|---|---|---:|---:|---:|\n| {} | {} | {:.2} | {}/{} | {}/{} | {}/{} | {:.1} | {:.0} | {} |\n\nsaturated: {} posts by {} posters, post p50/p99 {}/{} ms; drains {:.2} s / {:.2} s; post errors {}; write audit: {}",
            o.clients, ready, connect_secs, f(q(&paced_lat, 0.5)), f(q(&paced_lat, 0.99)), f(q(&per_client, 0.5)), f(q(&per_client, 0.99)), f(q(&all_clients, 0.5)), f(q(&all_clients, 0.99)),
            delivered_per_sec, if span > 0.0 { frames as f64 / span } else { 0.0 }, cpu_per_delivery.map_or("–".into(), |c| format!("{c:.2}")),
            sat_lat.len(), o.posters, f(q(&sat_lat, 0.5)), f(q(&sat_lat, 0.99)), paced_drain, sat_drain, errors.len(),
            if audit_failures.is_empty() { "passed".to_string() } else { format!("FAILED: {}", audit_failures.join("; ")) }
        );
        let json = format!(
            "{{\n  \"tool\": \"campfire-bench cable\",\n  \"url\": {},\n  \"clients\": {},\n  \"ready\": {},\n  \"failed\": {},\n  \"connect_secs\": {:.3},\n  \"subscriptions_per_client\": {},\n  \"paced_posts\": {},\n  \"paced_post_ms\": {{\"p50\": {}, \"p99\": {}}},\n  \"saturated_posts\": {},\n  \"saturated_post_ms\": {{\"p50\": {}, \"p99\": {}}},\n  \"per_client_ms\": {{\"p50\": {}, \"p99\": {}}},\n  \"all_clients_ms\": {{\"p50\": {}, \"p99\": {}}},\n  \"delivered_msgs_per_sec\": {:.1},\n  \"frames_per_sec\": {:.1},\n  \"deflate\": {},\n  \"wire_mb_per_sec\": {},\n  \"drain_secs\": {{\"paced\": {:.3}, \"saturated\": {:.3}}},\n  \"cpu_us_per_delivery\": {},\n  \"idle_rss_kib\": {{\"before\": {}, \"ready\": {}, \"per_client\": {}}},\n  \"rss_kib\": {},\n  \"peak_rss_kib\": {},\n  \"post_errors\": [{}],\n  \"audit\": {{\"acknowledged_posts\": {}, \"passed\": {}, \"failures\": [{}]}}\n}}\n",
            json::str(&o.url), o.clients, ready, o.clients - ready, connect_secs, commands.len(), paced_lat.len(), f(q(&paced_lat, 0.5)), f(q(&paced_lat, 0.99)),
            sat_lat.len(), f(q(&sat_lat, 0.5)), f(q(&sat_lat, 0.99)), f(q(&per_client, 0.5)), f(q(&per_client, 0.99)), f(q(&all_clients, 0.5)), f(q(&all_clients, 0.99)),
            delivered_per_sec, if span > 0.0 { frames as f64 / span } else { 0.0 }, o.deflate,
            if o.deflate && span > 0.0 { format!("{:.3}", wire as f64 / span / 1e6) } else { "null".into() }, paced_drain, sat_drain,
            cpu_per_delivery.map_or("null".into(), |c| format!("{c:.3}")),
            rss_before.map_or("null".into(), |v| v.to_string()), rss_idle.map_or("null".into(), |v| v.to_string()), idle_kib_per_client.map_or("null".into(), |v| format!("{v:.3}")),
            o.target.rss_kib().map_or("null".into(), |v| v.to_string()), o.target.peak_kib().map_or("null".into(), |v| v.to_string()),
            errs.join(", "), acks.len(), audit_failures.is_empty(), audit_failures.iter().map(|f| json::str(f)).collect::<Vec<_>>().join(", ")
        );
        if !audit_failures.is_empty() || ready == 0 || !errors.is_empty() {
            eprintln!("cable: run not clean (ready {ready}, post errors {}, audit failures {})", errors.len(), audit_failures.len());
        }
        Ok(json)
    })?;
    let path = o.out.clone().unwrap_or_else(|| {
        let p = crate::report::default_path();
        p.with_file_name(format!("{}-cable.json", p.file_stem().map_or("results".into(), |s| s.to_string_lossy().into_owned())))
    });
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    std::fs::write(&path, report).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("campfire-bench: results in {}", path.display());
    Ok(())
}

