//! The bot API's broadcasts (spec/05 by_bots tests "broadcasts once", spec/06 §11.1–11.2):
//! a bot's post, edit, delete, boost and unboost each reach the room's subscribers once, as
//! a browser's would.

mod cable_support;
use cable_support::*;
use campfire::db::rooms::Kind;
use std::time::Duration;

fn ident(room: i64) -> String {
    format!(r#"{{"channel":"RoomMessagesChannel","signed_stream_name":"{}"}}"#, signed(room_stream(Kind::Closed, room).as_bytes()))
}

fn bot_request(method: &'static str, path: &str, body: &str) -> Request {
    let mut r = Request::get(path);
    r.method = method;
    r.body = body.as_bytes().to_vec();
    r
}

/// The next frame that is not a ping.
fn next_broadcast(c: &mut Client) -> String {
    loop {
        let f = c.recv().expect("a broadcast");
        if !f.starts_with(r#"{"type":"ping""#) {
            return f;
        }
    }
}

#[test]
fn bot_writes_broadcast_once() {
    let srv = server();
    let bea = add_user(&srv, 2, "Bea");
    let t = "2026-01-01 00:00:00.000000";
    srv.sql(&format!(
        "INSERT INTO users (id, name, bot_token, role, status, created_at, updated_at) VALUES (7, 'Robo', 'RoboKey12345', 2, 0, '{t}', '{t}')"
    ));
    add_room(&srv, 10, "Rooms::Closed", &[2, 7]);
    let mut c = Client::welcomed(&srv, &bea);
    assert_eq!(c.subscribe(&ident(10)), "confirm_subscription");
    let base = "/rooms/10/7-RoboKey12345/messages";

    assert_eq!(srv.send(&bot_request("POST", base, "Beep boop")).status, 201);
    let id = srv.query_int("SELECT max(id) FROM messages");
    let append = next_broadcast(&mut c);
    assert!(append.contains(r#"action=\"append\""#) && append.contains("Beep boop"), "{append}");
    assert!(c.quiet_for(Duration::from_millis(300)), "one broadcast on the room stream");

    assert_eq!(srv.send(&bot_request("PATCH", &format!("{base}/{id}"), "Boop beep")).status, 200);
    let replace = next_broadcast(&mut c);
    assert!(replace.contains(r#"action=\"replace\""#) && replace.contains("Boop beep"), "{replace}");
    assert!(c.quiet_for(Duration::from_millis(300)));

    let r = srv.send(&bot_request("POST", &format!("{base}/{id}/boosts"), "🤖"));
    assert_eq!(r.status, 201);
    let boost = srv.query_int("SELECT max(id) FROM boosts");
    let chip = next_broadcast(&mut c);
    assert!(chip.contains(r#"action=\"append\""#) && chip.contains("🤖"), "{chip}");
    assert!(c.quiet_for(Duration::from_millis(300)));
    assert_eq!(srv.send(&bot_request("DELETE", &format!("{base}/{id}/boosts/{boost}"), "")).status, 204);
    let unboost = next_broadcast(&mut c);
    assert!(unboost.contains(r#"action=\"remove\""#) && unboost.contains(&format!("boost_{boost}")), "{unboost}");
    assert!(c.quiet_for(Duration::from_millis(300)));

    assert_eq!(srv.send(&bot_request("DELETE", &format!("{base}/{id}"), "")).status, 204);
    let remove = next_broadcast(&mut c);
    assert!(remove.contains(r#"action=\"remove\""#), "{remove}");
    assert!(c.quiet_for(Duration::from_millis(300)));
}
