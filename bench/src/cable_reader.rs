//! The receiving side of the cable workload (workloads.md §7): a few threads, each watching its
//! share of the clients' sockets with epoll, reading up to 256 KiB per call and scanning the
//! frames in place. Nothing is allocated per frame: a client keeps only the tail of a frame
//! that a read cut in half, and the receipt time of each marker in a vector indexed by the
//! marker's sequence number. The generator must cost far less than the server it measures.

use crate::sys::epoll::Epoll;
use crate::sys::find_byte;
use crate::ws::{self, Inflater, Socket};
use std::collections::HashMap;
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// Bytes one read may bring in.
const READ_MAX: usize = 256 * 1024;
/// Largest marker number recorded (a bound on the receipts vector, against a corrupt frame).
const MARKER_MAX: u64 = 50_000_000;

/// Counters the readers share with the driver.
#[derive(Default)]
pub struct Tally {
    pub stop: AtomicBool,
    /// Clients that got every `confirm_subscription`.
    pub ready: AtomicUsize,
    pub rejected: AtomicUsize,
    /// Distinct (client, marker) receipts.
    pub receipts: AtomicU64,
    /// Complete messages received.
    pub frames: AtomicU64,
    /// Frame bytes received (headers included).
    pub wire: AtomicU64,
}

/// One client's receiving state.
pub struct Client {
    /// The connection (non-blocking once the readers have it; pongs are a few bytes).
    socket: Socket,
    /// The start of a frame the last read cut short.
    rest: Vec<u8>,
    /// A fragmented message being reassembled (our server never fragments; kept for others).
    partial: Vec<u8>,
    partial_compressed: bool,
    inflater: Option<Inflater>,
    subs: usize,
    confirmed: usize,
    open: bool,
    /// `receipts[n]`: when marker `n` first arrived, µs after the run's start + 1; 0 = never.
    receipts: Vec<u32>,
}

/// A reader thread's reusable memory: the read buffer, and the last `MEMO` compressed messages it
/// inflated. With no context takeover a compressed message's text depends on its bytes alone,
/// and every client of a broadcast gets the same bytes: a byte-for-byte repeat reuses the text
/// (then scanned as usual) instead of inflating it again, as the HTTP validator accepts
/// byte-identical repeats.
#[derive(Default)]
pub struct Scratch {
    buf: Vec<u8>,
    /// (compressed payload, its text), replaced round-robin.
    inflated: Vec<(Vec<u8>, Vec<u8>)>,
    /// Slot of each remembered payload, by a hash of its bytes.
    slots: HashMap<u64, usize>,
    next: usize,
}

/// Compressed messages remembered per reader: more than a backlogged socket's read brings, so
/// the next socket's read of the same broadcasts finds them all.
const MEMO: usize = 512;

/// FNV-1a over the payload's bytes, eight at a time (collisions are ruled out by comparing).
fn hash(data: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ data.len() as u64;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])).wrapping_mul(0x100_0000_01b3);
    }
    for &b in words.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

impl Scratch {
    /// The text of compressed `data`, inflating it with `inf` unless it is a repeat.
    fn text(&mut self, data: &[u8], inf: &mut Inflater) -> Result<&[u8], String> {
        let key = hash(data);
        if inf.resets() {
            if let Some(&i) = self.slots.get(&key).filter(|&&i| self.inflated.get(i).is_some_and(|(c, _)| c[..] == *data)) {
                return Ok(&self.inflated[i].1);
            }
        }
        let i = if self.inflated.len() < MEMO {
            self.inflated.push((Vec::new(), Vec::new()));
            self.inflated.len() - 1
        } else {
            self.next = (self.next + 1) % MEMO;
            self.next
        };
        let (c, t) = &mut self.inflated[i];
        if !c.is_empty() {
            self.slots.remove(&hash(c));
        }
        inf.inflate(data, t)?;
        c.clear();
        if inf.resets() {
            c.extend_from_slice(data);
            self.slots.insert(key, i);
        }
        Ok(t)
    }
}

/// What a reader counted during one wake, added to the shared tally once.
#[derive(Default)]
struct Counts {
    frames: u64,
    receipts: u64,
    wire: u64,
    ready: usize,
    rejected: usize,
}

impl Client {
    /// Takes over a connected socket that sent `subs` subscribe commands. The socket is made
    /// non-blocking; bytes already read past the handshake are kept.
    pub fn new(mut socket: Socket, subs: usize) -> Result<Client, String> {
        socket.stream.tcp().set_nonblocking(true).map_err(|e| e.to_string())?;
        let rest = std::mem::take(&mut socket.buf);
        let inflater = socket.deflate.take();
        Ok(Client {
            rest,
            partial: Vec::new(),
            partial_compressed: false,
            inflater,
            subs,
            confirmed: 0,
            open: true,
            receipts: Vec::new(),
            socket,
        })
    }

    /// Whether every subscription was confirmed.
    pub fn ready(&self) -> bool {
        self.confirmed == self.subs
    }

    /// When marker `n` first reached this client, in µs after the run's start.
    pub fn receipt_us(&self, n: u64) -> Option<u64> {
        let at = *self.receipts.get(usize::try_from(n).ok()?)?;
        (at > 0).then(|| at as u64 - 1)
    }

    /// Reads once and handles every complete frame. False when the socket is finished.
    fn read_some(&mut self, sc: &mut Scratch, t0: Instant, n: &mut Counts) -> bool {
        let mut buf = std::mem::take(&mut sc.buf);
        let ok = self.read_into(&mut buf, sc, t0, n);
        sc.buf = buf;
        ok
    }

    fn read_into(&mut self, buf: &mut Vec<u8>, sc: &mut Scratch, t0: Instant, n: &mut Counts) -> bool {
        let keep = self.rest.len();
        if buf.len() < keep + READ_MAX {
            buf.resize(keep + READ_MAX, 0);
        }
        buf[..keep].copy_from_slice(&self.rest);
        self.rest.clear();
        let got = match self.socket.stream.read_nonblocking(&mut buf[keep..]) {
            Ok(0) => return false,
            Ok(k) => k,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                self.rest.extend_from_slice(&buf[..keep]);
                return true;
            }
            Err(_) => return false,
        };
        let at = (t0.elapsed().as_micros() as u64).min(u32::MAX as u64 - 1) as u32 + 1;
        let data = &buf[..keep + got];
        let mut pos = 0;
        while let Some(rest) = data.get(pos..) {
            let h = match ws::head(rest) {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(e) => {
                    eprintln!("cable client: {e}");
                    return false;
                }
            };
            n.wire += h.used as u64;
            let payload = &rest[h.payload.clone()];
            pos += h.used;
            if !self.frame(&h, payload, at, sc, n) {
                return false;
            }
        }
        self.rest.extend_from_slice(&data[pos.min(data.len())..]);
        true
    }

    /// Handles one frame. False when the socket is finished.
    fn frame(&mut self, h: &ws::Head, payload: &[u8], at: u32, sc: &mut Scratch, n: &mut Counts) -> bool {
        match h.opcode {
            0x9 => self.socket.send(0xA, payload).is_ok(),
            0xA => true,
            0x8 => false,
            0x1 | 0x2 if h.fin && self.partial.is_empty() => {
                if h.opcode == 0x1 {
                    self.message(payload, h.rsv1, at, sc, n)
                } else {
                    n.frames += 1;
                    true
                }
            }
            0x0..=0x2 => {
                if h.opcode != 0 {
                    self.partial.clear();
                    self.partial.push(h.opcode);
                    self.partial_compressed = h.rsv1;
                }
                self.partial.extend_from_slice(payload);
                if !h.fin {
                    return true;
                }
                let whole = std::mem::take(&mut self.partial);
                let ok = match whole.split_first() {
                    Some((1, text)) => self.message(text, self.partial_compressed, at, sc, n),
                    _ => {
                        n.frames += 1;
                        true
                    }
                };
                self.partial = whole;
                self.partial.clear();
                ok
            }
            other => {
                eprintln!("cable client: opcode {other}");
                false
            }
        }
    }

    /// One complete text message: confirmations until ready, then markers.
    fn message(&mut self, data: &[u8], compressed: bool, at: u32, sc: &mut Scratch, n: &mut Counts) -> bool {
        let text = if compressed {
            let Some(inf) = self.inflater.as_mut() else {
                eprintln!("cable client: compressed frame without permessage-deflate");
                return false;
            };
            match sc.text(data, inf) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("cable client: {e}");
                    return false;
                }
            }
        } else {
            data
        };
        n.frames += 1;
        if self.confirmed < self.subs {
            if contains(text, b"\"confirm_subscription\"") {
                self.confirmed += 1;
                if self.confirmed == self.subs {
                    n.ready += 1;
                }
            } else if contains(text, b"\"reject_subscription\"") {
                n.rejected += 1;
            }
        }
        let receipts = &mut self.receipts;
        scan_markers(text, |m| {
            if m > MARKER_MAX {
                return;
            }
            let i = m as usize;
            if receipts.len() <= i {
                receipts.resize(i + 1024, 0);
            }
            if receipts[i] == 0 {
                receipts[i] = at;
                n.receipts += 1;
            }
        });
        true
    }
}

/// Serves `clients` until `tally.stop` is set or every socket has closed. Run one per thread,
/// each on its own share of the clients.
pub fn read_loop(clients: &mut [Client], t0: Instant, tally: &Tally) {
    let ep = match Epoll::new() {
        Ok(ep) => ep,
        Err(e) => {
            eprintln!("cable reader: {e}");
            return;
        }
    };
    let mut open = 0;
    for (i, c) in clients.iter_mut().enumerate() {
        if ep.add(c.socket.stream.tcp().as_raw_fd(), i as u64).is_ok() {
            open += 1;
        } else {
            c.open = false;
        }
    }
    let mut sc = Scratch::default();
    let mut keys = Vec::with_capacity(256);
    // Bytes kept from the handshake may already hold whole frames.
    let mut n = Counts::default();
    for c in clients.iter_mut() {
        let rest = std::mem::take(&mut c.rest);
        if !rest.is_empty() {
            c.rest = rest;
            let _ = c.read_some(&mut sc, t0, &mut n);
        }
    }
    while open > 0 && !tally.stop.load(Ordering::Relaxed) {
        ep.wait(&mut keys, 100);
        for &k in &keys {
            let Some(c) = clients.get_mut(k as usize) else { continue };
            if c.open && !c.read_some(&mut sc, t0, &mut n) {
                ep.remove(c.socket.stream.tcp().as_raw_fd());
                c.open = false;
                open -= 1;
            }
        }
        add(tally, &mut n);
    }
    add(tally, &mut n);
    // The server sees every client leave now, not when the report is done with them (a clone of
    // each socket for this would double the descriptors: 10,000 clients must fit 20,000).
    for c in clients.iter() {
        let _ = c.socket.stream.tcp().shutdown(std::net::Shutdown::Both);
    }
}

fn add(tally: &Tally, n: &mut Counts) {
    if n.frames > 0 {
        tally.frames.fetch_add(n.frames, Ordering::Relaxed);
    }
    if n.receipts > 0 {
        tally.receipts.fetch_add(n.receipts, Ordering::Relaxed);
    }
    if n.wire > 0 {
        tally.wire.fetch_add(n.wire, Ordering::Relaxed);
    }
    if n.ready > 0 {
        tally.ready.fetch_add(n.ready, Ordering::Relaxed);
    }
    if n.rejected > 0 {
        tally.rejected.fetch_add(n.rejected, Ordering::Relaxed);
    }
    *n = Counts::default();
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Calls `found` with the number of every `bmk<digits>z` marker in `text`, in order.
pub fn scan_markers(text: &[u8], mut found: impl FnMut(u64)) {
    // Every marker holds a 'k' preceded by "bm": find the 'k's 16 bytes at a time.
    let mut from = 0;
    while let Some(k) = find_byte(text, from, b'k') {
        from = k + 1;
        if k < 2 || &text[k - 2..k] != b"bm" {
            continue;
        }
        let mut j = k + 1;
        let mut v: u64 = 0;
        while let Some(d) = text.get(j).filter(|d| d.is_ascii_digit()) {
            v = v.saturating_mul(10).saturating_add((d - b'0') as u64);
            j += 1;
        }
        if j > k + 1 && text.get(j) == Some(&b'z') {
            found(v);
            from = j + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpStream;

    fn markers(text: &[u8]) -> Vec<u64> {
        let mut v = Vec::new();
        scan_markers(text, |m| v.push(m));
        v
    }

    #[test]
    fn finds_markers() {
        assert_eq!(markers(b"<p>fanout bmk12z</p> bmkz bmk3 bmk7z"), vec![12, 7]);
        assert_eq!(markers(b""), Vec::<u64>::new());
        assert_eq!(markers(b"bmkbmk5z"), vec![5]);
        assert_eq!(markers(b"bmk1zbmk2z"), vec![1, 2]);
        assert_eq!(markers(b"kkkkkkkkkkkkkkkkkkkkkkkkbmk9z"), vec![9]);
        assert_eq!(markers(b"bmk123"), Vec::<u64>::new(), "no terminating z");
    }

    #[test]
    fn finds_every_k_at_every_offset() {
        assert_eq!(find_byte(b"abc", 7, b'k'), None, "past the end");
        for len in 0..80 {
            for at in 0..len {
                let mut t = vec![b'a'; len];
                t[at] = b'k';
                assert_eq!(find_byte(&t, 0, b'k'), Some(at));
                assert_eq!(find_byte(&t, at, b'k'), Some(at));
                assert_eq!(find_byte(&t, at + 1, b'k'), None);
                // Bytes that differ from 'k' in one bit must not match.
                t[at] = b'k' ^ 0x80;
                assert_eq!(find_byte(&t, 0, b'k'), None);
            }
        }
    }

    #[test]
    fn a_frame_cut_by_a_read_is_finished_by_the_next() {
        let (a, b) = local_pair();
        let sock = Socket::test_from_stream(a);
        let mut c = Client::new(sock, 1).unwrap();
        let mut frame = vec![0x81, 0];
        let text = br#"{"identifier":"x","type":"confirm_subscription"}"#;
        frame[1] = text.len() as u8;
        frame.extend_from_slice(text);
        let msg = br#"{"identifier":"x","message":"fanout bmk42z"}"#;
        frame.extend_from_slice(&[0x81, msg.len() as u8]);
        frame.extend_from_slice(msg);
        let (first, second) = frame.split_at(frame.len() - 10);
        let t0 = Instant::now();
        let mut buf = Scratch::default();
        let mut n = Counts::default();
        use std::io::Write;
        (&b).write_all(first).unwrap();
        while c.rest.is_empty() && n.frames == 0 {
            assert!(c.read_some(&mut buf, t0, &mut n));
        }
        assert!(c.ready() && n.ready == 1);
        assert!(c.receipt_us(42).is_none());
        (&b).write_all(second).unwrap();
        while n.receipts == 0 {
            assert!(c.read_some(&mut buf, t0, &mut n));
        }
        assert!(c.receipt_us(42).is_some() && c.receipt_us(41).is_none());
        assert_eq!((n.frames, n.wire), (2, frame.len() as u64));
        (&b).write_all(&[0x88, 0x00]).unwrap();
        while c.read_some(&mut buf, t0, &mut n) {}
    }

    /// `text` as a permessage-deflate payload: one stored block, sync-flushed, tail stripped.
    fn stored(text: &[u8]) -> Vec<u8> {
        let len = text.len() as u16;
        let mut p = vec![0x00];
        p.extend_from_slice(&len.to_le_bytes());
        p.extend_from_slice(&(!len).to_le_bytes());
        p.extend_from_slice(text);
        p.push(0x00);
        p
    }

    #[test]
    fn repeated_compressed_messages_are_inflated_once_and_still_scanned() {
        let mut sc = Scratch::default();
        let mut inf = Inflater::test_new(true);
        let a = stored(b"fanout bmk1z");
        let b = stored(b"fanout bmk2z");
        assert_eq!(sc.text(&a, &mut inf).unwrap(), b"fanout bmk1z");
        assert_eq!(sc.text(&b, &mut inf).unwrap(), b"fanout bmk2z");
        assert_eq!(sc.text(&a, &mut inf).unwrap(), b"fanout bmk1z", "a repeat");
        assert_eq!(sc.inflated.len(), 2, "the repeat was not inflated again");
        for i in 3..(MEMO as u32 + 10) {
            let t = format!("fanout bmk{i}z");
            assert_eq!(sc.text(&stored(t.as_bytes()), &mut inf).unwrap(), t.as_bytes());
        }
        assert_eq!((sc.inflated.len(), sc.slots.len()), (MEMO, MEMO), "bounded");
        let t = format!("fanout bmk{}z", MEMO + 9);
        assert_eq!(sc.text(&stored(t.as_bytes()), &mut inf).unwrap(), t.as_bytes());
        assert_eq!(sc.slots.len(), MEMO, "a repeat of a recent one");
        // With context takeover the same bytes may mean something else: nothing is reused.
        let mut sc = Scratch::default();
        let mut keep = Inflater::test_new(false);
        assert_eq!(sc.text(&a, &mut keep).unwrap(), b"fanout bmk1z");
        assert!(sc.inflated.iter().all(|(c, _)| c.is_empty()));
    }

    fn local_pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }
}
