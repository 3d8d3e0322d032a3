//! The few libc calls the load generator needs: the clock-tick rate for /proc CPU times,
//! raising the open-file limit for many client connections, and epoll for the cable readers.

pub mod epoll;

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), the unit of /proc/<pid>/stat CPU times.
pub fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// Raises RLIMIT_NOFILE's soft limit to its hard limit (at most `want`); returns the new soft limit.
pub fn raise_nofile(want: u64) -> u64 {
    let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `r` is a valid out-pointer for getrlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 0;
    }
    let target = want.min(r.rlim_max);
    if r.rlim_cur < target {
        r.rlim_cur = target as libc::rlim_t;
        // SAFETY: `r` is a valid rlimit within the hard limit.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) };
    }
    r.rlim_cur
}

/// Sends `signal` (e.g. `libc::SIGTERM`) to process `pid`; false if it could not be delivered.
pub fn signal(pid: u32, signal: i32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: kill has no memory-safety preconditions; a stale pid only yields an error.
    unsafe { libc::kill(pid, signal) == 0 }
}
