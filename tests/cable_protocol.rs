//! `/cable` end to end against the real binary: the handshake (origin, sub-protocol),
//! authentication (welcome / unauthorized), the Action Cable commands (confirm and reject with
//! the identifier echoed byte for byte, duplicates ignored, pings), and RFC 6455 behaviour
//! (fragments, ping/pong, close, size limit 1009, protocol errors 1002).

mod cable_support;
use cable_support::*;
use std::time::Duration;

#[test]
fn handshake_selects_actioncable_and_checks_origin() {
    let srv = server();
    let cookie = add_user(&srv, 2, "Bea");
    let c = Client::open(&srv, Some(&cookie));
    assert!(c.head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), "{}", c.head);
    assert!(c.head.contains("Sec-WebSocket-Protocol: actioncable-v1-json\r\n"), "{}", c.head);
    assert!(c.head.contains("Upgrade: websocket\r\n"));

    for origin in [Some("http://evil.example"), Some("http://127.0.0.1:1"), None] {
        let c = Client::raw(srv.port, &handshake(srv.port, Some(&cookie), origin));
        assert!(c.head.starts_with("HTTP/1.1 404 "), "{origin:?}: {}", c.head);
    }
    // Same origin, but not a WebSocket request.
    let r = srv.send(&Request::get("/cable").header("Origin", &format!("http://127.0.0.1:{}", srv.port)));
    assert_eq!((r.status, r.body.as_str()), (404, "Page not found"));
    // `/cable/x` is not the endpoint.
    assert_eq!(srv.send(&Request::get("/cable/x")).status, 404);
}

#[test]
fn no_or_bad_cookie_is_told_unauthorized_and_closed() {
    let srv = server();
    add_user(&srv, 2, "Bea");
    for cookie in [None, Some("garbage"), Some(session_cookie("no-such-token").as_str())] {
        let mut c = Client::open(&srv, cookie);
        let f = c.next(Duration::from_secs(5)).expect("a frame");
        assert_eq!(f.text(), r#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#);
        let close = c.next(Duration::from_secs(5)).expect("a close frame");
        assert_eq!(close.opcode, 8);
        assert_eq!(c.next(Duration::from_secs(5)), None, "then the server closes");
    }
    // A deactivated user's surviving session does not authenticate either.
    let cookie = add_user(&srv, 3, "Cy");
    srv.sql("UPDATE users SET status = 1 WHERE id = 3");
    let mut c = Client::open(&srv, Some(&cookie));
    assert_eq!(c.recv(), Some(r#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#.into()));
}

#[test]
fn subscriptions_echo_the_identifier_and_ignore_duplicates() {
    let srv = server();
    let cookie = add_user(&srv, 2, "Bea");
    let mut c = Client::welcomed(&srv, &cookie);
    // Spacing and key order as the client wrote them come back unchanged.
    let heartbeat = r#"{"channel":"HeartbeatChannel", "x" : [1, 2]}"#;
    assert_eq!(c.subscribe(heartbeat), "confirm_subscription");
    c.send(&command("subscribe", heartbeat, None));
    assert!(c.quiet_for(Duration::from_millis(400)), "a duplicate subscribe gets no answer");

    assert_eq!(c.subscribe(r#"{"channel":"NoSuchChannel"}"#), "reject_subscription");
    assert_eq!(c.subscribe(r#"{"channel":"ApplicationCable::Channel"}"#), "reject_subscription");
    assert_eq!(c.subscribe(r#"{"channel":"PresenceChannel"}"#), "reject_subscription", "no room_id");
    assert_eq!(c.subscribe(r#"{"channel":"Turbo::StreamsChannel","signed_stream_name":"forged--00"}"#), "reject_subscription");

    // After an unsubscribe the same identifier is processed anew.
    c.send(&command("unsubscribe", heartbeat, None));
    assert_eq!(c.subscribe(heartbeat), "confirm_subscription");

    // Garbage and unknown subscriptions are ignored without closing the socket.
    c.send("not json");
    c.send(&command("message", r#"{"channel":"Nope"}"#, Some(r#"{"action":"x"}"#)));
    assert_eq!(c.subscribe(r#"{"channel":"UnreadRoomsChannel"}"#), "confirm_subscription");
}

#[test]
fn the_subscription_limit_rejects_beyond_it() {
    let srv = server();
    // The limit is configurable; the default is tested here.
    let cookie = add_user(&srv, 2, "Bea");
    let mut c = Client::welcomed(&srv, &cookie);
    for i in 0..campfire::config::CABLE_MAX_SUBSCRIPTIONS {
        assert_eq!(c.subscribe(&format!(r#"{{"channel":"HeartbeatChannel","n":{i}}}"#)), "confirm_subscription");
    }
    assert_eq!(c.subscribe(r#"{"channel":"HeartbeatChannel","n":"one too many"}"#), "reject_subscription");
}

#[test]
fn pings_arrive_every_few_seconds() {
    let srv = server();
    let cookie = add_user(&srv, 2, "Bea");
    let mut c = Client::welcomed(&srv, &cookie);
    // The client declares a socket stale after 6 s without a frame; two pings must come
    // well within that (generous bounds: the machine is shared).
    for _ in 0..2 {
        let f = c.next(Duration::from_secs(5)).expect("a ping within 5 s");
        let t = f.text();
        let secs: u64 = t.strip_prefix(r#"{"type":"ping","message":"#).and_then(|r| r.strip_suffix('}')).unwrap().parse().unwrap();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        assert!(now.abs_diff(secs) <= 2, "{secs} vs {now}");
    }
}

#[test]
fn fragments_control_frames_and_close() {
    let srv = server();
    let cookie = add_user(&srv, 2, "Bea");
    let mut c = Client::welcomed(&srv, &cookie);
    // A subscribe split over three frames with a ping in between.
    let cmd = command("subscribe", r#"{"channel":"HeartbeatChannel"}"#, None);
    let (a, rest) = cmd.as_bytes().split_at(10);
    let (b, d) = rest.split_at(20);
    c.send_frame(false, 1, a);
    c.send_frame(false, 0, b);
    c.send_frame(true, 9, b"are you there");
    let pong = c.next(Duration::from_secs(5)).unwrap();
    assert_eq!((pong.opcode, pong.payload.as_slice()), (10, &b"are you there"[..]));
    c.send_frame(true, 0, d);
    assert!(c.recv().unwrap().ends_with(r#""type":"confirm_subscription"}"#));

    c.send_frame(true, 8, &1000u16.to_be_bytes());
    let close = c.next(Duration::from_secs(5)).unwrap();
    assert_eq!((close.opcode, close.payload.as_slice()), (8, &1000u16.to_be_bytes()[..]));
    assert_eq!(c.next(Duration::from_secs(5)), None);
}

#[test]
fn oversized_messages_close_1009_and_bad_frames_1002() {
    let srv = server();
    let cookie = add_user(&srv, 2, "Bea");

    let mut c = Client::welcomed(&srv, &cookie);
    c.send_frame(true, 1, &vec![b' '; campfire::http::websocket::MAX_MESSAGE + 1]);
    let close = c.next(Duration::from_secs(5)).unwrap();
    assert_eq!((close.opcode, close.payload.as_slice()), (8, &1009u16.to_be_bytes()[..]));

    // The limit applies to the reassembled message too.
    let mut c = Client::welcomed(&srv, &cookie);
    let half = vec![b' '; campfire::http::websocket::MAX_MESSAGE / 2 + 1];
    c.send_frame(false, 1, &half);
    c.send_frame(true, 0, &half);
    let close = c.next(Duration::from_secs(5)).unwrap();
    assert_eq!(close.payload, 1009u16.to_be_bytes());

    // Unmasked client frame.
    let mut c = Client::welcomed(&srv, &cookie);
    use std::io::Write;
    c.s.write_all(&[0x81, 0x02, b'h', b'i']).unwrap();
    let close = c.next(Duration::from_secs(5)).unwrap();
    assert_eq!(close.payload, 1002u16.to_be_bytes());

    // A continuation with no message started.
    let mut c = Client::welcomed(&srv, &cookie);
    c.send_frame(true, 0, b"x");
    assert_eq!(c.next(Duration::from_secs(5)).unwrap().payload, 1002u16.to_be_bytes());

    // The server is fine afterwards.
    assert_eq!(srv.send(&Request::get("/up")).status, 200);
}

#[test]
fn permessage_deflate_compresses_broadcasts_once_for_all() {
    let srv = server();
    let cookie = add_user(&srv, 2, "Bea");
    let offer = "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n";
    let mut a = Client::open_with(&srv, Some(&cookie), offer);
    assert!(
        a.head.contains("Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover\r\n"),
        "{}",
        a.head
    );
    assert_eq!(a.recv().as_deref(), Some(r#"{"type":"welcome"}"#));
    let mut plain = Client::welcomed(&srv, &cookie);
    assert!(!plain.head.contains("Sec-WebSocket-Extensions"));

    // A compressed command is understood.
    let unread = r#"{"channel":"UnreadRoomsChannel"}"#;
    use std::io::Write;
    a.s.write_all(&deflated(command("subscribe", unread, None).as_bytes())).unwrap();
    assert!(a.recv().unwrap().ends_with(r#""type":"confirm_subscription"}"#));
    assert_eq!(plain.subscribe(unread), "confirm_subscription");

    let html = format!("\"{}\"", "<turbo-stream action=\\\"append\\\" target=\\\"x\\\"><template>hello</template></turbo-stream>".repeat(20));
    broadcast(&srv, "user_2_unreads", &html);
    let f = a.next(Duration::from_secs(5)).unwrap();
    assert!(f.compressed, "the broadcast is compressed for the deflate socket");
    assert_eq!(f.text(), data(unread, &html));
    let g = plain.next(Duration::from_secs(5)).unwrap();
    assert!(!g.compressed);
    assert_eq!(g.text(), data(unread, &html));

    // Compressed garbage closes with 1007.
    let mut bad = masked(true, 1, b"\xff\xff\xff\xff");
    bad[0] |= 0x40;
    a.s.write_all(&bad).unwrap();
    loop {
        let f = a.next(Duration::from_secs(5)).expect("a close frame");
        if f.opcode == 8 {
            assert_eq!(f.payload, 1007u16.to_be_bytes());
            break;
        }
    }
}

#[test]
fn websocket_limits_follow_the_environment() {
    let srv = Server::start(&[("CAMPFIRE_WS_MAX_MESSAGE", "2048"), ("CAMPFIRE_CABLE_MAX_SUBSCRIPTIONS", "2")]);
    let cookie = add_user(&srv, 2, "Bea");
    let mut c = Client::welcomed(&srv, &cookie);
    assert_eq!(c.subscribe(r#"{"channel":"HeartbeatChannel","n":1}"#), "confirm_subscription");
    assert_eq!(c.subscribe(r#"{"channel":"HeartbeatChannel","n":2}"#), "confirm_subscription");
    assert_eq!(c.subscribe(r#"{"channel":"HeartbeatChannel","n":3}"#), "reject_subscription");
    c.send_frame(true, 1, &[b' '; 2049]);
    assert_eq!(c.next(Duration::from_secs(5)).unwrap().payload, 1009u16.to_be_bytes());
}
