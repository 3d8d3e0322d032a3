//! Open, closed and direct rooms (spec/02 §4.21–§4.23), involvements (§4.24), the room
//! refresh (§4.28) and autocompletion (§4.19), against the real binary and the fixtures.

mod support;
use support::*;

fn new_room_id(s: &Seeded, r: &Response) -> i64 {
    assert_eq!(r.status, 302, "{r:?}\n{}", s.srv.stderr());
    r.location().and_then(|l| l.strip_prefix("/rooms/")).and_then(|i| i.parse().ok()).expect("a room location")
}

#[test]
fn creating_an_open_room_grants_every_active_user() {
    let s = start();
    let form = s.get(JZ, "/rooms/opens/new");
    assert_eq!(form.status, 200);
    assert!(form.body.contains("value=\"New room\""));
    assert!(form.body.contains("href=\"/rooms/closeds/new\""), "the Everyone switch");
    let id = new_room_id(&s, &s.post(JZ, "/rooms/opens", &[("room[name]", "Lunch")]));
    assert_eq!(s.query_text(&format!("SELECT type FROM rooms WHERE id = {id}")), "Rooms::Open");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE room_id = {id}")), 5);
    assert_eq!(s.query_int(&format!("SELECT creator_id FROM rooms WHERE id = {id}")), JZ);
    assert_eq!(s.post(JZ, "/rooms/opens", &[]).status, 400, "room[name] is required");
}

#[test]
fn closed_rooms_have_exactly_the_chosen_members() {
    let s = start();
    let form = s.get(DAVID, "/rooms/closeds/new");
    assert!(form.body.contains(&format!("<input type=\"hidden\" name=\"user_ids[]\" value=\"{DAVID}\">")), "creator row");
    let id = new_room_id(&s, &s.post(DAVID, "/rooms/closeds", &[("room[name]", "Secret"), ("user_ids[]", &DAVID.to_string()), ("user_ids[]", &JZ.to_string()), ("user_ids[]", "424242")]));
    let members = |s: &Seeded| s.query_text(&format!("SELECT group_concat(user_id) FROM (SELECT user_id FROM memberships WHERE room_id = {id} ORDER BY user_id)"));
    assert_eq!(members(&s), format!("{DAVID},{JZ}"));
    // JZ may see the edit form, but only David (creator) or an admin may change it.
    let edit = s.get(JZ, &format!("/rooms/closeds/{id}/edit"));
    assert_eq!(edit.status, 200);
    assert!(edit.body.contains("<h1>Secret</h1>"), "no name field for non-administrators");
    let patch = |user: i64, fields: &[(&str, &str)]| {
        let mut f = vec![("_method", "patch")];
        f.extend_from_slice(fields);
        s.post(user, &format!("/rooms/closeds/{id}"), &f)
    };
    assert_eq!(patch(JZ, &[("room[name]", "Mine")]).status, 403);
    let r = patch(DAVID, &[("room[name]", "Renamed"), ("user_ids[]", &DAVID.to_string()), ("user_ids[]", &KEVIN.to_string())]);
    assert_eq!(r.location(), Some(format!("/rooms/{id}").as_str()));
    assert_eq!(members(&s), format!("{DAVID},{KEVIN}"), "JZ revoked, Kevin granted");
    assert_eq!(s.query_text(&format!("SELECT name FROM rooms WHERE id = {id}")), "Renamed");
    // Opening it grants everyone; the open update keeps the id.
    let r = s.post(DAVID, &format!("/rooms/opens/{id}"), &[("_method", "patch"), ("room[name]", "Public")]);
    assert_eq!(r.status, 302);
    assert_eq!(s.query_text(&format!("SELECT type FROM rooms WHERE id = {id}")), "Rooms::Open");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE room_id = {id}")), 5);
    // Direct rooms are not reachable through the shared-room controllers.
    let r = s.get(DAVID, &format!("/rooms/opens/{DAVID_AND_JASON}/edit"));
    assert_eq!((r.status, r.location()), (302, Some("/")));
}

#[test]
fn pings_are_found_or_created_and_any_member_may_delete_them() {
    let s = start();
    let r = s.post(DAVID, "/rooms/directs", &[("user_ids[]", &JASON.to_string())]);
    assert_eq!(new_room_id(&s, &r), DAVID_AND_JASON, "the existing ping");
    let id = new_room_id(&s, &s.post(DAVID, &format!("/rooms/directs?user_ids[]={JZ}"), &[]));
    assert_eq!(s.query_text(&format!("SELECT type FROM rooms WHERE id = {id}")), "Rooms::Direct");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE room_id = {id} AND involvement = 'everything'")), 2);
    let edit = s.get(JZ, &format!("/rooms/directs/{id}/edit"));
    assert_eq!(edit.status, 200);
    assert!(edit.body.contains("<strong>David</strong>"));
    assert!(s.get(DAVID, "/rooms/directs/new").body.contains("id=\"direct_rooms_control\""));
    // Kevin is no member: redirected, nothing deleted. JZ is: deleted.
    let r = s.post(KEVIN, &format!("/rooms/directs/{id}"), &[("_method", "delete")]);
    assert_eq!((r.status, r.location()), (302, Some("/")));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM rooms WHERE id = {id}")), 1);
    let r = s.post(JZ, &format!("/rooms/directs/{id}"), &[("_method", "delete")]);
    assert_eq!((r.status, r.location()), (302, Some("/")));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM rooms WHERE id = {id}")), 0);
    // A shared room id through the directs controller: not found, nothing deleted.
    s.post(DAVID, &format!("/rooms/directs/{HQ}"), &[("_method", "delete")]);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM rooms WHERE id = {HQ}")), 1);
}

#[test]
fn the_bell_cycles_involvement_levels() {
    let s = start();
    let path = format!("/rooms/{DESIGNERS}/involvement");
    let r = s.get(DAVID, &path);
    assert_eq!(r.status, 200);
    assert!(r.body.contains(&format!("action=\"/rooms/{DESIGNERS}/involvement?involvement=everything\"")), "{}", r.body);
    assert!(r.body.contains("Notifying about @ mentions"));
    let r = s.post(DAVID, &format!("{path}?involvement=invisible"), &[("_method", "put")]);
    assert_eq!(r.location(), Some(path.as_str()), "{}", s.srv.stderr());
    let level = || s.query_text(&format!("SELECT involvement FROM memberships WHERE room_id = {DESIGNERS} AND user_id = {DAVID}"));
    assert_eq!(level(), "invisible");
    assert!(!s.get(DAVID, "/users/me/sidebar").body.contains(">Designers<"));
    assert_eq!(s.post(DAVID, &format!("{path}?involvement=loud"), &[("_method", "put")]).status, 422);
    assert_eq!(level(), "invisible");
    assert_eq!(s.get(KEVIN, &format!("/rooms/{WATERCOOLER}/involvement")).status, 404);
    let r = s.get(DAVID, &format!("/rooms/{DAVID_AND_JASON}/involvement"));
    assert!(r.body.contains("involvement=nothing"), "direct rooms toggle everything/nothing");
}

#[test]
fn refresh_sends_what_a_reconnecting_page_missed() {
    let s = start();
    let since = (s.now / 1000) - 10 * 60 * 1000; // ten minutes before the seed
    s.srv.sql(&format!("UPDATE messages SET updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE id = {FOURTH}"));
    let r = s.get(DAVID, &format!("/rooms/{WATERCOOLER}/refresh.turbo_stream?since={since}"));
    assert_eq!(r.status, 200, "{}", s.srv.stderr());
    assert!(r.header("Content-Type").unwrap_or("").starts_with("text/vnd.turbo-stream.html"));
    assert!(r.body.starts_with(&format!("<turbo-stream action=\"append\" target=\"messages_rooms_closed_{WATERCOOLER}\">")), "{}", r.body);
    assert_eq!(r.body.matches("data-message-id=\"13\"").count(), 1, "only thirteenth is new");
    assert!(r.body.contains("<turbo-stream action=\"replace\" target=\"message_0004\">"));
    let far = (s.now / 1000) + 60 * 60 * 1000;
    let r = s.get(DAVID, &format!("/rooms/{WATERCOOLER}/refresh?since={far}"));
    assert_eq!((r.status, r.body.as_str()), (200, ""));
    assert_eq!(s.get(KEVIN, &format!("/rooms/{WATERCOOLER}/refresh?since=0")).status, 404);
}

#[test]
fn autocomplete_lists_active_members_as_json() {
    let s = start();
    s.srv.sql(&format!("UPDATE users SET name = 'Jason <script>' WHERE id = {JASON}"));
    let r = s.get(DAVID, &format!("/autocompletable/users.json?room_id={WATERCOOLER}"));
    assert_eq!(r.status, 200, "{}", s.srv.stderr());
    assert!(r.header("Content-Type").unwrap_or("").starts_with("application/json"));
    assert_eq!(r.header("X-Total-Count"), Some("3"));
    assert!(r.body.starts_with("[{\"name\":\"Bender Bot\""), "{}", r.body);
    assert!(r.body.contains("\"name\":\"Jason \\u0026lt;script\\u0026gt;\"") || r.body.contains("Jason &lt;script&gt;"), "{}", r.body);
    assert!(r.body.contains("\"avatar_url\":\"http://127.0.0.1:"));
    assert!(r.body.contains("\"sgid\":\""));
    let r = s.get(DAVID, "/autocompletable/users.json?query=jz");
    assert_eq!(r.header("X-Total-Count"), Some("1"));
    assert!(r.body.contains(&format!("\"value\":{JZ}")));
    assert_eq!(s.get(KEVIN, &format!("/autocompletable/users.json?room_id={WATERCOOLER}")).status, 404);
}

#[test]
fn direct_rooms_cannot_be_turned_into_shared_ones() {
    let s = start();
    for path in [format!("/rooms/closeds/{BENDER_AND_KEVIN}"), format!("/rooms/opens/{BENDER_AND_KEVIN}")] {
        let r = s.post(KEVIN, &path, &[("_method", "put"), ("room[name]", "Nope"), ("user_ids[]", &KEVIN.to_string())]);
        assert_eq!((r.status, r.location()), (302, Some("/")), "{path}");
    }
    assert_eq!(s.query_text(&format!("SELECT type FROM rooms WHERE id = {BENDER_AND_KEVIN}")), "Rooms::Direct");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE room_id = {BENDER_AND_KEVIN}")), 2);
}

#[test]
fn removing_yourself_from_a_closed_room_leads_home() {
    let s = start();
    let r = s.post(DAVID, &format!("/rooms/closeds/{DESIGNERS}"), &[("_method", "put"), ("room[name]", "Designers"), ("user_ids[]", &JZ.to_string())]);
    assert_eq!(r.location(), Some(format!("/rooms/{DESIGNERS}").as_str()));
    let r = s.get(DAVID, &format!("/rooms/{DESIGNERS}"));
    assert_eq!((r.status, r.location()), (302, Some("/")));
}

#[test]
fn a_new_message_shows_as_unread_in_the_other_members_sidebar() {
    let s = start();
    let unread = |s: &Seeded| s.get(DAVID, "/users/me/sidebar").body.matches(" unread\"").count();
    assert_eq!(unread(&s), 0);
    let r = s.srv.send(
        &Request::post_form(&format!("/rooms/{DAVID_AND_JASON}/messages"), &[("message[body]", "<div>psst</div>"), ("message[client_message_id]", "u1")])
            .header("Accept", "text/vnd.turbo-stream.html")
            .cookies(&s.jar(JASON)),
    );
    assert!(r.status == 200 || r.status == 201, "{r:?}");
    let body = s.get(DAVID, "/users/me/sidebar").body;
    assert!(body.contains(&format!("id=\"list_rooms_direct_{DAVID_AND_JASON}\" class=\"direct unread\"")), "{body}");
    assert_eq!(unread(&s), 1);
}
