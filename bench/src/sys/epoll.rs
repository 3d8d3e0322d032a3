//! A level-triggered epoll set for the cable workload's readers: one thread watches hundreds of
//! sockets instead of one thread per socket.

use std::os::fd::RawFd;

/// An epoll instance; closed on drop.
pub struct Epoll {
    fd: RawFd,
}

impl Epoll {
    /// A new, empty set.
    pub fn new() -> Result<Epoll, String> {
        // SAFETY: epoll_create1 has no memory-safety preconditions.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(format!("epoll_create1: {}", std::io::Error::last_os_error()));
        }
        Ok(Epoll { fd })
    }

    /// Watches `fd` for input (level-triggered); `key` comes back with its events.
    pub fn add(&self, fd: RawFd, key: u64) -> Result<(), String> {
        let mut ev = libc::epoll_event { events: (libc::EPOLLIN | libc::EPOLLRDHUP) as u32, u64: key };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call.
        if unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_ADD, fd, &mut ev) } != 0 {
            return Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Stops watching `fd`.
    pub fn remove(&self, fd: RawFd) {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as in `add`; a descriptor not in the set only yields an error.
        unsafe { libc::epoll_ctl(self.fd, libc::EPOLL_CTL_DEL, fd, &mut ev) };
    }

    /// Waits up to `timeout_ms` and fills `keys` with the keys of ready descriptors.
    pub fn wait(&self, keys: &mut Vec<u64>, timeout_ms: i32) {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 256];
        // SAFETY: `evs` is writable for its full length, which is what we pass.
        let n = unsafe { libc::epoll_wait(self.fd, evs.as_mut_ptr(), evs.len() as i32, timeout_ms) };
        keys.clear();
        for ev in evs.iter().take(n.max(0) as usize) {
            keys.push(ev.u64);
        }
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: we own `fd` and close it once.
        unsafe { libc::close(self.fd) };
    }
}
