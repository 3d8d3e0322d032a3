//! accounts/bots and accounts/bots/keys against the real binary (spec/05
//! bots_controller_test, keys_controller_test, user/bot_test; spec/02 §4.7).

mod support;
use support::*;

fn active_bots(s: &Seeded) -> i64 {
    s.query_int("SELECT count(*) FROM users WHERE role = 2 AND status = 0")
}

/// A same-origin form request with `_method` override, as Rails' forms send PATCH/DELETE.
fn send(s: &Seeded, user: i64, method: &str, path: &str, fields: &[(&str, &str)]) -> Response {
    let mut all = vec![("_method", method)];
    all.extend_from_slice(fields);
    s.post(user, path, &all)
}

#[test]
fn index_lists_bots_with_their_room_commands() {
    let s = start();
    let r = s.get(DAVID, "/account/bots");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("Bender Bot"));
    let url = format!("http://127.0.0.1:{}/rooms/{WATERCOOLER}/{BENDER}-{BENDER_TOKEN}/messages", s.srv.port);
    assert!(r.body.contains(&format!("curl -d &#39;Hello!&#39; {url}")), "{}", r.body);
    assert!(r.body.contains(&format!("curl -F &quot;attachment=@/path/to/file&quot; {url}")));
    assert!(!r.body.contains(&format!("/rooms/{BENDER_AND_KEVIN}/")), "no commands for direct rooms");
    assert_eq!(s.get(JZ, "/account/bots").status, 403, "administrators only");
    assert_eq!(s.get(DAVID, "/account/bots/new").status, 200);
    assert_eq!(s.get(JZ, "/account/bots/new").status, 403);
}

#[test]
fn create_a_bot() {
    let s = start();
    let r = s.post(DAVID, "/account/bots", &[("user[name]", "Bot Bot"), ("user[webhook_url]", "https://example.com/hook")]);
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some("/account/bots"));
    let id = s.query_int("SELECT max(id) FROM users");
    assert_eq!(s.query_text(&format!("SELECT name FROM users WHERE id = {id}")), "Bot Bot");
    assert_eq!(s.query_int(&format!("SELECT role FROM users WHERE id = {id}")), 2);
    let token = s.query_text(&format!("SELECT bot_token FROM users WHERE id = {id}"));
    assert!(token.len() == 12 && token.bytes().all(|b| b.is_ascii_alphanumeric()), "{token}");
    assert_eq!(s.query_text(&format!("SELECT url FROM webhooks WHERE user_id = {id}")), "https://example.com/hook");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM memberships WHERE user_id = {id} AND room_id = {PETS}")), 1, "open rooms");
    let post = Request {
        method: "POST",
        path: format!("/rooms/{PETS}/{id}-{token}/messages"),
        headers: vec![],
        body: b"I am alive".to_vec(),
    };
    assert_eq!(s.srv.send(&post).status, 201, "the key <id>-<token> authenticates the new bot");
    assert_eq!(s.post(JZ, "/account/bots", &[("user[name]", "Nope")]).status, 403);
    assert_eq!(s.post(DAVID, "/account/bots", &[]).status, 400);
}

#[test]
fn edit_update_and_webhooks() {
    let s = start();
    let e = s.get(DAVID, &format!("/account/bots/{BENDER}/edit"));
    assert_eq!(e.status, 200);
    assert!(e.body.contains(r#"value="Bender Bot""#));
    assert!(e.body.contains(&format!(r#"action="/account/bots/{BENDER}/key""#)));
    assert_eq!(s.get(DAVID, &format!("/account/bots/{KEVIN}/edit")).status, 404, "not a bot");

    let r = send(&s, DAVID, "put", &format!("/account/bots/{BENDER}"), &[("user[name]", "Bender Bending Rodríguez"), ("user[webhook_url]", "https://bender.example/hook")]);
    assert_eq!((r.status, r.location()), (302, Some("/account/bots")));
    assert_eq!(s.query_text(&format!("SELECT name FROM users WHERE id = {BENDER}")), "Bender Bending Rodríguez");
    assert_eq!(s.query_text(&format!("SELECT url FROM webhooks WHERE user_id = {BENDER}")), "https://bender.example/hook");
    assert!(s.get(DAVID, &format!("/account/bots/{BENDER}/edit")).body.contains(r#"value="https://bender.example/hook""#));

    send(&s, DAVID, "put", &format!("/account/bots/{BENDER}"), &[("user[webhook_url]", "https://bender.example/v2")]);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM webhooks WHERE user_id = {BENDER}")), 1, "updated in place");
    assert_eq!(s.query_text(&format!("SELECT url FROM webhooks WHERE user_id = {BENDER}")), "https://bender.example/v2");

    send(&s, DAVID, "put", &format!("/account/bots/{BENDER}"), &[("user[name]", "Bender")]);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM webhooks WHERE user_id = {BENDER}")), 0, "no webhook_url deletes the webhook");
    assert_eq!(send(&s, JZ, "put", &format!("/account/bots/{BENDER}"), &[("user[name]", "x")]).status, 403);
}

#[test]
fn destroy_deactivates_the_bot() {
    let s = start();
    let before = active_bots(&s);
    let r = send(&s, DAVID, "delete", &format!("/account/bots/{BENDER}"), &[]);
    assert_eq!((r.status, r.location()), (302, Some("/account/bots")));
    assert_eq!(active_bots(&s), before - 1);
    let key_path = format!("/rooms/{WATERCOOLER}/{BENDER}-{BENDER_TOKEN}/messages");
    assert_eq!(s.srv.send(&Request::get(&key_path)).status, 302, "a removed bot's key stops working");
    assert_eq!(send(&s, DAVID, "delete", &format!("/account/bots/{BENDER}"), &[]).status, 404);
}

#[test]
fn reset_key() {
    let s = start();
    let r = send(&s, DAVID, "put", &format!("/account/bots/{BENDER}/key"), &[]);
    assert_eq!((r.status, r.location()), (302, Some("/account/bots")));
    let token = s.query_text(&format!("SELECT bot_token FROM users WHERE id = {BENDER}"));
    assert_ne!(token, BENDER_TOKEN);
    let old = format!("/rooms/{WATERCOOLER}/{BENDER}-{BENDER_TOKEN}/messages");
    let new = format!("/rooms/{WATERCOOLER}/{BENDER}-{token}/messages");
    assert_eq!(s.srv.send(&Request::get(&old)).status, 302);
    assert_eq!(s.srv.send(&Request::get(&new)).status, 200);
    assert_eq!(send(&s, JZ, "put", &format!("/account/bots/{BENDER}/key"), &[]).status, 403);
    assert_eq!(send(&s, DAVID, "put", &format!("/account/bots/{KEVIN}/key"), &[]).status, 404);
}

#[test]
fn a_bot_picture_is_stored_as_its_avatar_on_create_and_update() {
    let s = start();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 0, 40, 0, 0, 0, 30, 8, 2, 0, 0, 0]);
    png.extend_from_slice(b"bot-picture");
    let avatar_of = |id: i64| {
        s.query_text(&format!(
            "SELECT b.filename || '|' || b.content_type || '|' || b.byte_size FROM active_storage_attachments a \
             JOIN active_storage_blobs b ON b.id = a.blob_id WHERE a.record_type = 'User' AND a.name = 'avatar' AND a.record_id = {id}"
        ))
    };
    let mut jar = s.jar(DAVID);
    let fields = [("user[name]", "Pic Bot"), ("user[webhook_url]", "")];
    let r = jar.send(&s.srv, Request::multipart("/account/bots", &fields, Some(("user[avatar]", "bot.png", "image/png", &png))));
    assert_eq!((r.status, r.location()), (302, Some("/account/bots")), "{r:?}\n{}", s.srv.stderr());
    let id = s.query_int("SELECT id FROM users WHERE name = 'Pic Bot'");
    assert_eq!(avatar_of(id), format!("bot.png|image/png|{}", png.len()));

    // Updating Bender with a picture attaches it and keeps the rest of the form's effect.
    let fields = [("_method", "patch"), ("user[name]", "Bender Pic"), ("user[webhook_url]", "https://example.com/b")];
    let r = jar.send(&s.srv, Request::multipart(&format!("/account/bots/{BENDER}"), &fields, Some(("user[avatar]", "b.png", "image/png", &png))));
    assert_eq!(r.status, 302, "{r:?}\n{}", s.srv.stderr());
    assert_eq!(avatar_of(BENDER), format!("b.png|image/png|{}", png.len()));
    assert_eq!(s.query_text(&format!("SELECT name FROM users WHERE id = {BENDER}")), "Bender Pic");
    assert_eq!(s.query_text(&format!("SELECT url FROM webhooks WHERE user_id = {BENDER}")), "https://example.com/b");
}
