//! A thin epoll wrapper: one instance per loop thread. Registrations carry a `u64` token (the
//! loop encodes a slab index and generation in it). The loop registers sockets edge-triggered and
//! tracks readiness itself, so after `accept` there is no further `epoll_ctl` per connection.

use super::{cvt, Fd};

pub const IN: u32 = libc::EPOLLIN as u32;
pub const OUT: u32 = libc::EPOLLOUT as u32;
pub const RDHUP: u32 = libc::EPOLLRDHUP as u32;
pub const HUP: u32 = libc::EPOLLHUP as u32;
pub const ERR: u32 = libc::EPOLLERR as u32;
pub const EDGE: u32 = libc::EPOLLET as u32;

/// One readiness report: which registration (`token`) and what happened (`events` bits).
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Event(libc::epoll_event);

impl Event {
    pub const EMPTY: Event = Event(libc::epoll_event { events: 0, u64: 0 });
    pub fn token(&self) -> u64 {
        self.0.u64
    }
    pub fn events(&self) -> u32 {
        self.0.events
    }
}

pub struct Epoll {
    fd: Fd,
}

impl Epoll {
    /// A new epoll instance, closed on exec.
    pub fn new() -> std::io::Result<Epoll> {
        // SAFETY: plain system call with a flag argument, no pointers.
        let fd = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Epoll { fd: Fd::from_raw(fd) })
    }

    /// Starts watching `fd` for `events`; reports come back with `token`.
    pub fn add(&self, fd: &Fd, events: u32, token: u64) -> std::io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd.raw(), events, token)
    }

    /// Stops watching `fd`. Closing the descriptor also does this; call it when the descriptor
    /// lives on after the loop forgets it.
    pub fn delete(&self, fd: &Fd) -> std::io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd.raw(), 0, 0)
    }

    fn ctl(&self, op: libc::c_int, fd: libc::c_int, events: u32, token: u64) -> std::io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call; the kernel copies it.
        cvt(unsafe { libc::epoll_ctl(self.fd.raw(), op, fd, &mut ev) })?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1: forever) and fills `out` from the front. Returns how many
    /// entries are valid. An interrupted wait returns 0 rather than an error.
    pub fn wait(&self, out: &mut [Event], timeout_ms: i32) -> std::io::Result<usize> {
        let max = out.len().min(i32::MAX as usize) as libc::c_int;
        // SAFETY: `Event` is a transparent wrapper of `epoll_event` (same size and layout, a
        // single field), and `out` has room for `max` of them.
        let n = unsafe {
            libc::epoll_wait(self.fd.raw(), out.as_mut_ptr().cast::<libc::epoll_event>(), max, timeout_ms)
        };
        match cvt(n) {
            Ok(n) => Ok(n as usize),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
    }
}
