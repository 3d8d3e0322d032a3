//! One event loop: an epoll instance watching this loop's listener, its completion doorbell and
//! its connections (edge-triggered; readiness is remembered per connection so a warm keep-alive
//! request costs one read, one writev and one epoll_wait).
//!
//! Timers need no thread: every connection has a deadline, the loop knows the earliest one and
//! uses it as the epoll_wait timeout, then sweeps the slab. A sweep is O(connections) and happens
//! at most every SWEEP_GAP_MS; that is a few microseconds for thousands of connections.

use super::access_log::AccessLog;
use super::completion::{Done, Queue};
use super::conn::{Conn, Parked};
use super::transport;
use super::websocket::{self as ws, Address, Mail, Mailbox, SocketState, Ws};
use std::collections::VecDeque;
use super::{Call, Flow, Handler, Stop};
use crate::arena::Arena;
use crate::config::Config;
use crate::http::chunked;
use crate::http::limits::HEADER_SLOTS;
use crate::http::spool::{self, Spool, SpooledBody};
use crate::http::status::bodiless;
use crate::http::websocket::{self as frames, Step};
use crate::http::{parse_head, Framing, Head, Header, Limits, Method, ParseError, Request, Response};
use crate::sys::clock::{now_ms, now_us};
use crate::sys::epoll::{self, Epoll, Event};
use crate::sys::eventfd::EventFd;
use crate::sys::{net, Fd};
use std::io::ErrorKind;
use std::sync::{Arc, Mutex};

/// Header fields a request usually has at most (browsers send 10–20); see `next_request`.
const FEW_HEADERS: usize = 32;

const LISTENER: u64 = u64::MAX;
const BELL: u64 = u64::MAX - 1;
/// Size of the read buffer lent to a connection; grown only for large requests.
const READ_CHUNK: usize = 16 * 1024;
/// What a connection keeps of a partial request between reads when it is this small.
const SMALL_BUFFER: usize = 2 * 1024;
/// Stop reading pipelined requests while this much output waits for a slow reader.
const OUT_HIGH_WATER: usize = 256 * 1024;
/// How long a closing connection's unread input is discarded before the socket is closed.
const LINGER_MS: u64 = 2_000;
/// Output buffers above this are freed once flushed.
const OUT_KEEP: usize = 64 * 1024;
const EVENTS: usize = 256;
const ACCEPTS_PER_WAKE: usize = 64;
const SWEEP_GAP_MS: u64 = 50;
/// How long to stop accepting when the process is out of descriptors.
const ACCEPT_PAUSE_MS: u64 = 100;
/// After this long without any event the loop gives free heap pages back to the kernel (once per
/// quiet spell): what a burst of requests or a crowd of WebSockets left behind stops counting in
/// RSS (issue 7). Never under steady load, where every wake has events.
const IDLE_TRIM_MS: u64 = 1_000;
/// Sockets flushed per loop turn while broadcast output waits: between batches the loop looks
/// at its other connections (a post must not wait for a whole fan-out), and the sockets later
/// in the list collect more frames for their one writev.
const FLUSH_BATCH: usize = 32;
/// A socket holding this many unsent frames means fan-out is falling behind: the loop then
/// flushes every waiting socket before it takes new work, which bounds every queue. 64 let the
/// queues of 1,000 sockets under fan-out reach 128-slot deques (2 MB at once, RssAnon 8.2 MB),
/// too much for a 15 MB container; a socket takes ~22 frames per writev anyway.
const BACKLOG_FRAMES: usize = 32;

const REFUSED_FULL: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const CONTINUE: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n";

/// Everything a loop needs, built on the main thread (so setup errors stop the start), then
/// moved to the loop's thread.
pub(super) struct Setup<H> {
    index: usize,
    epoll: Epoll,
    listener: Fd,
    queue: Arc<Queue<H>>,
    mailbox: Arc<Mailbox>,
    limits: Limits,
    log: bool,
    request_timeout_ms: u64,
    idle_timeout_ms: u64,
    drain_timeout_ms: u64,
    max_connections: usize,
    ws: crate::config::WsLimits,
    spool_dir: std::path::PathBuf,
    /// Connections accepted on `listener` speak TLS with this configuration.
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl<H: Handler> Setup<H> {
    pub fn new(index: usize, listener: Fd, cfg: &Config, tls: Option<Arc<rustls::ServerConfig>>) -> std::io::Result<Setup<H>> {
        let queue = Arc::new(Queue { loop_index: index, items: Mutex::new(Vec::new()), bell: Arc::new(EventFd::new()?) });
        let mailbox = Arc::new(Mailbox::new(queue.bell.clone()));
        Ok(Setup {
            index,
            epoll: Epoll::new()?,
            listener,
            queue,
            mailbox,
            limits: cfg.limits,
            log: cfg.log,
            request_timeout_ms: cfg.request_timeout_ms,
            idle_timeout_ms: cfg.idle_timeout_ms,
            drain_timeout_ms: cfg.drain_timeout_ms,
            max_connections: cfg.max_connections,
            ws: cfg.ws,
            spool_dir: cfg.storage_path.join("tmp"),
            tls,
        })
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn bell(&self) -> Arc<EventFd> {
        self.queue.bell.clone()
    }

    /// Serves until `stop` is triggered and the drain is over.
    pub fn run(self, handler: H, stop: &Stop) -> std::io::Result<()> {
        self.epoll.add(&self.listener, epoll::IN, LISTENER)?;
        self.epoll.add(self.queue.bell.fd(), epoll::IN, BELL)?;
        let mut lp = Loop {
            handler,
            listener: Some(self.listener),
            epoll: self.epoll,
            queue: self.queue,
            mailbox: self.mailbox,
            limits: self.limits,
            request_timeout_ms: self.request_timeout_ms,
            idle_timeout_ms: self.idle_timeout_ms,
            drain_timeout_ms: self.drain_timeout_ms,
            max_connections: self.max_connections,
            ws: self.ws,
            spool_dir: self.spool_dir,
            tls: self.tls,
            slots: Vec::new(),
            free: Vec::new(),
            live: 0,
            res: Response::new(),
            arena: Arena::new(),
            head: Vec::with_capacity(512),
            spare: Vec::new(),
            done: Vec::new(),
            mail: Vec::new(),
            dirty: VecDeque::new(),
            backlogged: false,
            ws_out: Vec::new(),
            ws_msg: Vec::new(),
            sockets: 0,
            next_ping: u64::MAX,
            log: AccessLog::new(self.log),
            now: now_ms(),
            next_sweep: u64::MAX,
            accept_paused_until: 0,
            draining: false,
            drain_deadline: u64::MAX,
            trim_at: u64::MAX,
        };
        lp.serve(stop)
    }
}

struct Slot<S> {
    gen: u32,
    conn: Option<Conn>,
    /// The handler's state, for a connection that became a WebSocket.
    socket: Option<Box<S>>,
}

struct Loop<H: Handler> {
    handler: H,
    listener: Option<Fd>,
    epoll: Epoll,
    queue: Arc<Queue<H>>,
    mailbox: Arc<Mailbox>,
    limits: Limits,
    request_timeout_ms: u64,
    idle_timeout_ms: u64,
    drain_timeout_ms: u64,
    max_connections: usize,
    ws: crate::config::WsLimits,
    /// Where large upload bodies are spooled (`<storage>/tmp`, files unlinked at once).
    spool_dir: std::path::PathBuf,
    tls: Option<Arc<rustls::ServerConfig>>,
    slots: Vec<Slot<H::Socket>>,
    free: Vec<u32>,
    live: usize,
    /// The response, arena and head buffer reused for every request of this loop.
    res: Response,
    arena: Arena,
    head: Vec<u8>,
    /// A read buffer to lend to the next connection that has something to read.
    spare: Vec<u8>,
    /// Completions swapped out of the queue, reused to avoid allocating.
    done: Vec<Done<H>>,
    /// Socket frames swapped out of the mailbox, reused likewise.
    mail: Vec<Mail>,
    /// Tokens of writable sockets with queued frames, in the order they got them.
    dirty: VecDeque<u64>,
    /// Some socket's queue passed `BACKLOG_FRAMES`: flush them all before taking new work.
    backlogged: bool,
    /// Frames a socket handler sent, and the message handed to it (reused buffers).
    ws_out: Vec<u8>,
    ws_msg: Vec<u8>,
    /// Open WebSockets on this loop, and when they get their next heartbeat.
    sockets: usize,
    next_ping: u64,
    log: AccessLog,
    /// Monotonic ms at the top of this iteration.
    now: u64,
    next_sweep: u64,
    accept_paused_until: u64,
    draining: bool,
    drain_deadline: u64,
    /// When to trim the heap if nothing happens until then (u64::MAX: nothing to trim).
    trim_at: u64,
}

/// What became of the bytes at the front of a connection's buffer.
enum Next {
    /// A request was answered (or parked, or refused); look for another.
    Served,
    /// No complete request yet.
    NeedMore,
}

/// The request a handler ran for, as the loop must remember it to frame the response.
struct Ran<S> {
    method: Method,
    http10: bool,
    keep_alive: bool,
    parked: Option<Parked>,
    /// The handler accepted a WebSocket handshake with this state (and deflate or not).
    upgrade: Option<(S, bool)>,
}

fn token(idx: usize, gen: u32) -> u64 {
    (gen as u64) << 32 | idx as u64
}

impl<H: Handler> Loop<H> {
    fn serve(&mut self, stop: &Stop) -> std::io::Result<()> {
        let mut events = [Event::EMPTY; EVENTS];
        loop {
            let mut wake = self.next_sweep.min(self.log.deadline()).min(self.next_ping).min(self.trim_at);
            if self.draining {
                wake = wake.min(self.drain_deadline);
            }
            let timeout = if !self.dirty.is_empty() {
                0
            } else if wake == u64::MAX {
                -1
            } else {
                wake.saturating_sub(now_ms()).min(i32::MAX as u64) as i32
            };
            let n = self.epoll.wait(&mut events, timeout)?;
            self.now = now_ms();
            if n > 0 {
                self.trim_at = self.now + IDLE_TRIM_MS;
            } else if self.now >= self.trim_at {
                self.shrink_queues();
                crate::sys::memory::trim();
                self.trim_at = u64::MAX;
            }
            for ev in &events[..n.min(EVENTS)] {
                match ev.token() {
                    LISTENER => self.accept_all(),
                    BELL => self.completions(),
                    t => self.conn_event(t, ev.events()),
                }
            }
            if stop.requested() && !self.draining {
                self.begin_drain();
            }
            if self.now >= self.next_sweep {
                self.sweep();
            }
            if self.now >= self.next_ping {
                self.heartbeat();
            }
            if !self.dirty.is_empty() {
                self.flush_dirty();
            }
            if self.now >= self.log.deadline() {
                self.log.flush();
            }
            if self.draining && (self.live == 0 || self.now >= self.drain_deadline) {
                break;
            }
        }
        for i in 0..self.slots.len() {
            self.close(i);
        }
        self.log.flush();
        Ok(())
    }

    fn accept_all(&mut self) {
        for _ in 0..ACCEPTS_PER_WAKE {
            let Some(listener) = self.listener.as_ref() else { return };
            match net::accept(listener) {
                Ok(Some((fd, peer))) => {
                    if self.live >= self.max_connections {
                        // Best effort: a fresh socket's send buffer takes these few bytes
                        // (a TLS client would not understand them before its handshake).
                        if self.tls.is_none() {
                            let _ = net::writev(&fd, &[REFUSED_FULL]);
                        }
                        self.log.refused(503, "connection limit reached");
                        continue;
                    }
                    let mut conn = Conn::new(fd, peer);
                    if let Some(config) = &self.tls {
                        match rustls::ServerConnection::new(config.clone()) {
                            Ok(session) => conn.start_tls(session, self.now),
                            Err(_) => continue,
                        }
                    }
                    self.insert(conn);
                }
                Ok(None) => return,
                Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE) | Some(libc::ENOBUFS) | Some(libc::ENOMEM)) => {
                    // The listener is level-triggered: stop watching it for a moment or we spin.
                    let _ = self.epoll.delete(listener);
                    self.accept_paused_until = self.now + ACCEPT_PAUSE_MS;
                    self.next_sweep = self.next_sweep.min(self.accept_paused_until);
                    self.log.refused(503, "out of file descriptors, pausing accept");
                    return;
                }
                // ECONNABORTED and friends concern one connection only.
                Err(_) => continue,
            }
        }
    }

    fn insert(&mut self, conn: Conn) {
        let idx = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(Slot { gen: 0, conn: None, socket: None });
                self.slots.len() - 1
            }
        };
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let tok = token(idx, slot.gen);
        let events = epoll::IN | epoll::OUT | epoll::RDHUP | epoll::EDGE;
        if self.epoll.add(&conn.fd, events, tok).is_err() {
            self.free.push(idx as u32);
            return;
        }
        slot.conn = Some(conn);
        self.live += 1;
        self.update_deadline(idx);
    }

    fn close(&mut self, idx: usize) {
        let Some(slot) = self.slots.get_mut(idx) else { return };
        if let Some(c) = slot.conn.take() {
            slot.gen = slot.gen.wrapping_add(1);
            self.free.push(idx as u32);
            self.live -= 1;
            if c.ws.is_some() {
                self.sockets -= 1;
            }
            let socket = slot.socket.take();
            if self.spare.is_empty() && c.buf.len() == READ_CHUNK {
                self.spare = c.buf;
            }
            // Dropping `c` closes the socket, which also removes it from epoll.
            if let Some(state) = socket {
                self.handler.ws_closed(*state);
            }
        }
    }

    fn conn_mut(&mut self, idx: usize) -> Option<&mut Conn> {
        self.slots.get_mut(idx).and_then(|s| s.conn.as_mut())
    }

    fn conn_event(&mut self, tok: u64, ev: u32) {
        let idx = (tok & 0xffff_ffff) as usize;
        let gen = (tok >> 32) as u32;
        let Some(slot) = self.slots.get_mut(idx) else { return };
        if slot.gen != gen {
            return;
        }
        let Some(c) = slot.conn.as_mut() else { return };
        if ev & (epoll::IN | epoll::RDHUP | epoll::HUP | epoll::ERR) != 0 {
            c.readable = true;
        }
        if ev & (epoll::RDHUP | epoll::HUP) != 0 {
            c.rdhup = true;
        }
        if ev & (epoll::OUT | epoll::HUP | epoll::ERR) != 0 {
            c.writable = true;
        }
        self.advance(idx);
    }

    /// Moves one connection forward as far as it can go without blocking: flush output, answer
    /// every complete request in order, read more when needed, close when done.
    fn advance(&mut self, idx: usize) {
        loop {
            let now = self.now;
            let Some(c) = self.conn_mut(idx) else { return };
            if c.pending_out() && c.writable {
                flush(c, now);
            }
            if c.dead {
                self.close(idx);
                return;
            }
            if c.lingering {
                discard_input(c);
                if c.eof || c.dead {
                    self.close(idx);
                    return;
                }
                break;
            }
            if c.close_after {
                if c.pending_out() {
                    break;
                }
                if c.eof {
                    self.close(idx);
                    return;
                }
                c.close_notify();
                net::shutdown_write(&c.fd);
                c.lingering = true;
                c.start = c.end;
                c.deadline = now + LINGER_MS;
                continue;
            }
            if c.ws.is_some() {
                if c.unsent() >= OUT_HIGH_WATER {
                    // A client that sends commands but does not read the replies waits (and
                    // is dropped by the stall timeout if it never reads).
                    break;
                }
                match self.next_frame(idx) {
                    Next::Served => continue,
                    Next::NeedMore => {}
                }
                let Some(c) = self.conn_mut(idx) else { return };
                if c.readable && !c.eof && self.read_more(idx) {
                    continue;
                }
                let Some(c) = self.conn_mut(idx) else { return };
                if c.dead || c.eof {
                    self.close(idx);
                    return;
                }
                break;
            }
            if c.parked.is_some() || c.out.len() - c.out_pos >= OUT_HIGH_WATER {
                break;
            }
            match self.next_request(idx) {
                Next::Served => continue,
                Next::NeedMore => {}
            }
            let Some(c) = self.conn_mut(idx) else { return };
            if c.readable && !c.eof {
                let more = self.read_more(idx);
                if more {
                    continue;
                }
            }
            let Some(c) = self.conn_mut(idx) else { return };
            if c.dead {
                self.close(idx);
                return;
            }
            if c.eof {
                // Whatever partial request is left can never complete.
                c.close_after = true;
                continue;
            }
            break;
        }
        self.release_buffer(idx);
        self.update_deadline(idx);
    }

    /// Gives the lent read buffer back to the loop, so idle connections hold none. A connection
    /// waiting for the rest of a small request keeps only a small copy of what it has: a
    /// thousand slow clients must not pin a thousand full-size buffers.
    fn release_buffer(&mut self, idx: usize) {
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
    fn read_more(&mut self, idx: usize) -> bool {
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

    /// Parses the request at the front of the buffer and, when it is complete, runs it.
    fn next_request(&mut self, idx: usize) -> Next {
        let tok = match self.slots.get(idx) {
            Some(s) => token(idx, s.gen),
            None => return Next::NeedMore,
        };
        let draining = self.draining;
        let now = self.now;
        let Loop { slots, handler, res, arena, queue, limits, log, spool_dir, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        if !c.has_input() {
            return Next::NeedMore;
        }
        if let Some(sp) = c.spool.as_mut() {
            // An upload being spooled: the buffer holds more of its body.
            let fed = sp.feed(&c.buf[c.start..c.end]);
            let Ok(n) = fed else {
                c.spool = None;
                return self.refuse(idx, ParseError::Unavailable("upload spool write failed"));
            };
            c.start += n;
            if sp.progress >= spool::PROGRESS_BYTES {
                // Enough progress to deserve another request-timeout window.
                sp.progress = 0;
                c.partial_since = now;
            }
            if !sp.complete() {
                return Next::NeedMore;
            }
            let finished = c.spool.take().map(|sp| sp.finish());
            let Some(Ok((head_bytes, body))) = finished else {
                return self.refuse(idx, ParseError::Unavailable("upload spool map failed"));
            };
            let mut headers = [Header::EMPTY; HEADER_SLOTS];
            let ran = match parse_head(&head_bytes, limits, &mut headers) {
                Ok(Some(head)) => dispatch(&head, body.bytes(), Some(&body), (c.peer, c.tls), handler, res, arena, queue, tok, log),
                _ => return self.refuse(idx, ParseError::Bad("spooled head changed")),
            };
            return self.after_dispatch(idx, ran, draining);
        }
        // Clearing the full header array costs more than parsing a typical head: parse into
        // a small one first, and only a head with more fields than that uses the full one.
        let mut few = [Header::EMPTY; FEW_HEADERS];
        let mut many;
        let data = &c.buf[c.start..c.end];
        let parsed = match parse_head(data, limits, &mut few) {
            Err(ParseError::HeadersTooLarge) if limits.max_headers > FEW_HEADERS => {
                many = [Header::EMPTY; HEADER_SLOTS];
                parse_head(data, limits, &mut many)
            }
            other => other,
        };
        let (ran, consumed) = match parsed {
            Ok(None) => return Next::NeedMore,
            Err(e) => return self.refuse(idx, e),
            Ok(Some(head)) => match head.framing {
                Framing::None => {
                    let ran = dispatch(&head, b"", None, (c.peer, c.tls), handler, res, arena, queue, tok, log);
                    (ran, head.len)
                }
                Framing::Length(n) => {
                    let Some(body) = data.get(head.len..head.len + n) else {
                        let expect = head.expect_continue;
                        if n >= spool::SPOOL_MIN && is_multipart(&head) {
                            // Too big to buffer: the rest goes to disk as it arrives.
                            let head_len = head.len;
                            let started = Spool::create(spool_dir, &data[..head_len], n).and_then(|mut sp| {
                                let got = sp.feed(&data[head_len..])?;
                                Ok((sp, got))
                            });
                            match started {
                                Ok((sp, got)) => {
                                    c.start += head_len + got;
                                    c.spool = Some(Box::new(sp));
                                }
                                Err(e) => {
                                    eprintln!("server: cannot spool an upload to {}: {e}", spool_dir.display());
                                    return self.refuse(idx, ParseError::Unavailable("upload spool unavailable"));
                                }
                            }
                        }
                        return self.await_body(idx, expect);
                    };
                    let ran = dispatch(&head, body, None, (c.peer, c.tls), handler, res, arena, queue, tok, log);
                    (ran, head.len + n)
                }
                Framing::Chunked => {
                    let (hl, expect) = (head.len, head.expect_continue);
                    match chunked::scan(&data[hl..], limits) {
                        Err(e) => return self.refuse(idx, e),
                        Ok(None) => return self.await_body(idx, expect),
                        Ok(Some((raw, _))) => {
                            let start = c.start;
                            let blen = chunked::dechunk_in_place(&mut c.buf[start + hl..start + hl + raw]);
                            match dispatch_dechunked(c, hl, blen, limits, handler, res, arena, queue, tok, log) {
                                Some(ran) => (ran, hl + raw),
                                None => return self.refuse(idx, ParseError::Bad("chunked head changed")),
                            }
                        }
                    }
                }
            },
        };
        c.start += consumed;
        self.after_dispatch(idx, ran, draining)
    }

    /// After a request ran: park the connection or queue the response, then reset the
    /// per-request state (and start a WebSocket when the handler upgraded).
    fn after_dispatch(&mut self, idx: usize, ran: Ran<H::Socket>, draining: bool) -> Next {
        let Loop { slots, res, arena, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        c.partial_since = if c.has_input() { self.now } else { 0 };
        c.continue_sent = false;
        let mut upgraded = None;
        match ran.parked {
            // Whatever the handler wrote before parking is dropped: `resume` fills a fresh one.
            Some(p) => c.parked = Some(p),
            None => {
                let keep = ran.keep_alive && !draining && !res.wants_close();
                if ran.upgrade.is_some() && !keep {
                    // Draining (or a handler asking to close): no socket can start now.
                    res.reset();
                    res.status(503);
                    res.header("Retry-After", b"1");
                }
                respond(c, res, &mut self.head, ran.method == Method::Head, ran.http10, keep, self.now);
                if keep {
                    upgraded = ran.upgrade;
                }
            }
        }
        res.reset();
        arena.reset();
        if let Some((state, deflate)) = upgraded {
            self.ws_start(idx, state, deflate);
        }
        Next::Served
    }

    /// Turns a connection whose 101 is queued into a socket and lets the handler greet it.
    fn ws_start(&mut self, idx: usize, state: H::Socket, deflate: bool) {
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let Some(c) = slot.conn.as_mut() else { return };
        c.ws = Some(Box::new(SocketState { deflate, ..SocketState::default() }));
        // Action Cable clients send nothing unprompted, so a peer that vanished without a FIN
        // would otherwise hold its slot until our pings fill its send buffer; the kernel's
        // probes find it within about 90 s. Best effort: a socket without them still works.
        let _ = net::set_keepalive(&c.fd, 60, 10, 3);
        slot.socket = Some(Box::new(state));
        self.sockets += 1;
        if self.next_ping == u64::MAX {
            self.next_ping = self.now + ws::PING_MS;
        }
        self.ws_call(idx, None);
    }

    /// Runs `ws_open` (text None) or `ws_text` for socket `idx`, then queues what it sent.
    fn ws_call(&mut self, idx: usize, text: Option<&[u8]>) {
        let now = self.now;
        let Loop { slots, handler, ws_out, mailbox, .. } = self;
        let Some(slot) = slots.get_mut(idx) else { return };
        let deflate = slot.conn.as_ref().and_then(|c| c.ws.as_ref()).is_some_and(|f| f.deflate);
        let address = Address { mailbox: mailbox.clone(), token: token(idx, slot.gen), deflate };
        let Some(state) = slot.socket.as_deref_mut() else { return };
        ws_out.clear();
        let mut close = false;
        let mut w = Ws { state, out: ws_out, close: &mut close, address };
        match text {
            None => handler.ws_open(&mut w),
            Some(t) => handler.ws_text(&mut w, t),
        }
        let Some(c) = slot.conn.as_mut() else { return };
        if !ws_out.is_empty() {
            push_frame(c, Arc::from(&ws_out[..]), now);
        }
        if close {
            ws_close(c, frames::CLOSE_NORMAL, now);
        }
        if ws_out.capacity() > OUT_KEEP {
            *ws_out = Vec::new();
        }
    }

    /// Handles the frame at the front of a socket's buffer: control frames here, messages to
    /// the handler. `NeedMore` when no complete frame is buffered (or the socket is closing).
    fn next_frame(&mut self, idx: usize) -> Next {
        let now = self.now;
        let max = self.ws.max_message;
        let Loop { slots, ws_msg, log, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        let Some(mut fr) = c.ws.take() else { return Next::NeedMore };
        let step = read_frame(c, &mut fr, ws_msg, max);
        c.ws = Some(fr);
        let message = match step {
            Step::NeedMore => return Next::NeedMore,
            Step::Message => true,
            Step::Nothing => false,
            Step::Pong(range) => {
                let mut pong = Vec::with_capacity(range.len() + 2);
                frames::write_frame(frames::OP_PONG, &c.buf[range], &mut pong);
                push_frame(c, pong.into(), now);
                false
            }
            Step::Close(code, why) => {
                if let Some(why) = why {
                    log.refused(code, why);
                }
                ws_close(c, code, now);
                false
            }
        };
        if message {
            let text = std::mem::take(&mut self.ws_msg);
            self.ws_call(idx, Some(&text));
            self.ws_msg = text;
            if self.ws_msg.capacity() > OUT_KEEP {
                self.ws_msg = Vec::new();
            }
        }
        Next::Served
    }

    /// Sends the handler's heartbeat frame to every open socket and schedules the next.
    fn heartbeat(&mut self) {
        if self.sockets == 0 {
            self.next_ping = u64::MAX;
            return;
        }
        self.next_ping = self.now + ws::PING_MS;
        self.ws_msg.clear();
        self.handler.ws_heartbeat(&mut self.ws_msg);
        if self.ws_msg.is_empty() {
            return;
        }
        let mut frame = Vec::with_capacity(self.ws_msg.len() + 2);
        frames::write_frame(frames::OP_TEXT, &self.ws_msg, &mut frame);
        let ping: Arc<[u8]> = frame.into();
        for i in 0..self.slots.len() {
            let now = self.now;
            let Some(c) = self.conn_mut(i) else { continue };
            if c.ws.as_ref().is_none_or(|f| f.closing) || c.close_after {
                continue;
            }
            self.deliver(i, ping.clone(), false, now);
        }
    }

    /// Queues `frame` for socket `idx` after what it already has (`then_close`: the frame is
    /// the socket's last; a close follows it), dropping the socket if it is a slow consumer.
    /// Nothing is written here: the socket joins the flush list (`flush_dirty`), or waits for
    /// its writable edge when the kernel's buffer is full.
    fn deliver(&mut self, idx: usize, frame: Arc<[u8]>, then_close: bool, now: u64) {
        let out_max = self.ws.out_max;
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let tok = token(idx, slot.gen);
        let Some(c) = slot.conn.as_mut() else { return };
        if c.ws.as_deref().is_none_or(|f| f.closing) || c.close_after {
            return;
        }
        if c.unsent() + frame.len() > out_max {
            self.log.refused(0, "websocket consumer too slow, dropped");
            self.close(idx);
            return;
        }
        push_frame(c, frame, now);
        if then_close {
            // The frame itself is the goodbye (Action Cable's disconnect); end with a close.
            ws_close(c, frames::CLOSE_NORMAL, now);
        }
        let writable = c.writable;
        let Some(f) = c.ws.as_deref_mut() else { return };
        if f.queue.len() > BACKLOG_FRAMES {
            self.backlogged = true;
        }
        if !writable {
            // Its EPOLLOUT edge flushes it; meanwhile the stall clock runs.
            self.update_deadline(idx);
        } else if !f.dirty {
            f.dirty = true;
            self.dirty.push_back(tok);
        }
    }

    /// Frees the frame queues of sockets with nothing to send (the loop is idle).
    fn shrink_queues(&mut self) {
        for slot in &mut self.slots {
            if let Some(f) = slot.conn.as_mut().and_then(|c| c.ws.as_deref_mut()) {
                f.queue.shrink();
            }
        }
    }

    /// Writes the queues of the sockets on the flush list, oldest first: `FLUSH_BATCH` of them
    /// per loop turn, or all when fan-out is backlogged. Each socket's queue goes out with one
    /// writev, however many frames it holds.
    fn flush_dirty(&mut self) {
        let budget = if self.backlogged { usize::MAX } else { FLUSH_BATCH };
        let mut flushed = 0;
        while flushed < budget {
            let Some(tok) = self.dirty.pop_front() else { break };
            let idx = (tok & 0xffff_ffff) as usize;
            let gen = (tok >> 32) as u32;
            let Some(slot) = self.slots.get_mut(idx).filter(|s| s.gen == gen) else { continue };
            let Some(f) = slot.conn.as_mut().and_then(|c| c.ws.as_deref_mut()) else { continue };
            f.dirty = false;
            self.advance(idx);
            flushed += 1;
        }
        if self.dirty.is_empty() {
            self.backlogged = false;
        }
    }

    /// The head is complete but the body is not: say `100 Continue` once if asked, and wait.
    fn await_body(&mut self, idx: usize, expect: bool) -> Next {
        let now = self.now;
        if let Some(c) = self.conn_mut(idx) {
            if expect && !c.continue_sent {
                c.continue_sent = true;
                queue_out(c, CONTINUE, b"", now);
            }
        }
        Next::NeedMore
    }

    /// Answers a request we will not serve with `e`'s status, then closes the connection: after
    /// a framing error the next request's boundary is unknown.
    fn refuse(&mut self, idx: usize, e: ParseError) -> Next {
        let now = self.now;
        self.log.refused(e.status(), e.why());
        let Loop { slots, res, head, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        res.reset();
        res.status(e.status());
        res.header("Content-Type", b"text/plain; charset=utf-8");
        res.body().extend_from_slice(crate::http::status::reason(e.status()).as_bytes());
        res.body().push(b'\n');
        respond(c, res, head, false, false, false, now);
        res.reset();
        c.start = c.end;
        Next::Served
    }

    /// Runs the closures other threads queued for parked connections.
    fn completions(&mut self) {
        self.queue.bell.drain();
        self.mailbox.take(&mut self.mail);
        let mut mail = std::mem::take(&mut self.mail);
        // Frames only join their sockets' queues here; `flush_dirty` writes them, so whatever
        // piled up for a socket while the loop was busy leaves in one writev.
        for m in mail.drain(..) {
            let idx = (m.token & 0xffff_ffff) as usize;
            let gen = (m.token >> 32) as u32;
            if self.slots.get(idx).is_some_and(|s| s.gen == gen) {
                let now = self.now;
                self.deliver(idx, m.frame, m.then_close, now);
            }
        }
        self.mail = mail;
        let mut done = std::mem::take(&mut self.done);
        if let Ok(mut items) = self.queue.items.lock() {
            std::mem::swap(&mut *items, &mut done);
        }
        for d in done.drain(..) {
            let idx = (d.token & 0xffff_ffff) as usize;
            let gen = (d.token >> 32) as u32;
            let draining = self.draining;
            let now = self.now;
            let Loop { slots, handler, res, arena, head, log, .. } = self;
            let Some(slot) = slots.get_mut(idx).filter(|s| s.gen == gen) else { continue };
            let Some(c) = slot.conn.as_mut() else { continue };
            let Some(p) = c.parked.take() else { continue };
            match d.fill {
                Some(fill) => fill(handler, res),
                None => {
                    res.status(500);
                    res.body().extend_from_slice(b"Internal Server Error\n");
                    log.refused(500, "parked request dropped without a response");
                }
            }
            log.request(p.method.as_str(), &p.path, res.code(), now_us().saturating_sub(p.started_us));
            let keep = p.keep_alive && !draining && !res.wants_close();
            respond(c, res, head, p.method == Method::Head, p.http10, keep, now);
            res.reset();
            arena.reset();
            self.advance(idx);
        }
        self.done = done;
    }

    fn begin_drain(&mut self) {
        self.draining = true;
        self.drain_deadline = self.now + self.drain_timeout_ms;
        if let Some(l) = self.listener.take() {
            let _ = self.epoll.delete(&l);
        }
        for i in 0..self.slots.len() {
            let now = self.now;
            if let Some(c) = self.slots[i].conn.as_mut().filter(|c| c.ws.is_some()) {
                ws_close(c, 1001, now);
                self.advance(i);
            } else if self.slots[i].conn.as_ref().is_some_and(Conn::idle) {
                self.close(i);
            }
        }
    }

    fn update_deadline(&mut self, idx: usize) {
        let (now, req, idle, stall) = (self.now, self.request_timeout_ms, self.idle_timeout_ms, self.ws.write_stall_ms);
        let Some(c) = self.conn_mut(idx) else { return };
        c.deadline = if c.lingering {
            c.deadline
        } else if c.ws.is_some() {
            // Sockets idle forever (the heartbeat finds dead peers); stalled output does not.
            if c.pending_out() {
                c.out_since + stall
            } else {
                u64::MAX
            }
        } else if c.parked.is_some() {
            u64::MAX
        } else if c.pending_out() {
            c.out_since + req
        } else if c.has_input() || c.spool.is_some() || c.handshaking() {
            c.partial_since.max(1) + req
        } else {
            now + idle
        };
        let d = c.deadline;
        if d < self.next_sweep {
            self.next_sweep = d.max(self.now + SWEEP_GAP_MS);
        }
    }

    /// Closes connections past their deadline and finds the next one.
    fn sweep(&mut self) {
        let now = self.now;
        self.next_sweep = u64::MAX;
        if self.accept_paused_until != 0 {
            if now >= self.accept_paused_until {
                self.accept_paused_until = 0;
                if let Some(l) = self.listener.as_ref() {
                    let _ = self.epoll.add(l, epoll::IN, LISTENER);
                }
            } else {
                self.next_sweep = self.accept_paused_until;
            }
        }
        for i in 0..self.slots.len() {
            let Some(c) = self.slots[i].conn.as_mut() else { continue };
            if c.deadline > now {
                self.next_sweep = self.next_sweep.min(c.deadline);
                continue;
            }
            if c.has_input() && !c.pending_out() {
                // A slow or stalled client: tell it why, without waiting for it to listen.
                let _ = c.send(&[b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"], now);
                self.log.refused(408, "request not received in time");
            } else if c.handshaking() {
                self.log.refused(408, "TLS handshake not finished in time");
            } else if c.pending_out() {
                self.log.refused(0, "client stopped reading");
            }
            self.close(i);
        }
        if self.next_sweep != u64::MAX {
            self.next_sweep = self.next_sweep.max(now + SWEEP_GAP_MS);
        }
    }
}

/// Runs the handler for one complete request (or answers 501 for methods we do not know).
#[allow(clippy::too_many_arguments)]
fn dispatch<H: Handler>(
    head: &Head,
    body: &[u8],
    spooled: Option<&Arc<SpooledBody>>,
    peer: (std::net::IpAddr, bool),
    handler: &mut H,
    res: &mut Response,
    arena: &mut Arena,
    queue: &Arc<Queue<H>>,
    tok: u64,
    log: &mut AccessLog,
) -> Ran<H::Socket> {
    let started = if log.enabled { now_us() } else { 0 };
    let req = Request {
        method: head.method,
        target: head.target,
        path: head.path,
        query: head.query,
        http10: head.http10,
        headers: head.headers,
        body,
        spooled,
        peer: peer.0,
        tls: peer.1,
    };
    let mut parked = None;
    let mut upgrade = None;
    if req.method == Method::Other {
        res.status(501);
        res.body().extend_from_slice(b"Not Implemented\n");
    } else {
        let mut cx = Call { arena, queue, token: tok, parked: false, upgrade: None };
        let flow = handler.handle(&req, res, &mut cx);
        upgrade = cx.upgrade.take();
        if cx.parked {
            parked = Some(Parked {
                method: req.method,
                http10: req.http10,
                keep_alive: head.keep_alive,
                started_us: if started == 0 { now_us() } else { started },
                path: req.path[..req.path.len().min(512)].to_vec(),
            });
        } else if flow == Flow::Parked {
            // A handler bug: it claims to wait for a Parker it never took.
            res.reset();
            res.status(500);
            log.refused(500, "handler returned Parked without parking");
        }
    }
    if parked.is_none() && log.enabled {
        log.request(req.method.as_str(), req.path, res.code(), now_us().saturating_sub(started));
    }
    if upgrade.is_some() && (parked.is_some() || res.code() != 101) {
        // A handler bug: it upgraded and then parked or changed the status.
        upgrade = None;
    }
    Ran { method: req.method, http10: req.http10, keep_alive: head.keep_alive, parked, upgrade }
}

/// After de-chunking in place, parses the head again (its bytes are unchanged) and dispatches
/// with the now contiguous body. None only if the head no longer parses, which cannot happen.
#[allow(clippy::too_many_arguments)]
fn dispatch_dechunked<H: Handler>(
    c: &Conn,
    head_len: usize,
    body_len: usize,
    limits: &Limits,
    handler: &mut H,
    res: &mut Response,
    arena: &mut Arena,
    queue: &Arc<Queue<H>>,
    tok: u64,
    log: &mut AccessLog,
) -> Option<Ran<H::Socket>> {
    let mut headers = [Header::EMPTY; HEADER_SLOTS];
    let data = &c.buf[c.start..];
    let head = parse_head(&data[..head_len], limits, &mut headers).ok()??;
    let body = data.get(head_len..head_len + body_len)?;
    Some(dispatch(&head, body, None, (c.peer, c.tls), handler, res, arena, queue, tok, log))
}

/// Frames `res` and sends it (or queues it behind earlier output).
fn respond(c: &mut Conn, res: &Response, head: &mut Vec<u8>, head_only: bool, http10: bool, keep_alive: bool, now: u64) {
    head.clear();
    res.write_head(head, http10, keep_alive);
    let body = if head_only || bodiless(res.code()) { &b""[..] } else { res.body_bytes() };
    queue_out(c, head, body, now);
    if !keep_alive {
        c.close_after = true;
    }
}

/// Writes `a` then `b` with one writev when nothing is queued before them; whatever the socket
/// does not take is copied to the connection's output buffer.
fn queue_out(c: &mut Conn, a: &[u8], b: &[u8], now: u64) {
    if c.pending_out() || !c.writable {
        if !c.pending_out() {
            c.out_since = now;
        }
        c.out.extend_from_slice(a);
        c.out.extend_from_slice(b);
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
            c.out.extend_from_slice(b);
        } else {
            c.out.extend_from_slice(&b[n - a.len()..]);
        }
    }
}

/// Consumes the frame at the front of `c`'s buffer (frames::Reader::read says what it asks);
/// a finished message (at most `max` bytes) is left in `msg`. A pong's range is in `c.buf`.
fn read_frame(c: &mut Conn, fr: &mut SocketState, msg: &mut Vec<u8>, max: usize) -> Step {
    if fr.closing {
        c.start = c.end;
        return Step::NeedMore;
    }
    let at = c.start;
    let (step, used) = fr.reader.read(&mut c.buf[at..c.end], fr.deflate, msg, max);
    c.start += used;
    match step {
        Step::Pong(r) => Step::Pong(at + r.start..at + r.end),
        other => other,
    }
}

/// Sends a close frame with `code` (once) and closes the connection when output is flushed.
fn ws_close(c: &mut Conn, code: u16, now: u64) {
    let Some(f) = c.ws.as_deref_mut() else { return };
    if f.closing {
        return;
    }
    f.closing = true;
    let mut frame = [0u8; 4];
    frame[0] = 0x80 | frames::OP_CLOSE;
    frame[1] = 2;
    frame[2..].copy_from_slice(&code.to_be_bytes());
    push_frame(c, Arc::from(&frame[..]), now);
    c.close_after = true;
}

/// Queues `frame` on socket `c` after everything before it (a connection that is not a socket
/// has no queue; nothing is sent). Starts the stall clock when output was idle.
fn push_frame(c: &mut Conn, frame: Arc<[u8]>, now: u64) {
    if !c.pending_out() {
        c.out_since = now;
    }
    if let Some(f) = c.ws.as_deref_mut() {
        f.queue.push(frame);
    }
}

/// Reads and throws away what a lingering connection still sends, until the socket is empty
/// (edge-triggered: we must drain it) or the peer closes. Bounded per call so one client cannot
/// hold the loop; the linger deadline ends the rest.
fn discard_input(c: &mut Conn) {
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

/// Sends queued output until it is gone or the socket is full: the response bytes first, then
/// a socket's queued frames.
fn flush(c: &mut Conn, now: u64) {
    if !c.send_tls_pending(now) {
        return;
    }
    while c.out_pos < c.out.len() {
        match transport::writev(&c.fd, c.session.as_mut(), &[&c.out[c.out_pos..]]) {
            Ok(n) => {
                c.out_pos += n;
                c.out_since = now;
                if c.out_pos < c.out.len() {
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
    if c.out.capacity() > OUT_KEEP {
        c.out = Vec::new();
    }
    let Conn { fd, session, ws, .. } = c;
    let Some(f) = ws.as_deref_mut() else { return };
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

/// Whether the request's body is `multipart/form-data` (an upload, which may be spooled).
fn is_multipart(head: &Head) -> bool {
    head.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case(b"content-type") && h.value.get(..19).is_some_and(|v| v.eq_ignore_ascii_case(b"multipart/form-data"))
    })
}
