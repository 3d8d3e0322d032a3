//! Connection I/O: reading into a connection's buffer (lent by the loop, given back when
//! idle), sending and queueing output, discarding a closing connection's input. Every byte goes
//! through the connection's transport (plain socket or TLS, `server::transport`).

use super::*;

impl<H: Handler> Loop<H> {
    /// Gives the lent read buffer back to the loop, so idle connections hold none. A connection
    /// waiting for the rest of a small request keeps only a small copy of what it has: a
    /// thousand slow clients must not pin a thousand full-size buffers.
    pub(super) fn release_buffer(&mut self, idx: usize) {
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let Some(c) = slot.conn.as_mut() else { return };
        if c.buf.len() > READ_CHUNK && !c.has_input() {
            // A buffer grown for an upload is freed once the request is done, not kept for
            // the life of the connection.
            c.buf = Vec::new();
            c.start = 0;
            c.end = 0;
            return;
        }
        if c.buf.len() != READ_CHUNK {
            return;
        }
        let left = c.end - c.start;
        let buf = if !c.has_input() {
            c.start = 0;
            c.end = 0;
            std::mem::take(&mut c.buf)
        } else if left <= SMALL_BUFFER {
            let mut small = vec![0; SMALL_BUFFER];
            small[..left].copy_from_slice(&c.buf[c.start..c.end]);
            c.start = 0;
            c.end = left;
            std::mem::replace(&mut c.buf, small)
        } else {
            return;
        };
        if self.spare.is_empty() {
            self.spare = buf;
        }
    }

    /// Reads once into the connection's buffer. True when bytes arrived.
    pub(super) fn read_more(&mut self, idx: usize) -> bool {
        let max_buffer = self.limits.max_header_bytes + self.limits.max_any_body() + READ_CHUNK;
        let now = self.now;
        let Some(slot) = self.slots.get_mut(idx) else { return false };
        let Some(c) = slot.conn.as_mut() else { return false };
        if c.end == c.buf.len() {
            if c.buf.is_empty() {
                c.buf = if self.spare.is_empty() { vec![0; READ_CHUNK] } else { std::mem::take(&mut self.spare) };
                c.start = 0;
                c.end = 0;
            } else if c.start > 0 {
                c.buf.copy_within(c.start..c.end, 0);
                c.end -= c.start;
                c.start = 0;
            } else if c.buf.len() < max_buffer {
                let len = (c.buf.len() * 2).min(max_buffer);
                c.buf.resize(len, 0);
            } else {
                // The parser's limits stop a request before this; a full buffer here means
                // pipelined requests beyond any reason.
                c.dead = true;
                return false;
            }
        }
        debug_assert!(c.end < c.buf.len(), "reading into a full buffer");
        let room = c.buf.len() - c.end;
        match c.recv(c.end..c.buf.len()) {
            Ok(0) => {
                c.eof = true;
                c.readable = false;
                false
            }
            Ok(n) => {
                if n < room {
                    // A short read drained the socket; the next arrival raises a new edge.
                    c.readable = false;
                    if c.rdhup {
                        c.eof = true;
                    }
                }
                if c.partial_since == 0 && c.start == c.end {
                    c.partial_since = now;
                }
                c.end += n;
                true
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                c.readable = false;
                false
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => true,
            Err(_) => {
                c.dead = true;
                false
            }
        }
    }
}

/// Writes `a` then `b` with one writev when nothing is queued before them; whatever the socket
/// does not take waits in the connection: `a`'s rest copied, `b`'s kept by reference when it is
/// the body of `res` and that is static or shared (a cached page, an embedded asset), copied
/// otherwise. (The reference is taken only then: a response sent whole costs no refcount.)
pub(super) fn queue_out(c: &mut Conn, a: &[u8], b: &[u8], res: Option<&Response>, now: u64) {
    let pending = c.pending_out();
    if pending || !c.writable {
        if !pending {
            c.out_since = now;
        }
        // What follows a kept tail must come after it: copy the tail's rest (at most about
        // OUT_LOW_WATER: no request is parsed above that) into `out` first.
        if let Some(t) = c.tail.take() {
            c.out.extend_from_slice(&t.bytes()[c.tail_pos..]);
            c.tail_pos = 0;
        }
        c.out.extend_from_slice(a);
        keep_rest(c, b, 0, res);
        return;
    }
    let total = a.len() + b.len();
    let n = match c.send(&[a, b], now) {
        Ok(n) => n,
        Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => 0,
        Err(_) => {
            c.dead = true;
            return;
        }
    };
    if n < total {
        c.writable = false;
        c.out_since = now;
        if n < a.len() {
            c.out.extend_from_slice(&a[n..]);
            keep_rest(c, b, 0, res);
        } else {
            keep_rest(c, b, n - a.len(), res);
        }
    }
}

/// Queues `b[from..]` after `out`: as a reference to `res`'s body when it can be kept and the
/// connection holds no tail yet, else as a copy.
fn keep_rest(c: &mut Conn, b: &[u8], from: usize, res: Option<&Response>) {
    match res.and_then(Response::kept_body) {
        Some(k) if c.tail.is_none() && from < b.len() => {
            debug_assert!(k.bytes().len() == b.len(), "the kept body is not the body sent");
            c.tail = Some(k);
            c.tail_pos = from;
        }
        _ => c.out.extend_from_slice(&b[from..]),
    }
}

/// Reads and throws away what a lingering connection still sends, until the socket is empty
/// (edge-triggered: we must drain it) or the peer closes. Bounded per call so one client cannot
/// hold the loop; the linger deadline ends the rest.
pub(super) fn discard_input(c: &mut Conn) {
    let mut scratch = [0u8; 4096];
    for _ in 0..64 {
        if !c.readable {
            return;
        }
        match c.recv_into(&mut scratch) {
            Ok(0) => {
                c.eof = true;
                return;
            }
            Ok(n) if n < scratch.len() => {
                c.readable = false;
                c.eof = c.rdhup;
            }
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => c.readable = false,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                c.dead = true;
                return;
            }
        }
    }
}

/// Sends queued output until it is gone or the socket is full: the response bytes first (with
/// the rest of a file body, a chunk at a time), then a socket's queued frames.
pub(super) fn flush(c: &mut Conn, now: u64) {
    if !c.send_tls_pending(now) {
        return;
    }
    // A file body goes out at most FILE_CHUNKS_PER_TURN chunks per call: a client that reads as
    // fast as we write (loopback, a fast LAN) never fills the socket, and the loop's other
    // connections must not wait for the whole download. `Loop::advance` requeues the rest.
    let mut chunks = 0;
    loop {
        send_out(c, now);
        if c.dead || c.out_pos < c.out.len() || c.tail.is_some() || chunks == FILE_CHUNKS_PER_TURN || !refill(c) {
            break;
        }
        chunks += 1;
    }
    if c.dead || c.out_pos < c.out.len() || c.tail.is_some() || c.file.is_some() {
        return;
    }
    if c.out.capacity() > CONN_OUT_KEEP {
        c.out = Vec::new();
    }
    let Conn { fd, session, mode, .. } = c;
    let Mode::Socket(f) = mode else { return };
    let mut progress = false;
    match f.queue.write(|parts| transport::writev(fd, session.as_mut(), parts), &mut progress) {
        ws::Wrote::All => {}
        ws::Wrote::Blocked => c.writable = false,
        ws::Wrote::Failed => c.dead = true,
    }
    if progress {
        c.out_since = now;
    }
}

/// Sends `out[out_pos..]` and then the kept tail until both are gone (then empties them) or the
/// socket is full.
fn send_out(c: &mut Conn, now: u64) {
    while c.out_pos < c.out.len() || c.tail_left() > 0 {
        let rest = c.tail.as_ref().map_or(&b""[..], |t| &t.bytes()[c.tail_pos..]);
        let from_out = c.out.len() - c.out_pos;
        match transport::writev(&c.fd, c.session.as_mut(), &[&c.out[c.out_pos..], rest]) {
            Ok(n) => {
                debug_assert!(n <= from_out + rest.len(), "the transport wrote more than it was given");
                let left = from_out + rest.len() - n;
                c.out_pos += n.min(from_out);
                c.tail_pos += n.saturating_sub(from_out);
                c.out_since = now;
                if left > 0 {
                    c.writable = false;
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                c.writable = false;
                return;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => {
                c.dead = true;
                return;
            }
        }
    }
    c.out.clear();
    c.out_pos = 0;
    c.tail = None;
    c.tail_pos = 0;
}

/// Reads the next chunk of the connection's file body into its empty output buffer. False
/// when there is no file body, or it failed (the connection is then dead: its Content-Length
/// can no longer be kept, so closing is the only honest end).
fn refill(c: &mut Conn) -> bool {
    use std::os::unix::fs::FileExt;
    let Some(f) = c.file.as_mut() else { return false };
    debug_assert!(c.out.is_empty() && c.out_pos == 0 && c.tail.is_none(), "refilling over unsent output");
    let want = f.len.min(FILE_CHUNK as u64) as usize;
    c.out.resize(want, 0);
    loop {
        match f.file.read_at(&mut c.out, f.offset) {
            Ok(0) => eprintln!("server: a file body ended {} bytes early; closing", f.len),
            Ok(n) => {
                c.out.truncate(n);
                f.offset += n as u64;
                f.len -= n as u64;
                if f.len == 0 {
                    c.file = None;
                }
                return true;
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => eprintln!("server: reading a file body failed: {e}; closing"),
        }
        c.out.clear();
        c.file = None;
        c.dead = true;
        return false;
    }
}
