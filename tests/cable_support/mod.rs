//! Shared by the `cable_*` integration tests: a minimal WebSocket client (masked frames, as a
//! browser sends them), Action Cable helpers, and a seeded world of users, sessions, rooms and
//! memberships written straight into the server's database.

#![allow(dead_code)]

#[path = "../auth_support/mod.rs"]
pub mod auth_support;

pub use auth_support::{Request, Server};
use campfire::crypto::{cookies, turbo, Keys};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Keys for SECRET_KEY_BASE=dummy, as the test server runs with.
pub fn keys() -> &'static Keys {
    static K: OnceLock<Keys> = OnceLock::new();
    K.get_or_init(|| Keys::derive(b"dummy"))
}

/// The `session_token` cookie value for a session token.
pub fn session_cookie(token: &str) -> String {
    let mut line = Vec::new();
    cookies::set_session_token(keys(), token.as_bytes(), campfire::crypto::time::now_ms(), false, &mut line);
    let line = String::from_utf8(line).unwrap();
    let v = line.strip_prefix("session_token=").unwrap();
    v[..v.find(';').unwrap_or(v.len())].to_string()
}

/// A signed Turbo stream name for `name`.
pub fn signed(name: &[u8]) -> String {
    let mut out = Vec::new();
    turbo::sign_stream_name(keys(), name, &mut out);
    String::from_utf8(out).unwrap()
}

/// A user with a session (token `tok<id>`, from a public address so bans apply).
pub fn add_user(srv: &Server, id: i64, name: &str) -> String {
    let t = "2026-01-01 00:00:00.000000";
    srv.sql(&format!(
        "INSERT INTO users (id, name, email_address, role, status, created_at, updated_at) VALUES ({id}, '{name}', 'u{id}@example.com', 0, 0, '{t}', '{t}');
         INSERT INTO sessions (user_id, token, ip_address, user_agent, last_active_at, created_at, updated_at) VALUES ({id}, 'tok{id}', '203.0.113.{id}', 'test', '{t}', '{t}', '{t}');"
    ));
    session_cookie(&format!("tok{id}"))
}

/// A room of `kind` ("Rooms::Open", "Rooms::Closed") with the given members.
pub fn add_room(srv: &Server, id: i64, kind: &str, members: &[i64]) {
    let t = "2026-01-01 00:00:00.000000";
    srv.sql(&format!("INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES ({id}, 'Room {id}', '{kind}', 1, '{t}', '{t}')"));
    for m in members {
        srv.sql(&format!(
            "INSERT INTO memberships (room_id, user_id, involvement, connections, created_at, updated_at) VALUES ({id}, {m}, 'everything', 0, '{t}', '{t}')"
        ));
    }
}

/// The stream name of a room's messages (`<room gid param>:messages`).
pub fn room_stream(kind: campfire::db::rooms::Kind, id: i64) -> String {
    String::from_utf8(campfire::app::cable::streams::room_messages(kind, id)).unwrap()
}

/// Broadcasts `message_json` on `stream` through the test route.
pub fn broadcast(srv: &Server, stream: &str, message_json: &str) {
    let mut r = Request::get(&format!("/__cable/broadcast?stream={}", auth_support::enc(stream)));
    r.method = "POST";
    r.body = message_json.as_bytes().to_vec();
    assert_eq!(srv.send(&r).status, 200);
}

/// Starts a server with the test routes on.
pub fn server() -> Server {
    Server::start(&[("CAMPFIRE_TEST_ROUTES", "1")])
}

#[derive(Debug, PartialEq, Eq)]
pub struct Frame {
    pub opcode: u8,
    /// The payload, inflated if the frame was compressed.
    pub payload: Vec<u8>,
    /// RSV1 was set (permessage-deflate).
    pub compressed: bool,
}

impl Frame {
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.payload).unwrap()
    }
}

pub struct Client {
    pub s: TcpStream,
    buf: Vec<u8>,
    /// The response head of the handshake.
    pub head: String,
}

/// The handshake request for `/cable`.
pub fn handshake(port: u16, cookie: Option<&str>, origin: Option<&str>) -> String {
    let mut h = format!(
        "GET /cable HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
         Sec-WebSocket-Protocol: actioncable-v1-json, actioncable-unsupported\r\n"
    );
    if let Some(o) = origin {
        h.push_str(&format!("Origin: {o}\r\n"));
    }
    if let Some(c) = cookie {
        h.push_str(&format!("Cookie: session_token={c}\r\n"));
    }
    h.push_str("\r\n");
    h
}

impl Client {
    /// Connects with our origin and `cookie` (None: no cookie). Panics unless the server
    /// answers 101.
    pub fn open(srv: &Server, cookie: Option<&str>) -> Client {
        Client::open_with(srv, cookie, "")
    }

    /// `open` with extra header lines (each ending in CRLF) in the handshake.
    pub fn open_with(srv: &Server, cookie: Option<&str>, extra: &str) -> Client {
        let origin = format!("http://127.0.0.1:{}", srv.port);
        let mut h = handshake(srv.port, cookie, Some(&origin));
        h.insert_str(h.len() - 2, extra);
        let c = Client::raw(srv.port, &h);
        assert!(c.head.starts_with("HTTP/1.1 101 "), "{}", c.head);
        c
    }

    /// Sends `request` and reads the response head (the rest stays buffered).
    pub fn raw(port: u16, request: &str) -> Client {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut c = Client { s, buf: Vec::new(), head: String::new() };
        loop {
            if let Some(p) = c.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                c.head = String::from_utf8_lossy(&c.buf[..p + 4]).into_owned();
                c.buf.drain(..p + 4);
                return c;
            }
            if !c.fill() {
                c.head = String::from_utf8_lossy(&c.buf).into_owned();
                return c;
            }
        }
    }

    fn fill(&mut self) -> bool {
        let mut b = [0u8; 65536];
        match self.s.read(&mut b) {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&b[..n]);
                true
            }
        }
    }

    /// Sends one masked frame.
    pub fn send_frame(&mut self, fin: bool, opcode: u8, payload: &[u8]) {
        self.s.write_all(&masked(fin, opcode, payload)).unwrap();
    }

    pub fn send(&mut self, text: &str) {
        self.send_frame(true, 1, text.as_bytes());
    }

    /// The next frame, or None when the socket closed or nothing came within `wait`.
    pub fn next(&mut self, wait: Duration) -> Option<Frame> {
        self.s.set_read_timeout(Some(wait)).unwrap();
        loop {
            if let Some((f, used)) = parse(&self.buf) {
                self.buf.drain(..used);
                return Some(f);
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// The next text frame that is not a ping (up to 10 s).
    pub fn recv(&mut self) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let f = self.next(Duration::from_secs(10))?;
            if f.opcode == 1 && !f.text().starts_with(r#"{"type":"ping""#) {
                return Some(f.text().to_string());
            }
            if f.opcode == 8 {
                return None;
            }
        }
        None
    }

    /// Whether a non-ping text frame arrives within `wait`.
    pub fn quiet_for(&mut self, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next(left.max(Duration::from_millis(1))) {
                Some(f) if f.opcode == 1 && f.text().starts_with(r#"{"type":"ping""#) => continue,
                Some(f) => panic!("unexpected frame {:?}", String::from_utf8_lossy(&f.payload)),
                None => return true,
            }
        }
        true
    }

    /// Opens a signed-in connection and reads the welcome.
    pub fn welcomed(srv: &Server, cookie: &str) -> Client {
        let mut c = Client::open(srv, Some(cookie));
        assert_eq!(c.recv().as_deref(), Some(r#"{"type":"welcome"}"#));
        c
    }

    /// Sends a subscribe for `ident` (the identifier's JSON text) and returns the reply type.
    pub fn subscribe(&mut self, ident: &str) -> String {
        self.send(&command("subscribe", ident, None));
        let reply = self.recv().expect("subscription reply");
        let expect_prefix = format!(r#"{{"identifier":{},"type":""#, json_string(ident));
        assert!(reply.starts_with(&expect_prefix), "{reply} does not echo {ident}");
        reply[expect_prefix.len()..reply.len() - 2].to_string()
    }
}

/// `{"command":…,"identifier":…[,"data":…]}` as `JSON.stringify` writes it.
pub fn command(verb: &str, ident: &str, data: Option<&str>) -> String {
    match data {
        None => format!(r#"{{"command":"{verb}","identifier":{}}}"#, json_string(ident)),
        Some(d) => format!(r#"{{"command":"{verb}","identifier":{},"data":{}}}"#, json_string(ident), json_string(d)),
    }
}

/// A JSON string literal for `s` (quotes and backslashes escaped; enough for identifiers).
pub fn json_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The `data` frame a subscriber of `ident` gets for `message_json`.
pub fn data(ident: &str, message_json: &str) -> String {
    format!(r#"{{"identifier":{},"message":{}}}"#, json_string(ident), message_json)
}

/// A whole masked client frame (the library's client-side frame writer).
pub fn masked(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    campfire::http::websocket::write_masked_frame(fin, opcode, [0x12, 0x34, 0x56, 0x78], payload, &mut v);
    v
}

/// Parses one unmasked server frame: (frame, bytes used).
fn parse(b: &[u8]) -> Option<(Frame, usize)> {
    if b.len() < 2 {
        return None;
    }
    assert_eq!(b[1] & 0x80, 0, "server frames are never masked");
    let (len, at) = match b[1] & 0x7f {
        126 => (u16::from_be_bytes([*b.get(2)?, *b.get(3)?]) as usize, 4),
        127 => (u64::from_be_bytes(b.get(2..10)?.try_into().unwrap()) as usize, 10),
        n => (n as usize, 2),
    };
    let payload = b.get(at..at + len)?.to_vec();
    assert_eq!(b[0] & 0x80, 0x80, "server frames are not fragmented");
    let compressed = b[0] & 0x40 != 0;
    let payload = if compressed { inflate(&payload) } else { payload };
    Some((Frame { opcode: b[0] & 0x0f, payload, compressed }, at + len))
}

/// Inflates a permessage-deflate payload, independently of the server's code.
pub fn inflate(payload: &[u8]) -> Vec<u8> {
    let mut input = payload.to_vec();
    input.extend_from_slice(&[0, 0, 0xff, 0xff]);
    let mut out = Vec::new();
    let mut state = miniz_oxide::inflate::stream::InflateState::new(miniz_oxide::DataFormat::Raw);
    let mut buf = vec![0u8; payload.len() * 8 + 1024];
    let mut input: &[u8] = &input;
    loop {
        let r = miniz_oxide::inflate::stream::inflate(&mut state, input, &mut buf, miniz_oxide::MZFlush::Sync);
        out.extend_from_slice(&buf[..r.bytes_written]);
        input = &input[r.bytes_consumed..];
        if r.bytes_written == buf.len() {
            continue;
        }
        if input.is_empty() || r.bytes_written == 0 {
            break;
        }
    }
    out
}

/// A compressed, masked client frame: raw deflate of `text` without the sync-flush tail.
pub fn deflated(text: &[u8]) -> Vec<u8> {
    let mut body = miniz_oxide::deflate::compress_to_vec(text, 6);
    if body.ends_with(&[0, 0, 0xff, 0xff]) {
        body.truncate(body.len() - 4);
    }
    let mut f = masked(true, 1, &body);
    f[0] |= 0x40;
    f
}
