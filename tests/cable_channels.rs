//! Every Campfire channel end to end (spec/06 §6) and revocation (§5.3): room message streams
//! guarded by membership, Turbo streams by signature, presence bookkeeping and read notices,
//! typing, unread notices; removal from a room stops deliveries at once, a ban disconnects.

mod cable_support;
use cable_support::auth_support::{first_run, Jar};
use cable_support::*;
use campfire::db::rooms::Kind;
use std::time::{Duration, Instant};

fn room_messages_ident(kind: Kind, room: i64) -> String {
    format!(r#"{{"channel":"RoomMessagesChannel","signed_stream_name":"{}"}}"#, signed(room_stream(kind, room).as_bytes()))
}

fn wait_for(mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn room_messages_need_a_membership_and_deliver_broadcasts() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    add_user(&srv, 3, "Cy");
    add_room(&srv, 10, "Rooms::Open", &[2, 3]);
    add_room(&srv, 11, "Rooms::Closed", &[3]);

    let mut c = Client::welcomed(&srv, &bea);
    let mine = room_messages_ident(Kind::Open, 10);
    assert_eq!(c.subscribe(&mine), "confirm_subscription");
    assert_eq!(c.subscribe(&room_messages_ident(Kind::Closed, 11)), "reject_subscription", "not a member");
    assert_eq!(c.subscribe(&room_messages_ident(Kind::Closed, 10)), "reject_subscription", "wrong STI class");
    assert_eq!(c.subscribe(&room_messages_ident(Kind::Open, 99)), "reject_subscription", "no such room");
    let not_messages = format!(r#"{{"channel":"RoomMessagesChannel","signed_stream_name":"{}"}}"#, signed(b"rooms"));
    assert_eq!(c.subscribe(&not_messages), "reject_subscription");
    // Message streams are only served by RoomMessagesChannel.
    let via_turbo = format!(r#"{{"channel":"Turbo::StreamsChannel","signed_stream_name":"{}"}}"#, signed(room_stream(Kind::Open, 10).as_bytes()));
    assert_eq!(c.subscribe(&via_turbo), "reject_subscription");

    let html = r#""<turbo-stream action=\"append\" target=\"messages_rooms_open_10\"><template><p>hi</p></template></turbo-stream>""#;
    broadcast(&srv, &room_stream(Kind::Open, 10), html);
    assert_eq!(c.recv().unwrap(), data(&mine, html));
    // Other streams do not reach this socket.
    broadcast(&srv, &room_stream(Kind::Closed, 11), html);
    assert!(c.quiet_for(Duration::from_millis(300)));

    // After unsubscribing nothing more arrives.
    c.send(&command("unsubscribe", &mine, None));
    std::thread::sleep(Duration::from_millis(100));
    broadcast(&srv, &room_stream(Kind::Open, 10), html);
    assert!(c.quiet_for(Duration::from_millis(300)));
}

#[test]
fn turbo_streams_follow_the_signature() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    let mut a = Client::welcomed(&srv, &bea);
    let mut b = Client::welcomed(&srv, &bea);
    let rooms = format!(r#"{{"channel":"Turbo::StreamsChannel","signed_stream_name":"{}"}}"#, signed(b"rooms"));
    let own = String::from_utf8(campfire::app::cable::streams::user_rooms(2)).unwrap();
    let own_ident = format!(r#"{{"channel":"Turbo::StreamsChannel","signed_stream_name":"{}"}}"#, signed(own.as_bytes()));
    assert_eq!(a.subscribe(&rooms), "confirm_subscription");
    assert_eq!(a.subscribe(&own_ident), "confirm_subscription");
    assert_eq!(b.subscribe(&rooms), "confirm_subscription");
    let html = r#""<turbo-stream action=\"remove\" target=\"list_rooms_open_1\"></turbo-stream>""#;
    broadcast(&srv, "rooms", html);
    assert_eq!(a.recv().unwrap(), data(&rooms, html));
    assert_eq!(b.recv().unwrap(), data(&rooms, html));
    broadcast(&srv, &own, html);
    assert_eq!(a.recv().unwrap(), data(&own_ident, html));
    assert!(b.quiet_for(Duration::from_millis(300)));
}

#[test]
fn presence_tracks_connections_and_tells_other_tabs() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    add_room(&srv, 10, "Rooms::Open", &[2]);
    add_room(&srv, 11, "Rooms::Open", &[]);
    srv.sql("UPDATE memberships SET unread_at = '2026-01-01 00:00:00.000000' WHERE room_id = 10");
    let connections = || srv.query_int("SELECT connections FROM memberships WHERE room_id = 10 AND user_id = 2");

    let mut sidebar = Client::welcomed(&srv, &bea);
    assert_eq!(sidebar.subscribe(r#"{"channel":"ReadRoomsChannel"}"#), "confirm_subscription");

    let presence = r#"{"channel":"PresenceChannel","room_id":10}"#;
    let mut tab1 = Client::welcomed(&srv, &bea);
    assert_eq!(tab1.subscribe(presence), "confirm_subscription");
    assert_eq!(sidebar.recv().unwrap(), data(r#"{"channel":"ReadRoomsChannel"}"#, r#"{"room_id":10}"#));
    assert!(wait_for(|| connections() == 1));
    assert_eq!(srv.query_int("SELECT unread_at IS NULL FROM memberships WHERE room_id = 10 AND user_id = 2"), 1);

    // room_id as a string is accepted too; a second tab counts twice.
    let mut tab2 = Client::welcomed(&srv, &bea);
    assert_eq!(tab2.subscribe(r#"{"channel":"PresenceChannel","room_id":"10"}"#), "confirm_subscription");
    assert!(wait_for(|| connections() == 2));
    assert_eq!(tab2.subscribe(r#"{"channel":"PresenceChannel","room_id":11}"#), "reject_subscription");

    // The explicit actions.
    tab1.send(&command("message", presence, Some(r#"{"action":"absent"}"#)));
    assert!(wait_for(|| connections() == 1));
    tab1.send(&command("message", presence, Some(r#"{"action":"present"}"#)));
    assert!(wait_for(|| connections() == 2));
    sidebar.recv().unwrap();
    sidebar.recv().unwrap();

    // Closing a socket runs `absent`; the last one clears connected_at.
    drop(tab1);
    assert!(wait_for(|| connections() == 1));
    drop(tab2);
    assert!(wait_for(|| connections() == 0));
    assert_eq!(srv.query_int("SELECT connected_at IS NULL FROM memberships WHERE room_id = 10 AND user_id = 2"), 1);
}

#[test]
fn typing_reaches_every_subscriber_including_the_sender() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea \"B\" Smith");
    let cy = add_user(&srv, 3, "Cy");
    add_room(&srv, 10, "Rooms::Open", &[2, 3]);
    let typing = r#"{"channel":"TypingNotificationsChannel","room_id":10}"#;
    let mut b = Client::welcomed(&srv, &bea);
    let mut c = Client::welcomed(&srv, &cy);
    assert_eq!(b.subscribe(typing), "confirm_subscription");
    assert_eq!(c.subscribe(typing), "confirm_subscription");
    b.send(&command("message", typing, Some(r#"{"action":"start"}"#)));
    let start = r#"{"action":"start","user":{"id":2,"name":"Bea \"B\" Smith"}}"#;
    assert_eq!(b.recv().unwrap(), data(typing, start));
    assert_eq!(c.recv().unwrap(), data(typing, start));
    c.send(&command("message", typing, Some(r#"{"action":"stop"}"#)));
    assert_eq!(b.recv().unwrap(), data(typing, r#"{"action":"stop","user":{"id":3,"name":"Cy"}}"#));
    // Unknown actions do nothing.
    c.send(&command("message", typing, Some(r#"{"action":"dance"}"#)));
    assert!(b.quiet_for(Duration::from_millis(300)));
}

#[test]
fn unread_notices_are_per_user() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    let cy = add_user(&srv, 3, "Cy");
    let unread = r#"{"channel":"UnreadRoomsChannel"}"#;
    let mut b = Client::welcomed(&srv, &bea);
    let mut c = Client::welcomed(&srv, &cy);
    assert_eq!(b.subscribe(unread), "confirm_subscription");
    assert_eq!(c.subscribe(unread), "confirm_subscription");
    broadcast(&srv, "user_3_unreads", r#"{"roomId":10}"#);
    assert_eq!(c.recv().unwrap(), data(unread, r#"{"roomId":10}"#));
    assert!(b.quiet_for(Duration::from_millis(300)));
}

#[test]
fn removal_from_a_room_stops_deliveries_and_reconnects() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    add_room(&srv, 10, "Rooms::Closed", &[2]);
    add_room(&srv, 12, "Rooms::Open", &[2]);
    let ten = room_messages_ident(Kind::Closed, 10);
    let twelve = room_messages_ident(Kind::Open, 12);
    let mut c = Client::welcomed(&srv, &bea);
    assert_eq!(c.subscribe(&ten), "confirm_subscription");
    assert_eq!(c.subscribe(&twelve), "confirm_subscription");

    let mut r = Request::get("/__cable/remove_membership?user_id=2&room_id=10");
    r.method = "POST";
    assert_eq!(srv.send(&r).status, 204);
    // From here on nothing of room 10 is delivered, even before the socket is gone.
    broadcast(&srv, &room_stream(Kind::Closed, 10), r#""after removal""#);
    let f = c.next(Duration::from_secs(5)).unwrap();
    assert_eq!(f.text(), r#"{"type":"disconnect","reason":"remote","reconnect":true}"#);
    assert_eq!(c.next(Duration::from_secs(5)).unwrap().opcode, 8);
    assert_eq!(c.next(Duration::from_secs(5)), None);

    // Reconnecting, the lost room is refused; the other still works.
    let mut c = Client::welcomed(&srv, &bea);
    assert_eq!(c.subscribe(&ten), "reject_subscription");
    assert_eq!(c.subscribe(&twelve), "confirm_subscription");
}

#[test]
fn a_ban_disconnects_every_socket_of_the_user() {
    let srv = server();
    let mut admin: Jar = first_run(&srv);
    let bea = add_user(&srv, 2, "Bea");
    add_user(&srv, 3, "Cy");
    let cy = session_cookie("tok3");
    let mut b1 = Client::welcomed(&srv, &bea);
    let mut b2 = Client::welcomed(&srv, &bea);
    let mut c = Client::welcomed(&srv, &cy);
    let unread = r#"{"channel":"UnreadRoomsChannel"}"#;
    assert_eq!(b1.subscribe(unread), "confirm_subscription");
    assert_eq!(c.subscribe(unread), "confirm_subscription");

    let r = admin.send(&srv, Request::post_form("/users/2/ban", &[]));
    assert_eq!(r.status, 302, "{r:?}\n{}", srv.stderr());
    for b in [&mut b1, &mut b2] {
        let f = b.next(Duration::from_secs(5)).unwrap();
        assert_eq!(f.text(), r#"{"type":"disconnect","reason":"remote","reconnect":false}"#);
        assert_eq!(b.next(Duration::from_secs(5)).unwrap().opcode, 8);
        assert_eq!(b.next(Duration::from_secs(5)), None);
    }
    // Cy is untouched.
    broadcast(&srv, "user_3_unreads", r#"{"roomId":1}"#);
    assert_eq!(c.recv().unwrap(), data(unread, r#"{"roomId":1}"#));
    // And the banned user cannot come back: the session is gone.
    let mut again = Client::open(&srv, Some(&bea));
    assert_eq!(again.recv(), Some(r#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#.into()));
}
