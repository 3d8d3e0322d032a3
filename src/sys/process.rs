//! Process-wide facts and limits: open-file limit, usable CPUs, resident memory.

/// Raises the soft RLIMIT_NOFILE to the hard limit (thousands of idle keep-alive connections need
/// descriptors). Returns the new soft limit.
pub fn raise_nofile_limit() -> std::io::Result<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid, writable rlimit.
    super::cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) })?;
    if lim.rlim_cur < lim.rlim_max {
        lim.rlim_cur = lim.rlim_max;
        // SAFETY: `lim` is a valid rlimit with cur <= max.
        super::cvt(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) })?;
    }
    Ok(lim.rlim_cur)
}

/// How many CPUs this process may run on (its affinity mask, which containers and `taskset`
/// narrow), at least 1.
pub fn usable_cpus() -> usize {
    // SAFETY: cpu_set_t is plain data; zeroed is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size we pass; pid 0 is the calling thread.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return 1;
    }
    // SAFETY: `set` was filled by the kernel above.
    let n = unsafe { libc::CPU_COUNT(&set) };
    (n as usize).max(1)
}

/// Resident set size of process `pid` (0: this process) in bytes, from /proc/PID/stat field 24.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let path = if pid == 0 { "/proc/self/stat".to_string() } else { format!("/proc/{pid}/stat") };
    let stat = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) may hold spaces; fields after it start past the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let pages: u64 = rest.split_whitespace().nth(21)?.parse().ok()?;
    Some(pages * page_size())
}

fn page_size() -> u64 {
    // SAFETY: sysconf with a valid name has no side effects.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 { n as u64 } else { 4096 }
}

/// Writes to standard output until all of `buf` is taken or an error occurs (the access log).
pub fn write_stdout(buf: &[u8]) {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is valid for `rest.len()` bytes; fd 1 is stdout.
        let n = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
        match super::cvt_size(n) {
            Ok(0) => return,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Hands the allocator's free memory back to the kernel (glibc `malloc_trim`, all arenas).
/// Called after rare, large, short-lived allocations (an image decoded for a thumbnail on a
/// worker thread), which glibc would otherwise keep resident in that thread's arena.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes a plain size and only touches the allocator's own state.
    unsafe {
        libc::malloc_trim(0);
    }
}
