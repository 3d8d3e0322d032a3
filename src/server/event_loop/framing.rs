//! The loop's WebSocket side: starting a socket after its 101, frames in (control frames here,
//! messages to the handler), frames out (queued per socket, flushed in batches), heartbeats.

use super::*;

impl<H: Handler> Loop<H> {
    /// Turns a connection whose 101 is queued into a socket and lets the handler greet it.
    pub(super) fn ws_start(&mut self, idx: usize, state: H::Socket, deflate: bool) {
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let Some(c) = slot.conn.as_mut() else { return };
        c.mode = Mode::Socket(Box::new(SocketState { deflate, ..SocketState::default() }));
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
    pub(super) fn ws_call(&mut self, idx: usize, text: Option<&[u8]>) {
        let now = self.now;
        let Loop { slots, handler, ws_out, mailbox, .. } = self;
        let Some(slot) = slots.get_mut(idx) else { return };
        let deflate = slot.conn.as_ref().and_then(|c| c.socket()).is_some_and(|f| f.deflate);
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
    pub(super) fn next_frame(&mut self, idx: usize) -> Next {
        let now = self.now;
        let max = self.ws.max_message;
        let Loop { slots, ws_msg, log, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        // The frame reader works on the connection's buffer while it updates the socket's
        // state: take the state out for the call.
        let Mode::Socket(mut fr) = std::mem::replace(&mut c.mode, Mode::Requests) else { return Next::NeedMore };
        let step = read_frame(c, &mut fr, ws_msg, max);
        c.mode = Mode::Socket(fr);
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
    pub(super) fn heartbeat(&mut self) {
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
            if c.socket().is_none_or(|f| f.closing) || c.close_after {
                continue;
            }
            self.deliver(i, ping.clone(), false, now);
        }
    }

    /// Queues `frame` for socket `idx` after what it already has (`then_close`: the frame is
    /// the socket's last; a close follows it), dropping the socket if it is a slow consumer.
    /// Nothing is written here: the socket joins the flush list (`flush_dirty`), or waits for
    /// its writable edge when the kernel's buffer is full.
    pub(super) fn deliver(&mut self, idx: usize, frame: Arc<[u8]>, then_close: bool, now: u64) {
        let out_max = self.ws.out_max;
        let Some(slot) = self.slots.get_mut(idx) else { return };
        let tok = token(idx, slot.gen);
        let Some(c) = slot.conn.as_mut() else { return };
        if c.socket().is_none_or(|f| f.closing) || c.close_after {
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
        let Some(f) = c.socket_mut() else { return };
        if f.queue.len() > BACKLOG_FRAMES {
            self.backlogged = true;
        }
        if !writable {
            // Its EPOLLOUT edge flushes it; meanwhile the stall clock runs, and what it holds
            // counts against the budget.
            self.update_deadline(idx);
        } else if !f.dirty {
            f.dirty = true;
            self.dirty.push_back(tok);
        }
    }

    /// Frees the frame queues of sockets with nothing to send (the loop is idle).
    pub(super) fn shrink_queues(&mut self) {
        for slot in &mut self.slots {
            if let Some(f) = slot.conn.as_mut().and_then(|c| c.socket_mut()) {
                f.queue.shrink();
            }
        }
    }

    /// Writes the queues of the sockets on the flush list, oldest first: `FLUSH_BATCH` of them
    /// per loop turn, or all when fan-out is backlogged. Each socket's queue goes out with one
    /// writev, however many frames it holds. A paused file body on the list sends its next
    /// share (and goes back on the list behind the others, so never twice in one turn).
    pub(super) fn flush_dirty(&mut self) {
        let budget = if self.backlogged { usize::MAX } else { FLUSH_BATCH }.min(self.dirty.len());
        let mut flushed = 0;
        while flushed < budget {
            let Some(tok) = self.dirty.pop_front() else { break };
            let idx = (tok & 0xffff_ffff) as usize;
            let gen = (tok >> 32) as u32;
            let Some(slot) = self.slots.get_mut(idx).filter(|s| s.gen == gen) else { continue };
            let Some(c) = slot.conn.as_mut() else { continue };
            match c.socket_mut() {
                Some(f) => f.dirty = false,
                None => c.file_queued = false,
            }
            self.advance(idx);
            flushed += 1;
        }
        if self.dirty.is_empty() {
            self.backlogged = false;
        }
    }
}

/// Consumes the frame at the front of `c`'s buffer (frames::Reader::read says what it asks);
/// a finished message (at most `max` bytes) is left in `msg`. A pong's range is in `c.buf`.
pub(super) fn read_frame(c: &mut Conn, fr: &mut SocketState, msg: &mut Vec<u8>, max: usize) -> Step {
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
pub(super) fn ws_close(c: &mut Conn, code: u16, now: u64) {
    let Some(f) = c.socket_mut() else { return };
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
pub(super) fn push_frame(c: &mut Conn, frame: Arc<[u8]>, now: u64) {
    if !c.pending_out() {
        c.out_since = now;
    }
    if let Some(f) = c.socket_mut() {
        f.queue.push(frame);
    }
}
