//! The renderer's unit tests.

use super::*;

#[test]
fn sentences_like_rails() {
    let s = |v: &[&str]| to_sentence(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    assert_eq!(s(&[]), "");
    assert_eq!(s(&["A"]), "A");
    assert_eq!(s(&["A", "B"]), "A and B");
    assert_eq!(s(&["A", "B", "C"]), "A, B, and C");
}

#[test]
fn previews_fit_1200_by_800() {
    assert_eq!(preview_size((2400, 1600)), (1200, 800));
    assert_eq!(preview_size((400, 300)), (400, 300));
    assert_eq!(preview_size((1000, 2000)), (400, 800));
    assert_eq!(image_size(r#"{"width":640,"height":480,"analyzed":true}"#), Some((640, 480)));
    assert_eq!(image_size(r#"{"identified":true}"#), None);
}

#[test]
fn path_segments_are_percent_encoded() {
    let mut s = String::new();
    push_path_segment(&mut s, "a b/ü.png");
    assert_eq!(s, "a%20b%2F%C3%BC.png");
}

fn fixture() -> (crate::db::testing::TempDb, Conn, Keys, i64, i64, i64) {
    use crate::db::rooms::{self, Kind};
    use crate::db::testing::{user, TempDb, T0};
    let (db, c) = TempDb::with_schema();
    let d = user(&c, "David <d>");
    let room = rooms::create_for(&c, Kind::Closed, Some("Pets & Co"), d, &[d], T0).unwrap();
    let m = messages::create(&c, &messages::NewMessage { room_id: room, creator_id: d, client_message_id: "cm-1", body: Some("<div>Hi <b>there</b><script>x</script></div>"), plain_text: "Hi there" }, T0).unwrap();
    (db, c, Keys::derive(b"test secret"), d, room, m)
}

fn render(c: &Conn, keys: &Keys, room: i64) -> String {
    let list = collect(|f| messages::last_page(c, room, f)).unwrap();
    let mut out = Vec::new();
    render_messages(c, keys, &list, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn renders_the_partial_with_its_interfaces() {
    let (_db, c, keys, d, room, m) = fixture();
    let html = render(&c, &keys, room);
    assert!(html.starts_with(r#"<div id="message_cm-1" class="message " data-controller="reply""#), "{html}");
    assert!(html.contains(&format!(r#"data-user-id="{d}" data-message-id="{m}" data-message-timestamp="1765554220000""#)));
    assert!(html.contains(r#"<time datetime="2025-12-12T15:43:40Z""#));
    assert!(html.contains("<strong data-reply-target=\"author\">David &lt;d&gt;</strong>"));
    assert!(html.contains(&format!(r#"href="/rooms/{room}/@{m}" target="_top" data-reply-target="link">Pets &amp; Co</a>"#)));
    assert!(html.contains(r#"<div id="presentation_message_cm-1" class="message__presentation" dir="auto" data-reply-target="body" data-messages-target="body"><div class="trix-content"><div>Hi <b>there</b></div></div></div>"#), "{html}");
    assert!(!html.contains("script"));
    assert!(html.contains(r#"<turbo-frame id="boosting_message_cm-1" data-controller="boosts-frame"></turbo-frame>"#), "no boosts: only the frame");
    assert_eq!(html.matches("data-message-id").count(), 1);
}

#[test]
fn cached_fragments_follow_edits_boosts_and_room_renames() {
    use crate::db::testing::{SEC, T0};
    let (_db, c, keys, d, room, m) = fixture();
    let first = render(&c, &keys, room);
    assert_eq!(render(&c, &keys, room), first, "byte-stable");
    c.exec(&format!("UPDATE rooms SET name = 'Renamed' WHERE id = {room}")).unwrap();
    let renamed = render(&c, &keys, room);
    assert!(renamed.contains(">Renamed</a>") && !renamed.contains("Pets &amp; Co"));
    assert!(messages::update(&c, m, "<div>edited</div>", "edited", T0 + SEC).unwrap());
    assert!(render(&c, &keys, room).contains("<div>edited</div>"));
    boosts::create(&c, m, d, "🔥", T0 + 2 * SEC).unwrap();
    let boosted = render(&c, &keys, room);
    assert!(boosted.contains(r#"<span role="button" class="txt-small txt-medium""#), "{boosted}");
    assert!(boosted.contains("aria-label=\"David &lt;d&gt; boosted 🔥\""));
    assert!(boosted.contains(r#"<turbo-frame id="boosting_message_cm-1"><div class="boosts""#), "with boosts: the whole block");
}

#[test]
fn sounds_emoji_and_direct_room_names() {
    use crate::db::rooms;
    use crate::db::testing::{user, T0};
    let (_db, c, keys, d, _room, _m) = fixture();
    let j = user(&c, "Jason");
    let k = user(&c, "Kevin");
    let (direct, _) = rooms::find_or_create_direct(&c, d, &[d, j, k], T0).unwrap();
    for (cid, body, plain) in [
        ("s1", "<div>/play trombone</div>", "/play trombone"),
        ("s2", "<div>/play deeper</div>", "/play deeper"),
        ("e1", "<div>👍</div>", "👍"),
    ] {
        messages::create(&c, &messages::NewMessage { room_id: direct, creator_id: j, client_message_id: cid, body: Some(body), plain_text: plain }, T0).unwrap();
    }
    let html = render(&c, &keys, direct);
    assert!(html.contains(r#"<div class="sound" data-controller="sound" data-action="messages:play->sound#play" data-sound-name-value="trombone"><button type="button" class="btn btn--plain" data-action="sound#play" aria-label="Play trombone">🔊</button> plays a sad trombone</div>"#), "{html}");
    // Sounds Campfire shows as an image get our caption; the page names no sound or image file.
    assert!(html.contains(r#"data-sound-name-value="deeper""#) && html.contains("</button> 🌀 goes deeper</div>"), "{html}");
    assert!(!html.contains("/assets/sounds/") && !html.contains(".mp3") && !html.contains(".webp"), "{html}");
    assert!(html.contains(r#"<div id="message_e1" class="message message--emoji""#));
    assert!(html.contains(">David &lt;d&gt;, Jason, and Kevin</a>"), "{html}");
}

/// spec/05 messages_helper_test: the presentation strips `javascript:` links and event
/// handlers, keeps safe links and `<strong>`.
#[test]
fn presentation_is_sanitized() {
    use crate::db::testing::T0;
    let (_db, c, keys, d, room, _m) = fixture();
    let body = r#"<div><a href="javascript:alert(1)">x</a> <a href="/x" onclick="alert(1)">y</a> <strong>z</strong> <a href="https://example.com">e</a></div>"#;
    let id = messages::create(&c, &messages::NewMessage { room_id: room, creator_id: d, client_message_id: "h1", body: Some(body), plain_text: "x y z e" }, T0 + 1).unwrap();
    let m = messages::find(&c, id).unwrap().unwrap();
    let mut out = Vec::new();
    Renderer::new(&c, &keys).presentation(&m, &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(!html.contains("javascript:") && !html.contains("onclick"), "{html}");
    assert!(html.contains(r#"href="/x""#) && html.contains("<strong>z</strong>") && html.contains(r#"href="https://example.com""#), "{html}");
}

#[test]
fn message_json_shape() {
    let (_db, c, keys, d, room, m) = fixture();
    let msg = messages::find(&c, m).unwrap().unwrap();
    let mut out = Vec::new();
    message_json(&c, &keys, &msg, "https://chat.test", &mut out).unwrap();
    let json = String::from_utf8(out).unwrap();
    assert!(json.starts_with(&format!(r#"{{"id":{m},"created_at":"2025-12-12T15:43:40.000Z","body":{{"plain_text":"Hi there","html":"\u003cdiv class=\"trix-content\"\u003e"#)), "{json}");
    assert!(json.contains(&format!(r#""creator":{{"id":{d},"name":"David \u003cd\u003e","role":"member","avatar_url":"https://chat.test/users/"#)), "{json}");
    assert!(json.ends_with(&format!(r#""room":{{"id":{room}}},"url":"https://chat.test/rooms/{room}/messages/{m}"}}"#)), "{json}");
}

#[test]
fn an_unreadable_message_is_replaced_not_fatal() {
    let (_db, c, keys, _d, room, m) = fixture();
    c.exec(&format!("UPDATE action_text_rich_texts SET body = CAST(x'ff00fe' AS TEXT) WHERE record_id = {m}")).unwrap();
    let html = render(&c, &keys, room);
    assert!(html.contains("message--failed") && html.contains("Failed to load message content"), "{html}");
}

#[test]
fn a_new_message_renders_from_what_its_post_holds_as_a_read_back_does() {
    let (_db, c, keys, d, room, m) = fixture();
    let creator = users::find(&c, d).unwrap().unwrap();
    let msg = messages::find(&c, m).unwrap().unwrap();
    let body = messages::body(&c, m).unwrap().unwrap();
    let r = Renderer::new(&c, &keys);
    let (html, plain) = (richtext::render_body(&body, &|s| r.mention(s)), richtext::plain_text(&body, &|s| r.mention(s)));
    let forget = || fragments::FRAGMENTS.with(|f| f.borrow_mut().map.clear());
    forget();
    let read_back = render(&c, &keys, room);
    forget();
    // Nothing is read: a lazily begun transaction is never opened.
    c.begin_lazily();
    let mut out = Vec::new();
    let w = Written { html: &html, plain: &plain, creator: Some(&creator), room_name: Some("Pets & Co") };
    render_new_message(&c, &keys, &msg, &w, &mut out).unwrap();
    assert!(c.is_autocommit(), "no statement ran");
    c.end_lazy().unwrap();
    assert_eq!(String::from_utf8(out).unwrap(), read_back);
}
