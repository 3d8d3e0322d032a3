//! An owned file descriptor: closed exactly once, when dropped.

/// Owns one open descriptor. Not `Clone`: two owners would close it twice.
#[derive(Debug)]
pub struct Fd(libc::c_int);

impl Fd {
    /// Takes ownership of `raw`, which must be an open descriptor nobody else will close.
    pub(crate) fn from_raw(raw: libc::c_int) -> Fd {
        Fd(raw)
    }

    /// The raw number, for epoll registration and logging. Ownership stays here.
    pub fn raw(&self) -> libc::c_int {
        self.0
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and nobody else closes it; errors on close are ignored
        // because there is nothing useful to do about them (the descriptor is gone either way).
        unsafe {
            libc::close(self.0);
        }
    }
}
