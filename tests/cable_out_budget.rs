//! CAMPFIRE_OUT_BUDGET counts WebSocket queues too (issue 15): sockets that stop reading are
//! dropped once what the process holds for them passes the budget, even while each stays under
//! its own CAMPFIRE_WS_OUT_MAX, and a socket that reads is not disturbed.

mod cable_support;
use cable_support::*;
use std::time::Duration;

const FRAMES: usize = 128;

#[test]
fn sockets_that_stop_reading_are_dropped_past_the_process_budget() {
    // Each socket may hold 64 MiB on its own; the process, 256 KiB.
    let srv = Server::start(&[("CAMPFIRE_TEST_ROUTES", "1"), ("CAMPFIRE_OUT_BUDGET", "262144"), ("CAMPFIRE_WS_OUT_MAX", "67108864")]);
    let bea = add_user(&srv, 2, "Bea");
    let unread = r#"{"channel":"UnreadRoomsChannel"}"#;
    let mut stuck: Vec<Client> = (0..8).map(|_| Client::welcomed(&srv, &bea)).collect();
    for c in &mut stuck {
        assert_eq!(c.subscribe(unread), "confirm_subscription");
    }
    let mut fine = Client::welcomed(&srv, &bea);
    assert_eq!(fine.subscribe(unread), "confirm_subscription");
    // 128 frames of 64 KiB: 8 MiB for each stuck socket, far under its own cap, but more than
    // the kernel's buffers take (about 4 MiB here), and eight of them hold far more than the
    // budget.
    let big = format!("\"{}\"", "x".repeat(64 * 1024));
    for _ in 0..FRAMES {
        broadcast(&srv, "user_2_unreads", &big);
        assert_eq!(fine.recv().unwrap().len(), data(unread, &big).len());
    }
    let mut got = Vec::new();
    for c in &mut stuck {
        let mut frames = 0;
        while let Some(f) = c.next(Duration::from_secs(2)) {
            assert_eq!(f.opcode, 1);
            // Heartbeats arrive too; count the broadcasts.
            frames += usize::from(f.payload.len() > 64 * 1024);
        }
        got.push(frames);
    }
    eprintln!("broadcasts each stuck socket got of {FRAMES}: {got:?}");
    // A survivor holds at least a frame (64 KiB) beyond the kernel's share, so at most four fit
    // in 256 KiB. (Reading them one after another, the last ones may also pass the 15 s write
    // stall timeout; that alone drops two or so.)
    let dropped = got.iter().filter(|&&n| n < FRAMES).count();
    assert!(dropped >= 4, "{dropped} of 8 sockets dropped: {got:?}");
    broadcast(&srv, "user_2_unreads", r#"{"roomId":1}"#);
    assert_eq!(fine.recv().unwrap(), data(unread, r#"{"roomId":1}"#));
}
