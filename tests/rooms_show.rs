//! rooms#index, rooms#show (the room page and its permalink form) and rooms#destroy against
//! the real binary and the shared fixtures (spec/02 §4.20, spec/07 §2, bench §4.1/§4.3).

mod support;
use support::*;

fn message_ids(body: &str) -> Vec<i64> {
    body.split("data-message-id=\"").skip(1).filter_map(|s| s.split('"').next()?.parse().ok()).collect()
}

#[test]
fn the_room_page_lists_the_last_messages_oldest_first_and_is_byte_stable() {
    let s = start();
    let r = s.get(DAVID, &format!("/rooms/{WATERCOOLER}"));
    assert_eq!(r.status, 200, "{}", s.srv.stderr());
    assert!(r.body.trim_start().to_ascii_lowercase().starts_with("<!doctype html>"));
    assert!(r.body.trim_end().ends_with("</html>"));
    assert_eq!(message_ids(&r.body), (4..=13).collect::<Vec<_>>());
    for cmid in ["0004", "0013"] {
        assert!(r.body.contains(&format!("id=\"message_{cmid}\"")), "marker {cmid}");
    }
    assert!(r.body.contains("cuckoo clock"));
    assert!(r.body.contains(&format!("id=\"messages_rooms_closed_{WATERCOOLER}\"")));
    assert!(r.body.contains("<title>All Talk</title>"), "title");
    assert!(r.body.contains(&format!("<meta name=\"current-room-id\" content=\"{WATERCOOLER}\">")));
    assert!(r.body.contains(&format!("action=\"/rooms/{WATERCOOLER}/messages\"")), "composer");
    assert!(r.body.contains(&format!("href=\"/rooms/closeds/{WATERCOOLER}/edit\"")), "settings link");
    assert!(r.body.contains(&format!("id=\"involvement_rooms_closed_{WATERCOOLER}\"")), "bell");
    assert!(r.body.contains("src=\"/users/me/sidebar\""), "sidebar frame");
    assert!(r.body.contains("channel=\"RoomMessagesChannel\" signed-stream-name=\""));
    assert!(r.body.contains(&format!("data-messages-page-url-value=\"http://127.0.0.1:{}/rooms/{WATERCOOLER}/messages\"", s.srv.port)));
    let cookie = r.set_cookies().into_iter().find(|c| c.starts_with("last_room=")).expect("last_room set");
    assert!(cookie.starts_with(&format!("last_room={WATERCOOLER};")), "{cookie}");

    // With the cookie already naming this room nothing is set, and the page is the same bytes.
    let again = s.srv.send(
        &Request::get(&format!("/rooms/{WATERCOOLER}")).cookies(&s.jar(DAVID)).header("Cookie", &format!("{}; last_room={WATERCOOLER}", cookie_header(&s, DAVID))),
    );
    assert_eq!(again.status, 200);
    assert!(again.set_cookies().is_empty(), "{:?}", again.set_cookies());
    let third = s.srv.send(
        &Request::get(&format!("/rooms/{WATERCOOLER}")).header("Cookie", &format!("{}; last_room={WATERCOOLER}", cookie_header(&s, DAVID))),
    );
    assert_eq!(again.body, third.body, "byte-stable");
}

fn cookie_header(s: &Seeded, user: i64) -> String {
    format!("session_token={}", s.jar(user).get("session_token").unwrap_or_default())
}

#[test]
fn direct_rooms_are_titled_by_the_other_members() {
    let s = start();
    let r = s.get(DAVID, &format!("/rooms/{DAVID_AND_KEVIN}"));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("<title>Kevin</title>"), "title");
    assert!(r.body.contains("Ping with "));
    assert!(r.body.contains(&format!("href=\"/rooms/directs/{DAVID_AND_KEVIN}/edit\"")));
    assert!(message_ids(&r.body).is_empty());
}

#[test]
fn rooms_the_viewer_does_not_belong_to_redirect_home_with_an_alert() {
    let s = start();
    for path in [format!("/rooms/{WATERCOOLER}"), "/rooms/999".to_string(), "/rooms/abc".to_string()] {
        let mut jar = s.jar(KEVIN);
        let r = jar.send(&s.srv, Request::get(&path));
        assert_eq!((r.status, r.location()), (302, Some("/")), "{path}");
        // The alert shows on the next page that renders a flash.
        let page = jar.send(&s.srv, Request::get(&format!("/rooms/{HQ}")));
        assert!(page.body.contains("Room not found or inaccessible"), "{path}");
    }
}

#[test]
fn permalinks_show_the_message_with_its_neighbours() {
    let s = start();
    // 50 more messages in designers, then a permalink to the second one.
    let mut sql = String::new();
    for k in 0..50 {
        let id = 100 + k;
        sql += &format!(
            "INSERT INTO messages (id, room_id, creator_id, client_message_id, created_at, updated_at) VALUES ({id}, {DESIGNERS}, {DAVID}, 'c{id}', datetime('now', '+{k} seconds'), datetime('now', '+{k} seconds'));"
        );
    }
    s.srv.sql(&sql);
    let r = s.get(DAVID, &format!("/rooms/{DESIGNERS}/@{SECOND}"));
    assert_eq!(r.status, 200, "{}", s.srv.stderr());
    let ids = message_ids(&r.body);
    assert_eq!(ids.first(), Some(&FIRST));
    assert!(ids.contains(&SECOND));
    assert_eq!(ids.len(), 1 + 1 + 40, "the one before, the message, and 40 after: {ids:?}");
    assert_eq!(ids.last(), Some(&138));
    // An unknown message falls back to the last page.
    let r = s.get(DAVID, &format!("/rooms/{DESIGNERS}/@999999"));
    assert_eq!(message_ids(&r.body).len(), 40);
    assert_eq!(message_ids(&r.body).last(), Some(&149));
}

#[test]
fn viewing_an_unread_room_marks_it_read() {
    let s = start();
    s.srv.sql(&format!("UPDATE memberships SET unread_at = '2026-01-01 00:00:00' WHERE room_id = {WATERCOOLER} AND user_id = {DAVID}"));
    let r = s.get(DAVID, &format!("/rooms/{WATERCOOLER}"));
    assert_eq!(r.status, 200);
    let q = format!("SELECT count(*) FROM memberships WHERE room_id = {WATERCOOLER} AND user_id = {DAVID} AND unread_at IS NULL");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while s.query_int(&q) == 0 {
        assert!(std::time::Instant::now() < deadline, "still unread");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn rooms_index_goes_to_the_newest_room() {
    let s = start();
    let r = s.get(DAVID, "/rooms");
    assert_eq!(r.location(), Some(format!("/rooms/{DAVID_AND_KEVIN}").as_str()));
}

#[test]
fn destroying_a_room_needs_an_administrator_or_the_creator() {
    let s = start();
    let del = |user: i64, id: i64| s.srv.send(&Request::post_form(&format!("/rooms/{id}"), &[("_method", "delete")]).cookies(&s.jar(user)));
    // JZ is a member of designers (created by David) but neither admin nor creator.
    assert_eq!(del(JZ, DESIGNERS).status, 403);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM rooms WHERE id = {DESIGNERS}")), 1);
    let r = del(JASON, DESIGNERS);
    assert_eq!((r.status, r.location()), (302, Some("/")), "{}", s.srv.stderr());
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM rooms WHERE id = {DESIGNERS}")), 0);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {DESIGNERS}")), 0);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE room_id = {DESIGNERS}")), 0);
}
