//! WebSocket connections on the loops: the handle a handler gets for one socket (`Ws`), the
//! per-connection framing state, and the `Mailbox` through which other threads hand finished
//! frames to a loop.
//!
//! A socket is an ordinary connection of the loop's slab that answered `101`; it stays on the
//! same loop, costs its `Conn`, a small `Framing`, and the handler's `Socket` state, and holds no
//! read buffer while idle. Broadcast frames arrive as shared `Arc<[u8]>` bytes: a loop writes
//! the same bytes to every subscriber and copies them only when a socket's buffer is full.
//! A socket whose unsent output passes `OUT_MAX`, or makes no progress for `WRITE_STALL_MS`,
//! is dropped: a slow consumer must not make the server buffer without bound.

use super::Handler;
use crate::sys::eventfd::EventFd;
use std::sync::{Arc, Mutex};

/// Unsent bytes a socket may accumulate before it is dropped as a slow consumer.
/// Env: CAMPFIRE_WS_OUT_MAX.
pub const OUT_MAX: usize = 1024 * 1024;
/// How long queued output may make no progress before the socket is dropped.
/// Env: CAMPFIRE_WS_WRITE_STALL_MS.
pub const WRITE_STALL_MS: u64 = 15_000;
/// Interval of the handler's heartbeat frame (Action Cable pings every 3 s).
pub const PING_MS: u64 = 3_000;

/// What the loop keeps per socket beyond the `Conn`: a fragmented message being reassembled.
#[derive(Default)]
pub(super) struct SocketState {
    /// Fragments so far of a message whose first frame had no FIN.
    pub partial: Vec<u8>,
    pub in_message: bool,
    /// The message being reassembled is compressed (its first frame had RSV1).
    pub compressed: bool,
    /// permessage-deflate was negotiated for this socket.
    pub deflate: bool,
    /// A close frame was sent: no more frames go out, input is ignored.
    pub closing: bool,
}

/// One frame (or close order) for one socket, queued from any thread.
pub struct Mail {
    pub token: u64,
    /// A complete server frame.
    pub frame: Arc<[u8]>,
    /// Close the socket once this frame is sent.
    pub then_close: bool,
}

/// A loop's inbox for socket output made on other threads. Cheap to clone (an `Arc`).
pub struct Mailbox {
    items: Mutex<Vec<Mail>>,
    bell: Arc<EventFd>,
}

impl Mailbox {
    /// A mailbox whose posts ring `bell` (each loop makes one around its own doorbell).
    pub fn new(bell: Arc<EventFd>) -> Mailbox {
        Mailbox { items: Mutex::new(Vec::new()), bell }
    }

    /// Queues every mail of `mails` (emptying it) and wakes the loop once.
    pub fn post(&self, mails: &mut Vec<Mail>) {
        if mails.is_empty() {
            return;
        }
        if let Ok(mut items) = self.items.lock() {
            items.append(mails);
        }
        self.bell.ring();
    }

    /// Swaps the queued mails into `into` (which the loop keeps empty between calls).
    pub fn take(&self, into: &mut Vec<Mail>) {
        if let Ok(mut items) = self.items.lock() {
            std::mem::swap(&mut *items, into);
        }
    }
}

/// Where a socket lives: its loop's mailbox and its slab token (generation-tagged, so mail for
/// a socket that has closed, even if its slot was reused, is dropped).
#[derive(Clone)]
pub struct Address {
    pub mailbox: Arc<Mailbox>,
    pub token: u64,
    /// The socket takes compressed frames (permessage-deflate); it also takes plain ones.
    pub deflate: bool,
}

impl Address {
    /// Whether two addresses name the same loop.
    pub fn same_loop(&self, other: &Address) -> bool {
        Arc::ptr_eq(&self.mailbox, &other.mailbox)
    }
}

/// The handler's view of one socket during `ws_open` / `ws_text`.
pub struct Ws<'a, H: Handler> {
    /// The handler's state for this socket (given to `Call::upgrade`).
    pub state: &'a mut H::Socket,
    /// Frames to send, concatenated (a loop-owned buffer, reused).
    pub(super) out: &'a mut Vec<u8>,
    pub(super) close: &'a mut bool,
    pub(super) address: Address,
}

impl<H: Handler> Ws<'_, H> {
    /// Sends a text frame holding `payload` (after whatever was sent before).
    pub fn send_text(&mut self, payload: &[u8]) {
        crate::http::websocket::write_frame(crate::http::websocket::OP_TEXT, payload, self.out);
    }

    /// Closes the socket (close frame 1000) after the frames already sent.
    pub fn close(&mut self) {
        *self.close = true;
    }

    /// This socket's address, for other threads and loops to send it frames.
    pub fn address(&self) -> &Address {
        &self.address
    }
}
