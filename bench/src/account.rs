//! Server-side accounting: cumulative CPU time and memory of the process(es) or cgroup under test,
//! read from /proc and cgroup v2 files before and after each timed sample (workloads.md §5).

use std::path::PathBuf;

/// What to account.
#[derive(Clone, Debug)]
pub enum Target {
    /// These processes (all their threads, living and exited).
    Pids(Vec<u32>),
    /// A cgroup v2 directory (`cpu.stat`, `memory.current`, `memory.peak`).
    Cgroup(PathBuf),
    /// Nothing: CPU and memory columns stay empty.
    None,
}

impl Target {
    /// Cumulative user+system CPU time in microseconds, if readable.
    pub fn cpu_us(&self) -> Option<u64> {
        match self {
            Target::Pids(pids) => {
                let tick = crate::sys::clock_ticks();
                let mut sum = 0;
                for pid in pids {
                    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                    // Fields after the parenthesised command: state is field 3, utime 14, stime 15.
                    let rest = stat.get(stat.rfind(')')? + 2..)?;
                    let f: Vec<&str> = rest.split(' ').collect();
                    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
                    sum += ticks * 1_000_000 / tick;
                }
                Some(sum)
            }
            Target::Cgroup(dir) => {
                let s = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
                s.lines().find_map(|l| l.strip_prefix("usage_usec ")).and_then(|v| v.trim().parse().ok())
            }
            Target::None => None,
        }
    }

    /// Resident memory now, in KiB (VmRSS summed, or the cgroup's memory.current).
    pub fn rss_kib(&self) -> Option<u64> {
        match self {
            Target::Pids(pids) => pids.iter().map(|p| status_kib(*p, "VmRSS:")).sum(),
            Target::Cgroup(dir) => read_u64(dir.join("memory.current")).map(|b| b / 1024),
            Target::None => None,
        }
    }

    /// Peak resident memory so far, in KiB (VmHWM summed, or memory.peak).
    pub fn peak_kib(&self) -> Option<u64> {
        match self {
            Target::Pids(pids) => pids.iter().map(|p| status_kib(*p, "VmHWM:")).sum(),
            Target::Cgroup(dir) => read_u64(dir.join("memory.peak")).map(|b| b / 1024),
            Target::None => None,
        }
    }
}

fn read_u64(p: PathBuf) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// The pids of `pid` and its direct children (nginx's master and workers).
pub fn with_children(pid: u32) -> Vec<u32> {
    let mut v = vec![pid];
    if let Ok(s) = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")) {
        v.extend(s.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_our_own_process() {
        let me = Target::Pids(vec![std::process::id()]);
        let start = me.cpu_us().unwrap();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 50 {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
        assert!(me.cpu_us().unwrap() >= start);
        assert!(me.rss_kib().unwrap() > 0);
        assert!(me.peak_kib().unwrap() >= me.rss_kib().unwrap() / 2);
        assert!(Target::None.cpu_us().is_none());
    }
}
