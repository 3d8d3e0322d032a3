//! campfire-bench: the benchmark kit for campfire-room and any other Campfire port.
//! `seed` writes the shared harness's seed, `run` drives validated HTTP load and accounts server CPU.
//! See docs/bench.md.

mod account;
mod audit;
mod cable;
mod cable_reader;
mod clock;
mod contract;
mod crc32;
mod db;
mod digest;
mod floor;
mod flood;
mod gzip;
mod http;
mod json;
mod load;
mod login;
mod media;
mod rails;
mod report;
mod run;
mod seed;
mod seed_c;
mod seed_scale;
mod startup;
mod stream;
mod sys;
mod upload;
mod validate;
mod ws;

use std::path::PathBuf;

const USAGE: &str = "usage:
  campfire-bench seed --out DIR [--files DIR] [--scale N] [--synthetic-c]
  campfire-bench run --url URL [--cacert FILE] --labels FILE [--db PATH] [--pid PID[,PID..] | --cgroup PATH]
                     [--clients 1,16,64] [--secs 8] [--warmup-secs 2] [--rounds 1]
                     [--routes room_show,messages_page,...] [--floor] [--floor-cpu CPUS]
                     [--mixed-write-rate N] [--post-room LABEL] [--out FILE]
  campfire-bench overload (same options; clients default 64,256,1024; failures are counted, not fatal)
  campfire-bench cable --url URL [--cacert FILE] --labels FILE [--pid PID | --cgroup PATH] [--clients 100] [--readers 2]
                     [--latency-msgs 30] [--interval-ms 200] [--posters 4] [--tput-secs 15]
                     [--hold-secs 0] [--deflate 1] [--out FILE]
  campfire-bench upload --url URL [--cacert FILE] --labels FILE [--reps 5] [--file black_hole.jpg]
  campfire-bench startup --server CMD --port PORT [--runs 20]
  campfire-bench flood --url URL --labels FILE [--pid PID] [--conns 1000] [--pipeline 50]
                     [--hold-secs 5] [--probe-ms 10] [--gzip]
URL is http://HOST:PORT or https://HOST:PORT (cable: ws:// or wss:// accordingly); https needs
--cacert, the PEM root the server's certificate chains to (flood: http:// only).";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("seed") => cmd_seed(&args[1..]),
        Some("run") => cmd_run(&args[1..], false),
        Some("overload") => cmd_run(&args[1..], true),
        Some("cable") => cmd_cable(&args[1..]),
        Some("upload") => upload::run(&upload::Options {
            url: opt(&args, "--url").unwrap_or_default(),
            cacert: opt(&args, "--cacert").map(PathBuf::from),
            labels: PathBuf::from(opt(&args, "--labels").unwrap_or_default()),
            file: opt(&args, "--file").map(PathBuf::from),
            reps: number(&args, "--reps", 5.0).unwrap_or(5.0).max(1.0) as usize,
        }),
        Some("flood") => flood::run(&flood::Options {
            url: opt(&args, "--url").unwrap_or_default(),
            labels: PathBuf::from(opt(&args, "--labels").unwrap_or_default()),
            pid: opt(&args, "--pid").and_then(|p| p.parse().ok()),
            conns: number(&args, "--conns", 1000.0).unwrap_or(1000.0).max(1.0) as usize,
            pipeline: number(&args, "--pipeline", 50.0).unwrap_or(50.0).max(1.0) as usize,
            hold_secs: number(&args, "--hold-secs", 5.0).unwrap_or(5.0).max(0.0),
            probe_ms: number(&args, "--probe-ms", 10.0).unwrap_or(10.0).max(1.0) as u64,
            gzip: flag(&args, "--gzip"),
        }),
        Some("startup") => match (opt(&args, "--server"), opt(&args, "--port").and_then(|p| p.parse().ok())) {
            (Some(server), Some(port)) => {
                startup::run(&startup::Options { server, port, runs: number(&args, "--runs", 20.0).unwrap_or(20.0).max(1.0) as usize })
            }
            _ => Err(USAGE.to_string()),
        },
        _ => Err(USAGE.to_string()),
    };
    if let Err(e) = result {
        eprintln!("campfire-bench: {e}");
        std::process::exit(2);
    }
}

/// Returns the value after `--name`, if present.
fn opt(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn flag(args: &[String], name: &str) -> bool {
    args.iter().any(|a| a == name)
}

fn cmd_seed(args: &[String]) -> Result<(), String> {
    let out = PathBuf::from(opt(args, "--out").ok_or("seed needs --out DIR")?);
    if flag(args, "--synthetic-c") {
        return seed_c::run(&out);
    }
    let files = opt(args, "--files").map(PathBuf::from);
    let scale = opt(args, "--scale").map_or(Ok(1), |v| v.parse::<u32>().map_err(|_| format!("--scale: not a whole number: {v}")))?;
    if !(1..=1000).contains(&scale) {
        return Err(format!("--scale {scale}: must be 1..=1000"));
    }
    seed::run(&seed::Options { out, files, scale })
}

fn target(args: &[String]) -> Result<account::Target, String> {
    Ok(match (opt(args, "--pid"), opt(args, "--cgroup")) {
        (Some(p), _) => account::Target::Pids(p.split(',').map(|x| x.parse().map_err(|_| format!("--pid: {x}"))).collect::<Result<_, _>>()?),
        (None, Some(c)) => account::Target::Cgroup(PathBuf::from(c)),
        (None, None) => account::Target::None,
    })
}

fn number(args: &[String], name: &str, default: f64) -> Result<f64, String> {
    opt(args, name).map_or(Ok(default), |v| v.parse().map_err(|_| format!("{name}: not a number: {v}")))
}

fn cmd_cable(args: &[String]) -> Result<(), String> {
    let o = cable::Options {
        url: opt(args, "--url").ok_or("cable needs --url")?,
        cacert: opt(args, "--cacert").map(PathBuf::from),
        labels: PathBuf::from(opt(args, "--labels").ok_or("cable needs --labels FILE")?),
        db: opt(args, "--db").map(PathBuf::from),
        target: target(args)?,
        clients: number(args, "--clients", 100.0)?.max(1.0) as usize,
        latency_msgs: number(args, "--latency-msgs", 30.0)? as usize,
        interval_ms: number(args, "--interval-ms", 200.0)? as u64,
        posters: number(args, "--posters", 4.0)?.max(1.0) as usize,
        tput_secs: number(args, "--tput-secs", 15.0)?,
        hold_secs: number(args, "--hold-secs", 0.0)?,
        deflate: number(args, "--deflate", 0.0)? != 0.0,
        readers: number(args, "--readers", 2.0)?.max(1.0) as usize,
        out: opt(args, "--out").map(PathBuf::from),
    };
    cable::run(&o)
}

fn cmd_run(args: &[String], overload: bool) -> Result<(), String> {
    let list = |name: &str, default: &str| -> Vec<String> {
        opt(args, name).unwrap_or_else(|| default.to_string()).split(',').filter(|s| !s.is_empty()).map(str::to_string).collect()
    };
    let number = |name: &str, default: f64| number(args, name, default);
    let target = target(args)?;
    let default_routes = if overload { "room_show,messages_page,sidebar,search" } else { &contract::ROUTES.join(",") };
    let clients = list("--clients", if overload { "64,256,1024" } else { "1,16,64" })
        .iter()
        .map(|c| c.parse::<usize>().map_err(|_| format!("--clients: {c}")).and_then(|n| if n == 0 { Err("--clients: 0".to_string()) } else { Ok(n) }))
        .collect::<Result<Vec<_>, _>>()?;
    let routes = list("--routes", default_routes);
    for r in &routes {
        if !contract::ROUTES.contains(&r.as_str()) {
            return Err(format!("unknown route {r}; known: {}", contract::ROUTES.join(",")));
        }
    }
    let o = run::Options {
        url: opt(args, "--url").ok_or("run needs --url")?,
        cacert: opt(args, "--cacert").map(PathBuf::from),
        labels: PathBuf::from(opt(args, "--labels").ok_or("run needs --labels FILE")?),
        db: opt(args, "--db").map(PathBuf::from),
        target,
        clients,
        secs: number("--secs", 8.0)?,
        warmup_secs: number("--warmup-secs", 2.0)?,
        routes,
        rounds: number("--rounds", 1.0)?.max(1.0) as usize,
        floor: flag(args, "--floor"),
        floor_cpu: opt(args, "--floor-cpu"),
        mixed_write_rate: opt(args, "--mixed-write-rate").map(|v| v.parse().map_err(|_| format!("--mixed-write-rate: {v}"))).transpose()?,
        post_room: opt(args, "--post-room"),
        tolerate: overload,
        out: opt(args, "--out").map(PathBuf::from),
    };
    let outcome = run::run(&o)?;
    let path = run::finish(&o, &outcome)?;
    eprintln!("campfire-bench: results in {}", path.display());
    let invalid: u64 = outcome.cells.iter().flat_map(|c| c.ours.iter()).map(|s| s.invalid + s.errors).sum();
    if !outcome.audit_failures.is_empty() {
        return Err("write audit failed".into());
    }
    if invalid > 0 && !overload {
        return Err(format!("{invalid} failed responses"));
    }
    Ok(())
}
