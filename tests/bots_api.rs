//! The bot API against the real binary (spec/05 messages/by_bots_controller_test and
//! messages/boosts/by_bots_controller_test, spec/02 §5): a bot key in the path authenticates
//! Bender, raw bodies become messages and boosts, the JSON shapes are Rails'.

mod support;
use support::*;

fn key() -> String {
    format!("{BENDER}-{BENDER_TOKEN}")
}

/// A request with a raw body, as `curl -X <method> -d <body>` sends it (form content type).
fn raw(method: &'static str, path: &str, body: &str) -> Request {
    Request {
        method,
        path: path.into(),
        headers: vec![("Content-Type".into(), "application/x-www-form-urlencoded".into())],
        body: body.as_bytes().to_vec(),
    }
}

fn messages_path(room: i64) -> String {
    format!("/rooms/{room}/{}/messages", key())
}

fn count(s: &Seeded, room: i64) -> i64 {
    s.query_int(&format!("SELECT count(*) FROM messages WHERE room_id = {room}"))
}

fn last_plain_text(s: &Seeded, room: i64) -> String {
    let r = s.srv.send(&Request::get(&messages_path(room)));
    assert_eq!(r.status, 200);
    let marker = "\"plain_text\":\"";
    let i = r.body.rfind(marker).expect("a message") + marker.len();
    let rest = &r.body[i..];
    rest[..rest.find("\",\"html\"").expect("html follows")].to_string()
}

#[test]
fn create_from_raw_body() {
    let s = start();
    let before = count(&s, WATERCOOLER);
    let r = s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "Hello Bot World!"));
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.body.is_empty());
    let id = s.query_int("SELECT max(id) FROM messages");
    assert_eq!(r.location().map(str::to_string), Some(format!("http://127.0.0.1:{}/messages/{id}", s.srv.port)));
    assert_eq!(count(&s, WATERCOOLER), before + 1);
    assert_eq!(s.query_int(&format!("SELECT creator_id FROM messages WHERE id = {id}")), BENDER);
    assert_eq!(last_plain_text(&s, WATERCOOLER), "Hello Bot World!");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM message_search_index WHERE rowid = {id}")), 1, "searchable like a browser post");

    assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "Hello 👋!")).status, 201);
    assert_eq!(last_plain_text(&s, WATERCOOLER), "Hello 👋!");

    assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "Fish & chips")).status, 201);
    let id = s.query_int("SELECT max(id) FROM messages");
    let stored = s.query_text(&format!("SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = {id}"));
    assert!(stored.contains("Fish &amp; chips"), "stored as Action Text HTML: {stored}");
}

#[test]
fn blank_bodies_are_refused_and_attachments_posted() {
    let s = start();
    let before = count(&s, WATERCOOLER);
    assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "")).status, 422);
    assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "  \n\t ")).status, 422);
    let json = raw("POST", &messages_path(WATERCOOLER), "not json").header("Content-Type", "application/json");
    assert_eq!(s.srv.send(&json).status, 400);
    let upload = Request {
        method: "POST",
        path: messages_path(WATERCOOLER),
        headers: vec![("Content-Type".into(), "multipart/form-data; boundary=XyZ".into())],
        body: b"--XyZ\r\nContent-Disposition: form-data; name=\"attachment\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhi\r\n--XyZ--\r\n".to_vec(),
    };
    let r = s.srv.send(&upload);
    assert_eq!(r.status, 201, "a multipart attachment is the message");
    assert_eq!(count(&s, WATERCOOLER), before + 1);
    let id = s.query_int(&format!("SELECT max(id) FROM messages WHERE room_id = {WATERCOOLER}"));
    assert_eq!(r.location(), Some(format!("http://127.0.0.1:{}/messages/{id}", s.srv.port).as_str()));
    assert_eq!(
        s.query_text(&format!(
            "SELECT b.filename || ' ' || b.byte_size || ' ' || b.content_type FROM active_storage_attachments a \
             JOIN active_storage_blobs b ON b.id = a.blob_id WHERE a.record_type = 'Message' AND a.record_id = {id}"
        )),
        "a.txt 2 text/plain"
    );
    assert_eq!(last_plain_text(&s, WATERCOOLER), "a.txt", "the plain text of an attachment is its file name");
}

#[test]
fn keys_and_rooms_are_checked() {
    let s = start();
    let before = s.query_int("SELECT count(*) FROM messages");
    let human = format!("/rooms/{WATERCOOLER}/{KEVIN}-/messages");
    let r = s.srv.send(&raw("POST", &human, "Hi"));
    assert_eq!(r.status, 302);
    assert!(r.location().is_some_and(|l| l.ends_with("/session/new")), "{:?}", r.location());
    let wrong = format!("/rooms/{WATERCOOLER}/{BENDER}-nope/messages");
    assert_eq!(s.srv.send(&raw("POST", &wrong, "Hi")).status, 302);
    assert_eq!(s.srv.send(&Request::get(&wrong)).status, 302);
    let designers = s.srv.send(&Request::get(&messages_path(DESIGNERS)));
    assert_eq!((designers.status, designers.body.as_str()), (404, ""));
    assert_eq!(s.srv.send(&raw("POST", &messages_path(DESIGNERS), "Hi")).status, 404);
    assert_eq!(s.query_int("SELECT count(*) FROM messages"), before);
    let browser_route = format!("/rooms/{WATERCOOLER}/messages?bot_key={}", key());
    assert_eq!(s.srv.send(&Request::get(&browser_route)).status, 403, "a bot key outside the bot API");
}

#[test]
fn index_json_shape() {
    let s = start();
    let r = s.srv.send(&Request::get(&messages_path(WATERCOOLER)));
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").is_some_and(|t| t.starts_with("application/json")));
    let ids: Vec<String> = (FOURTH..=THIRTEENTH).map(|i| format!("{{\"id\":{i},")).collect();
    let mut at = 0;
    for id in &ids {
        at += r.body[at..].find(id.as_str()).unwrap_or_else(|| panic!("{id} in order"));
    }
    assert_eq!(r.header("x-total-count"), Some("10"));
    assert_eq!(r.header("link"), None);
    let after = s.srv.send(&Request::get(&format!("{}?after=10", messages_path(WATERCOOLER))));
    assert!(after.body.starts_with("[{\"id\":11,") && after.body.contains("{\"id\":13,"));
    assert_eq!(after.body.matches("\"room\":{").count(), 3);
    assert_eq!(after.header("link"), None);

    s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "Deploying now"));
    let id = s.query_int("SELECT max(id) FROM messages");
    let r = s.srv.send(&Request::get(&messages_path(WATERCOOLER)));
    let last = &r.body[r.body.rfind(&format!("{{\"id\":{id},")).expect("the new message")..];
    assert!(last.contains("\"plain_text\":\"Deploying now\""));
    assert!(last.contains(r#"\u003cdiv class=\"trix-content\"\u003e"#) && last.contains("Deploying now"), "{last}");
    let origin = format!("http://127.0.0.1:{}", s.srv.port);
    assert!(last.contains(&format!("\"creator\":{{\"id\":{BENDER},\"name\":\"Bender Bot\",\"role\":\"bot\",\"avatar_url\":\"{origin}/users/")));
    assert!(last.contains(&format!("\"room\":{{\"id\":{WATERCOOLER}}},\"url\":\"{origin}/rooms/{WATERCOOLER}/messages/{id}\"}}")));
    let created = &last[last.find("\"created_at\":\"").expect("created_at") + 14..];
    let stamp = &created[..created.find('"').expect("closing quote")];
    assert_eq!(stamp.len(), 24, "{stamp}");
    assert!(stamp.ends_with('Z') && stamp.as_bytes()[19] == b'.', "ISO 8601 with milliseconds: {stamp}");
}

#[test]
fn index_pages_with_link() {
    let s = start();
    for i in 0..31 {
        assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), &format!("Message {i}"))).status, 201);
    }
    let r = s.srv.send(&Request::get(&messages_path(WATERCOOLER)));
    assert_eq!(r.header("x-total-count"), Some("41"));
    assert_eq!(r.body.matches("\"room\":{").count(), 40);
    assert!(!r.body.contains(&format!("{{\"id\":{FOURTH},")), "the oldest is on the next page");
    let origin = format!("http://127.0.0.1:{}", s.srv.port);
    let link = r.header("link").expect("a next link");
    let next = format!("{origin}{}?before=5", messages_path(WATERCOOLER));
    assert_eq!(link, format!("<{next}>; rel=\"next\""));
    let older = s.srv.send(&Request::get(&next[origin.len()..]));
    assert_eq!(older.status, 200);
    assert_eq!(older.body.matches("\"room\":{").count(), 1);
    assert!(older.body.starts_with(&format!("[{{\"id\":{FOURTH},")));
    assert_eq!(older.header("link"), None);

    assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "One more")).status, 201);
    let newest = s.query_int("SELECT max(id) FROM messages");
    let after = s.srv.send(&Request::get(&format!("{}?after={FOURTH}", messages_path(WATERCOOLER))));
    assert!(after.body.starts_with("[{\"id\":5,"));
    assert_eq!(after.body.matches("\"room\":{").count(), 40);
    let last = newest - 1;
    assert_eq!(after.header("link"), Some(format!("<{origin}{}?after={last}>; rel=\"next\"", messages_path(WATERCOOLER)).as_str()));
    assert_eq!(s.srv.send(&Request::get(&format!("{}?before=999", messages_path(WATERCOOLER)))).status, 404);
}

#[test]
fn index_of_an_empty_room() {
    let s = start();
    s.srv.sql(&format!("DELETE FROM messages WHERE room_id = {BENDER_AND_KEVIN}"));
    let r = s.srv.send(&Request::get(&messages_path(BENDER_AND_KEVIN)));
    assert_eq!((r.status, r.body.as_str()), (200, "[]"));
    assert_eq!(r.header("x-total-count"), Some("0"));
    assert_eq!(r.header("link"), None);
}

/// Bodies that show nothing once sanitized: refused with the JSON 422 whatever the Accept.
const SHOW_NOTHING: &[&str] = &["", "  \n\t ", "<p><br></p>", "<div>&nbsp;</div>", "<script>alert(1)</script>", "<img src=x>"];

#[test]
fn blank_after_sanitizing_is_refused_with_json_on_create_and_update() {
    let s = start();
    let before = count(&s, WATERCOOLER);
    let soup = "<a href=\"".repeat(50_000);
    for body in SHOW_NOTHING.iter().copied().chain([soup.as_str()]) {
        let r = s.srv.send(&raw("POST", &messages_path(WATERCOOLER), body));
        assert_eq!(r.status, 422, "{:.40?}", body);
        assert!(r.header("Content-Type").unwrap().starts_with("application/json"));
        assert_eq!(r.body, r#"{"status":422,"error":"Unprocessable Content"}"#);
    }
    assert_eq!(count(&s, WATERCOOLER), before, "nothing stored");

    assert_eq!(s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "Deploying")).status, 201);
    let id = s.query_int("SELECT max(id) FROM messages");
    let path = format!("{}/{id}", messages_path(WATERCOOLER));
    for body in SHOW_NOTHING.iter().copied().chain([soup.as_str()]) {
        let r = s.srv.send(&raw("PATCH", &path, body));
        assert_eq!((r.status, r.body.as_str()), (422, r#"{"status":422,"error":"Unprocessable Content"}"#), "{:.40?}", body);
    }
    assert_eq!(last_plain_text(&s, WATERCOOLER), "Deploying", "the message stays as it was");
    let stored = s.query_text(&format!("SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = {id}"));
    assert_eq!(stored, "Deploying");
}

#[test]
fn update_and_destroy_own_messages() {
    let s = start();
    s.srv.send(&raw("POST", &messages_path(WATERCOOLER), "Deploying"));
    let id = s.query_int("SELECT max(id) FROM messages");
    let total = s.query_int("SELECT count(*) FROM messages");
    let path = format!("{}/{id}", messages_path(WATERCOOLER));
    let r = s.srv.send(&raw("PATCH", &path, "Deployed 🚀!"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.starts_with(&format!("{{\"id\":{id},")));
    assert!(r.body.contains("\"plain_text\":\"Deployed 🚀!\""));
    assert!(r.body.contains(&format!("\"creator\":{{\"id\":{BENDER},")));
    assert!(r.body.contains(&format!("/rooms/{WATERCOOLER}/messages/{id}\"}}")));
    assert_eq!(s.query_int("SELECT count(*) FROM messages"), total);
    assert_eq!(last_plain_text(&s, WATERCOOLER), "Deployed 🚀!");

    let others = format!("{}/{FOURTH}", messages_path(WATERCOOLER));
    assert_eq!(s.srv.send(&raw("PATCH", &others, "Hacked")).status, 403);
    assert_eq!(s.srv.send(&raw("DELETE", &others, "")).status, 403);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM messages WHERE id = {FOURTH}")), 1);
    assert_eq!(s.srv.send(&raw("PATCH", &format!("{}/1", messages_path(DESIGNERS)), "x")).status, 404);
    let human = format!("/rooms/{WATERCOOLER}/{JZ}-/messages/{FOURTH}");
    assert_eq!(s.srv.send(&raw("PATCH", &human, "x")).status, 302);

    assert_eq!(s.srv.send(&raw("DELETE", &path, "")).status, 204);
    assert_eq!(s.query_int("SELECT count(*) FROM messages"), total - 1);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM message_search_index WHERE rowid = {id}")), 0);
}

#[test]
fn boosts() {
    let s = start();
    let path = format!("{}/{FOURTH}/boosts", messages_path(WATERCOOLER));
    let before = s.query_int("SELECT count(*) FROM boosts");
    let r = s.srv.send(&raw("POST", &path, "👀"));
    assert_eq!(r.status, 201, "{}", r.body);
    let id = s.query_int("SELECT max(id) FROM boosts");
    assert_eq!(s.query_int("SELECT count(*) FROM boosts"), before + 1);
    assert_eq!(s.query_int(&format!("SELECT booster_id FROM boosts WHERE id = {id}")), BENDER);
    let origin = format!("http://127.0.0.1:{}", s.srv.port);
    assert!(r.body.starts_with(&format!("{{\"id\":{id},\"content\":\"👀\",\"created_at\":\"")), "{}", r.body);
    assert!(r.body.contains(&format!("\"booster\":{{\"id\":{BENDER},\"name\":\"Bender Bot\",\"role\":\"bot\"")));
    assert!(r.body.ends_with(&format!("\"message\":{{\"id\":{FOURTH},\"url\":\"{origin}/rooms/{WATERCOOLER}/messages/{FOURTH}\"}}}}")));
    assert_eq!(s.srv.send(&raw("POST", &path, "Nice!")).status, 201);
    assert_eq!(s.query_text("SELECT content FROM boosts ORDER BY id DESC LIMIT 1"), "Nice!");

    let n = s.query_int("SELECT count(*) FROM boosts");
    assert_eq!(s.srv.send(&raw("POST", &path, "")).status, 422);
    assert_eq!(s.srv.send(&raw("POST", &path, "   ")).status, 422);
    assert_eq!(s.srv.send(&raw("POST", &format!("/rooms/{WATERCOOLER}/{BENDER}-nope/messages/{FOURTH}/boosts"), "x")).status, 302);
    assert_eq!(s.srv.send(&raw("POST", &format!("/rooms/{WATERCOOLER}/{KEVIN}-/messages/{FOURTH}/boosts"), "x")).status, 302);
    assert_eq!(s.srv.send(&raw("POST", &format!("{}/1/boosts", messages_path(DESIGNERS)), "x")).status, 404);
    assert_eq!(s.srv.send(&raw("POST", &format!("{}/1/boosts", messages_path(WATERCOOLER)), "x")).status, 404, "message not in that room");
    assert_eq!(s.query_int("SELECT count(*) FROM boosts"), n);

    let theirs = s.query_int(&format!("SELECT id FROM boosts WHERE booster_id = {JASON} LIMIT 1"));
    assert_eq!(s.srv.send(&raw("DELETE", &format!("{}/{THIRTEENTH}/boosts/{theirs}", messages_path(WATERCOOLER)), "")).status, 404);
    assert_eq!(s.srv.send(&raw("DELETE", &format!("/rooms/{WATERCOOLER}/{BENDER}-nope/messages/{FOURTH}/boosts/{id}"), "")).status, 302);
    assert_eq!(s.srv.send(&raw("DELETE", &format!("{path}/{id}"), "")).status, 204);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM boosts WHERE id = {id}")), 0);
}
