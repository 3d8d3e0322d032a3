//! The run's report: medians over rounds per route and concurrency, as JSON (for the results
//! folder) and as a Markdown table (for people), each row with our CPU, the nginx floor and their ratio.

use crate::clock;
use crate::json;
use crate::load::Sample;
use crate::run::{Cell, Options, Outcome};
use std::path::PathBuf;

/// `bench/results/<date>-<commit>.json`.
pub fn default_path() -> PathBuf {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let date = clock::iso(now)[..10].to_string();
    PathBuf::from(format!("bench/results/{date}-{}.json", commit()))
}

fn commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "nogit".into())
}

/// The median of `v` (mean of the middle two for even counts); None when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// Median figures of one side of a cell.
pub struct Figures {
    pub rps: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub cpu: Option<f64>,
    pub wire: Option<f64>,
    pub decoded: Option<f64>,
    pub rss_kib: Option<f64>,
    /// The load generator's CPU use over the sample, in % of one core.
    pub loadgen_pct: Option<f64>,
    pub ok: u64,
    pub errors: u64,
    pub invalid: u64,
}

/// Medians over the rounds of `samples`.
pub fn figures(samples: &[Sample]) -> Figures {
    let per = |f: &dyn Fn(&Sample) -> Option<f64>| median(samples.iter().filter_map(f).collect());
    Figures {
        rps: per(&|s| Some(s.rps())),
        p50: per(&|s| Some(s.lat_ms(0.5))),
        p99: per(&|s| Some(s.lat_ms(0.99))),
        cpu: per(&|s| s.cpu_per_req()),
        wire: per(&|s| (s.ok > 0).then(|| s.wire_bytes as f64 / s.ok as f64)),
        decoded: per(&|s| (s.ok > 0).then(|| s.decoded_bytes as f64 / s.ok as f64)),
        rss_kib: per(&|s| s.rss_kib.map(|v| v as f64)),
        loadgen_pct: per(&|s| s.loadgen_cpu_us.filter(|_| s.secs > 0.0).map(|u| u as f64 / 1e4 / s.secs)),
        ok: samples.iter().map(|s| s.ok).sum(),
        errors: samples.iter().map(|s| s.errors).sum(),
        invalid: samples.iter().map(|s| s.invalid).sum(),
    }
}

fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("null".into(), |x| format!("{x:.digits$}"))
}

fn cell_json(c: &Cell) -> String {
    let a = figures(&c.ours);
    let f = figures(&c.floor);
    let ratio = a.cpu.zip(f.cpu).filter(|(_, fl)| *fl > 0.0).map(|(x, fl)| x / fl);
    let reasons: Vec<String> = c.ours.iter().flat_map(|s| s.reasons.iter()).map(|(r, n)| format!("{}: {n}", json::str(r))).collect();
    format!(
        "{{\"route\": {}, \"clients\": {}, \"rounds\": {}, \"rps\": {}, \"p50_ms\": {}, \"p99_ms\": {}, \"cpu_us_per_req\": {}, \"floor_rps\": {}, \"floor_cpu_us_per_req\": {}, \"ratio_to_floor\": {}, \"wire_bytes\": {}, \"decoded_bytes\": {}, \"rss_kib\": {}, \"loadgen_cpu_pct\": {}, \"ok\": {}, \"errors\": {}, \"invalid\": {}, \"reasons\": {{{}}}}}",
        json::str(&c.route),
        c.clients,
        c.ours.len(),
        num(a.rps, 1),
        num(a.p50, 3),
        num(a.p99, 3),
        num(a.cpu, 2),
        num(f.rps, 1),
        num(f.cpu, 2),
        num(ratio, 2),
        num(a.wire, 0),
        num(a.decoded, 0),
        num(a.rss_kib, 0),
        num(a.loadgen_pct, 1),
        a.ok,
        a.errors,
        a.invalid,
        reasons.join(", ")
    )
}

/// The results file.
pub fn json(o: &Options, out: &Outcome) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64);
    let cells: Vec<String> = out.cells.iter().map(|c| format!("    {}", cell_json(c))).collect();
    let fails: Vec<String> = out.audit_failures.iter().map(|f| json::str(f)).collect();
    format!(
        "{{\n  \"tool\": \"campfire-bench\",\n  \"date\": {},\n  \"commit\": {},\n  \"url\": {},\n  \"labels\": {},\n  \"secs\": {},\n  \"warmup_secs\": {},\n  \"rounds\": {},\n  \"mixed_write_rate\": {},\n  \"tolerate_failures\": {},\n  \"idle_rss_kib\": {},\n  \"peak_rss_kib\": {},\n  \"audit\": {{\"acknowledged_posts\": {}, \"passed\": {}, \"failures\": [{}]}},\n  \"samples\": [\n{}\n  ]\n}}\n",
        json::str(&clock::iso(now)),
        json::str(&commit()),
        json::str(&o.url),
        json::str(&o.labels.to_string_lossy()),
        o.secs,
        o.warmup_secs,
        o.rounds,
        o.mixed_write_rate.map_or("null".into(), |r| r.to_string()),
        o.tolerate,
        out.idle_rss_kib.map_or("null".into(), |v| v.to_string()),
        out.peak_rss_kib.map_or("null".into(), |v| v.to_string()),
        out.acks,
        out.audit_failures.is_empty(),
        fails.join(", "),
        cells.join(",\n")
    )
}

/// The Markdown table printed after a run.
pub fn markdown(o: &Options, out: &Outcome) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "campfire-bench: {} — {} round(s) of {} s samples after {} s warm-ups{}\n\n",
        o.url,
        o.rounds,
        o.secs,
        o.warmup_secs,
        o.mixed_write_rate.map_or(String::new(), |r| format!(", paced writer at {r} posts/s"))
    ));
    s.push_str("| route | clients | rps | p50 ms | p99 ms | CPU µs/req | floor µs/req | ratio | wire B | decoded B | loadgen CPU | invalid |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for c in &out.cells {
        let a = figures(&c.ours);
        let f = figures(&c.floor);
        let ratio = a.cpu.zip(f.cpu).filter(|(_, fl)| *fl > 0.0).map(|(x, fl)| x / fl);
        let d = |v: Option<f64>, n: usize| v.map_or("–".into(), |x| format!("{x:.n$}"));
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.route,
            c.clients,
            d(a.rps, 0),
            d(a.p50, 3),
            d(a.p99, 3),
            d(a.cpu, 1),
            d(f.cpu, 1),
            ratio.map_or("–".into(), |r| format!("{r:.2}×")),
            d(a.wire, 0),
            d(a.decoded, 0),
            a.loadgen_pct.map_or("–".into(), |p| format!("{p:.0}%")),
            a.invalid + a.errors
        ));
    }
    let kib = |v: Option<u64>| v.map_or("–".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    s.push_str(&format!("\nserver memory: idle {}, peak {}\n", kib(out.idle_rss_kib), kib(out.peak_rss_kib)));
    if out.audit_failures.is_empty() {
        s.push_str(&format!("write audit: passed ({} acknowledged posts)\n", out.acks));
    } else {
        s.push_str(&format!("write audit: FAILED ({} acknowledged posts)\n", out.acks));
        for f in &out.audit_failures {
            s.push_str(&format!("  - {f}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
    }
}
