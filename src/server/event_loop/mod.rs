//! One event loop: an epoll instance watching this loop's listener, its completion doorbell and
//! its connections (edge-triggered; readiness is remembered per connection so a warm keep-alive
//! request costs one read, one writev and one epoll_wait).
//!
//! Timers need no thread: every connection has a deadline, the loop knows the earliest one and
//! uses it as the epoll_wait timeout, then sweeps the slab. A sweep is O(connections) and happens
//! at most every SWEEP_GAP_MS; that is a few microseconds for thousands of connections.
//!
//! This file is the reactor (epoll, accepting, the slab, timers, completions from other
//! threads, the drain) and `advance`, which moves one connection along; beside it, as Redis
//! keeps `ae.c` apart from `networking.c`: `io` (a connection's bytes in and out, through its
//! transport), `intake` (HTTP requests to the handler and responses back) and `framing` (the
//! WebSocket side).

mod framing;
mod intake;
mod io;

use framing::*;
use intake::*;
use io::*;
use super::access_log::AccessLog;
use super::completion::{Done, Queue};
use super::conn::{Conn, Mode, Parked};
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Header fields a request usually has at most (browsers send 10–20); see `next_request`.
const FEW_HEADERS: usize = 32;

const LISTENER: u64 = u64::MAX;
const BELL: u64 = u64::MAX - 1;
/// Size of the read buffer lent to a connection; grown only for large requests.
const READ_CHUNK: usize = 16 * 1024;
/// What a connection keeps of a partial request between reads when it is this small.
const SMALL_BUFFER: usize = 2 * 1024;
/// A connection reads and parses no further requests (or WebSocket frames) while more output
/// than this waits for its client, as nginx and h2o do: a client that pipelines requests and
/// never reads pins one response in progress plus this and its read buffer, and the kernel's
/// receive window holds the rest of what it sends. (At 256 KiB, 1,000 such clients took the
/// server from 5 to 339 MB.)
const OUT_LOW_WATER: usize = 16 * 1024;
/// Over CAMPFIRE_OUT_BUDGET, connections whose output moved within this long are dropped only
/// after those it did not.
const PROGRESS_MS: u64 = 1_000;
/// How long a closing connection's unread input is discarded before the socket is closed.
const LINGER_MS: u64 = 2_000;
/// The loop's own reused buffers (a socket handler's frames, a reassembled message) above this
/// are freed after use.
const OUT_KEEP: usize = 64 * 1024;
/// A connection's output buffer above this is freed once flushed: an idle keep-alive connection
/// must not keep the capacity a blocked response once needed (up to 64 KiB each before).
const CONN_OUT_KEEP: usize = 4 * 1024;
/// A file body is read into the connection's output buffer this much at a time, the buffer
/// reused chunk after chunk (and freed with the last): a download's memory whatever the file's size.
const FILE_CHUNK: usize = 64 * 1024;
/// File body chunks sent to one connection per loop turn (1 MiB), so a download to a client
/// that keeps up with us shares the loop with everyone else (the rest waits on `dirty`).
const FILE_CHUNKS_PER_TURN: usize = 16;
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
/// in the list collect more frames for their one writev. Measured at 1,000 clients (issue 18,
/// messages/s delivered to all): 32 1,555–1,587, 64 1,516–1,537, 128 1,661–1,706, 256
/// 1,250–1,312.
const FLUSH_BATCH: usize = 128;
/// Turns a loop may hold the handler's work (`Loop::wait`) while events keep coming.
const HOLD_TURNS: u32 = 4;
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
    held: Arc<AtomicUsize>,
    out_budget: usize,
}

impl<H: Handler> Setup<H> {
    pub fn new(index: usize, listener: Fd, cfg: &Config, tls: Option<Arc<rustls::ServerConfig>>, held: Arc<AtomicUsize>) -> std::io::Result<Setup<H>> {
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
            held,
            out_budget: cfg.out_budget,
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
            held: self.held,
            out_budget: self.out_budget,
            victims: Vec::new(),
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
            held_turns: 0,
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
    /// Bytes every loop's connections hold for clients not reading (`Conn::held`), and the
    /// most they may (CAMPFIRE_OUT_BUDGET).
    held: Arc<AtomicUsize>,
    out_budget: usize,
    /// (moving, bytes, slot) of the connections `shed` may drop, reused.
    victims: Vec<(bool, std::cmp::Reverse<usize>, usize)>,
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
    /// Tokens of writable sockets with queued frames, in the order they got them, and of
    /// writable connections whose file body paused after its turn's share.
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
    /// Turns the handler's work has been held so far (`wait`).
    held_turns: u32,
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
            let n = self.wait(&mut events, timeout)?;
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

    /// Waits for events. Work the handler holds (jobs for the writer) leaves only when no
    /// event is ready at once, so the requests of a burst join one group, commit together and
    /// cost one hand-over; it leaves at once when output waits (`timeout` 0: the writer's
    /// commits must overlap a fan-out's flushes, or each flush carries fewer messages), and
    /// is never held past `HOLD_TURNS` turns.
    fn wait(&mut self, events: &mut [Event], timeout: i32) -> std::io::Result<usize> {
        if self.handler.holds_work() {
            if timeout != 0 && self.held_turns < HOLD_TURNS {
                let n = self.epoll.wait(events, 0)?;
                if n > 0 {
                    self.held_turns += 1;
                    return Ok(n);
                }
            }
            self.handler.turn_end();
            self.held_turns = 0;
        }
        self.epoll.wait(events, timeout)
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
                        match rustls::server::UnbufferedServerConnection::new(config.clone()) {
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
        debug_assert!(slot.conn.is_none() && slot.socket.is_none(), "a free slot still holds a connection");
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
            debug_assert!(self.live > 0, "closing a connection the count does not hold");
            debug_assert!(!c.is_socket() || self.sockets > 0, "closing a socket the count does not hold");
            // A new generation: tokens (epoll events, parked requests, mail) of the old one no
            // longer reach this slot.
            slot.gen = slot.gen.wrapping_add(1);
            self.free.push(idx as u32);
            self.live -= 1;
            if c.is_socket() {
                self.sockets -= 1;
            }
            if c.counted > 0 {
                self.held.fetch_sub(c.counted, Ordering::Relaxed);
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
            debug_assert!(c.start <= c.end && c.end <= c.buf.len(), "input window outside the buffer");
            debug_assert!(c.out_pos <= c.out.len(), "output cursor past the output");
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
            if c.is_socket() {
                if c.over_low_water(OUT_LOW_WATER) {
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
            // A file body still streaming: the next response must wait behind all of it.
            if c.is_parked() || c.file.is_some() || c.over_low_water(OUT_LOW_WATER) {
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
        self.requeue_file(idx);
    }

    /// A file body that paused with the socket still writable continues on the next turn.
    fn requeue_file(&mut self, idx: usize) {
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let tok = token(idx, slot.gen);
        let Some(c) = slot.conn.as_mut() else { return };
        if c.file.is_some() && c.writable && !c.dead && !c.file_queued {
            c.file_queued = true;
            self.dirty.push_back(tok);
        }
    }

    /// Brings the process's count of held bytes up to date with a connection that now holds
    /// `now` and was counted for `before`; when its growth takes the count over the budget,
    /// sheds. (`update_deadline` calls it whenever the two differ.)
    fn account(&mut self, now: usize, before: usize) {
        if now < before {
            self.held.fetch_sub(before - now, Ordering::Relaxed);
            return;
        }
        let total = self.held.fetch_add(now - before, Ordering::Relaxed) + (now - before);
        if total > self.out_budget {
            self.shed();
        }
    }

    /// The process holds more than CAMPFIRE_OUT_BUDGET for clients that are not reading: drops
    /// this loop's connections holding the most, those whose output made no progress for
    /// PROGRESS_MS first, until the count fits. Runs only when a blocked connection grew, so
    /// it always finds that one; O(connections) per call.
    fn shed(&mut self) {
        let now = self.now;
        let mut victims = std::mem::take(&mut self.victims);
        victims.clear();
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some(c) = slot.conn.as_ref().filter(|c| c.counted > 0) {
                victims.push((now.saturating_sub(c.out_since) < PROGRESS_MS, std::cmp::Reverse(c.counted), i));
            }
        }
        victims.sort_unstable();
        for &(_, _, i) in &victims {
            if self.held.load(Ordering::Relaxed) <= self.out_budget {
                break;
            }
            self.log.refused(0, "over CAMPFIRE_OUT_BUDGET: dropped the client holding the most unsent output");
            self.close(i);
        }
        self.victims = victims;
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
            let Some(p) = c.take_parked() else { continue };
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
            if let Some(c) = self.slots[i].conn.as_mut().filter(|c| c.is_socket()) {
                ws_close(c, 1001, now);
                self.advance(i);
            } else if self.slots[i].conn.as_ref().is_some_and(Conn::idle) {
                self.close(i);
            }
        }
    }

    /// Sets connection `idx`'s deadline from its state, and accounts what it holds.
    fn update_deadline(&mut self, idx: usize) {
        let (now, req, idle, stall) = (self.now, self.request_timeout_ms, self.idle_timeout_ms, self.ws.write_stall_ms);
        let Some(c) = self.conn_mut(idx) else { return };
        c.deadline = if c.lingering {
            c.deadline
        } else if c.is_socket() {
            // Sockets idle forever (the heartbeat finds dead peers); stalled output does not.
            if c.pending_out() {
                c.out_since + stall
            } else {
                u64::MAX
            }
        } else if c.is_parked() {
            u64::MAX
        } else if c.pending_out() {
            c.out_since + req
        } else if c.has_input() || c.is_spooling() || c.handshaking() {
            c.partial_since.max(1) + req
        } else {
            now + idle
        };
        let d = c.deadline;
        let (held, counted) = (c.held(), c.counted);
        if held != counted {
            c.counted = held;
        }
        if d < self.next_sweep {
            self.next_sweep = d.max(self.now + SWEEP_GAP_MS);
        }
        if held != counted {
            self.account(held, counted);
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
