//! WebSocket (RFC 6455) on top of our HTTP/1.1: the upgrade handshake's checks and accept key,
//! frame parsing/writing for the server side, and the `Reader` that turns a client's frames
//! into messages.
//!
//! Only what a server needs: client frames must be masked (unmasked → close 1002), server
//! frames are never masked. Control frames (close, ping, pong) may arrive between the fragments
//! of a message and are at most 125 bytes. Messages larger than the caller's limit are refused
//! with close 1009 before their payload is buffered. Text messages and close reasons must be
//! UTF-8 (close 1007, §8.1); a fragmented text message is checked fragment by fragment, so a
//! bad byte closes the socket when it arrives, not when the message ends.
//!
//! permessage-deflate (RFC 7692) is accepted without context takeover in either direction, so
//! a socket keeps no compression state between messages: a broadcast is compressed once and
//! the same bytes go to every socket that negotiated the extension. Our small frames (pings,
//! confirmations) go out uncompressed, which the extension allows message by message.

use super::Request;
use miniz_oxide::deflate::core::{create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus};
use miniz_oxide::inflate::stream::InflateState;
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
use sha1::{Digest, Sha1};

pub const OP_CONT: u8 = 0x0;
pub const OP_TEXT: u8 = 0x1;
pub const OP_BINARY: u8 = 0x2;
pub const OP_CLOSE: u8 = 0x8;
pub const OP_PING: u8 = 0x9;
pub const OP_PONG: u8 = 0xA;

/// Close codes we send.
pub const CLOSE_NORMAL: u16 = 1000;
pub const CLOSE_PROTOCOL: u16 = 1002;
pub const CLOSE_UNSUPPORTED: u16 = 1003;
pub const CLOSE_INVALID_DATA: u16 = 1007;
pub const CLOSE_TOO_BIG: u16 = 1009;

/// Largest text message (after reassembling fragments) a client may send; beyond it the
/// socket is closed with 1009. Action Cable commands are a few hundred bytes.
/// Env: CAMPFIRE_WS_MAX_MESSAGE.
pub const MAX_MESSAGE: usize = 64 * 1024;

const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// Our `Sec-WebSocket-Extensions` answer when the client offers permessage-deflate.
pub const DEFLATE_RESPONSE: &[u8] = b"permessage-deflate; server_no_context_takeover; client_no_context_takeover";

/// Whether one of the client's `Sec-WebSocket-Extensions` offers is a permessage-deflate we can
/// accept as `DEFLATE_RESPONSE` says: we always compress with a 32 KiB window, so an offer
/// limiting our window (`server_max_window_bits` below 15) or carrying parameters we do not
/// know is passed over.
pub fn deflate_offered(req: &Request) -> bool {
    let Some(value) = req.header(b"sec-websocket-extensions") else { return false };
    value.split(|&b| b == b',').any(|offer| {
        let mut parts = offer.split(|&b| b == b';').map(trim);
        if parts.next() != Some(&b"permessage-deflate"[..]) {
            return false;
        }
        parts.all(|p| {
            let (name, val) = match p.iter().position(|&b| b == b'=') {
                Some(i) => (trim(&p[..i]), trim(&p[i + 1..])),
                None => (p, &b""[..]),
            };
            let val = val.strip_prefix(b"\"").and_then(|v| v.strip_suffix(b"\"")).unwrap_or(val);
            match name {
                b"server_no_context_takeover" | b"client_no_context_takeover" | b"client_max_window_bits" => true,
                b"server_max_window_bits" => val == b"15",
                _ => false,
            }
        })
    })
}

/// Why a handshake request is not a WebSocket upgrade we accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotWebSocket(pub &'static str);

/// Checks that `req` is a version-13 WebSocket upgrade (GET, `Upgrade: websocket`,
/// `Connection` listing `upgrade`, a 16-byte base64 key) and returns the
/// `Sec-WebSocket-Accept` value for it.
pub fn handshake(req: &Request) -> Result<[u8; 28], NotWebSocket> {
    if req.method != super::Method::Get || req.http10 {
        return Err(NotWebSocket("not an HTTP/1.1 GET"));
    }
    let upgrade = req.header(b"upgrade").ok_or(NotWebSocket("no Upgrade header"))?;
    if !has_token(upgrade, b"websocket") {
        return Err(NotWebSocket("Upgrade is not websocket"));
    }
    let connection = req.header(b"connection").ok_or(NotWebSocket("no Connection header"))?;
    if !has_token(connection, b"upgrade") {
        return Err(NotWebSocket("Connection does not say upgrade"));
    }
    if req.header(b"sec-websocket-version").map(trim) != Some(&b"13"[..]) {
        return Err(NotWebSocket("Sec-WebSocket-Version is not 13"));
    }
    let key = req.header(b"sec-websocket-key").map(trim).ok_or(NotWebSocket("no Sec-WebSocket-Key"))?;
    // 16 random bytes in base64 are always 24 characters ending in "==".
    if key.len() != 24 || !key.ends_with(b"==") {
        return Err(NotWebSocket("malformed Sec-WebSocket-Key"));
    }
    Ok(accept_key(key))
}

/// `Sec-WebSocket-Accept` for a client key: base64(SHA-1(key ++ GUID)).
pub fn accept_key(key: &[u8]) -> [u8; 28] {
    let mut h = Sha1::new();
    h.update(key);
    h.update(GUID);
    let digest: [u8; 20] = h.finalize().into();
    let mut out = [b'='; 28];
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    // 20 bytes = 6 full groups of 3 and one group of 2 (one '=' of padding).
    for (g, chunk) in digest.chunks(3).enumerate() {
        let b0 = chunk[0] as u32;
        let b1 = chunk.get(1).copied().unwrap_or(0) as u32;
        let b2 = chunk.get(2).copied().unwrap_or(0) as u32;
        let n = b0 << 16 | b1 << 8 | b2;
        let o = &mut out[g * 4..g * 4 + 4];
        o[0] = A[(n >> 18) as usize & 63];
        o[1] = A[(n >> 12) as usize & 63];
        if chunk.len() > 1 {
            o[2] = A[(n >> 6) as usize & 63];
        }
        if chunk.len() > 2 {
            o[3] = A[n as usize & 63];
        }
    }
    out
}

/// Whether a comma-separated header value lists `token` (ASCII case-insensitive).
pub fn has_token(value: &[u8], token: &[u8]) -> bool {
    value.split(|&b| b == b',').any(|t| trim(t).eq_ignore_ascii_case(token))
}

fn trim(v: &[u8]) -> &[u8] {
    let s = v.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(v.len());
    let e = v.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(s, |p| p + 1);
    &v[s..e.max(s)]
}

/// One parsed client frame. The payload is `buf[payload]` of the buffer given to `parse`,
/// already unmasked in place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub fin: bool,
    pub opcode: u8,
    /// RSV1 on the first frame of a message: its payload is compressed (permessage-deflate).
    pub compressed: bool,
    pub payload: std::ops::Range<usize>,
    /// Bytes of `buf` the frame occupies (header and payload).
    pub len: usize,
}

/// A frame the peer must not send; the socket is closed with this code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    pub code: u16,
    pub why: &'static str,
}

/// Parses the frame at the front of `buf`, unmasking its payload in place. `Ok(None)`: the
/// frame is not complete yet. `max_payload` bounds data frames (control frames are capped at
/// 125 by the RFC); a larger frame is refused with 1009 as soon as its header is seen.
/// `deflate`: permessage-deflate was negotiated, so RSV1 may mark a message's first frame.
pub fn parse(buf: &mut [u8], max_payload: usize, deflate: bool) -> Result<Option<Frame>, Refused> {
    let (Some(&b0), Some(&b1)) = (buf.first(), buf.get(1)) else { return Ok(None) };
    let fin = b0 & 0x80 != 0;
    let opcode = b0 & 0x0f;
    let control = opcode & 0x8 != 0;
    let compressed = b0 & 0x40 != 0;
    if b0 & 0x30 != 0 || (compressed && (!deflate || !matches!(opcode, OP_TEXT | OP_BINARY))) {
        return Err(Refused { code: CLOSE_PROTOCOL, why: "reserved bits set" });
    }
    if !matches!(opcode, OP_CONT | OP_TEXT | OP_BINARY | OP_CLOSE | OP_PING | OP_PONG) {
        return Err(Refused { code: CLOSE_PROTOCOL, why: "unknown opcode" });
    }
    if b1 & 0x80 == 0 {
        return Err(Refused { code: CLOSE_PROTOCOL, why: "unmasked client frame" });
    }
    let (len, mut at) = match b1 & 0x7f {
        126 => match buf.get(2..4) {
            None => return Ok(None),
            Some(b) => (u16::from_be_bytes([b[0], b[1]]) as u64, 4),
        },
        127 => match buf.get(2..10) {
            None => return Ok(None),
            Some(b) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                (u64::from_be_bytes(a), 10)
            }
        },
        n => (n as u64, 2),
    };
    if control && (len > 125 || !fin) {
        return Err(Refused { code: CLOSE_PROTOCOL, why: "oversized or fragmented control frame" });
    }
    // Only data counts against the message limit: a ping between the fragments of a message
    // near the limit is still a ping.
    if !control && len > max_payload as u64 {
        return Err(Refused { code: CLOSE_TOO_BIG, why: "frame larger than the message limit" });
    }
    let len = len as usize;
    let Some(mask) = buf.get(at..at + 4) else { return Ok(None) };
    let mask = [mask[0], mask[1], mask[2], mask[3]];
    at += 4;
    let Some(payload) = buf.get_mut(at..at + len) else { return Ok(None) };
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= mask[i & 3];
    }
    Ok(Some(Frame { fin, opcode, compressed, payload: at..at + len, len: at + len }))
}

/// Appends a whole compressed text frame (RSV1 set) holding `payload`: raw deflate, level 1
/// (broadcasts are HTML and JSON: fast levels get most of the gain), sync-flushed, without
/// the trailing `00 00 ff ff` (RFC 7692 §7.2.1). No context is kept.
pub fn write_deflated_text(payload: &[u8], out: &mut Vec<u8>) {
    thread_local! {
        static COMPRESSOR: std::cell::RefCell<Option<Box<CompressorOxide>>> = const { std::cell::RefCell::new(None) };
    }
    let mut body = Vec::with_capacity(payload.len() / 3 + 16);
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let d = slot.get_or_insert_with(|| Box::new(CompressorOxide::new(create_comp_flags_from_zip_params(1, 0, 0))));
        d.reset();
        let (status, _) = miniz_oxide::deflate::core::compress_to_output(d, payload, TDEFLFlush::Sync, |chunk| {
            body.extend_from_slice(chunk);
            true
        });
        debug_assert!(status == TDEFLStatus::Okay);
    });
    if body.ends_with(&[0, 0, 0xff, 0xff]) {
        body.truncate(body.len() - 4);
    }
    let start = out.len();
    write_head(OP_TEXT, body.len(), out);
    if let Some(first) = out.get_mut(start) {
        *first |= 0x40;
    }
    out.extend_from_slice(&body);
}

/// Appends the header of an unmasked server frame with `fin` set.
pub fn write_head(opcode: u8, len: usize, out: &mut Vec<u8>) {
    head(0x80 | opcode, 0, len, out);
}

/// Appends a whole unmasked server frame.
pub fn write_frame(opcode: u8, payload: &[u8], out: &mut Vec<u8>) {
    write_head(opcode, payload.len(), out);
    out.extend_from_slice(payload);
}

/// Appends a whole masked frame as a client sends it (`fin` clear on all but the last
/// fragment of a message). The server never sends one; the tests and tools that speak to it
/// as a client do.
pub fn write_masked_frame(fin: bool, opcode: u8, mask: [u8; 4], payload: &[u8], out: &mut Vec<u8>) {
    head(if fin { 0x80 } else { 0 } | opcode, 0x80, payload.len(), out);
    out.extend_from_slice(&mask);
    out.extend(payload.iter().zip(mask.iter().cycle()).map(|(b, m)| b ^ m));
}

/// The first byte, then the mask bit and the payload length in its shortest form.
fn head(first: u8, mask_bit: u8, len: usize, out: &mut Vec<u8>) {
    out.push(first);
    if len < 126 {
        out.push(mask_bit | len as u8);
    } else if len <= 0xffff {
        out.push(mask_bit | 126);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(mask_bit | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
}

/// Appends a close frame with `code` (and no reason text).
pub fn write_close(code: u16, out: &mut Vec<u8>) {
    write_frame(OP_CLOSE, &code.to_be_bytes(), out);
}

/// The answer to a client's close frame (RFC 6455 §5.5.1, §7.4): its own status code when it is
/// one an endpoint may send, 1000 when it gave none. A 1-byte payload, or a code that must not
/// appear on the wire (below 1000, 1004–1006, 1015, the unassigned 1016–2999, 5000 and up), is
/// refused with 1002; a reason that is not UTF-8 with 1007.
pub fn close_reply(payload: &[u8]) -> Result<u16, Refused> {
    let (code, reason) = match payload {
        [] => return Ok(CLOSE_NORMAL),
        [_] => return Err(Refused { code: CLOSE_PROTOCOL, why: "1-byte close payload" }),
        [a, b, reason @ ..] => (u16::from_be_bytes([*a, *b]), reason),
    };
    if !matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999) {
        return Err(Refused { code: CLOSE_PROTOCOL, why: "invalid close code" });
    }
    if std::str::from_utf8(reason).is_err() {
        return Err(Refused { code: CLOSE_INVALID_DATA, why: "close reason is not UTF-8" });
    }
    Ok(code)
}

/// What one client frame asks of the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// No complete frame is buffered yet.
    NeedMore,
    /// A control frame or a fragment that needs nothing more.
    Nothing,
    /// A complete message is in the caller's message buffer (text: valid UTF-8).
    Message,
    /// Answer a ping whose payload is `buf[range]` with a pong.
    Pong(std::ops::Range<usize>),
    /// Close with this code. `why` is set for a protocol error (worth a log line) and None
    /// when the peer closed.
    Close(u16, Option<&'static str>),
}

/// A client's frames turned into messages: fragments reassembled, compressed messages inflated,
/// text checked as UTF-8 as it arrives, control frames answered. One per socket; it holds
/// memory only while a fragmented message is in progress.
#[derive(Default)]
pub struct Reader {
    /// Fragments so far (inflated, when compressed) of a message whose first frame had no FIN.
    partial: Vec<u8>,
    in_message: bool,
    /// The message in progress is text.
    text: bool,
    /// Bytes at the front of `partial` known to be whole, valid UTF-8 characters.
    checked: usize,
    /// The inflater of a compressed message in fragments. A message in one frame uses the
    /// thread's instead: most sockets never hold one.
    inflater: Option<Box<InflateState>>,
}

/// What the sender of a compressed message removed from its end (RFC 7692 §7.2.1).
const SYNC_TAIL: [u8; 4] = [0, 0, 0xff, 0xff];

impl Reader {
    /// Consumes the frame at the front of `buf` (unmasking it in place) and says what it asks
    /// for and how many bytes of `buf` it used (none for `NeedMore` and refusals). A finished
    /// message, at most `max` bytes after inflating, is left in `msg`. `deflate`:
    /// permessage-deflate was negotiated. After a `Close` the caller reads no further.
    pub fn read(&mut self, buf: &mut [u8], deflate: bool, msg: &mut Vec<u8>, max: usize) -> (Step, usize) {
        let room = max.saturating_sub(self.partial.len());
        let frame = match parse(buf, room, deflate) {
            Ok(None) => return (Step::NeedMore, 0),
            Ok(Some(f)) => f,
            Err(e) => return (Step::Close(e.code, Some(e.why)), 0),
        };
        let payload = buf.get(frame.payload.clone()).unwrap_or_default();
        let done = match frame.opcode {
            OP_TEXT | OP_BINARY if !self.in_message && frame.fin => whole(payload, frame.opcode == OP_TEXT, frame.compressed, msg, max),
            OP_TEXT | OP_BINARY if !self.in_message => {
                self.in_message = true;
                self.text = frame.opcode == OP_TEXT;
                self.checked = 0;
                self.partial.clear();
                self.inflater = frame.compressed.then(|| InflateState::new_boxed(DataFormat::Raw));
                self.append(payload, false, max).map(|()| Step::Nothing)
            }
            OP_CONT if self.in_message => self.append(payload, frame.fin, max).map(|()| {
                if !frame.fin {
                    return Step::Nothing;
                }
                // Fragmented messages are rare: the reassembly buffer goes with the message.
                *msg = std::mem::take(&mut self.partial);
                self.in_message = false;
                self.inflater = None;
                Step::Message
            }),
            OP_PING => Ok(Step::Pong(frame.payload.clone())),
            OP_PONG => Ok(Step::Nothing),
            OP_CLOSE => close_reply(payload).map(|code| Step::Close(code, None)),
            _ => Err(Refused { code: CLOSE_PROTOCOL, why: "websocket frame out of sequence" }),
        };
        match done {
            Ok(step) => (step, frame.len),
            Err(e) => (Step::Close(e.code, Some(e.why)), frame.len),
        }
    }

    /// Adds a fragment to the message in progress: inflated when compressed, checked as UTF-8
    /// when text (`fin`: the message ends here, so an unfinished character is an error too).
    fn append(&mut self, payload: &[u8], fin: bool, max: usize) -> Result<(), Refused> {
        match self.inflater.as_deref_mut() {
            Some(st) => {
                inflate_into(st, payload, &mut self.partial, max)?;
                if fin {
                    inflate_into(st, &SYNC_TAIL, &mut self.partial, max)?;
                }
            }
            // `parse` kept the payload within the room left under `max`.
            None => self.partial.extend_from_slice(payload),
        }
        if self.text {
            check_utf8(&self.partial, &mut self.checked, fin)?;
        }
        Ok(())
    }
}

/// A message in one frame, into `msg`.
fn whole(payload: &[u8], text: bool, compressed: bool, msg: &mut Vec<u8>, max: usize) -> Result<Step, Refused> {
    thread_local! {
        static INFLATER: std::cell::RefCell<Option<Box<InflateState>>> = const { std::cell::RefCell::new(None) };
    }
    msg.clear();
    if compressed {
        INFLATER.with(|cell| {
            let mut slot = cell.borrow_mut();
            let st = slot.get_or_insert_with(|| InflateState::new_boxed(DataFormat::Raw));
            // A full reset clears the window too: a back-reference past the start of this
            // message must not read the previous message, which was another socket's.
            st.reset_as(miniz_oxide::inflate::stream::FullReset(DataFormat::Raw));
            inflate_into(st, payload, msg, max)?;
            inflate_into(st, &SYNC_TAIL, msg, max)
        })?;
    } else {
        msg.extend_from_slice(payload);
    }
    if text {
        check_utf8(msg, &mut 0, true)?;
    }
    Ok(Step::Message)
}

/// Inflates `input`, a piece of one compressed message, onto `out`, keeping the stream's state
/// in `st` for the next piece. More than `limit` bytes in `out` is 1009, bad data 1007. A final
/// block ends the message's data; anything after it is ignored.
fn inflate_into(st: &mut InflateState, mut input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), Refused> {
    let mut chunk = [0u8; 4096];
    loop {
        let r = miniz_oxide::inflate::stream::inflate(st, input, &mut chunk, MZFlush::None);
        input = input.get(r.bytes_consumed..).unwrap_or_default();
        if r.bytes_written > limit.saturating_sub(out.len()) {
            return Err(Refused { code: CLOSE_TOO_BIG, why: "inflated message larger than the limit" });
        }
        out.extend_from_slice(chunk.get(..r.bytes_written).unwrap_or_default());
        match r.status {
            Ok(MZStatus::StreamEnd) | Err(MZError::Buf) => return Ok(()),
            Ok(_) => {}
            Err(_) => return Err(Refused { code: CLOSE_INVALID_DATA, why: "undecodable compressed message" }),
        }
        if (input.is_empty() && r.bytes_written < chunk.len()) || (r.bytes_consumed == 0 && r.bytes_written == 0) {
            return Ok(());
        }
    }
}

/// Advances `checked` over the valid UTF-8 at the front of `bytes[checked..]`. A character cut
/// at the end waits for the next fragment, unless `fin`; any other bad byte is 1007.
fn check_utf8(bytes: &[u8], checked: &mut usize, fin: bool) -> Result<(), Refused> {
    let rest = bytes.get(*checked..).unwrap_or_default();
    match std::str::from_utf8(rest) {
        Ok(_) => {
            *checked = bytes.len();
            Ok(())
        }
        Err(e) if e.error_len().is_none() && !fin => {
            *checked += e.valid_up_to();
            Ok(())
        }
        Err(_) => Err(Refused { code: CLOSE_INVALID_DATA, why: "text is not UTF-8" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        write_masked_frame(fin, opcode, [0x37, 0xfa, 0x21, 0x3d], payload, &mut v);
        v
    }

    #[test]
    fn accept_key_matches_rfc_example() {
        assert_eq!(&accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), b"s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }

    #[test]
    fn rfc_hello_frame_unmasks() {
        // RFC 6455 §5.7: a masked "Hello".
        let mut f = vec![0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
        let fr = parse(&mut f, 100, false).unwrap().unwrap();
        assert!(fr.fin);
        assert_eq!(fr.opcode, OP_TEXT);
        assert_eq!(&f[fr.payload.clone()], b"Hello");
        assert_eq!(fr.len, 11);
    }

    #[test]
    fn partial_frames_wait_for_more() {
        let full = masked(true, OP_TEXT, &[b'x'; 300]);
        for cut in 0..full.len() {
            let mut part = full[..cut].to_vec();
            assert_eq!(parse(&mut part, 1000, false), Ok(None), "cut at {cut}");
        }
        let mut all = full.clone();
        let fr = parse(&mut all, 1000, false).unwrap().unwrap();
        assert_eq!(fr.payload.len(), 300);
        assert!(all[fr.payload].iter().all(|&b| b == b'x'));
    }

    #[test]
    fn sixty_four_bit_lengths_and_limits() {
        let mut big = masked(true, OP_TEXT, &vec![b'a'; 70_000]);
        assert_eq!(parse(&mut big.clone(), 100_000, false).unwrap().unwrap().payload.len(), 70_000);
        assert_eq!(parse(&mut big, 65_536, false).unwrap_err().code, CLOSE_TOO_BIG);
        // A header announcing 2^63 bytes is refused from the header alone.
        let mut huge = vec![0x81, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(parse(&mut huge, MAX_MESSAGE, false).unwrap_err().code, CLOSE_TOO_BIG);
    }

    #[test]
    fn protocol_violations_are_refused() {
        let mut unmasked = vec![0x81, 0x02, b'h', b'i'];
        assert_eq!(parse(&mut unmasked, 100, false).unwrap_err().code, CLOSE_PROTOCOL);
        let mut rsv = masked(true, OP_TEXT, b"x");
        rsv[0] |= 0x40;
        assert_eq!(parse(&mut rsv, 100, false).unwrap_err().code, CLOSE_PROTOCOL);
        let mut op = masked(true, 0x3, b"x");
        assert_eq!(parse(&mut op, 100, false).unwrap_err().code, CLOSE_PROTOCOL);
        let mut frag_ping = masked(false, OP_PING, b"x");
        assert_eq!(parse(&mut frag_ping, 100, false).unwrap_err().code, CLOSE_PROTOCOL);
        let mut long_ping = masked(true, OP_PING, &[0; 126]);
        assert_eq!(parse(&mut long_ping, 1000, false).unwrap_err().code, CLOSE_PROTOCOL);
    }

    #[test]
    fn server_frames_use_the_shortest_length() {
        for (n, head) in [(5usize, 2usize), (125, 2), (126, 4), (65_535, 4), (65_536, 10)] {
            let mut out = Vec::new();
            write_frame(OP_TEXT, &vec![0; n], &mut out);
            assert_eq!(out.len(), head + n, "{n}");
            assert_eq!(out[0], 0x81);
        }
        let mut c = Vec::new();
        write_close(CLOSE_TOO_BIG, &mut c);
        assert_eq!(c, [0x88, 2, 0x03, 0xf1]);
        assert_eq!(close_reply(&c[2..]), Ok(1009));
    }

    #[test]
    fn close_replies() {
        assert_eq!(close_reply(b""), Ok(CLOSE_NORMAL));
        assert_eq!(close_reply(b"\x03").unwrap_err().code, CLOSE_PROTOCOL);
        for ok in [1000u16, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999] {
            assert_eq!(close_reply(&ok.to_be_bytes()), Ok(ok));
        }
        for bad in [0u16, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] {
            assert_eq!(close_reply(&bad.to_be_bytes()).unwrap_err().code, CLOSE_PROTOCOL, "{bad}");
        }
        assert_eq!(close_reply(b"\x03\xe8bye \xce\xba"), Ok(1000));
        assert_eq!(close_reply(b"\x03\xe8\xce").unwrap_err().code, CLOSE_INVALID_DATA);
        assert_eq!(close_reply(b"\x03\xe8\xed\xa0\x80").unwrap_err().code, CLOSE_INVALID_DATA);
    }

    /// Reads every frame of `wire` with one `Reader`: the messages, then the step that ended
    /// the stream (`NeedMore` when it ran out).
    fn read_stream(wire: &[u8], deflate: bool, max: usize) -> (Vec<Vec<u8>>, Step) {
        let mut buf = wire.to_vec();
        let (mut at, mut r, mut msg, mut msgs) = (0, Reader::default(), Vec::new(), Vec::new());
        loop {
            let (step, used) = r.read(&mut buf[at..], deflate, &mut msg, max);
            at += used;
            match step {
                Step::Message => msgs.push(msg.clone()),
                Step::Nothing | Step::Pong(_) => {}
                end => return (msgs, end),
            }
        }
    }

    /// A client's compressed frame (RSV1 on the first frame only).
    fn compressed(fin: bool, opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut f = masked(fin, opcode, body);
        if opcode != OP_CONT {
            f[0] |= 0x40;
        }
        f
    }

    #[test]
    fn text_must_be_utf8_checked_as_fragments_arrive() {
        let mut wire = masked(true, OP_TEXT, "κόσμε".as_bytes());
        // "é" split between two fragments, a ping between them.
        wire.extend(masked(false, OP_TEXT, b"caf\xc3"));
        wire.extend(masked(true, OP_PING, b"p"));
        wire.extend(masked(true, OP_CONT, b"\xa9!"));
        wire.extend(masked(true, OP_BINARY, b"\xff\xfe"));
        let (msgs, end) = read_stream(&wire, false, 100);
        assert_eq!(msgs, ["κόσμε".as_bytes(), "café!".as_bytes(), b"\xff\xfe"]);
        assert_eq!(end, Step::NeedMore);

        assert_eq!(read_stream(&masked(true, OP_TEXT, b"a\xffb"), false, 100).1.clone(), Step::Close(CLOSE_INVALID_DATA, Some("text is not UTF-8")));
        // Fail fast: the first fragment is already wrong (a surrogate), no FIN needed.
        let (msgs, end) = read_stream(&masked(false, OP_TEXT, b"ok\xed\xa0\x80"), false, 100);
        assert!(msgs.is_empty());
        assert!(matches!(end, Step::Close(CLOSE_INVALID_DATA, _)));
        // A code point past U+10FFFF is wrong from its second byte.
        assert!(matches!(read_stream(&masked(false, OP_TEXT, b"\xf4\x90"), false, 100).1, Step::Close(CLOSE_INVALID_DATA, _)));
        // A character still cut when the message ends.
        let mut cut = masked(false, OP_TEXT, b"x");
        cut.extend(masked(true, OP_CONT, b"\xe2\x82"));
        assert!(matches!(read_stream(&cut, false, 100).1, Step::Close(CLOSE_INVALID_DATA, _)));
    }

    #[test]
    fn control_frames_between_fragments_do_not_count_against_the_limit() {
        // Found by tests/websocket_fuzz.rs: a message 8 bytes under the limit, then a 50-byte
        // ping, was closed with 1009.
        let mut wire = masked(false, OP_BINARY, &[7; 92]);
        wire.extend(masked(true, OP_PING, &[1; 50]));
        wire.extend(masked(true, OP_CONT, b""));
        let (msgs, end) = read_stream(&wire, false, 100);
        assert_eq!((msgs, end), (vec![vec![7; 92]], Step::NeedMore));
    }

    #[test]
    fn out_of_sequence_frames_are_protocol_errors() {
        let cont = masked(true, OP_CONT, b"x");
        assert!(matches!(read_stream(&cont, false, 100).1, Step::Close(CLOSE_PROTOCOL, _)));
        let mut twice = masked(false, OP_TEXT, b"a");
        twice.extend(masked(true, OP_TEXT, b"b"));
        assert!(matches!(read_stream(&twice, false, 100).1, Step::Close(CLOSE_PROTOCOL, _)));
        let mut close = masked(true, OP_CLOSE, &1001u16.to_be_bytes());
        close.extend(masked(true, OP_TEXT, b"after"));
        assert_eq!(read_stream(&close, false, 100), (vec![], Step::Close(1001, None)));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let len = (x % 40) as usize;
            let mut buf: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            if let Ok(Some(f)) = parse(&mut buf, 16, false) {
                assert!(f.payload.end <= buf.len() && f.len <= buf.len());
            }
        }
    }

    #[test]
    fn deflate_round_trip_and_rsv1() {
        let text = br#"{"identifier":"x","message":"<turbo-stream action=\"append\"><template>hello hello hello hello</template></turbo-stream>"}"#;
        let mut f = Vec::new();
        write_deflated_text(text, &mut f);
        assert_eq!(f[0], 0xC1, "FIN + RSV1 + text");
        let len = f[1] as usize;
        assert_eq!(len, f.len() - 2);
        assert!(len < text.len());
        let body = &f[2..];
        assert_eq!(read_stream(&compressed(true, OP_TEXT, body), true, 1 << 20).0, [text]);
        assert!(matches!(read_stream(&compressed(true, OP_TEXT, body), true, 10).1, Step::Close(CLOSE_TOO_BIG, _)));
        assert!(matches!(read_stream(&compressed(true, OP_TEXT, b"\xff\xff\xff"), true, 1000).1, Step::Close(CLOSE_INVALID_DATA, _)));
        // The same compressor is reused: a second message is independent of the first.
        let mut g = Vec::new();
        write_deflated_text(b"second", &mut g);
        assert_eq!(read_stream(&compressed(true, OP_TEXT, &g[2..]), true, 100).0, [b"second"]);
        // In fragments, cut anywhere: inflated and checked piece by piece.
        for cut in 0..=body.len() {
            let mut wire = compressed(false, OP_TEXT, &body[..cut]);
            wire.extend(masked(true, OP_PING, b""));
            wire.extend(compressed(true, OP_CONT, &body[cut..]));
            assert_eq!(read_stream(&wire, true, 1 << 20), (vec![text.to_vec()], Step::NeedMore), "cut at {cut}");
            assert!(matches!(read_stream(&wire, true, text.len() - 1).1, Step::Close(CLOSE_TOO_BIG, _)));
        }
        // Invalid UTF-8 inside a compressed message.
        let mut bad = Vec::new();
        write_deflated_text(b"ok \xc0\xaf", &mut bad);
        assert!(matches!(read_stream(&compressed(true, OP_TEXT, &bad[2..]), true, 100).1, Step::Close(CLOSE_INVALID_DATA, _)));

        let mut compressed = masked(true, OP_TEXT, b"zz");
        compressed[0] |= 0x40;
        assert!(parse(&mut compressed.clone(), 100, true).unwrap().unwrap().compressed);
        assert_eq!(parse(&mut compressed, 100, false).unwrap_err().code, CLOSE_PROTOCOL);
        let mut cont = masked(true, OP_CONT, b"zz");
        cont[0] |= 0x40;
        assert_eq!(parse(&mut cont, 100, true).unwrap_err().code, CLOSE_PROTOCOL);
        let mut rsv2 = masked(true, OP_TEXT, b"zz");
        rsv2[0] |= 0x20;
        assert_eq!(parse(&mut rsv2, 100, true).unwrap_err().code, CLOSE_PROTOCOL);
    }

    fn with_extensions(value: &[u8], f: impl FnOnce(&Request) -> bool) -> bool {
        let headers = [super::super::Header { name: b"Sec-WebSocket-Extensions", value }];
        let req = Request::loopback_get(b"/cable", &headers);
        f(&req)
    }

    #[test]
    fn deflate_offers() {
        for (offer, ok) in [
            (&b"permessage-deflate; client_max_window_bits"[..], true),
            (b"permessage-deflate", true),
            (b"permessage-deflate; server_no_context_takeover; client_no_context_takeover", true),
            (b"permessage-deflate; server_max_window_bits=10", false),
            (b"permessage-deflate; server_max_window_bits=10, permessage-deflate", true),
            (b"permessage-deflate; server_max_window_bits=\"15\"", true),
            (b"permessage-deflate; mystery", false),
            (b"x-webkit-deflate-frame", false),
        ] {
            assert_eq!(with_extensions(offer, deflate_offered), ok, "{}", String::from_utf8_lossy(offer));
        }
    }

    #[test]
    fn token_lists() {
        assert!(has_token(b"keep-alive, Upgrade", b"upgrade"));
        assert!(!has_token(b"keep-alive", b"upgrade"));
        assert!(has_token(b" WebSocket ", b"websocket"));
    }
}
