//! users/sidebars#show (spec/02 §4.17, spec/07 §8, bench §4.1 sidebar contract).

mod support;
use support::*;

#[test]
fn the_full_sidebar_page_lists_visible_rooms_directs_and_placeholders() {
    let s = start();
    s.srv.sql(&format!("UPDATE memberships SET unread_at = '2026-01-01 00:00:00' WHERE room_id = {WATERCOOLER} AND user_id = {DAVID}"));
    let r = s.get(DAVID, "/users/me/sidebar");
    assert_eq!(r.status, 200, "{}", s.srv.stderr());
    let b = &r.body;
    assert!(b.trim_start().to_ascii_lowercase().starts_with("<!doctype html>"));
    assert!(b.trim_end().ends_with("</html>"));
    assert!(b.contains("id=\"shared_rooms\""));
    assert!(!b.contains("data-message-id"), "no stray message ids");
    // Shared rooms by lower-cased name: All Pets, All Talk, Designers, HQ.
    let order: Vec<usize> = ["All Pets", "All Talk", "Designers", "HQ"].iter().map(|n| b.find(&format!(">{n}</span>")).expect(n)).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(b.contains(&format!("id=\"list_rooms_closed_{WATERCOOLER}\" class=\"room btn unread\"")), "unread");
    assert!(b.contains(&format!("id=\"list_rooms_open_{HQ}\" class=\"room btn\"")));
    // Directs with Jason and Kevin; no placeholders for them, the others (JZ, Bender) offered.
    assert!(b.contains(&format!("id=\"list_rooms_direct_{DAVID_AND_JASON}\"")));
    assert!(b.contains(&format!("id=\"list_rooms_direct_{DAVID_AND_KEVIN}\"")));
    assert!(!b.contains(&format!("user_ids[]={JASON}\"")));
    assert!(b.contains(&format!("action=\"/rooms/directs?user_ids[]={JZ}\"")));
    assert!(b.contains(&format!("action=\"/rooms/directs?user_ids[]={BENDER}\"")));
    assert_eq!(b.matches("channel=\"Turbo::StreamsChannel\"").count(), 2);
    assert!(b.contains("href=\"/rooms/opens/new\""), "may create rooms");
    let again = s.get(DAVID, "/users/me/sidebar");
    assert_eq!(again.body, r.body, "byte-stable");
}

#[test]
fn invisible_rooms_are_left_out_and_frame_requests_get_the_frame_layout() {
    let s = start();
    s.srv.sql(&format!("UPDATE memberships SET involvement = 'invisible' WHERE room_id = {PETS} AND user_id = {DAVID}"));
    let r = s.srv.send(&Request::get("/users/me/sidebar").cookies(&s.jar(DAVID)).header("Turbo-Frame", "user_sidebar"));
    assert_eq!(r.status, 200);
    assert!(!r.body.contains("All Pets"));
    assert!(r.body.contains("<turbo-frame id=\"user_sidebar\""));
    assert!(!r.body.contains("<nav"), "frame layout only");
}

#[test]
fn restricted_room_creation_hides_the_new_room_link_from_members() {
    let s = start();
    s.srv.sql("UPDATE accounts SET settings = '{\"restrict_room_creation_to_administrators\":true}'");
    assert!(!s.get(KEVIN, "/users/me/sidebar").body.contains("href=\"/rooms/opens/new\""));
    assert!(s.get(DAVID, "/users/me/sidebar").body.contains("href=\"/rooms/opens/new\""));
    assert_eq!(s.get(KEVIN, "/rooms/opens/new").status, 403);
    assert_eq!(s.post(KEVIN, "/rooms/closeds", &[("room[name]", "x")]).status, 403);
}
