//! WebSocket (RFC 6455) on top of our HTTP/1.1: the upgrade handshake's checks and accept key,
//! and frame parsing/writing for the server side.
//!
//! Only what a server needs: client frames must be masked (unmasked → close 1002), server
//! frames are never masked. Control frames (close, ping, pong) may arrive between the fragments
//! of a message and are at most 125 bytes. Messages larger than the caller's limit are refused
//! with close 1009 before their payload is buffered. Text is not validated as UTF-8 here: the
//! only consumer (Action Cable) parses it as JSON, which refuses what it cannot read.
//!
//! permessage-deflate (RFC 7692) is accepted without context takeover in either direction, so
//! a socket keeps no compression state between messages: a broadcast is compressed once and
//! the same bytes go to every socket that negotiated the extension. Our small frames (pings,
//! confirmations) go out uncompressed, which the extension allows message by message.

use super::Request;
use miniz_oxide::deflate::core::{create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush, TDEFLStatus};
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
    if len > max_payload as u64 {
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

/// Inflates a compressed message (RFC 7692 §7.2.2: the sender removed the trailing
/// `00 00 ff ff`, which is put back). More than `limit` bytes is 1009, bad data 1007.
pub fn inflate(payload: &[u8], limit: usize) -> Result<Vec<u8>, Refused> {
    let mut input = Vec::with_capacity(payload.len() + 6);
    input.extend_from_slice(payload);
    // The sync-flush marker, then an empty final block (`03 00`): the one-shot inflater wants
    // a stream that ends, and a message does not end its stream (no context takeover aside).
    input.extend_from_slice(&[0, 0, 0xff, 0xff, 0x03, 0x00]);
    miniz_oxide::inflate::decompress_to_vec_with_limit(&input, limit).map_err(|e| match e.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => Refused { code: CLOSE_TOO_BIG, why: "inflated message larger than the limit" },
        _ => Refused { code: CLOSE_INVALID_DATA, why: "undecodable compressed message" },
    })
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

/// The status code of a received close frame's payload (1005 "no status" when it has none).
pub fn close_code(payload: &[u8]) -> u16 {
    match payload {
        [a, b, ..] => u16::from_be_bytes([*a, *b]),
        _ => 1005,
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
        assert_eq!(close_code(&c[2..]), 1009);
        assert_eq!(close_code(b""), 1005);
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
        assert_eq!(inflate(&f[2..], 1 << 20).unwrap(), text);
        assert_eq!(inflate(&f[2..], 10).unwrap_err().code, CLOSE_TOO_BIG);
        assert_eq!(inflate(b"\xff\xff\xff", 1000).unwrap_err().code, CLOSE_INVALID_DATA);
        // The same compressor is reused: a second message is independent of the first.
        let mut g = Vec::new();
        write_deflated_text(b"second", &mut g);
        assert_eq!(inflate(&g[2..], 100).unwrap(), b"second");

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
        let req = Request {
            method: super::super::Method::Get,
            target: b"/cable",
            path: b"/cable",
            query: b"",
            http10: false,
            headers: &headers,
            body: b"",
            spooled: None,
            peer: std::net::IpAddr::from([127, 0, 0, 1]),
            tls: false,
        };
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
