//! A minimal WebSocket client (RFC 6455) for the Action Cable workload: the opening handshake
//! with an accept-key check, masked text frames out, unmasked frames in (fragmented messages
//! reassembled, pings answered), close. Optionally permessage-deflate (RFC 7692) for what the
//! server sends; our own messages go out uncompressed, which the extension allows.

use crate::digest::{base64, sha1};
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZFlush};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// An open WebSocket.
pub struct Socket {
    stream: TcpStream,
    buf: Vec<u8>,
    partial: Vec<u8>,
    // Whether the message being reassembled had RSV1 (compressed) on its first frame.
    partial_compressed: bool,
    mask_state: u32,
    /// Set when permessage-deflate was negotiated: the inflater and whether to reset it per message.
    deflate: Option<(Box<InflateState>, bool)>,
    /// Frame bytes received so far (headers included), for wire throughput.
    pub wire_bytes: u64,
}

/// What `read` returned.
pub enum Frame {
    Text(Vec<u8>),
    /// Binary messages are counted but not interpreted.
    Binary,
    Closed,
    /// The read timeout passed with nothing complete.
    Idle,
}

impl Socket {
    /// Connects to `addr` and upgrades `path` with the given extra headers (Cookie, Origin, protocol);
    /// with `deflate`, offers permessage-deflate and uses it if the server accepts.
    pub fn connect(addr: SocketAddr, host: &str, path: &str, headers: &[(&str, &str)], seed: u64, deflate: bool) -> Result<Socket, String> {
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(30)).map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        stream.set_read_timeout(Some(Duration::from_secs(30))).map_err(|e| e.to_string())?;
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
            Some(e) if deflate && e.contains("permessage-deflate") => {
                Some((InflateState::new_boxed(DataFormat::Raw), e.contains("server_no_context_takeover")))
            }
            Some(e) => return Err(format!("handshake: unrequested extension {e}")),
            None => None,
        };
        buf.drain(..end + 4);
        Ok(Socket { stream, buf, partial: Vec::new(), partial_compressed: false, mask_state: (seed as u32) | 1, deflate, wire_bytes: 0 })
    }

    /// Sets how long `read` waits before returning `Frame::Idle`.
    pub fn set_timeout(&self, d: Duration) -> Result<(), String> {
        self.stream.set_read_timeout(Some(d)).map_err(|e| e.to_string())
    }

    /// Sends one masked text frame.
    pub fn send_text(&mut self, text: &str) -> Result<(), String> {
        self.send(0x1, text.as_bytes())
    }

    fn send(&mut self, opcode: u8, payload: &[u8]) -> Result<(), String> {
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

    /// Reads the next complete message.
    pub fn read(&mut self) -> Result<Frame, String> {
        loop {
            if let Some(Raw { fin, rsv1, opcode, payload, used }) = parse(&self.buf)? {
                self.buf.drain(..used);
                self.wire_bytes += used as u64;
                match opcode {
                    0x9 => self.send(0xA, &payload)?,
                    0xA => {}
                    0x8 => return Ok(Frame::Closed),
                    0x0..=0x2 => {
                        if opcode != 0 {
                            self.partial.clear();
                            self.partial.push(opcode);
                            self.partial_compressed = rsv1;
                        }
                        self.partial.extend_from_slice(&payload);
                        if fin {
                            let kind = self.partial.first().copied().unwrap_or(1);
                            let mut data = self.partial.split_off(1);
                            self.partial.clear();
                            if self.partial_compressed {
                                data = self.inflate(data)?;
                            }
                            return Ok(if kind == 2 { Frame::Binary } else { Frame::Text(data) });
                        }
                    }
                    other => return Err(format!("ws: opcode {other}")),
                }
                continue;
            }
            let mut chunk = [0u8; 16384];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Ok(Frame::Closed),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => return Ok(Frame::Idle),
                Err(e) => return Err(format!("ws read: {e}")),
            }
        }
    }

    // Decompresses one permessage-deflate message (the stripped 00 00 FF FF tail restored).
    fn inflate(&mut self, mut data: Vec<u8>) -> Result<Vec<u8>, String> {
        let Some((state, reset)) = self.deflate.as_mut() else {
            return Err("ws: compressed frame without permessage-deflate".into());
        };
        if *reset {
            state.reset(DataFormat::Raw);
        }
        data.extend_from_slice(&[0, 0, 0xff, 0xff]);
        let mut out = Vec::with_capacity(data.len() * 4);
        let mut chunk = vec![0u8; 64 * 1024];
        let mut pos = 0;
        loop {
            let r = inflate(state, &data[pos..], &mut chunk, MZFlush::Sync);
            pos += r.bytes_consumed;
            out.extend_from_slice(&chunk[..r.bytes_written]);
            if let Err(e) = r.status {
                return Err(format!("ws: inflate {e:?}"));
            }
            if out.len() > 64 << 20 {
                return Err("ws: message over 64 MiB".into());
            }
            if pos >= data.len() && r.bytes_written < chunk.len() {
                return Ok(out);
            }
        }
    }

    /// A second handle on the same socket (to shut it down from another thread).
    pub fn try_clone_stream(&self) -> Option<TcpStream> {
        self.stream.try_clone().ok()
    }
}

// One frame parsed from the front of a buffer.
struct Raw {
    fin: bool,
    rsv1: bool,
    opcode: u8,
    payload: Vec<u8>,
    used: usize,
}

// The frame at the front of `b` (payload unmasked), or None if it is not complete yet.
fn parse(b: &[u8]) -> Result<Option<Raw>, String> {
    if b.len() < 2 {
        return Ok(None);
    }
    let fin = b[0] & 0x80 != 0;
    let rsv1 = b[0] & 0x40 != 0;
    let opcode = b[0] & 0x0f;
    let masked = b[1] & 0x80 != 0;
    let (len, mut i) = match b[1] & 0x7f {
        126 if b.len() >= 4 => (u16::from_be_bytes([b[2], b[3]]) as usize, 4),
        127 if b.len() >= 10 => {
            let n = u64::from_be_bytes([b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9]]);
            (usize::try_from(n).map_err(|_| "ws: frame too large")?, 10)
        }
        126 | 127 => return Ok(None),
        n => (n as usize, 2),
    };
    if len > 64 << 20 {
        return Err("ws: frame over 64 MiB".into());
    }
    let mask = if masked {
        let m = b.get(i..i + 4).map(|m| [m[0], m[1], m[2], m[3]]);
        i += 4;
        m
    } else {
        None
    };
    let Some(data) = b.get(i..i + len) else { return Ok(None) };
    let payload = match mask {
        Some(m) => data.iter().enumerate().map(|(k, x)| x ^ m[k % 4]).collect(),
        None => data.to_vec(),
    };
    Ok(Some(Raw { fin, rsv1, opcode, payload, used: i + len }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_frames() {
        assert!(parse(&[0x81]).unwrap().is_none());
        let f = parse(&[0x81, 0x03, b'a', b'b', b'c', 0xff]).unwrap().unwrap();
        assert_eq!((f.fin, f.opcode, f.payload.as_slice(), f.used), (true, 1, b"abc".as_slice(), 5));
        let mut long = vec![0x82, 126, 0x01, 0x00];
        long.extend(std::iter::repeat_n(7u8, 256));
        let f = parse(&long).unwrap().unwrap();
        assert_eq!((f.opcode, f.payload.len(), f.used), (2, 256, 260));
        let masked = [0x81, 0x82, 1, 2, 3, 4, b'h' ^ 1, b'i' ^ 2];
        assert_eq!(parse(&masked).unwrap().unwrap().payload, b"hi");
    }

    #[test]
    fn accept_key_matches_rfc_example() {
        let k = "dGhlIHNhbXBsZSBub25jZQ==";
        assert_eq!(base64(&sha1(format!("{k}{GUID}").as_bytes()), false, true), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    }
}
