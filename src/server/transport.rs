//! The bytes between a connection and its socket: plain, or through a rustls session
//! (`Conn.session`). The loop reads plaintext and writes plaintext through `Conn::recv` and
//! `Conn::send`; with TLS, records are read and written here, without ever blocking.
//!
//! Invariants the loop relies on, kept for TLS as for a plain socket:
//! - a read shorter than the buffer means the socket is drained (edge-triggered epoll);
//! - bytes the socket would not take stay counted in `Conn::pending_out`: new plaintext is
//!   only taken once earlier ciphertext has left, so at most one batch of records waits in
//!   the session and everything else waits in the connection's own buffers.
//!
//! Memory: rustls's unbuffered API leaves the buffers to us. Records are read into and
//! written from one scratch per loop thread; a session keeps only its keys and state, plus,
//! between two reads or writes, a partial record, undelivered plaintext or unsent ciphertext,
//! each in a Vec freed once empty. An idle session owns no buffer at all. Once the handshake
//! is over rustls's connection object is given up for the raw traffic keys alone
//! (`tls_records`): it held 3.3 KB per connection, its expanded keys another 1.1 KB. Plaintext
//! is sealed straight from the caller's slices into the outgoing records (no staging copy).

use super::conn::Conn;
use super::tls_records::{Opened, Records};
use crate::sys::{net, Fd};
use crate::tls::secrets::{self, Caught};
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::unbuffered::{ConnectionState, EncodeError, EncodeTlsData, EncryptError, InsufficientSizeError};
use std::cell::RefCell;
use std::io::{self, ErrorKind};

const PLAIN_HTTP_ON_TLS: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 44\r\nConnection: close\r\n\r\nThis port speaks HTTPS: use an https:// URL\n";

/// The largest TLS record on the wire: header, 16 KB of plaintext, TLS 1.2's allowed expansion.
const RECORD_MAX: usize = 5 + 16384 + 2048;
/// Plaintext encrypted (and ciphertext read) per batch: one writev or read moves this much.
const BATCH: usize = 64 * 1024;

/// The loop thread's scratch: records read, records made. Allocated on a thread's first TLS
/// connection, so a plain server pays nothing.
struct Scratch {
    incoming: Vec<u8>,
    outgoing: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|s| {
        let mut s = s.borrow_mut();
        let s = s.get_or_insert_with(|| Scratch { incoming: vec![0; RECORD_MAX + BATCH], outgoing: Vec::new() });
        f(s)
    })
}

/// One TLS connection: the rustls state and whatever bytes are in transit between two calls.
pub(super) struct TlsSession {
    phase: Phase,
    /// The start of a record whose rest has not arrived.
    partial: Vec<u8>,
    /// Decrypted bytes the caller's buffer had no room for, delivered first by the next read.
    plain: Vec<u8>,
    plain_pos: usize,
    /// Records the socket would not take yet.
    pending: Pending,
    /// close_notify arrived: no more plaintext will come.
    peer_closed: bool,
}

/// A boxed session: its few hundred bytes in `Conn` would cost every plain connection too.
pub(super) type Session = Box<TlsSession>;

/// A handshake in progress: rustls, and the TLS 1.3 traffic secrets it has logged so far.
struct Handshaking {
    tls: UnbufferedServerConnection,
    caught: Caught,
}

/// Who protects the records.
enum Phase {
    /// rustls, until its handshake is over and it has said everything it had to.
    Handshake(Box<Handshaking>),
    /// Our record layer, with the keys rustls handed over.
    Traffic(Records),
    /// The handover failed: the connection is closed.
    Failed,
}

fn invalid(e: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::new(ErrorKind::InvalidData, e)
}

/// Appends a handshake or alert record rustls made to `out` (asked first for its size).
fn encode(e: &mut EncodeTlsData<'_, ServerConnectionData>, out: &mut Vec<u8>) {
    let at = out.len();
    if let Err(EncodeError::InsufficientSize(InsufficientSizeError { required_size })) = e.encode(&mut []) {
        out.resize(at + required_size, 0);
        if e.encode(&mut out[at..]).is_err() {
            out.truncate(at);
        }
    }
}

/// Copies `src` into `dst[*got..]` as far as it fits; returns how much was copied.
fn deliver(src: &[u8], dst: &mut [u8], got: &mut usize) -> usize {
    let n = src.len().min(dst.len() - *got);
    dst[*got..*got + n].copy_from_slice(&src[..n]);
    *got += n;
    n
}

/// Ciphertext made but not yet taken by the socket.
struct Pending {
    bytes: Vec<u8>,
    pos: usize,
}

impl Pending {
    fn waiting(&self) -> bool {
        self.pos < self.bytes.len()
    }

    /// Sends `out` (records just made) after any already pending; what the socket does not
    /// take is kept in `pending`. `out` is left empty.
    fn queue(&mut self, fd: &Fd, out: &mut Vec<u8>) -> io::Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let mut sent = 0;
        let mut result = Ok(());
        if self.send(fd)? {
            match net::writev(fd, &[out]) {
                Ok(n) => sent = n,
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                Err(e) => result = Err(e),
            }
        }
        self.bytes.extend_from_slice(&out[sent..]);
        out.clear();
        result
    }

    /// Writes the records the socket would not take before. `Ok(true)` when none is left.
    fn send(&mut self, fd: &Fd) -> io::Result<bool> {
        while self.pos < self.bytes.len() {
            match net::writev(fd, &[&self.bytes[self.pos..]]) {
                Ok(n) => self.pos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.bytes = Vec::new();
        self.pos = 0;
        Ok(true)
    }
}

impl TlsSession {
    fn new(tls: UnbufferedServerConnection) -> TlsSession {
        TlsSession { phase: Phase::Handshake(Box::new(Handshaking { tls, caught: Caught::default() })), partial: Vec::new(), plain: Vec::new(), plain_pos: 0, pending: Pending { bytes: Vec::new(), pos: 0 }, peer_closed: false }
    }

    /// Reads plaintext into `buf` (see `read`).
    fn read(&mut self, fd: &Fd, buf: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        if self.plain_pos < self.plain.len() {
            self.plain_pos += deliver(&self.plain[self.plain_pos..], buf, &mut got);
            if self.plain_pos == self.plain.len() {
                self.plain = Vec::new();
                self.plain_pos = 0;
            }
        }
        if got == buf.len() || self.peer_closed {
            return Ok(got);
        }
        with_scratch(|sc| loop {
            let mut filled = self.partial.len();
            sc.incoming[..filled].copy_from_slice(&self.partial);
            // Ask for about what the caller can take, so little plaintext is left over.
            let want = (buf.len() - got).clamp(RECORD_MAX, BATCH);
            let n = match net::read(fd, &mut sc.incoming[filled..filled + want]) {
                // The TCP stream ended (with or without close_notify): an end like any other
                // for HTTP/1.1. A partial record left is dropped with the connection.
                Ok(0) => return Ok(got),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return if got > 0 { Ok(got) } else { Err(e) },
                Err(e) => return Err(e),
            };
            filled += n;
            let used = self.process(fd, &mut sc.incoming[..filled], &mut sc.outgoing, buf, &mut got)?;
            self.partial = if used < filled { sc.incoming[used..filled].to_vec() } else { Vec::new() };
            if self.peer_closed || got == buf.len() {
                return Ok(got);
            }
            if n < want {
                // The socket is drained.
                return if got > 0 { Ok(got) } else { Err(ErrorKind::WouldBlock.into()) };
            }
        })
    }

    /// Runs the records in `incoming` through rustls or, after the handshake, our record
    /// layer: plaintext into `buf` (the rest kept in `plain`), handshake replies out to the
    /// socket. Returns how many bytes were used; the rest is the start of a record still to come.
    fn process(&mut self, fd: &Fd, incoming: &mut [u8], out: &mut Vec<u8>, buf: &mut [u8], got: &mut usize) -> io::Result<usize> {
        let mut used = 0;
        if let Phase::Handshake(_) = self.phase {
            used = self.handshake(fd, incoming, out, buf, got)?;
            if self.peer_closed || !self.take_over() {
                return Ok(used);
            }
        }
        let TlsSession { phase, plain, pending, peer_closed, .. } = self;
        let Phase::Traffic(records) = phase else { return Err(ErrorKind::NotConnected.into()) };
        out.clear();
        let opened = records.open(&mut incoming[used..], out, |payload| {
            let n = deliver(payload, buf, got);
            plain.extend_from_slice(&payload[n..]);
        });
        let sent = pending.queue(fd, out);
        match opened {
            Ok(Opened::Used(n)) => {
                sent?;
                Ok(used + n)
            }
            Ok(Opened::Closed(n)) => {
                *peer_closed = true;
                Ok(used + n)
            }
            Err(e) => {
                records.alert(&e, out);
                let _ = pending.queue(fd, out);
                Err(invalid(e))
            }
        }
    }

    /// Hands the records over from rustls once its handshake is over. False while it is not
    /// (or rustls is still in charge because it has more to say).
    fn take_over(&mut self) -> bool {
        match &self.phase {
            Phase::Handshake(hs) if !hs.tls.is_handshaking() => {}
            _ => return false,
        }
        let Phase::Handshake(hs) = std::mem::replace(&mut self.phase, Phase::Failed) else { return false };
        let Handshaking { tls, caught } = *hs;
        match Records::take_over(tls, &caught) {
            Ok(r) => self.phase = Phase::Traffic(r),
            Err(e) => eprintln!("server: TLS record layer not taken over: {e}; closing"),
        }
        true
    }

    /// Runs the records in `incoming` through rustls (see `process`).
    fn handshake(&mut self, fd: &Fd, incoming: &mut [u8], out: &mut Vec<u8>, buf: &mut [u8], got: &mut usize) -> io::Result<usize> {
        let TlsSession { phase, plain, pending, peer_closed, .. } = self;
        let Phase::Handshake(hs) = phase else { return Err(ErrorKind::NotConnected.into()) };
        let Handshaking { tls, caught } = &mut **hs;
        // Whatever another connection's rustls calls left on this thread is not ours.
        secrets::take();
        let mut used = 0;
        loop {
            let handshaking = tls.is_handshaking();
            let status = tls.process_tls_records(&mut incoming[used..]);
            caught.absorb(secrets::take());
            let discard = status.discard;
            match status.state {
                Ok(ConnectionState::ReadTraffic(mut r)) => {
                    while let Some(record) = r.next_record() {
                        let payload = record.map_err(invalid)?.payload;
                        let n = deliver(payload, buf, got);
                        plain.extend_from_slice(&payload[n..]);
                    }
                }
                Ok(ConnectionState::EncodeTlsData(mut e)) => encode(&mut e, out),
                Ok(ConnectionState::TransmitTlsData(t)) => {
                    // Handshake flights, tickets, alerts: a full socket leaves them pending,
                    // which `pending_out` reports and `flush` finishes.
                    let sent = pending.queue(fd, out);
                    t.done();
                    sent?;
                }
                Ok(ConnectionState::PeerClosed | ConnectionState::Closed) => {
                    *peer_closed = true;
                    return Ok(used + discard);
                }
                // More bytes needed (BlockedHandshake), or every record is read (WriteTraffic).
                Ok(_) => return Ok(used + discard),
                Err(e) => {
                    if handshaking && e == rustls::Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType) {
                        // Plain HTTP on the HTTPS port (`GET` is no TLS record type): say so
                        // in HTTP, which that client reads, rather than in a TLS alert.
                        let _ = net::writev(fd, &[PLAIN_HTTP_ON_TLS]);
                    } else {
                        // rustls queued an alert saying why; send it if the socket takes it.
                        drain_records(tls, pending, fd, out);
                    }
                    return Err(invalid(e));
                }
            }
            used += discard;
        }
    }

    /// Encrypts the bytes of `parts` (or, with `None`, a close_notify) into `out`, once rustls
    /// has nothing of its own to send first. Err when the handshake is not done: nothing can be
    /// sent yet, and the loop never writes before it has read a request.
    fn encrypt(&mut self, fd: &Fd, parts: Option<&[&[u8]]>, out: &mut Vec<u8>) -> io::Result<()> {
        let TlsSession { phase, pending, .. } = self;
        let tls = match phase {
            // The peer's close_notify came with its request, before rustls handed over.
            Phase::Handshake(hs) => &mut hs.tls,
            Phase::Traffic(records) => {
                let r = match parts {
                    Some(p) => records.seal(p, out),
                    None => records.close_notify(out),
                };
                return r.map_err(|e| {
                    out.clear();
                    invalid(e)
                });
            }
            Phase::Failed => return Err(ErrorKind::NotConnected.into()),
        };
        let joined = parts.map(|p| p.concat());
        let plaintext = joined.as_deref();
        let mut none = [0u8; 0];
        loop {
            match tls.process_tls_records(&mut none).state {
                Ok(ConnectionState::WriteTraffic(mut w)) => {
                    let room = plaintext.map_or(64, |p| p.len() + p.len() / 16384 * 32 + 64);
                    out.resize(room, 0);
                    let mut r = match plaintext {
                        Some(p) => w.encrypt(p, out),
                        None => w.queue_close_notify(out),
                    };
                    if let Err(EncryptError::InsufficientSize(InsufficientSizeError { required_size })) = r {
                        out.resize(required_size, 0);
                        r = match plaintext {
                            Some(p) => w.encrypt(p, out),
                            None => w.queue_close_notify(out),
                        };
                    }
                    return match r {
                        Ok(n) => {
                            out.truncate(n);
                            Ok(())
                        }
                        Err(e) => {
                            out.clear();
                            Err(io::Error::other(e.to_string()))
                        }
                    };
                }
                Ok(ConnectionState::EncodeTlsData(mut e)) => encode(&mut e, out),
                Ok(ConnectionState::TransmitTlsData(t)) => {
                    let sent = pending.queue(fd, out);
                    t.done();
                    sent?;
                }
                Ok(_) => return Err(ErrorKind::NotConnected.into()),
                Err(e) => return Err(invalid(e)),
            }
        }
    }

    /// Writes `parts` (see `writev`).
    fn writev(&mut self, fd: &Fd, parts: &[&[u8]]) -> io::Result<usize> {
        if !self.pending.send(fd)? {
            return Err(ErrorKind::WouldBlock.into());
        }
        let parts = &parts[..parts.len().min(net::WRITEV_MAX)];
        let total: usize = parts.iter().map(|p| p.len()).sum();
        with_scratch(|sc| {
            let mut taken = 0;
            while taken < total {
                // The next batch: up to BATCH bytes of the parts from `taken` on, as slices of
                // them (small WebSocket frames share records; nothing is copied before sealing).
                let mut batch: [&[u8]; net::WRITEV_MAX] = [&[]; net::WRITEV_MAX];
                let (mut n, mut size, mut skip) = (0, 0, taken);
                for p in parts {
                    if skip >= p.len() {
                        skip -= p.len();
                        continue;
                    }
                    let p = &p[skip..];
                    skip = 0;
                    let k = p.len().min(BATCH - size);
                    batch[n] = &p[..k];
                    n += 1;
                    size += k;
                    if size == BATCH {
                        break;
                    }
                }
                sc.outgoing.clear();
                self.encrypt(fd, Some(&batch[..n]), &mut sc.outgoing)?;
                taken += size;
                self.pending.queue(fd, &mut sc.outgoing)?;
                if self.pending.waiting() {
                    break;
                }
            }
            Ok(taken)
        })
    }

    /// Queues and sends close_notify, best effort.
    fn close_notify(&mut self, fd: &Fd) {
        with_scratch(|sc| {
            sc.outgoing.clear();
            if self.encrypt(fd, None, &mut sc.outgoing).is_ok() {
                let _ = self.pending.queue(fd, &mut sc.outgoing);
            }
        })
    }
}

/// Sends what rustls still has to say (an alert after an error), best effort.
fn drain_records(tls: &mut UnbufferedServerConnection, pending: &mut Pending, fd: &Fd, out: &mut Vec<u8>) {
    out.clear();
    let mut none = [0u8; 0];
    for _ in 0..8 {
        match tls.process_tls_records(&mut none).state {
            Ok(ConnectionState::EncodeTlsData(mut e)) => encode(&mut e, out),
            Ok(ConnectionState::TransmitTlsData(t)) => t.done(),
            _ => break,
        }
    }
    let _ = pending.queue(fd, out);
}

/// Reads plaintext into `buf`, reading records from `fd` until `buf` is full or the socket
/// has nothing more. `Ok(0)`: the peer closed. Handshake replies are written on the way.
pub(super) fn read(fd: &Fd, session: Option<&mut Session>, buf: &mut [u8]) -> io::Result<usize> {
    match session {
        None => net::read(fd, buf),
        Some(s) => s.read(fd, buf),
    }
}

/// Writes ciphertext the session holds. `Ok(true)` when none is left.
pub(super) fn send_pending(fd: &Fd, session: Option<&mut Session>) -> io::Result<bool> {
    session.map_or(Ok(true), |s| s.pending.send(fd))
}

/// Writes `parts` in order; returns how many plaintext bytes were taken. As with writev, fewer
/// than offered means the socket is full. With TLS, nothing is taken while earlier records
/// wait, and plaintext is taken one batch (64 KB) at a time, each sent before the next; the
/// parts are taken together, so small WebSocket frames share records.
pub(super) fn writev(fd: &Fd, session: Option<&mut Session>, parts: &[&[u8]]) -> io::Result<usize> {
    match session {
        None => net::writev(fd, parts),
        Some(s) => s.writev(fd, parts),
    }
}

impl Conn {
    /// Makes this connection a TLS one, its handshake still to come. `now` starts the request
    /// clock: a client that never completes the handshake is closed by the request timeout.
    pub(super) fn start_tls(&mut self, session: UnbufferedServerConnection, now: u64) {
        self.session = Some(Box::new(TlsSession::new(session)));
        self.tls = true;
        self.out_since = now;
        self.partial_since = now;
    }

    /// The TLS handshake is not finished yet.
    pub fn handshaking(&self) -> bool {
        self.session.as_ref().is_some_and(|s| matches!(&s.phase, Phase::Handshake(hs) if hs.tls.is_handshaking()))
    }

    /// Ciphertext waits inside the session.
    pub fn tls_pending(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.pending.waiting())
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
            s.close_notify(&self.fd);
        }
    }
}
