//! Monotonic time for timeouts and the access log. Never goes backwards, unaffected by NTP steps.

fn now() -> libc::timespec {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts
}

/// Milliseconds since an arbitrary fixed point (boot). Only differences are meaningful.
pub fn now_ms() -> u64 {
    let ts = now();
    ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000
}

/// Microseconds since the same fixed point as `now_ms`.
pub fn now_us() -> u64 {
    let ts = now();
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}
