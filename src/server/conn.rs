//! One client connection's state, as the loop keeps it in its slab.
//!
//! Input: `buf[start..end]` holds bytes read but not yet consumed. An idle connection holds no
//! buffer at all (the loop lends it one for each read and takes it back when everything was
//! consumed), so thousands of idle keep-alive connections cost a few hundred bytes each.
//! Output: `out[out_pos..]` holds response bytes the socket would not take yet, then `tail`
//! from `tail_pos` (the rest of a cached or embedded body, kept by reference); a WebSocket's
//! frames wait after them in its own queue of shared frames (`Mode::Socket`'s `queue`); a file
//! body (a blob download) waits in `file` and is read into `out` a chunk at a time as it drains.

use super::websocket::SocketState;
use crate::http::response::{FileBody, Kept};
use crate::http::spool::Spool;
use crate::http::Method;
use crate::sys::Fd;
use std::net::IpAddr;

/// What the loop must remember about a request whose handler parked, to frame and log its
/// response when it is resumed.
pub(super) struct Parked {
    pub method: Method,
    pub http10: bool,
    pub keep_alive: bool,
    pub started_us: u64,
    pub path: Vec<u8>,
}

pub(super) struct Conn {
    pub fd: Fd,
    pub peer: IpAddr,
    /// The connection is this server's own TLS (requests on it are HTTPS).
    pub tls: bool,
    /// Its rustls session when `tls` (see `transport`).
    pub session: Option<super::transport::Session>,
    /// Fully initialised (len is the usable size); empty when the connection holds no buffer.
    pub buf: Vec<u8>,
    pub start: usize,
    pub end: usize,
    pub out: Vec<u8>,
    pub out_pos: usize,
    /// A static or shared body whose bytes from `tail_pos` on follow `out[out_pos..]` (None
    /// once they are all sent).
    pub tail: Option<Kept>,
    pub tail_pos: usize,
    /// The rest of a file body, sent after `out` (boxed: most connections never have one).
    pub file: Option<Box<FileBody>>,
    /// The file body waits on the loop's flush list for its next turn.
    pub file_queued: bool,
    /// Edge-triggered readiness we have not used up yet.
    pub readable: bool,
    pub writable: bool,
    /// The peer closed its sending side (or announced it with RDHUP).
    pub eof: bool,
    pub rdhup: bool,
    /// A write failed; close at the next chance.
    pub dead: bool,
    /// The last response is queued: close once `out` is flushed, read no further requests.
    pub close_after: bool,
    /// Our side is shut down after the last response; unread input is discarded until the peer
    /// closes or `deadline`. Closing outright with unread input would send a reset that can
    /// destroy the response before the client reads it (think of a 413 sent mid-upload).
    pub lingering: bool,
    /// `100 Continue` already sent for the request in progress.
    pub continue_sent: bool,
    /// What the connection is doing: its modes exclude each other by construction.
    pub mode: Mode,
    /// When the first byte of the request in progress arrived (ms; 0 = none in progress).
    pub partial_since: u64,
    /// When output last made progress (ms), for the stalled-reader timeout.
    pub out_since: u64,
    /// When this connection times out (ms, monotonic; u64::MAX = never).
    pub deadline: u64,
    /// What this connection adds to the process's count of held bytes (`held` when the loop
    /// last looked; CAMPFIRE_OUT_BUDGET).
    pub counted: usize,
}

/// What a connection is doing beside reading and writing bytes.
pub(super) enum Mode {
    /// Reading requests and answering them, in order.
    Requests,
    /// A large upload's body being written to disk (its head is kept in the spool).
    Spooling(Box<Spool>),
    /// The request's handler parked; its response is filled from another thread.
    Parked(Parked),
    /// A WebSocket, from its 101 on.
    Socket(Box<SocketState>),
}

impl Conn {
    pub fn new(fd: Fd, peer: IpAddr) -> Conn {
        Conn {
            fd,
            peer,
            tls: false,
            session: None,
            buf: Vec::new(),
            start: 0,
            end: 0,
            out: Vec::new(),
            out_pos: 0,
            tail: None,
            tail_pos: 0,
            file: None,
            file_queued: false,
            readable: false,
            writable: true,
            eof: false,
            rdhup: false,
            dead: false,
            close_after: false,
            lingering: false,
            continue_sent: false,
            mode: Mode::Requests,
            partial_since: 0,
            out_since: 0,
            deadline: u64::MAX,
            counted: 0,
        }
    }

    pub fn is_socket(&self) -> bool {
        matches!(self.mode, Mode::Socket(_))
    }

    pub fn socket(&self) -> Option<&SocketState> {
        match &self.mode {
            Mode::Socket(s) => Some(s),
            _ => None,
        }
    }

    pub fn socket_mut(&mut self) -> Option<&mut SocketState> {
        match &mut self.mode {
            Mode::Socket(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_parked(&self) -> bool {
        matches!(self.mode, Mode::Parked(_))
    }

    /// The parked request's record, leaving the connection reading requests again.
    pub fn take_parked(&mut self) -> Option<Parked> {
        match std::mem::replace(&mut self.mode, Mode::Requests) {
            Mode::Parked(p) => Some(p),
            other => {
                self.mode = other;
                None
            }
        }
    }

    pub fn is_spooling(&self) -> bool {
        matches!(self.mode, Mode::Spooling(_))
    }

    /// The finished (or failed) upload's spool, leaving the connection reading requests again.
    pub fn take_spool(&mut self) -> Option<Box<Spool>> {
        match std::mem::replace(&mut self.mode, Mode::Requests) {
            Mode::Spooling(sp) => Some(sp),
            other => {
                self.mode = other;
                None
            }
        }
    }

    /// Output is waiting: response bytes, the rest of a file body, queued WebSocket frames, or
    /// TLS records.
    pub fn pending_out(&self) -> bool {
        // A tail is dropped once sent, so its presence means bytes left; so is a file body.
        self.out_pos < self.out.len() || self.tail.is_some() || self.file.is_some() || self.socket().is_some_and(|w| w.queue.unsent() > 0) || self.tls_pending()
    }

    /// More than `low` bytes wait, or TLS records do: read and parse nothing more for now.
    /// (Checked before every request: the common case, nothing queued, costs a few compares.)
    pub fn over_low_water(&self, low: usize) -> bool {
        let queued = self.out.len() - self.out_pos;
        if queued == 0 && self.tail.is_none() && self.session.is_none() && !self.is_socket() {
            return false;
        }
        self.unsent() > low || self.tls_pending()
    }

    /// Bytes of `tail` not sent yet.
    pub fn tail_left(&self) -> usize {
        self.tail.as_ref().map_or(0, |t| t.bytes().len() - self.tail_pos)
    }

    /// Bytes waiting to be sent.
    pub fn unsent(&self) -> usize {
        self.out.len() - self.out_pos + self.tail_left() + self.socket().map_or(0, |w| w.queue.unsent())
    }

    /// Bytes pinned for a client that is not taking its output: while the socket is full, the
    /// unsent output and the input buffer the connection stopped reading into. A socket whose
    /// frames merely wait for this turn's flush holds nothing yet.
    pub fn held(&self) -> usize {
        if self.writable || !self.pending_out() {
            return 0;
        }
        self.unsent() + self.buf.len()
    }

    pub fn has_input(&self) -> bool {
        self.start < self.end
    }

    /// Idle: nothing read, nothing to write, nothing parked.
    pub fn idle(&self) -> bool {
        !self.has_input() && !self.pending_out() && !self.is_parked() && !self.is_spooling()
    }
}
