//! One client connection's state, as the loop keeps it in its slab.
//!
//! Input: `buf[start..end]` holds bytes read but not yet consumed. An idle connection holds no
//! buffer at all (the loop lends it one for each read and takes it back when everything was
//! consumed), so thousands of idle keep-alive connections cost a few hundred bytes each.
//! Output: `out[out_pos..]` holds response bytes the socket would not take yet; a WebSocket's
//! frames wait after them in its own queue of shared frames (`Mode::Socket`'s `queue`); a file
//! body (a blob download) waits in `file` and is read into `out` a chunk at a time as it drains.

use super::websocket::SocketState;
use crate::http::response::FileBody;
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
        self.out_pos < self.out.len() || self.file.is_some() || self.socket().is_some_and(|w| w.queue.unsent() > 0) || self.tls_pending()
    }

    /// Bytes waiting to be sent.
    pub fn unsent(&self) -> usize {
        self.out.len() - self.out_pos + self.socket().map_or(0, |w| w.queue.unsent())
    }

    pub fn has_input(&self) -> bool {
        self.start < self.end
    }

    /// Idle: nothing read, nothing to write, nothing parked.
    pub fn idle(&self) -> bool {
        !self.has_input() && !self.pending_out() && !self.is_parked() && !self.is_spooling()
    }
}
