//! glibc malloc tuning for the memory goal (15 MB containers, issue 7).
//!
//! By default glibc gives every thread that allocates its own arena (up to 8 per core), each
//! keeping the memory its thread freed, and it raises the mmap threshold after every large
//! free, so a 450 KB page body lands in an arena and its pages stay resident after it is
//! dropped. We run a handful of threads that allocate little per request (buffers are reused,
//! caches are bounded), so fewer arenas and an eager return of free memory cost almost no CPU and
//! keep RSS close to what is live.

/// Arenas for the whole process. Loops, writer, checkpointer and workers share them; glibc's
/// per-thread tcache still serves most small allocations without taking an arena lock.
pub const ARENA_MAX: i32 = 2;
/// Free memory at the top of a heap beyond this is given back to the kernel at once. Above the
/// largest page a request builds (a ×100 search page, ~250 KB), so one request after another
/// reuses the same heap instead of faulting it in again each time (docs/bench.md "Memory").
pub const TRIM_THRESHOLD: i32 = 1024 * 1024;
/// Blocks at least this large get their own mapping, unmapped when freed. Fixing it also stops
/// glibc's dynamic threshold from creeping up to 32 MB after the first large free.
pub const MMAP_THRESHOLD: i32 = 1024 * 1024;

/// Applies `ARENA_MAX`, `TRIM_THRESHOLD` and `MMAP_THRESHOLD`. Call once, first thing in `main`,
/// before any thread starts (an arena made before the call is kept). Returns false if glibc
/// refused a setting (the process still works, with glibc's defaults for that one).
pub fn tune_malloc() -> bool {
    let mut ok = true;
    for (param, value) in [
        (libc::M_ARENA_MAX, ARENA_MAX),
        (libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD),
    ] {
        // SAFETY: mallopt takes two ints and only changes allocator parameters; no pointers.
        ok &= unsafe { libc::mallopt(param, value) } == 1;
    }
    ok
}

/// Gives free heap memory back to the kernel: the top of every arena and, inside them, every
/// free run of whole pages (`malloc_trim(0)`). It walks every arena under its lock, so it is
/// for quiet moments (a loop with nothing to do), not for the request path. Returns true if
/// memory was released.
pub fn trim() -> bool {
    // SAFETY: malloc_trim only inspects and releases the allocator's own free memory.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Unmaps the pages of our own executable that are only read (code and constants) so that the
/// code run once at startup (configuration, schema checks, SQLite's DDL parser) stops counting
/// as resident; whatever the server runs later faults back in from the page cache (a minor
/// fault, no disk read while the file is cached). Only private mappings of the executable that
/// are not writable and hold no copied-on-write page are touched, so nothing is lost: their
/// contents are exactly the file's. Returns the bytes that were resident in them before.
pub fn release_startup_code() -> u64 {
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else { return 0 };
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return 0 };
    let mut released = 0;
    for m in read_only_mappings(&smaps, exe.as_os_str().as_encoded_bytes()) {
        // SAFETY: [start, end) is a whole mapping of our executable that is read-only, private
        // and has no anonymous (copied) page, so dropping its page-table entries only makes the
        // next access fault the same file contents back in; no pointer into it is invalidated.
        let rc = unsafe { libc::madvise(m.start as *mut libc::c_void, m.end - m.start, libc::MADV_DONTNEED) };
        if rc == 0 {
            released += m.rss_kib * 1024;
        }
    }
    released
}

/// One mapping found by `read_only_mappings`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Mapping {
    pub start: usize,
    pub end: usize,
    pub rss_kib: u64,
}

/// The mappings in `smaps` (the text of /proc/PID/smaps) of file `path` with permissions
/// `r--p` or `r-xp`, no anonymous pages and some pages resident.
pub(crate) fn read_only_mappings(smaps: &str, path: &[u8]) -> Vec<Mapping> {
    let mut out = Vec::new();
    let mut current: Option<(Mapping, bool)> = None; // (mapping, any anonymous page)
    let finish = |c: Option<(Mapping, bool)>, out: &mut Vec<Mapping>| {
        if let Some((m, false)) = c {
            if m.rss_kib > 0 {
                out.push(m);
            }
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let Some(first) = fields.next() else { continue };
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(start), Ok(end)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                finish(current.take(), &mut out);
                // "start-end perms offset dev inode    path": single spaces up to the inode, then
                // padding, then the path (which may hold spaces).
                let parts: Vec<&str> = line.splitn(6, ' ').collect();
                let perms = parts.get(1).copied().unwrap_or("");
                let name = parts.get(5).map(|p| p.trim_start().as_bytes());
                if (perms == "r--p" || perms == "r-xp") && name == Some(path) {
                    current = Some((Mapping { start, end, rss_kib: 0 }, false));
                }
                continue;
            }
        }
        let Some((m, anon)) = current.as_mut() else { continue };
        let value: u64 = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
        match first {
            "Rss:" => m.rss_kib = value,
            "Anonymous:" => *anon = value > 0,
            _ => {}
        }
    }
    finish(current.take(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
55d0-55e0 rw-p 00000000 00:00 0                          [heap]
Rss:                 372 kB
Anonymous:           372 kB
7fa6-7fa7 r--p 00000000 fe:00 10010670                   /srv/campfire room
Rss:                 576 kB
Anonymous:             0 kB
7fa7-7fa8 r-xp 001c7000 fe:00 10010670                   /srv/campfire room
Rss:                2980 kB
Anonymous:             0 kB
7fa8-7fa9 r--p 0054e000 fe:00 10010670                   /srv/campfire room
Rss:                  72 kB
Anonymous:            72 kB
7fa9-7faa rw-p 0055f000 fe:00 10010670                   /srv/campfire room
Rss:                  32 kB
Anonymous:            32 kB
7fab-7fac r--p 00000000 fe:00 10010999                   /srv/campfire room.db
Rss:                  64 kB
Anonymous:             0 kB
7fac-7fad r-xp 00000000 fe:00 10010670                   /srv/campfire room
Rss:                   0 kB
Anonymous:             0 kB
";

    #[test]
    fn picks_clean_read_only_mappings_of_the_executable_only() {
        let found = read_only_mappings(SMAPS, b"/srv/campfire room");
        assert_eq!(
            found,
            vec![
                Mapping { start: 0x7fa6, end: 0x7fa7, rss_kib: 576 },
                Mapping { start: 0x7fa7, end: 0x7fa8, rss_kib: 2980 },
            ]
        );
    }

    #[test]
    fn the_running_test_binary_has_such_mappings() {
        let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let found = read_only_mappings(&smaps, exe.as_os_str().as_encoded_bytes());
        assert!(found.iter().any(|m| m.end > m.start && m.rss_kib > 0), "{found:?}");
    }

    #[test]
    fn tuning_is_accepted_and_trim_and_release_are_harmless() {
        assert!(tune_malloc());
        let v: Vec<u8> = vec![7; 1 << 20];
        drop(v);
        trim();
        assert!(release_startup_code() > 0, "the test binary's code was resident");
        // Code and constants fault back in: this test keeps running, allocating and comparing.
        let again: Vec<u8> = vec![9; 4096];
        assert_eq!(again.iter().map(|&b| b as u64).sum::<u64>(), 9 * 4096);
    }
}
