//! Randomised testing of the WebSocket frame reader (`http::websocket::Reader`, with
//! permessage-deflate), fed the way the loop feeds it: a byte stream arriving in random pieces,
//! read frame by frame from a growing buffer. Oracles:
//! - generated streams (text and binary messages, compressed or not at every level, cut into
//!   fragments anywhere — characters and deflate blocks split — with pings and pongs between
//!   fragments, a close at the end) give back exactly their messages and pongs, then the close;
//! - one fault put into such a stream (invalid UTF-8 in a text message, compressed or not; a
//!   message over the limit; each protocol error of RFC 6455 §5) gives back the events before
//!   it and then the close code the RFC asks for (1007, 1009, 1002);
//! - randomly mutated streams never panic, every step consumes bytes or waits for more, and no
//!   message exceeds the limit.

mod fuzz_support;
use campfire::http::websocket::{write_masked_frame, Reader, Step, OP_BINARY, OP_CLOSE, OP_CONT, OP_PING, OP_PONG, OP_TEXT};
use fuzz_support::{mutate, Budget, Rng};

const PIECES: &[&str] = &["a", "hello ", "{\"command\":\"subscribe\"}", "é", "€", "𝄞", "κόσμε", "\u{10FFFF}", "\u{FFFD}", "\u{FEFF}", " ", "\n", "\0"];
const INVALID: &[&[u8]] = &[b"\x80", b"\xbf", b"\xc0\xaf", b"\xc2", b"\xe0\x80\x80", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff"];
const MAX: usize = 8192;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Message(Vec<u8>),
    Pong(Vec<u8>),
}

/// What one generated stream holds and what reading it must give.
struct Stream {
    wire: Vec<u8>,
    events: Vec<Event>,
    end: Step,
}

/// A fault to put into a stream, with the close code it must produce.
#[derive(Clone, Copy, Debug)]
enum Fault {
    BadUtf8,
    TooBig,
    Protocol(&'static str),
}

const PROTOCOL_FAULTS: &[&str] = &[
    "reserved opcode",
    "reserved control opcode",
    "rsv2",
    "rsv3",
    "rsv1 on a ping",
    "unmasked",
    "fragmented ping",
    "ping of 126 bytes",
    "continuation without start",
    "text during fragmentation",
    "close code 1005",
    "close code 999",
    "close code 2999",
    "1-byte close",
    "close reason not utf-8",
];

fn text(r: &mut Rng, pieces: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for _ in 0..pieces {
        v.extend_from_slice(r.pick(PIECES).as_bytes());
    }
    v
}

/// Raw deflate of `data` at `level`, sync-flushed, without the `00 00 ff ff` (RFC 7692 §7.2.1).
fn deflate(data: &[u8], level: u8) -> Vec<u8> {
    use miniz_oxide::deflate::core::{compress_to_output, create_comp_flags_from_zip_params, CompressorOxide, TDEFLFlush};
    let mut d = CompressorOxide::new(create_comp_flags_from_zip_params(level as i32, 0, 0));
    let mut body = Vec::new();
    compress_to_output(&mut d, data, TDEFLFlush::Sync, |chunk| {
        body.extend_from_slice(chunk);
        true
    });
    body.truncate(body.len().saturating_sub(4));
    body
}

fn frame(r: &mut Rng, fin: bool, opcode: u8, rsv: u8, payload: &[u8], wire: &mut Vec<u8>) {
    let start = wire.len();
    let mask = [r.next() as u8, r.next() as u8, r.next() as u8, r.next() as u8];
    write_masked_frame(fin, opcode, mask, payload, wire);
    wire[start] |= rsv;
}

/// Cuts `n` bytes into 1–6 fragments at random points (empty ones included).
fn cuts(r: &mut Rng, n: usize) -> Vec<usize> {
    let mut at: Vec<usize> = (0..r.below(6)).map(|_| r.below(n + 1)).collect();
    at.sort();
    at.push(n);
    at
}

/// A ping or pong between frames, now and then.
fn control(r: &mut Rng, wire: &mut Vec<u8>, events: &mut Vec<Event>) {
    if r.one_in(3) {
        let n = r.below(126);
        let payload = r.bytes(n);
        if r.one_in(3) {
            frame(r, true, OP_PONG, 0, &payload, wire);
        } else {
            frame(r, true, OP_PING, 0, &payload, wire);
            events.push(Event::Pong(payload));
        }
    }
}

/// Appends the frames of a protocol fault; returns the close code it must produce.
fn protocol_fault(r: &mut Rng, kind: &str, wire: &mut Vec<u8>) -> u16 {
    let (pick, coin) = (r.below(5) as u8, r.one_in(2));
    match kind {
        "reserved opcode" => frame(r, true, 3 + pick, 0, b"x", wire),
        "reserved control opcode" => frame(r, true, 0xB + pick, 0, b"", wire),
        "rsv2" => frame(r, true, OP_TEXT, 0x20, b"{}", wire),
        "rsv3" => frame(r, true, OP_BINARY, 0x10, b"", wire),
        "rsv1 on a ping" => frame(r, true, OP_PING, 0x40, b"p", wire),
        "unmasked" => wire.extend_from_slice(&[0x81, 0x02, b'h', b'i']),
        "fragmented ping" => frame(r, false, OP_PING, 0, b"p", wire),
        "ping of 126 bytes" => frame(r, true, OP_PING, 0, &[7; 126], wire),
        "continuation without start" => frame(r, coin, OP_CONT, 0, b"x", wire),
        "text during fragmentation" => {
            frame(r, false, OP_TEXT, 0, b"a", wire);
            frame(r, true, OP_TEXT, 0, b"b", wire);
        }
        "close code 1005" => frame(r, true, OP_CLOSE, 0, &1005u16.to_be_bytes(), wire),
        "close code 999" => frame(r, true, OP_CLOSE, 0, &999u16.to_be_bytes(), wire),
        "close code 2999" => frame(r, true, OP_CLOSE, 0, &2999u16.to_be_bytes(), wire),
        "1-byte close" => frame(r, true, OP_CLOSE, 0, &[3], wire),
        "close reason not utf-8" => {
            frame(r, true, OP_CLOSE, 0, b"\x03\xe8ok\xed\xa0\x80", wire);
            return 1007;
        }
        _ => unreachable!(),
    }
    1002
}

/// A stream of up to 8 messages and a close; with `fault`, one message (or the gap before it)
/// is made bad and the stream's expected end is that fault's close. Returns the stream and
/// how many of its events must come out before the fault.
fn generate(r: &mut Rng, deflate_on: bool, fault: Option<Fault>) -> (Stream, usize) {
    let (mut wire, mut events) = (Vec::new(), Vec::new());
    let count = 1 + r.below(8);
    let bad_at = r.below(count);
    let mut end = None;
    let mut before_fault = 0;
    for i in 0..count {
        let is_text = fault.is_some_and(|f| matches!(f, Fault::BadUtf8) && i == bad_at) || r.one_in(2);
        let size = if r.one_in(20) { 100 + r.below(1500) } else { r.below(40) };
        let mut payload = if is_text { text(r, size) } else { r.bytes(size * 3) };
        // Room for a fault's bytes without passing the limit.
        payload.truncate(MAX - 8);
        if is_text {
            // Cut back to a character boundary after the truncation.
            while std::str::from_utf8(&payload).is_err() {
                payload.pop();
            }
        }
        let mut expected = Some(Event::Message(payload.clone()));
        if i == bad_at {
            before_fault = events.len();
            match fault {
                Some(Fault::BadUtf8) => {
                    let mut at = r.below(payload.len() + 1);
                    while std::str::from_utf8(&payload[..at]).is_err() {
                        at -= 1;
                    }
                    payload.splice(at..at, r.pick(INVALID).iter().copied());
                    end = Some(1007);
                    expected = None;
                }
                Some(Fault::TooBig) => {
                    let n = MAX + 1 + r.below(3000);
                    payload = if is_text { "x".repeat(n).into_bytes() } else { r.bytes(n) };
                    end = Some(1009);
                    expected = None;
                }
                Some(Fault::Protocol(kind)) => {
                    end = Some(protocol_fault(r, kind, &mut wire));
                }
                None => {}
            }
        }
        let compressed = deflate_on && r.one_in(2);
        let body = if compressed { deflate(&payload, r.below(10) as u8) } else { payload.clone() };
        let op = if is_text { OP_TEXT } else { OP_BINARY };
        let mut from = 0;
        let points = cuts(r, body.len());
        for (k, &to) in points.iter().enumerate() {
            let fin = k + 1 == points.len();
            let rsv = if compressed && k == 0 { 0x40 } else { 0 };
            frame(r, fin, if k == 0 { op } else { OP_CONT }, rsv, &body[from..to], &mut wire);
            from = to;
            if !fin {
                control(r, &mut wire, &mut events);
            }
        }
        if let Some(e) = expected {
            events.push(e);
        }
        control(r, &mut wire, &mut events);
    }
    let code = r.pick(&[1000u16, 1001, 1003, 1011, 3000, 4999]);
    let mut close = code.to_be_bytes().to_vec();
    if r.one_in(2) {
        close.extend_from_slice("bye κόσμε".as_bytes());
    }
    frame(r, true, OP_CLOSE, 0, &close, &mut wire);
    let end = match end {
        Some(c) => Step::Close(c, Some("")),
        None => Step::Close(code, None),
    };
    (Stream { wire, events, end }, before_fault)
}

/// Feeds `wire` to a fresh reader in random pieces, as the loop does; returns the events and
/// the step that ended it (a close, or `NeedMore` when the bytes ran out). Checks the reader's
/// invariants on the way.
fn run(r: &mut Rng, wire: &[u8], deflate: bool, max: usize) -> (Vec<Event>, Step) {
    let mut buf: Vec<u8> = Vec::new();
    let (mut start, mut fed) = (0, 0);
    let (mut reader, mut msg, mut events) = (Reader::default(), Vec::new(), Vec::new());
    let piece = if r.one_in(4) { 1 } else { 1 + r.below(wire.len().max(1)) };
    loop {
        let n = piece.min(wire.len() - fed);
        buf.extend_from_slice(&wire[fed..fed + n]);
        fed += n;
        loop {
            let at = start;
            let (step, used) = reader.read(&mut buf[at..], deflate, &mut msg, max);
            assert!(used <= buf.len() - at);
            start += used;
            match step {
                Step::NeedMore => {
                    assert_eq!(used, 0);
                    break;
                }
                Step::Close(..) => return (events, step),
                _ => assert!(used > 0, "a step that is not a wait consumes its frame"),
            }
            match step {
                Step::Message => {
                    assert!(msg.len() <= max, "message over the limit");
                    events.push(Event::Message(msg.clone()));
                }
                Step::Pong(range) => {
                    assert!(range.end <= used && range.len() <= 125);
                    events.push(Event::Pong(buf[at + range.start..at + range.end].to_vec()));
                }
                _ => {}
            }
        }
        if fed == wire.len() {
            return (events, Step::NeedMore);
        }
    }
}

fn same_end(got: &Step, want: &Step) -> bool {
    match (got, want) {
        // A refusal's reason text is the reader's business; its code is the RFC's.
        (Step::Close(a, Some(_)), Step::Close(b, Some(_))) => a == b,
        _ => got == want,
    }
}

#[test]
fn generated_streams_read_back_and_faults_close_with_the_right_code() {
    let mut r = Rng::new(0x3B50C4E7F2A6E);
    let mut budget = Budget::new("websocket reader", 20_000).share(80);
    let mut prev = Vec::new();
    while budget.more() {
        let deflate = r.one_in(2);
        let fault = match r.below(4) {
            0 => Some(Fault::BadUtf8),
            1 if r.one_in(3) => Some(Fault::TooBig),
            1 => Some(Fault::Protocol(r.pick(PROTOCOL_FAULTS))),
            _ => None,
        };
        let (s, before) = generate(&mut r, deflate, fault);
        let (events, end) = run(&mut r, &s.wire, deflate, MAX);
        assert!(same_end(&end, &s.end), "{fault:?}: ended with {end:?}, want {:?}", s.end);
        match fault {
            None => assert_eq!(events, s.events),
            Some(f) => {
                assert!(events.len() >= before && events[..] == s.events[..events.len()], "{f:?}: {} events of {}, {before} before the fault", events.len(), s.events.len());
            }
        }
        // The same stream mutated: no panic, and `run`'s invariants hold.
        let mut m = s.wire.clone();
        mutate(&mut r, &mut m, &[0x00, 0x01, 0x08, 0x09, 0x0a, 0x40, 0x7e, 0x7f, 0x80, 0x81, 0xc1, 0xff], &prev);
        let (deflate, max) = (r.one_in(2), 1 + r.below(2 * MAX));
        run(&mut r, &m, deflate, max);
        prev = s.wire;
    }
}

#[test]
fn compressed_fragments_inflate_across_any_cut() {
    let mut r = Rng::new(0xDEF1A7E);
    let mut budget = Budget::new("websocket inflate", 3_000).share(20);
    while budget.more() {
        let n = r.below(400);
        let data = text(&mut r, n);
        let level = r.below(10) as u8;
        let body = deflate(&data, level);
        let mut wire = Vec::new();
        let (a, b) = (r.below(body.len() + 1), r.below(body.len() + 1));
        let (a, b) = (a.min(b), a.max(b));
        frame(&mut r, false, OP_TEXT, 0x40, &body[..a], &mut wire);
        frame(&mut r, false, OP_CONT, 0, &body[a..b], &mut wire);
        frame(&mut r, true, OP_CONT, 0, &body[b..], &mut wire);
        let (events, end) = run(&mut r, &wire, true, MAX);
        assert_eq!((events, end), (vec![Event::Message(data)], Step::NeedMore), "level {level}, cuts {a} {b}");
    }
}
