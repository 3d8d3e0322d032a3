//! WebSocket connections on the loops: the handle a handler gets for one socket (`Ws`), the
//! per-connection framing state and outbound queue, and the `Mailbox` through which other
//! threads hand finished frames to a loop.
//!
//! A socket is an ordinary connection of the loop's slab that answered `101`; it stays on the
//! same loop, costs its `Conn`, a small `SocketState`, and the handler's `Socket` state, and
//! holds no read buffer while idle. Everything a socket sends after its 101 goes through its
//! `FrameQueue`: shared `Arc<[u8]>` frames, never copied per socket. A broadcast frame is built
//! once and the same bytes sit in every subscriber's queue; the loop writes each socket's whole
//! queue with one `writev` (one iovec per frame), so under load many messages share a syscall.
//! A socket whose unsent output passes `WsLimits::out_max`, or makes no progress for `write_stall_ms`,
//! is dropped: a slow consumer must not make the server buffer without bound.

use super::Handler;
use crate::sys::eventfd::EventFd;
use crate::sys::net;
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::sync::{Arc, Mutex};

/// Interval of the handler's heartbeat frame (Action Cable pings every 3 s).
pub const PING_MS: u64 = 3_000;

/// Frames waiting to go out on one socket, in order. The bytes are shared with every other
/// socket the same frame went to.
#[derive(Default)]
pub(super) struct FrameQueue {
    frames: VecDeque<Arc<[u8]>>,
    /// Bytes of the first frame already written.
    sent: usize,
    /// Unsent bytes in the queue.
    unsent: usize,
}

/// What became of a `FrameQueue::write`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Wrote {
    /// The queue is empty.
    All,
    /// The socket is full: wait for it to become writable.
    Blocked,
    /// The socket failed; close it.
    Failed,
}

impl FrameQueue {
    pub fn push(&mut self, frame: Arc<[u8]>) {
        self.unsent += frame.len();
        self.frames.push_back(frame);
    }

    pub fn unsent(&self) -> usize {
        self.unsent
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    /// Writes as much of the queue as `writev` (the connection's transport) takes, up to
    /// `net::WRITEV_MAX` frames per call. `progress` is set when any byte went out.
    pub fn write(&mut self, mut writev: impl FnMut(&[&[u8]]) -> std::io::Result<usize>, progress: &mut bool) -> Wrote {
        while self.unsent > 0 {
            let mut parts: [&[u8]; net::WRITEV_MAX] = [&[]; net::WRITEV_MAX];
            let mut offered = 0;
            for (i, (p, f)) in parts.iter_mut().zip(self.frames.iter()).enumerate() {
                *p = if i == 0 { f.get(self.sent..).unwrap_or_default() } else { f };
                offered += p.len();
            }
            let n = match writev(&parts) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Wrote::Blocked,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return Wrote::Failed,
            };
            if n > 0 {
                *progress = true;
            }
            self.consume(n);
            if n < offered {
                return Wrote::Blocked;
            }
        }
        Wrote::All
    }

    /// Gives an empty queue's memory back. Only once the loop is idle: freed after every write,
    /// a socket under fan-out regrew its queue (a malloc and three reallocs) for each writev.
    pub fn shrink(&mut self) {
        if self.frames.is_empty() {
            self.frames = VecDeque::new();
        }
    }

    /// Forgets the first `n` unsent bytes (they were written).
    fn consume(&mut self, mut n: usize) {
        self.unsent -= n.min(self.unsent);
        while let Some(f) = self.frames.front() {
            let left = f.len() - self.sent.min(f.len());
            if n < left {
                self.sent += n;
                return;
            }
            n -= left;
            self.sent = 0;
            self.frames.pop_front();
        }
    }
}

/// What the loop keeps per socket beyond the `Conn`: its outbound queue and the reader of its
/// client's frames.
#[derive(Default)]
pub(super) struct SocketState {
    pub queue: FrameQueue,
    /// The socket is on the loop's list of sockets to flush.
    pub dirty: bool,
    /// Reassembles and checks the client's messages.
    pub reader: crate::http::websocket::Reader,
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

    /// Queues every mail of `mails` (emptying it) and wakes the loop, unless mail is already
    /// waiting: then the loop has been rung and has not taken it yet, and will take this too
    /// (it drains the bell before it takes the mail). A busy room's posts so cost one ring per
    /// loop turn, not one per broadcast.
    pub fn post(&self, mails: &mut Vec<Mail>) {
        if mails.is_empty() {
            return;
        }
        let mut was_empty = true;
        if let Ok(mut items) = self.items.lock() {
            was_empty = items.is_empty();
            items.append(mails);
        }
        if was_empty {
            self.bell.ring();
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::{AsFd, IntoRawFd};
    use crate::sys::Fd;

    fn pair() -> (Fd, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        a.set_nonblocking(true).unwrap();
        // Small fixed buffers, so a few MB of frames must fill the connection.
        for end in [a.as_fd(), b.as_fd()] {
            net::set_buffers(end, 64 * 1024).unwrap();
        }
        (Fd::from_raw(a.into_raw_fd()), b)
    }

    #[test]
    fn a_mailbox_rings_once_until_its_mail_is_taken() {
        let bell = Arc::new(EventFd::new().unwrap());
        let mailbox = Mailbox::new(Arc::clone(&bell));
        let mail = |token| Mail { token, frame: Arc::from(&b"x"[..]), then_close: false };
        mailbox.post(&mut vec![mail(1)]);
        mailbox.post(&mut vec![mail(2), mail(3)]);
        assert_eq!(bell.drain(), 1, "mail already waiting needs no second ring");
        let mut taken = Vec::new();
        mailbox.take(&mut taken);
        assert_eq!(taken.iter().map(|m| m.token).collect::<Vec<_>>(), [1, 2, 3]);
        mailbox.post(&mut vec![mail(4)]);
        assert_eq!(bell.drain(), 1, "after the take, the next post rings again");
    }

    #[test]
    fn consume_walks_across_frames() {
        let mut q = FrameQueue::default();
        for f in [&b"abc"[..], b"de", b"fghij"] {
            q.push(Arc::from(f));
        }
        assert_eq!((q.len(), q.unsent()), (3, 10));
        q.consume(2);
        assert_eq!((q.len(), q.sent, q.unsent()), (3, 2, 8));
        q.consume(4);
        assert_eq!((q.len(), q.sent, q.unsent()), (1, 1, 4));
        q.consume(4);
        assert_eq!((q.len(), q.sent, q.unsent()), (0, 0, 0));
    }

    #[test]
    fn shared_frames_reach_the_socket_whole_and_in_order_through_a_full_buffer() {
        let (fd, mut peer) = pair();
        // Frames of distinct bytes, shared with a second queue as a broadcast would be.
        let frames: Vec<Arc<[u8]>> = (0..100u8).map(|i| Arc::from(vec![i; 40_000 + i as usize * 7])).collect();
        let mut q = FrameQueue::default();
        let mut other = FrameQueue::default();
        for f in &frames {
            q.push(f.clone());
            other.push(f.clone());
        }
        assert!(Arc::ptr_eq(&q.frames[0], &other.frames[0]), "no per-socket copy");
        let want: Vec<u8> = frames.iter().flat_map(|f| f.iter().copied()).collect();
        let mut got = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut blocked = 0;
        loop {
            let mut progress = false;
            match q.write(|p| net::writev(&fd, p), &mut progress) {
                Wrote::All => break,
                Wrote::Blocked => blocked += 1,
                Wrote::Failed => panic!("write failed"),
            }
            let n = peer.read(&mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert!(blocked > 0, "4 MB must fill a loopback socket at least once");
        assert_eq!(q.unsent(), 0);
        drop(fd);
        peer.read_to_end(&mut got).unwrap();
        assert!(got == want, "bytes differ (got {}, want {})", got.len(), want.len());
    }

    #[test]
    fn a_closed_peer_fails_the_write() {
        let (fd, peer) = pair();
        drop(peer);
        let mut q = FrameQueue::default();
        let mut outcome = Wrote::All;
        // The first write may still be accepted before the reset arrives.
        for _ in 0..50 {
            q.push(Arc::from(vec![1u8; 100_000]));
            outcome = q.write(|p| net::writev(&fd, p), &mut false);
            if outcome == Wrote::Failed {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(outcome, Wrote::Failed);
    }
}
