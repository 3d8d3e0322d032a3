//! campfire-bench: the benchmark kit for campfire-room and any other Campfire port.
//! `seed` writes the shared harness's seed, `run` drives validated HTTP load and accounts server CPU.
//! See docs/bench.md.

mod clock;
mod crc32;
mod db;
mod digest;
mod gzip;
mod json;
mod rails;
mod seed;
mod seed_c;
mod validate;

use std::path::PathBuf;

const USAGE: &str = "usage:
  campfire-bench seed --out DIR [--files DIR] [--synthetic-c]
  campfire-bench run --url URL --labels FILE [--db PATH] [--pid PID | --cgroup PATH]
                     [--clients 1,16,64] [--secs 8] [--warmup-secs 2] [--routes a,b,..]
                     [--floor] [--mixed-write-rate N] [--out FILE]";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("seed") => cmd_seed(&args[1..]),
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
    let files = opt(args, "--files").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("bench/fixtures/files"));
    seed::run(&seed::Options { out, files })
}
