//! Kernel randomness for values generated once at start (the secret key base). Uses the
//! getrandom(2) system call, so it works in an empty root without /dev/urandom.

/// Fills `buf` with cryptographically secure random bytes, blocking only until the kernel's pool
/// is initialised (once per boot).
pub fn fill(buf: &mut [u8]) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid writable region of exactly `rest.len()` bytes.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match super::cvt_size(n) {
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
