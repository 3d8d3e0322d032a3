//! The in-memory rate limiter behind `POST /session` (spec/02 §4.3, spec/03 §6): at most
//! 10 attempts per 3 minutes per client IP, every attempt counted.
//!
//! Rails keeps an expiring counter in its cache (`rate-limit:sessions:<ip>`): the first hit
//! creates it with a 3-minute life and later hits increment it without extending that life, so
//! the window is fixed from the first attempt. We do the same in one map shared by every loop
//! behind a mutex (a sign-in attempt costs a bcrypt anyway; the lock is never contended for long).
//! Memory is bounded: expired entries are swept when the map reaches `SWEEP_AT`, and past
//! `MAX_ENTRIES` distinct live addresses new addresses are not tracked (fail open, logged once
//! per sweep) rather than grow without limit.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Size at which expired entries are swept.
const SWEEP_AT: usize = 4096;
/// Hard cap on tracked addresses (about 4 MB at worst).
const MAX_ENTRIES: usize = 65_536;

pub struct RateLimiter {
    limit: u32,
    window_ms: u64,
    entries: Mutex<Entries>,
}

struct Entries {
    map: HashMap<IpAddr, Entry>,
    // Sweeping is O(n); doubling the threshold after each sweep keeps it amortised O(1) even
    // when a flood of distinct addresses leaves nothing to sweep.
    sweep_at: usize,
    last_sweep_ms: u64,
}

#[derive(Clone, Copy)]
struct Entry {
    count: u32,
    expires_at_ms: u64,
}

impl RateLimiter {
    /// A limiter allowing `limit` hits per `window_ms` per address.
    pub fn new(limit: u32, window_ms: u64) -> RateLimiter {
        RateLimiter { limit, window_ms, entries: Mutex::new(Entries { map: HashMap::new(), sweep_at: SWEEP_AT, last_sweep_ms: 0 }) }
    }

    /// The sign-in limiter of spec/02 §4.3: 10 per 3 minutes.
    pub fn sessions() -> RateLimiter {
        RateLimiter::new(10, 3 * 60 * 1000)
    }

    /// Counts one hit from `ip` at monotonic time `now_ms`; true when this hit is over the
    /// limit (the 11th and later inside one window).
    pub fn hit(&self, ip: IpAddr, now_ms: u64) -> bool {
        // A poisoned lock only means another thread panicked mid-update of plain counters; the
        // map is still usable.
        let mut guard = match self.entries.lock() {
            Ok(m) => m,
            Err(p) => p.into_inner(),
        };
        let entries = &mut *guard;
        if let Some(e) = entries.map.get_mut(&ip) {
            if now_ms >= e.expires_at_ms {
                *e = Entry { count: 0, expires_at_ms: now_ms + self.window_ms };
            }
            e.count = e.count.saturating_add(1);
            return e.count > self.limit;
        }
        if entries.map.len() >= entries.sweep_at {
            entries.sweep(now_ms);
            if entries.map.len() >= MAX_ENTRIES {
                return false;
            }
        }
        entries.map.insert(ip, Entry { count: 1, expires_at_ms: now_ms + self.window_ms });
        1 > self.limit
    }
}

impl Entries {
    /// Drops expired entries. At the cap, sweeps at most once a second, so a flood of new
    /// addresses costs one O(n) pass per second, not per request.
    fn sweep(&mut self, now_ms: u64) {
        if self.map.len() >= MAX_ENTRIES && now_ms < self.last_sweep_ms + 1000 {
            return;
        }
        self.last_sweep_ms = now_ms;
        self.map.retain(|_, e| now_ms < e.expires_at_ms);
        self.sweep_at = (self.map.len() * 2).clamp(SWEEP_AT, MAX_ENTRIES);
        if self.map.len() >= MAX_ENTRIES {
            eprintln!("rate_limit: {} live addresses tracked; new ones go uncounted", self.map.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eleventh_hit_in_window_is_limited_and_window_is_fixed() {
        let rl = RateLimiter::sessions();
        let a: IpAddr = "203.0.113.1".parse().unwrap();
        let b: IpAddr = "203.0.113.2".parse().unwrap();
        for i in 0..10 {
            assert!(!rl.hit(a, 1000 + i * 1000), "hit {i}");
        }
        assert!(rl.hit(a, 20_000));
        assert!(!rl.hit(b, 20_000), "other addresses have their own counter");
        // Hits do not extend the window: it ends 3 minutes after the first hit.
        assert!(rl.hit(a, 1000 + 180_000 - 1));
        assert!(!rl.hit(a, 1000 + 180_000));
    }

    #[test]
    fn sweeps_expired_entries() {
        let rl = RateLimiter::new(1, 10);
        for i in 0..SWEEP_AT as u32 {
            let ip = IpAddr::from(i.to_be_bytes());
            rl.hit(ip, 0);
        }
        rl.hit("8.8.8.8".parse().unwrap(), 100);
        let len = rl.entries.lock().map(|e| e.map.len()).unwrap_or(0);
        assert!(len < 20, "expired entries swept, {len} left");
    }
}
