//! A minimal WebSocket client (RFC 6455) for the Action Cable workload: the opening handshake
//! with an accept-key check, masked frames out, and the parsing of the server's frames in place
//! (`head`: no copy, no allocation). Optionally permessage-deflate (RFC 7692) for what the
//! server sends (`Inflater`); our own messages go out uncompressed, which the extension allows.
//! Reading, reassembly and pings are the readers' business (`cable_reader.rs`).

use crate::digest::{base64, sha1};
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZFlush};
use crate::stream::{Endpoint, Stream};
use std::io::{Read, Write};

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// An open WebSocket.
pub struct Socket {
    pub stream: Stream,
    /// Bytes that arrived after the handshake's head (the start of the first frames).
    pub buf: Vec<u8>,
    mask_state: u32,
    /// Set when permessage-deflate was negotiated.
    pub deflate: Option<Inflater>,
}

/// Decompresses the server's permessage-deflate messages, reusing its buffers.
pub struct Inflater {
    state: Box<InflateState>,
    /// The server said `server_no_context_takeover`: each message starts afresh.
    reset: bool,
    input: Vec<u8>,
    chunk: Vec<u8>,
}

impl Socket {
    /// Connects to `endpoint` (ws:// or wss://) and upgrades `path` with the given extra headers
    /// (Cookie, Origin, protocol); with `deflate`, offers permessage-deflate and uses it if the
    /// server accepts.
    pub fn connect(endpoint: &Endpoint, path: &str, headers: &[(&str, &str)], seed: u64, deflate: bool) -> Result<Socket, String> {
        let mut stream = endpoint.connect()?;
        let host = &endpoint.host;
        let key_bytes: Vec<u8> = (0..16).map(|i| (seed.rotate_left(i * 4) as u8) ^ (i as u8).wrapping_mul(151)).collect();
        let key = base64(&key_bytes, false, true);
        let mut req = format!(
            "GET {path} HTTP/1.1\r\nhost: {host}\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-key: {key}\r\nsec-websocket-version: 13\r\n"
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        if deflate {
            req.push_str("sec-websocket-extensions: permessage-deflate; client_max_window_bits\r\n");
        }
        req.push_str("\r\n");
        stream.write_all(req.as_bytes()).map_err(|e| format!("handshake write: {e}"))?;
        let mut buf = Vec::new();
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i;
            }
            let mut chunk = [0u8; 4096];
            let n = stream.read(&mut chunk).map_err(|e| format!("handshake read: {e}"))?;
            if n == 0 || buf.len() > 16384 {
                return Err("handshake: connection closed".into());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        if !head.starts_with("HTTP/1.1 101") {
            return Err(format!("handshake: {}", head.lines().next().unwrap_or("")));
        }
        let want = base64(&sha1(format!("{key}{GUID}").as_bytes()), false, true);
        let accept = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case("sec-websocket-accept").then(|| v.trim().to_string())
        });
        if accept.as_deref() != Some(want.as_str()) {
            return Err("handshake: wrong Sec-WebSocket-Accept".into());
        }
        let extensions = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case("sec-websocket-extensions").then(|| v.trim().to_ascii_lowercase())
        });
        let deflate = match extensions {
            Some(e) if deflate && e.contains("permessage-deflate") => Some(Inflater {
                state: InflateState::new_boxed(DataFormat::Raw),
                reset: e.contains("server_no_context_takeover"),
                input: Vec::new(),
                chunk: vec![0u8; 64 * 1024],
            }),
            Some(e) => return Err(format!("handshake: unrequested extension {e}")),
            None => None,
        };
        buf.drain(..end + 4);
        stream.take_buffered(&mut buf).map_err(|e| format!("handshake read: {e}"))?;
        Ok(Socket { stream, buf, mask_state: (seed as u32) | 1, deflate })
    }

    /// Sends one masked text frame.
    pub fn send_text(&mut self, text: &str) -> Result<(), String> {
        self.send(0x1, text.as_bytes())
    }

    /// Sends one masked frame with `opcode` (a pong, say), blocking until it is written.
    pub fn send(&mut self, opcode: u8, payload: &[u8]) -> Result<(), String> {
        let mut f = vec![0x80 | opcode];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xffff => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        // xorshift32: masks only need to be unpredictable to intermediaries, not secret.
        self.mask_state ^= self.mask_state << 13;
        self.mask_state ^= self.mask_state >> 17;
        self.mask_state ^= self.mask_state << 5;
        let mask = self.mask_state.to_be_bytes();
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.stream.write_all(&f).map_err(|e| format!("ws write: {e}"))
    }
}

#[cfg(test)]
impl Inflater {
    /// An inflater as a handshake that negotiated permessage-deflate would make.
    pub fn test_new(no_context_takeover: bool) -> Inflater {
        Inflater { state: InflateState::new_boxed(DataFormat::Raw), reset: no_context_takeover, input: Vec::new(), chunk: vec![0u8; 64 * 1024] }
    }
}

#[cfg(test)]
impl Socket {
    /// A socket over an already connected stream, for tests of what reads it.
    pub fn test_from_stream(stream: std::net::TcpStream) -> Socket {
        Socket { stream: Stream::Plain(stream), buf: Vec::new(), mask_state: 1, deflate: None }
    }
}

impl Inflater {
    /// Whether every message is compressed on its own (`server_no_context_takeover`), so its
    /// text depends on its bytes alone.
    pub fn resets(&self) -> bool {
        self.reset
    }

    /// Decompresses one message (the stripped `00 00 FF FF` tail restored) into `out`
    /// (cleared first).
    pub fn inflate(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        if self.reset {
            self.state.reset(DataFormat::Raw);
        }
        self.input.clear();
        self.input.extend_from_slice(data);
        self.input.extend_from_slice(&[0, 0, 0xff, 0xff]);
        out.clear();
        let mut pos = 0;
        loop {
            let r = inflate(&mut self.state, &self.input[pos..], &mut self.chunk, MZFlush::Sync);
            pos += r.bytes_consumed;
            out.extend_from_slice(&self.chunk[..r.bytes_written]);
            if let Err(e) = r.status {
                return Err(format!("ws: inflate {e:?}"));
            }
            if out.len() > 64 << 20 {
                return Err("ws: message over 64 MiB".into());
            }
            if pos >= self.input.len() && r.bytes_written < self.chunk.len() {
                return Ok(());
            }
        }
    }
}

/// The head of one server frame at the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    pub fin: bool,
    /// RSV1: the message is compressed (on its first frame).
    pub rsv1: bool,
    pub opcode: u8,
    /// Where the payload is in the buffer.
    pub payload: std::ops::Range<usize>,
    /// The whole frame's length.
    pub used: usize,
}

/// The frame at the front of `b`, or None if it is not complete yet. Server frames are never
/// masked (RFC 6455 §5.1): a masked one is an error.
pub fn head(b: &[u8]) -> Result<Option<Head>, String> {
    let (Some(&b0), Some(&b1)) = (b.first(), b.get(1)) else { return Ok(None) };
    if b1 & 0x80 != 0 {
        return Err("ws: masked frame from the server".into());
    }
    let (len, i) = match b1 & 0x7f {
        126 => match b.get(2..4) {
            Some(l) => (u16::from_be_bytes([l[0], l[1]]) as usize, 4),
            None => return Ok(None),
        },
        127 => match b.get(2..10) {
            Some(l) => {
                let n = u64::from_be_bytes([l[0], l[1], l[2], l[3], l[4], l[5], l[6], l[7]]);
                (usize::try_from(n).map_err(|_| "ws: frame too large")?, 10)
            }
            None => return Ok(None),
        },
        n => (n as usize, 2),
    };
    if len > 64 << 20 {
        return Err("ws: frame over 64 MiB".into());
    }
    if b.len() < i + len {
        return Ok(None);
    }
    Ok(Some(Head { fin: b0 & 0x80 != 0, rsv1: b0 & 0x40 != 0, opcode: b0 & 0x0f, payload: i..i + len, used: i + len }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_frame_heads_in_place() {
        assert!(head(&[0x81]).unwrap().is_none());
        assert!(head(&[0x81, 0x03, b'a', b'b']).unwrap().is_none(), "payload incomplete");
        let f = head(&[0x81, 0x03, b'a', b'b', b'c', 0xff]).unwrap().unwrap();
        assert_eq!(f, Head { fin: true, rsv1: false, opcode: 1, payload: 2..5, used: 5 });
        let mut long = vec![0x82, 126, 0x01, 0x00];
        long.extend(std::iter::repeat_n(7u8, 256));
        assert!(head(&long[..100]).unwrap().is_none());
        let f = head(&long).unwrap().unwrap();
        assert_eq!((f.opcode, f.payload, f.used), (2, 4..260, 260));
        let f = head(&[0x41, 0x01, 0x00]).unwrap().unwrap();
        assert!(!f.fin && f.rsv1, "first fragment of a compressed message");
        assert!(head(&[0x81, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2]).is_err(), "servers do not mask");
        let mut huge = vec![0x82, 127];
        huge.extend_from_slice(&(65u64 << 20).to_be_bytes());
        assert!(head(&huge).is_err());
    }

    #[test]
    fn accept_key_matches_rfc_example() {
        let k = "dGhlIHNhbXBsZSBub25jZQ==";
        assert_eq!(base64(&sha1(format!("{k}{GUID}").as_bytes()), false, true), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }
}
