//! SIGTERM / SIGINT (stop) and SIGHUP (reload the TLS certificate) without signal handlers: the
//! main thread blocks them before starting any other thread (threads inherit the mask), then
//! waits for one with sigwaitinfo. No async-signal-safety puzzles, no self-pipe.

fn stop_set() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before any use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid sigset_t; both signal numbers are valid.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGHUP);
    }
    set
}

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread and every thread it starts afterwards.
pub fn block_stop_signals() -> std::io::Result<()> {
    let set = stop_set();
    // SAFETY: `set` is initialised; a null old-set pointer is allowed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(std::io::Error::from_raw_os_error(rc));
    }
    Ok(())
}

/// Waits until SIGTERM, SIGINT or SIGHUP arrives (they must be blocked, see
/// `block_stop_signals`) and returns its number.
pub fn wait_stop_signal() -> i32 {
    let set = stop_set();
    loop {
        // SAFETY: `set` is initialised; a null siginfo pointer is allowed.
        let sig = unsafe { libc::sigwaitinfo(&set, std::ptr::null_mut()) };
        if sig > 0 {
            return sig;
        }
        // EINTR from another signal: keep waiting.
    }
}

/// Ignores SIGPIPE, so writing to a socket the peer closed is an EPIPE error, not a crash.
pub fn ignore_sigpipe() {
    // SAFETY: SIG_IGN is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}
