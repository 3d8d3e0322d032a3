//! Fan-out through the hub across loops: many sockets each receive every broadcast exactly
//! once and in order; a socket that stops reading is dropped instead of buffered without bound,
//! and the others do not notice.

mod cable_support;
use cable_support::*;
use std::time::Duration;

#[test]
fn every_client_gets_every_broadcast_once_in_order() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    let unread = r#"{"channel":"UnreadRoomsChannel"}"#;
    let mut clients: Vec<Client> = (0..200).map(|_| Client::welcomed(&srv, &bea)).collect();
    for c in &mut clients {
        assert_eq!(c.subscribe(unread), "confirm_subscription");
    }
    for i in 0..50 {
        broadcast(&srv, "user_2_unreads", &format!(r#"{{"roomId":{i}}}"#));
    }
    for c in &mut clients {
        for i in 0..50 {
            assert_eq!(c.recv().unwrap(), data(unread, &format!(r#"{{"roomId":{i}}}"#)));
        }
        assert!(c.quiet_for(Duration::from_millis(5)), "no duplicates");
    }
}

#[test]
fn a_client_that_stops_reading_is_dropped() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    let unread = r#"{"channel":"UnreadRoomsChannel"}"#;
    let mut stuck = Client::welcomed(&srv, &bea);
    let mut fine = Client::welcomed(&srv, &bea);
    assert_eq!(stuck.subscribe(unread), "confirm_subscription");
    assert_eq!(fine.subscribe(unread), "confirm_subscription");
    let big = format!("\"{}\"", "x".repeat(512 * 1024));
    for _ in 0..64 {
        broadcast(&srv, "user_2_unreads", &big);
        // The healthy client keeps up.
        assert_eq!(fine.recv().unwrap().len(), data(unread, &big).len());
    }
    // 32 MiB were sent; the stuck client, reading at last, finds far less and then the end of
    // the stream, without a close frame: it was cut off once its backlog passed the limit.
    let mut frames = 0;
    while let Some(f) = stuck.next(Duration::from_secs(5)) {
        assert_eq!(f.opcode, 1);
        frames += 1;
    }
    assert!(frames < 64, "{frames} frames: never dropped");
    broadcast(&srv, "user_2_unreads", r#"{"roomId":1}"#);
    assert_eq!(fine.recv().unwrap(), data(unread, r#"{"roomId":1}"#));
}
