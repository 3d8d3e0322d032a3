//! Kernel randomness: the one place campfire-room reads `getrandom(2)`.
//!
//! Every secret the app mints (session tokens, IVs, salts, join codes) comes from here.
//! There is no user-space generator in between: the kernel's is fast enough for the few
//! hundred bytes a request needs, and nothing can be seeded wrongly.

/// Fills `buf` with cryptographically secure random bytes from the kernel.
///
/// Blocks only before the kernel's pool is initialised (early boot). If the kernel refuses
/// (no `getrandom` syscall, seccomp), the process aborts after one log line: continuing
/// would mint guessable session tokens, which is worse than stopping.
pub fn fill(buf: &mut [u8]) {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid, writable region of exactly `rest.len()` bytes that
        // outlives the call; getrandom writes at most that many bytes into it.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n > 0 {
            done += n as usize;
            continue;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        eprintln!("campfire-room: getrandom failed: {err}; refusing to run without randomness");
        std::process::abort();
    }
}

/// Returns `N` random bytes (see [`fill`]).
pub fn bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    fill(&mut b);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_whole_buffer_with_varying_bytes() {
        let a: [u8; 64] = bytes();
        let b: [u8; 64] = bytes();
        assert_ne!(a, b);
        assert!(a.iter().any(|&x| x != 0));
        let mut empty = [0u8; 0];
        fill(&mut empty);
    }
}
