//! The bytes between a connection and its socket: plain, or through a rustls server session
//! (`Conn.session`). The loop reads plaintext and writes plaintext through `Conn::recv` and
//! `Conn::send`; with TLS, records are read and written here, without ever blocking.
//!
//! Invariants the loop relies on, kept for TLS as for a plain socket:
//! - a read shorter than the buffer means the socket is drained (edge-triggered epoll);
//! - bytes the socket would not take stay counted in `Conn::pending_out`: new plaintext is
//!   only taken once earlier ciphertext has left, so at most one batch of records waits
//!   inside rustls and everything else waits in the connection's own buffers.
//!
//! Memory: an idle session holds rustls's 4 KB record buffer and its keys; plaintext buffers
//! are freed as they are consumed.

use super::conn::Conn;
use crate::sys::{net, Fd};
use rustls::ServerConnection;
use std::io::{self, ErrorKind, Read, Write};

const PLAIN_HTTP_ON_TLS: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 44\r\nConnection: close\r\n\r\nThis port speaks HTTPS: use an https:// URL\n";

/// A boxed session: a few hundred bytes of pointers in `Conn` would cost every plain
/// connection too.
pub(super) type Session = Box<ServerConnection>;

struct FdIo<'a>(&'a Fd);

impl Read for FdIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        net::read(self.0, buf)
    }
}

impl Write for FdIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        net::writev(self.0, &[buf])
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let mut parts: [&[u8]; net::WRITEV_MAX] = [&[]; net::WRITEV_MAX];
        for (p, b) in parts.iter_mut().zip(bufs) {
            *p = b;
        }
        net::writev(self.0, &parts[..bufs.len().min(net::WRITEV_MAX)])
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads plaintext into `buf`, reading records from `fd` until `buf` is full or the socket
/// has nothing more. `Ok(0)`: the peer closed. Handshake replies are written on the way.
pub(super) fn read(fd: &Fd, session: Option<&mut Session>, buf: &mut [u8]) -> io::Result<usize> {
    let Some(s) = session else { return net::read(fd, buf) };
    let mut got = 0;
    loop {
        match s.reader().read(&mut buf[got..]) {
            Ok(0) if got < buf.len() => return Ok(got), // close_notify: the peer is done
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            // The TCP stream ended without close_notify: an end like any other for HTTP/1.1.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(got),
            Err(e) => return Err(e),
        }
        if got == buf.len() {
            return Ok(got);
        }
        match s.read_tls(&mut FdIo(fd)) {
            Ok(0) => {
                // End of stream; let rustls see it so the reader reports how it ended.
                let _ = s.process_new_packets();
                if got > 0 {
                    return Ok(got);
                }
                return match s.reader().read(buf) {
                    Ok(n) => Ok(n),
                    Err(e) if e.kind() == ErrorKind::UnexpectedEof || e.kind() == ErrorKind::WouldBlock => Ok(0),
                    Err(e) => Err(e),
                };
            }
            Ok(_) => {
                if let Err(e) = s.process_new_packets() {
                    if s.is_handshaking() && e == rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) {
                        // Plain HTTP on the HTTPS port (`GET` is no TLS record type): say so
                        // in HTTP, which that client reads, rather than in a TLS alert.
                        let _ = net::writev(fd, &[PLAIN_HTTP_ON_TLS]);
                    } else {
                        // rustls queued an alert saying why; send it if the socket takes it.
                        let _ = send_pending(fd, Some(s));
                    }
                    return Err(io::Error::new(ErrorKind::InvalidData, e));
                }
                if s.wants_write() {
                    // Handshake flights, tickets, key updates: a full socket leaves them
                    // pending, which `pending_out` reports and `flush` finishes.
                    send_pending(fd, Some(&mut *s))?;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                return if got > 0 { Ok(got) } else { Err(e) };
            }
            Err(e) => return Err(e),
        }
    }
}

/// Writes ciphertext rustls holds. `Ok(true)` when none is left.
pub(super) fn send_pending(fd: &Fd, session: Option<&mut Session>) -> io::Result<bool> {
    let Some(s) = session else { return Ok(true) };
    while s.wants_write() {
        match s.write_tls(&mut FdIo(fd)) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Writes `parts` in order; returns how many plaintext bytes were taken. As with writev, fewer
/// than offered means the socket is full. With TLS, nothing is taken while earlier records
/// wait, and plaintext is taken one rustls buffer (64 KB) at a time, each sent before the next;
/// the parts are taken together, so small WebSocket frames share records.
pub(super) fn writev(fd: &Fd, session: Option<&mut Session>, parts: &[&[u8]]) -> io::Result<usize> {
    let Some(s) = session else { return net::writev(fd, parts) };
    if !send_pending(fd, Some(&mut *s))? {
        return Err(ErrorKind::WouldBlock.into());
    }
    let total: usize = parts.iter().take(net::WRITEV_MAX).map(|p| p.len()).sum();
    let mut taken = 0;
    while taken < total {
        let mut slices: [io::IoSlice<'_>; net::WRITEV_MAX] = [io::IoSlice::new(&[]); net::WRITEV_MAX];
        let (mut n, mut skip) = (0, taken);
        for p in parts.iter().take(net::WRITEV_MAX) {
            if skip >= p.len() {
                skip -= p.len();
                continue;
            }
            slices[n] = io::IoSlice::new(&p[skip..]);
            skip = 0;
            n += 1;
        }
        let wrote = s.writer().write_vectored(&slices[..n])?;
        taken += wrote;
        if !send_pending(fd, Some(&mut *s))? || wrote == 0 {
            break;
        }
    }
    Ok(taken)
}

impl Conn {
    /// Makes this connection a TLS one, its handshake still to come. `now` starts the request
    /// clock: a client that never completes the handshake is closed by the request timeout.
    pub(super) fn start_tls(&mut self, session: ServerConnection, now: u64) {
        self.session = Some(Box::new(session));
        self.tls = true;
        self.out_since = now;
        self.partial_since = now;
    }

    /// The TLS handshake is not finished yet.
    pub fn handshaking(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.is_handshaking())
    }

    /// Ciphertext waits inside the session.
    pub fn tls_pending(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.wants_write())
    }

    /// Reads plaintext into `buf` (see `read`).
    pub(super) fn recv(&mut self, into: std::ops::Range<usize>) -> io::Result<usize> {
        let Conn { fd, session, buf, .. } = self;
        read(fd, session.as_mut(), &mut buf[into])
    }

    /// Reads plaintext into a scratch buffer (lingering connections discard it).
    pub(super) fn recv_into(&mut self, scratch: &mut [u8]) -> io::Result<usize> {
        read(&self.fd, self.session.as_mut(), scratch)
    }

    /// Writes `parts`; returns the plaintext bytes taken. A TLS record left in the session
    /// because the socket is full marks the connection unwritable and starts the stall clock.
    pub(super) fn send(&mut self, parts: &[&[u8]], now: u64) -> io::Result<usize> {
        if self.session.is_none() {
            return net::writev(&self.fd, parts);
        }
        let was_pending = self.tls_pending();
        let n = writev(&self.fd, self.session.as_mut(), parts)?;
        if self.tls_pending() {
            self.writable = false;
            if !was_pending {
                self.out_since = now;
            }
        }
        Ok(n)
    }

    /// Sends what the session holds before anything else goes out. False when the socket is
    /// full (the connection is then unwritable) or failed (`dead`).
    pub(super) fn send_tls_pending(&mut self, now: u64) -> bool {
        if !self.tls_pending() {
            return true;
        }
        match send_pending(&self.fd, self.session.as_mut()) {
            Ok(true) => {
                self.out_since = now;
                true
            }
            Ok(false) => {
                self.writable = false;
                false
            }
            Err(_) => {
                self.dead = true;
                false
            }
        }
    }

    /// Before our side of the stream is shut: TLS says goodbye with close_notify (best effort,
    /// the connection is closing either way).
    pub(super) fn close_notify(&mut self) {
        if let Some(s) = self.session.as_mut() {
            s.send_close_notify();
            let _ = send_pending(&self.fd, Some(s));
        }
    }
}
