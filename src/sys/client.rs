//! Outbound sockets for the job threads (`crate::outbound`): a blocking TCP connection opened
//! with a connect timeout, and a connected UDP socket for DNS queries. Both block with a
//! per-call timeout (`SO_RCVTIMEO`/`SO_SNDTIMEO`): they run only on job threads, never on a
//! loop. A timed-out call fails with `ErrorKind::TimedOut`.

use super::{cvt, cvt_size, Fd};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// A connected, blocking socket (TCP or UDP) with read and write timeouts.
#[derive(Debug)]
pub struct Socket {
    fd: Fd,
}

/// Fills a `sockaddr_storage` for `addr`; returns it with the length to pass to the kernel.
fn sockaddr(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain data; all zeroes is a valid (empty) value.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    match addr.ip() {
        IpAddr::V4(v4) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            let a = unsafe { &mut *(&mut ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            a.sin_family = libc::AF_INET as libc::sa_family_t;
            a.sin_port = addr.port().to_be();
            a.sin_addr.s_addr = u32::from(v4).to_be();
            (ss, std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t)
        }
        IpAddr::V6(v6) => {
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            let a = unsafe { &mut *(&mut ss as *mut libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            a.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            a.sin6_port = addr.port().to_be();
            a.sin6_addr.s6_addr = v6.octets();
            (ss, std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t)
        }
    }
}

fn new_socket(addr: SocketAddr, kind: libc::c_int) -> io::Result<Fd> {
    let domain = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: plain system call, no pointers.
    let raw = cvt(unsafe { libc::socket(domain, kind | libc::SOCK_CLOEXEC, 0) })?;
    Ok(Fd::from_raw(raw))
}

fn set_timeout(fd: &Fd, name: libc::c_int, d: Duration) -> io::Result<()> {
    // A zero timeval means "never time out"; keep at least a millisecond.
    let d = d.max(Duration::from_millis(1));
    let tv = libc::timeval {
        tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_usec: d.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: passes a pointer to a live timeval and its exact size.
    cvt(unsafe {
        libc::setsockopt(
            fd.raw(),
            libc::SOL_SOCKET,
            name,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Maps the errno a timed-out blocking call reports (EAGAIN) to `TimedOut`.
fn timed(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::WouldBlock {
        io::Error::new(io::ErrorKind::TimedOut, "timed out")
    } else {
        e
    }
}

impl Socket {
    /// Opens a TCP connection to `addr`, giving up after `connect_timeout`; reads and writes
    /// then block at most `io_timeout` each.
    pub fn connect_tcp(addr: SocketAddr, connect_timeout: Duration, io_timeout: Duration) -> io::Result<Socket> {
        let fd = new_socket(addr, libc::SOCK_STREAM | libc::SOCK_NONBLOCK)?;
        let (ss, len) = sockaddr(addr);
        // SAFETY: `ss` holds a valid address of `len` bytes.
        let rc = unsafe { libc::connect(fd.raw(), (&ss as *const libc::sockaddr_storage).cast(), len) };
        if rc == -1 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINPROGRESS) {
                return Err(e);
            }
            wait_writable(&fd, connect_timeout)?;
            let mut err: libc::c_int = 0;
            let mut elen = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: `err` and `elen` are valid and writable; `elen` holds the size of `err`.
            cvt(unsafe {
                libc::getsockopt(fd.raw(), libc::SOL_SOCKET, libc::SO_ERROR, (&mut err as *mut libc::c_int).cast(), &mut elen)
            })?;
            if err != 0 {
                return Err(io::Error::from_raw_os_error(err));
            }
        }
        // Back to blocking: the timeouts below bound every later call.
        // SAFETY: plain fcntl calls on a descriptor we own.
        let flags = cvt(unsafe { libc::fcntl(fd.raw(), libc::F_GETFL) })?;
        // SAFETY: as above.
        cvt(unsafe { libc::fcntl(fd.raw(), libc::F_SETFL, flags & !libc::O_NONBLOCK) })?;
        let one: libc::c_int = 1;
        // SAFETY: passes a pointer to a live c_int and its exact size. Failure only costs latency.
        unsafe {
            libc::setsockopt(
                fd.raw(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        set_timeout(&fd, libc::SO_RCVTIMEO, io_timeout)?;
        set_timeout(&fd, libc::SO_SNDTIMEO, io_timeout)?;
        Ok(Socket { fd })
    }

    /// A UDP socket connected to `addr` (so only its answers are received), with `timeout` on
    /// each receive.
    pub fn connect_udp(addr: SocketAddr, timeout: Duration) -> io::Result<Socket> {
        let fd = new_socket(addr, libc::SOCK_DGRAM)?;
        let (ss, len) = sockaddr(addr);
        // SAFETY: `ss` holds a valid address of `len` bytes.
        cvt(unsafe { libc::connect(fd.raw(), (&ss as *const libc::sockaddr_storage).cast(), len) })?;
        set_timeout(&fd, libc::SO_RCVTIMEO, timeout)?;
        set_timeout(&fd, libc::SO_SNDTIMEO, timeout)?;
        Ok(Socket { fd })
    }

    /// Changes the receive timeout (the DNS client shrinks it as its deadline nears).
    pub fn set_read_timeout(&self, d: Duration) -> io::Result<()> {
        set_timeout(&self.fd, libc::SO_RCVTIMEO, d)
    }
}

/// Waits until `fd` is writable (a non-blocking connect finished) or `timeout` passes.
fn wait_writable(fd: &Fd, timeout: Duration) -> io::Result<()> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "connect timed out"));
        }
        let mut pfd = libc::pollfd { fd: fd.raw(), events: libc::POLLOUT, revents: 0 };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        match rc {
            -1 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            0 => {}
            _ => return Ok(()),
        }
    }
}

impl io::Read for Socket {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // SAFETY: `buf` is valid and writable for `buf.len()` bytes.
            match cvt_size(unsafe { libc::read(self.fd.raw(), buf.as_mut_ptr().cast(), buf.len()) }) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r.map_err(timed),
            }
        }
    }
}

impl io::Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        loop {
            // MSG_NOSIGNAL: a peer that closed must give EPIPE, not kill the process.
            // SAFETY: `buf` is valid for `buf.len()` bytes.
            match cvt_size(unsafe { libc::send(self.fd.raw(), buf.as_ptr().cast(), buf.len(), libc::MSG_NOSIGNAL) }) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => return r.map_err(timed),
            }
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
