//! An eventfd used as a doorbell: other threads ring it after queueing work for a loop, and the
//! loop's epoll wakes up. Several rings before the loop drains collapse into one wake-up.

use super::{cvt, Fd};

pub struct EventFd {
    fd: Fd,
}

impl EventFd {
    /// A non-blocking, close-on-exec eventfd starting at zero.
    pub fn new() -> std::io::Result<EventFd> {
        // SAFETY: plain system call, no pointers.
        let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })?;
        Ok(EventFd { fd: Fd::from_raw(fd) })
    }

    pub fn fd(&self) -> &Fd {
        &self.fd
    }

    /// Wakes whoever watches this eventfd. Safe to call from any thread. A full counter (2^64-2
    /// rings without a drain) cannot happen in practice; the error is ignored because the loop
    /// is then certainly awake already.
    pub fn ring(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our own eventfd.
        unsafe {
            libc::write(self.fd.raw(), (&one as *const u64).cast(), 8);
        }
    }

    /// Resets the counter so the next ring wakes the loop again; returns the rings it held.
    pub fn drain(&self) -> u64 {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a valid u64; EAGAIN (nothing to drain) leaves it 0.
        unsafe {
            libc::read(self.fd.raw(), (&mut v as *mut u64).cast(), 8);
        }
        v
    }
}
