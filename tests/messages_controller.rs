//! messages#index/show/edit/create/update/destroy against the real binary and the shared
//! fixture (spec/05 messages_controller_test, spec/02 §4.26, bench/workloads.md §4.1).

mod support;
use support::*;

fn ids_in(body: &str) -> Vec<i64> {
    body.split("data-message-id=\"").skip(1).filter_map(|s| s.split('"').next()?.parse().ok()).collect()
}

fn turbo(path: &str, fields: &[(&str, &str)], s: &Seeded, user: i64) -> Response {
    s.srv.send(&Request::post_form(path, fields).cookies(&s.jar(user)).header("Accept", "text/vnd.turbo-stream.html, text/html, application/xhtml+xml"))
}

#[test]
fn index_pages_before_after_and_last() {
    let s = start();
    let r = s.get(DAVID, &format!("/rooms/{WATERCOOLER}/messages"));
    assert_eq!(r.status, 200);
    assert_eq!(ids_in(&r.body), (4..=13).collect::<Vec<_>>(), "oldest first, only messages carry data-message-id");
    assert!(r.body.contains("When we are not sure, we are alive."));
    assert!(r.body.contains(r#"id="message_0013""#));
    assert!(!r.body.contains("<!doctype html>"), "a fragment without layout");
    let before = s.get(DAVID, &format!("/rooms/{WATERCOOLER}/messages?before=6"));
    assert_eq!(ids_in(&before.body), vec![4, 5]);
    let after = s.get(DAVID, &format!("/rooms/{WATERCOOLER}/messages?after=11"));
    assert_eq!(ids_in(&after.body), vec![12, 13]);
    assert_eq!(s.get(DAVID, &format!("/rooms/{WATERCOOLER}/messages?before=4")).status, 204);
    assert_eq!(s.get(DAVID, &format!("/rooms/{WATERCOOLER}/messages?before=1")).status, 404, "anchor from another room");
    assert_eq!(s.get(DAVID, &format!("/rooms/{WATERCOOLER}/messages?before=abc")).status, 404);
    assert_eq!(s.get(KEVIN, &format!("/rooms/{WATERCOOLER}/messages")).status, 404, "not a member");
    assert_eq!(s.get(DAVID, &format!("/rooms/{PETS}/messages")).status, 204, "room without messages");
}

#[test]
fn index_is_byte_stable_and_conditional() {
    let s = start();
    let path = format!("/rooms/{WATERCOOLER}/messages?before=13");
    let a = s.get(DAVID, &path);
    let b = s.get(DAVID, &path);
    assert_eq!(a.body, b.body);
    let etag = a.header("ETag").expect("etag").to_string();
    assert!(etag.starts_with("W/\""));
    assert!(a.header("Last-Modified").is_some());
    let c = s.srv.send(&Request::get(&path).cookies(&s.jar(DAVID)).header("If-None-Match", &etag));
    assert_eq!(c.status, 304);
    assert!(c.body.is_empty());
    s.srv.sql("UPDATE messages SET updated_at = '2030-01-01 00:00:00' WHERE id = 12");
    let d = s.srv.send(&Request::get(&path).cookies(&s.jar(DAVID)).header("If-None-Match", &etag));
    assert_eq!(d.status, 200, "a touched message changes the ETag");
}

#[test]
fn show_and_edit() {
    let s = start();
    let r = s.get(JASON, &format!("/rooms/{WATERCOOLER}/messages/5"));
    assert_eq!(r.status, 200);
    assert!(r.body.starts_with("<!doctype html>"));
    assert_eq!(ids_in(&r.body), vec![5]);
    assert_eq!(s.get(JASON, &format!("/rooms/{WATERCOOLER}/messages/1")).status, 404, "message of another room");
    let e = s.get(JASON, &format!("/rooms/{WATERCOOLER}/messages/5/edit"));
    assert_eq!(e.status, 200);
    assert!(e.body.contains(r#"<turbo-frame id="edit_message_0005">"#));
    assert!(e.body.contains(r#"value="&lt;div&gt;Champagne, if you are seeking the truth"#), "{}", e.body);
    assert_eq!(s.get(JZ, &format!("/rooms/{DESIGNERS}/messages/1/edit")).status, 403, "JZ is neither creator nor admin");
    assert_eq!(s.get(DAVID, &format!("/rooms/{DESIGNERS}/messages/1/edit")).status, 200, "administrator");
}

#[test]
fn create_answers_the_append_stream_and_writes_the_search_row() {
    let s = start();
    let before = s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {HQ}"));
    let r = turbo(&format!("/rooms/{HQ}/messages"), &[("message[body]", "bench write abc123"), ("message[client_message_id]", "abc123")], &s, DAVID);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("Content-Type").unwrap().starts_with("text/vnd.turbo-stream.html"));
    assert!(r.body.starts_with(&format!(r#"<turbo-stream action="append" target="messages_rooms_open_{HQ}"><template>"#)));
    assert!(r.body.trim_end().ends_with("</turbo-stream>"));
    assert_eq!(ids_in(&r.body).len(), 1);
    assert!(r.body.contains("bench write abc123"));
    assert!(r.body.contains(r#"id="message_abc123""#), "the pending message's id comes back");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {HQ}")), before + 1);
    let id = ids_in(&r.body)[0];
    assert_eq!(s.query_text(&format!("SELECT body FROM message_search_index WHERE rowid = {id}")), "bench write abc123");
    assert_eq!(s.query_text(&format!("SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = {id}")), "bench write abc123");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE room_id = {HQ} AND unread_at IS NOT NULL AND user_id != {DAVID}")), 3, "unread for the others");
    // Search finds it right away.
    let found = s.get(DAVID, "/searches?q=abc123");
    assert_eq!(ids_in(&found.body), vec![id]);
}

#[test]
fn create_edge_cases() {
    let s = start();
    let gone = turbo(&format!("/rooms/{DESIGNERS}/messages"), &[("message[body]", "hi")], &s, JASON);
    assert_eq!(gone.status, 200);
    let gone = turbo(&format!("/rooms/{PETS}/messages"), &[("message[body]", "hi")], &s, KEVIN);
    assert_eq!(gone.status, 200);
    assert!(gone.body.contains("This room was deleted."));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {PETS}")), 0);
    let missing = turbo(&format!("/rooms/{HQ}/messages"), &[("other", "x")], &s, DAVID);
    assert_eq!(missing.status, 400);
    // No client id: one is made up; a /play sound renders as a sound.
    let play = turbo(&format!("/rooms/{HQ}/messages"), &[("message[body]", "/play trombone")], &s, DAVID);
    assert_eq!(play.status, 200);
    assert!(play.body.contains(r#"<div class="sound" data-controller="sound""#), "{}", play.body);
    // A plain HTML form (no Turbo) is redirected to the room.
    let html = s.srv.send(&Request::post_form(&format!("/rooms/{HQ}/messages"), &[("message[body]", "plain")]).cookies(&s.jar(DAVID)).header("Accept", "text/html"));
    assert_eq!(html.status, 302);
    assert_eq!(html.location(), Some(format!("/rooms/{HQ}").as_str()));
    // Markup in the body is sanitized on render.
    let xss = turbo(&format!("/rooms/{HQ}/messages"), &[("message[body]", "<div>x<script>alert(1)</script><img src=x onerror=alert(1)></div>")], &s, DAVID);
    assert!(!xss.body.contains("<script") && !xss.body.contains("onerror"), "{}", xss.body);
}

/// Bodies that show nothing once sanitized (and a tag soup that never closes its attribute).
fn show_nothing() -> Vec<String> {
    ["", "  \n\t ", "<p><br></p>", "<div>&nbsp; </div>", "<p></p><p> </p>", "<script>alert(1)</script>", "<img src=x onerror=alert(1)>"]
        .iter()
        .map(|s| s.to_string())
        .chain(["<a href=\"".repeat(50_000)])
        .collect()
}

#[test]
fn blank_after_sanitizing_is_refused_on_create_and_update() {
    let s = start();
    let before = s.query_int("SELECT count(*) FROM messages");
    for body in show_nothing() {
        let r = turbo(&format!("/rooms/{HQ}/messages"), &[("message[body]", &body), ("message[client_message_id]", "blank1")], &s, DAVID);
        assert_eq!(r.status, 422, "{:.40?}", body);
        assert!(r.header("Content-Type").unwrap().starts_with("text/html"), "the 422 page");
        let json = s.srv.send(&Request::post_form(&format!("/rooms/{HQ}/messages"), &[("message[body]", &body)]).cookies(&s.jar(DAVID)).header("Accept", "application/json"));
        assert_eq!((json.status, json.body.as_str()), (422, r#"{"status":422,"error":"Unprocessable Content"}"#));
    }
    // A message group without a body (and without a file) is blank too.
    let r = turbo(&format!("/rooms/{HQ}/messages"), &[("message[client_message_id]", "blank2")], &s, DAVID);
    assert_eq!(r.status, 422);
    assert_eq!(s.query_int("SELECT count(*) FROM messages"), before, "nothing stored");
    assert_eq!(s.query_int("SELECT count(*) FROM message_search_index"), before);

    let path = format!("/rooms/{DESIGNERS}/messages/1");
    let stored = "SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = 1";
    let was = s.query_text(stored);
    for body in show_nothing() {
        let r = s.post(JASON, &path, &[("_method", "patch"), ("message[body]", &body)]);
        assert_eq!(r.status, 422, "{:.40?}", body);
    }
    assert_eq!(s.query_text(stored), was, "the message stays as it was");
    // Text or an attachment left after sanitizing is not blank.
    assert_eq!(s.post(JASON, &path, &[("_method", "patch"), ("message[body]", "<p><br></p><p>x</p>")]).status, 302);
}

#[test]
fn update_by_creator_or_admin_only() {
    let s = start();
    let path = format!("/rooms/{DESIGNERS}/messages/1");
    let patch = |user: i64, text: &str| s.post(user, &path, &[("_method", "patch"), ("message[body]", text)]);
    assert_eq!(patch(JZ, "nope").status, 403);
    let r = patch(JASON, "<div>Edited by Jason</div>");
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some(path.as_str()));
    assert_eq!(s.query_text("SELECT body FROM message_search_index WHERE rowid = 1"), "Edited by Jason");
    let r = patch(DAVID, "<div>Edited by David</div>");
    assert_eq!(r.status, 302);
    assert!(s.get(DAVID, &path).body.contains("Edited by David"), "the fragment cache follows the edit");
    let json = s.srv.send(&Request::post_form(&path, &[("_method", "patch"), ("message[body]", "<div>As JSON</div>")]).cookies(&s.jar(DAVID)).header("Accept", "application/json"));
    assert_eq!(json.status, 200);
    assert!(json.header("Content-Type").unwrap().starts_with("application/json"));
    assert!(json.body.starts_with(r#"{"id":1,"created_at":""#), "{}", json.body);
    assert!(json.body.contains(r#""plain_text":"As JSON""#));
    assert!(json.body.ends_with(&format!(r#""room":{{"id":{DESIGNERS}}},"url":"http://127.0.0.1:{}/rooms/{DESIGNERS}/messages/1"}}"#, s.srv.port)), "{}", json.body);
}

#[test]
fn destroy_by_creator_or_admin_only() {
    let s = start();
    let del = |user: i64, id: i64| {
        s.srv.send(
            &Request::post_form(&format!("/rooms/{DESIGNERS}/messages/{id}"), &[("_method", "delete")])
                .cookies(&s.jar(user))
                .header("Accept", "text/vnd.turbo-stream.html, text/html"),
        )
    };
    assert_eq!(del(JZ, 1).status, 403);
    let r = del(JASON, 1);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, r#"<turbo-stream action="remove" target="message_0001"></turbo-stream>"#);
    assert_eq!(s.query_int("SELECT count(*) FROM messages WHERE id = 1"), 0);
    assert_eq!(s.query_int("SELECT count(*) FROM boosts WHERE message_id = 1"), 0);
    assert_eq!(del(DAVID, 2).status, 200, "administrator");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {DESIGNERS}")), 1);
}
