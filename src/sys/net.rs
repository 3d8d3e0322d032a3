//! Non-blocking TCP: a `SO_REUSEPORT` listener per loop (the kernel spreads new connections over
//! the loops' listeners), `accept4`, `read`, `writev`. Dual-stack IPv6 when the kernel has it,
//! plain IPv4 otherwise.

use super::{cvt, cvt_size, Fd};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kernel's cap on listen backlogs; asking for more is silently truncated, so we ask for
/// exactly this. Falls back to 4096 when /proc is not mounted (an empty root).
pub fn somaxconn() -> i32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&n: &i32| n > 0)
        .unwrap_or(4096)
}

fn set_int_opt(fd: &Fd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> std::io::Result<()> {
    set_raw_int_opt(fd.raw(), level, name, value)
}

fn set_raw_int_opt(raw: libc::c_int, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> std::io::Result<()> {
    // SAFETY: passes a pointer to a live c_int and its exact size.
    cvt(unsafe {
        libc::setsockopt(
            raw,
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Fixes a socket's send and receive buffers at `bytes` each (Linux doubles the figure), which
/// also ends their autotuning. For tests that must see a loopback connection fill up: tuned, a
/// receive buffer may grow to tcp_rmem's maximum (32 MiB on this machine), past what they write.
#[cfg(test)]
pub fn set_buffers(fd: std::os::fd::BorrowedFd<'_>, bytes: i32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    set_raw_int_opt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, bytes)?;
    set_raw_int_opt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, bytes)
}

/// Turns on TCP keepalive probes: first after `idle_secs` of silence, then every `interval_secs`,
/// giving up (the socket errors, epoll reports it) after `count` unanswered probes. For
/// long-lived sockets whose peer may vanish without a FIN (WebSockets).
pub fn set_keepalive(fd: &Fd, idle_secs: i32, interval_secs: i32, count: i32) -> std::io::Result<()> {
    set_int_opt(fd, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, idle_secs)?;
    set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, interval_secs)?;
    set_int_opt(fd, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, count)
}

/// Opens a non-blocking listener on every address at `port`, with SO_REUSEPORT so each loop can
/// open its own on the same port, and starts listening with `backlog`.
pub fn listen(port: u16, backlog: i32) -> std::io::Result<Fd> {
    match listen_v6(port, backlog) {
        Ok(fd) => Ok(fd),
        Err(e) if e.raw_os_error() == Some(libc::EAFNOSUPPORT) || e.raw_os_error() == Some(libc::EADDRNOTAVAIL) => {
            listen_v4(port, backlog)
        }
        Err(e) => Err(e),
    }
}

/// The most bytes a connection's kernel send queue takes beyond what is in flight to the peer
/// (`TCP_NOTSENT_LOWAT`). Without it the queue autotunes to megabytes even for a peer that
/// never reads (loopback starts with ten 64 KiB segments), and a thousand such connections
/// pipelining page requests made the loop copy gigabytes into the kernel: fresh requests
/// waited 3–8 s. What is in flight still grows with the connection, so a reading client's
/// throughput is unchanged; what a client does not take stays in the loop's output buffer,
/// which the output budget bounds.
const NOTSENT_LOWAT: i32 = 128 * 1024;

fn new_socket(domain: libc::c_int) -> std::io::Result<Fd> {
    // SAFETY: plain system call, no pointers.
    let raw = cvt(unsafe {
        libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0)
    })?;
    let fd = Fd::from_raw(raw);
    set_int_opt(&fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    set_int_opt(&fd, libc::SOL_SOCKET, libc::SO_REUSEPORT, 1)?;
    // Set once here: every connection accepted from the listener inherits it (the test below
    // checks it on an accepted one). Failure only costs what the kernel may hold for a peer
    // that does not read.
    let _ = set_int_opt(&fd, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, NOTSENT_LOWAT);
    Ok(fd)
}

fn listen_v6(port: u16, backlog: i32) -> std::io::Result<Fd> {
    let fd = new_socket(libc::AF_INET6)?;
    set_int_opt(&fd, libc::IPPROTO_IPV6, libc::IPV6_V6ONLY, 0)?;
    // SAFETY: sockaddr_in6 is plain data; zeroed means the unspecified address `::`.
    let mut addr: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
    addr.sin6_family = libc::AF_INET6 as libc::sa_family_t;
    addr.sin6_port = port.to_be();
    // SAFETY: `addr` is a valid sockaddr_in6 and we pass its exact size.
    cvt(unsafe {
        libc::bind(
            fd.raw(),
            (&addr as *const libc::sockaddr_in6).cast(),
            std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
        )
    })?;
    // SAFETY: plain system call on a bound socket.
    cvt(unsafe { libc::listen(fd.raw(), backlog) })?;
    Ok(fd)
}

fn listen_v4(port: u16, backlog: i32) -> std::io::Result<Fd> {
    let fd = new_socket(libc::AF_INET)?;
    // SAFETY: sockaddr_in is plain data; zeroed means INADDR_ANY.
    let mut addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_port = port.to_be();
    // SAFETY: `addr` is a valid sockaddr_in and we pass its exact size.
    cvt(unsafe {
        libc::bind(
            fd.raw(),
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    // SAFETY: plain system call on a bound socket.
    cvt(unsafe { libc::listen(fd.raw(), backlog) })?;
    Ok(fd)
}

/// Accepts one pending connection as a non-blocking, close-on-exec socket with TCP_NODELAY (our
/// responses leave in one writev, so Nagle would only add delay), and `NOTSENT_LOWAT` from the
/// listener. `Ok(None)` when none is pending.
pub fn accept(listener: &Fd) -> std::io::Result<Option<(Fd, IpAddr)>> {
    // SAFETY: sockaddr_storage is plain data large enough for any address family.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `ss` and `len` are valid and writable; `len` holds the size of `ss`.
    let rc = unsafe {
        libc::accept4(
            listener.raw(),
            (&mut ss as *mut libc::sockaddr_storage).cast(),
            &mut len,
            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
        )
    };
    let raw = match cvt(rc) {
        Ok(raw) => raw,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
        Err(e) => return Err(e),
    };
    let fd = Fd::from_raw(raw);
    // Failure only costs latency, never correctness.
    let _ = set_int_opt(&fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
    Ok(Some((fd, peer_ip(&ss))))
}

fn peer_ip(ss: &libc::sockaddr_storage) -> IpAddr {
    match ss.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in, which fits inside it.
            let a = unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            IpAddr::V4(Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6, which fits inside it.
            let a = unsafe { &*(ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            let v6 = Ipv6Addr::from(a.sin6_addr.s6_addr);
            match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(v6),
            }
        }
        _ => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    }
}

/// Most slices one `writev` call takes: enough for a socket's whole backlog of broadcast frames
/// under load (each frame is one slice), small enough for the stack.
pub const WRITEV_MAX: usize = 64;

/// Reads what is available into `buf`. `Ok(0)` means the peer closed its side.
pub fn read(fd: &Fd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid and writable for `buf.len()` bytes.
    cvt_size(unsafe { libc::read(fd.raw(), buf.as_mut_ptr().cast(), buf.len()) })
}

/// Writes the slices in order with one writev; returns how many bytes the kernel took (possibly
/// fewer than offered). At most `WRITEV_MAX` slices; the rest are ignored.
pub fn writev(fd: &Fd, parts: &[&[u8]]) -> std::io::Result<usize> {
    let mut iov = [libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }; WRITEV_MAX];
    let mut n = 0;
    for p in parts.iter().filter(|p| !p.is_empty()).take(WRITEV_MAX) {
        iov[n] = libc::iovec { iov_base: p.as_ptr() as *mut libc::c_void, iov_len: p.len() };
        n += 1;
    }
    if n == 0 {
        return Ok(0);
    }
    // SAFETY: the first `n` iovecs point into live slices borrowed for this call; writev only
    // reads through them despite the `*mut` in the struct.
    cvt_size(unsafe { libc::writev(fd.raw(), iov.as_ptr(), n as libc::c_int) })
}

/// The local port a socket is bound to (after binding to port 0, the one the kernel chose).
pub fn local_port(fd: &Fd) -> std::io::Result<u16> {
    // SAFETY: sockaddr_storage is plain data large enough for any address family.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `ss` and `len` are valid and writable; `len` holds the size of `ss`.
    cvt(unsafe { libc::getsockname(fd.raw(), (&mut ss as *mut libc::sockaddr_storage).cast(), &mut len) })?;
    // Both sockaddr_in and sockaddr_in6 keep the port right after the family, in network order.
    let port = match ss.ss_family as libc::c_int {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let a = unsafe { &*(&ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            a.sin_port
        }
        _ => {
            // SAFETY: our listeners are AF_INET or AF_INET6; the storage fits either.
            let a = unsafe { &*(&ss as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>() };
            a.sin6_port
        }
    };
    Ok(u16::from_be(port))
}

/// Closes our sending side (the peer reads EOF after the bytes already sent) while we can still
/// read: the first half of a lingering close.
pub fn shutdown_write(fd: &Fd) {
    // SAFETY: plain system call on a descriptor we own; failure (peer already gone) is harmless.
    unsafe {
        libc::shutdown(fd.raw(), libc::SHUT_WR);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn a_peer_that_does_not_read_gets_a_bounded_kernel_queue() {
        let listener = listen(0, 16).unwrap();
        let port = local_port(&listener).unwrap();
        let peer = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        set_buffers(peer.as_fd(), 4096).unwrap();
        let (fd, _) = loop {
            if let Some(accepted) = accept(&listener).unwrap() {
                break accepted;
            }
        };
        let chunk = vec![b'x'; 64 * 1024];
        let mut queued = 0;
        while let Ok(n) = writev(&fd, &[&chunk]) {
            queued += n;
            assert!(queued < 64 << 20, "the kernel never stopped taking bytes");
        }
        // Autotuned, loopback's queue took 4 MiB here; the low-water mark the accepted socket
        // inherits from the listener keeps it near NOTSENT_LOWAT plus the peer's small window.
        assert!(queued < 512 * 1024, "{queued} bytes queued for a peer that reads nothing");
        drop(peer);
    }
}
