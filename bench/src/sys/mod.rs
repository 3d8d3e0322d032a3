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

/// The position of the first `needle` in `hay` at or after `from`, 16 bytes per step (SSE2, part
/// of every x86-64 CPU); the cable readers scan gigabytes per second with it.
#[cfg(target_arch = "x86_64")]
pub fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    let mut i = from;
    // SAFETY: SSE2 is in the x86-64 baseline; every load reads 16 bytes at `i`, and the loop
    // runs only while `i + 16 <= hay.len()`, so it stays inside the slice (unaligned loads).
    unsafe {
        let n = _mm_set1_epi8(needle as i8);
        while i + 16 <= hay.len() {
            let v = _mm_loadu_si128(hay.as_ptr().add(i).cast::<__m128i>());
            let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, n)) as u32;
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
            i += 16;
        }
    }
    hay.get(i..)?.iter().position(|&b| b == needle).map(|p| i + p)
}

/// The position of the first `needle` in `hay` at or after `from`.
#[cfg(not(target_arch = "x86_64"))]
pub fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    hay.get(from..)?.iter().position(|&b| b == needle).map(|p| from + p)
}
