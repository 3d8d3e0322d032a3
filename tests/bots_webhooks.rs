//! Bot webhooks against the real binary (spec/04 §4, spec/05 webhook_test and
//! messages_controller_test): a loopback fake bot server receives the JSON deliveries and
//! answers by the rules of §4.3; the replies show up as the bot's messages.

mod support;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;

/// A second bot with a webhook, a member of the watercooler, to show replies trigger nothing.
const ROBO: i64 = 5550001;

/// What the fake bot answers, in order, one per delivery.
#[derive(Clone)]
enum Answer {
    Raw(&'static [u8]),
    /// Sleep this long, then close without answering.
    Stall(Duration),
}

/// A loopback bot server: records every delivery (path, body) and answers from a script.
struct FakeBot {
    port: u16,
    seen: Arc<Mutex<Vec<(String, String)>>>,
    script: Arc<Mutex<VecDeque<Answer>>>,
}

impl FakeBot {
    fn start() -> FakeBot {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::new()));
        let (seen2, script2) = (Arc::clone(&seen), Arc::clone(&script));
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut c) = conn else { return };
                let (seen, script) = (Arc::clone(&seen2), Arc::clone(&script2));
                std::thread::spawn(move || {
                    let (path, body) = read_request(&mut c);
                    seen.lock().unwrap().push((path, body));
                    match script.lock().unwrap().pop_front().unwrap_or(Answer::Raw(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")) {
                        Answer::Raw(bytes) => {
                            let _ = c.write_all(bytes);
                        }
                        Answer::Stall(d) => std::thread::sleep(d),
                    }
                });
            }
        });
        FakeBot { port, seen, script }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn then(&self, a: Answer) {
        self.script.lock().unwrap().push_back(a);
    }

    fn deliveries(&self) -> Vec<(String, String)> {
        self.seen.lock().unwrap().clone()
    }
}

fn read_request(c: &mut std::net::TcpStream) -> (String, String) {
    let mut got = Vec::new();
    let mut b = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") && c.read(&mut b).unwrap_or(0) == 1 {
        got.push(b[0]);
    }
    let head = String::from_utf8_lossy(&got).into_owned();
    let path = head.split(' ').nth(1).unwrap_or("").to_string();
    let len = head
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length: ").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    let _ = c.read_exact(&mut body);
    (path, String::from_utf8_lossy(&body).into_owned())
}

/// The seeded server with Bender's webhook pointed at `bot`, and Robo, a second hooked bot.
fn start_with_bot(bot: &FakeBot) -> Seeded {
    let s = start();
    let stamp = campfire::db::time::format(campfire::db::time::now_us());
    let t = stamp.as_str();
    s.srv.sql(&format!(
        "UPDATE webhooks SET url = '{}' WHERE user_id = {BENDER};
         INSERT INTO users (id, name, role, status, bot_token, created_at, updated_at) VALUES ({ROBO}, 'Robo', 2, 0, 'RoboKey', '{t}', '{t}');
         INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) VALUES ({WATERCOOLER}, {ROBO}, 'mentions', '{t}', '{t}');
         INSERT INTO webhooks (user_id, url, created_at, updated_at) VALUES ({ROBO}, '{}', '{t}', '{t}');",
        bot.url("/bender"),
        bot.url("/robo"),
    ));
    s
}

/// A mention of `user_id` as the composer sends it (signed with SECRET_KEY_BASE=dummy).
fn mention(user_id: i64) -> String {
    let keys = campfire::crypto::Keys::derive(b"dummy");
    let mut sgid = Vec::new();
    campfire::crypto::sgid::user_sgid(&keys, user_id, &mut sgid);
    format!(
        r#"<action-text-attachment sgid="{}" content-type="application/vnd.campfire.mention"></action-text-attachment>"#,
        String::from_utf8(sgid).unwrap()
    )
}

fn say(s: &Seeded, user: i64, room: i64, body: &str) -> i64 {
    let r = s.srv.send(
        &Request::post_form(&format!("/rooms/{room}/messages"), &[("message[body]", body)])
            .cookies(&s.jar(user))
            .header("Accept", "text/vnd.turbo-stream.html, text/html"),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    // From the answer, not max(id): a fast bot's reply may already be in.
    let at = r.body.find("data-message-id=\"").expect("the message partial") + 17;
    r.body[at..].split('"').next().unwrap().parse().unwrap()
}

fn bot_messages(s: &Seeded, bot: i64, room: i64) -> i64 {
    s.query_int(&format!("SELECT count(*) FROM messages WHERE creator_id = {bot} AND room_id = {room}"))
}

/// Waits until `f` holds (the delivery is asynchronous), up to `secs`.
fn eventually(secs: u64, what: &str, f: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn last_plain(s: &Seeded, bot: i64, room: i64) -> String {
    s.query_text(&format!(
        "SELECT message_search_index.body FROM messages JOIN message_search_index ON message_search_index.rowid = messages.id \
         WHERE creator_id = {bot} AND room_id = {room} ORDER BY messages.id DESC LIMIT 1"
    ))
}

#[test]
fn a_direct_message_is_delivered_and_a_text_answer_becomes_the_reply() {
    let bot = FakeBot::start();
    let s = start_with_bot(&bot);
    bot.then(Answer::Raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 11\r\n\r\nHello back!"));
    let id = say(&s, KEVIN, BENDER_AND_KEVIN, "Hi <b>Bender</b> & co");
    eventually(5, "the reply", || bot_messages(&s, BENDER, BENDER_AND_KEVIN) == 1);
    let d = bot.deliveries();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].0, "/bender");
    let key = format!("{BENDER}-{BENDER_TOKEN}");
    assert_eq!(
        d[0].1,
        format!(
            r#"{{"user":{{"id":{KEVIN},"name":"Kevin"}},"room":{{"id":{BENDER_AND_KEVIN},"name":null,"path":"/rooms/{BENDER_AND_KEVIN}/{key}/messages"}},"message":{{"id":{id},"body":{{"html":"Hi \u003cb\u003eBender\u003c/b\u003e \u0026amp; co","plain":"Hi Bender \u0026 co"}},"path":"/rooms/{BENDER_AND_KEVIN}/@{id}"}}}}"#
        )
    );
    assert_eq!(last_plain(&s, BENDER, BENDER_AND_KEVIN), "Hello back!");
    // The reply is a full message: unread for Kevin, searchable.
    assert_eq!(s.query_int(&format!("SELECT unread_at IS NOT NULL FROM memberships WHERE room_id = {BENDER_AND_KEVIN} AND user_id = {KEVIN}")), 1);
    // Bender's own messages (the reply above, a bot API post) are never delivered to him.
    let r = s.srv.send(&Request {
        method: "POST",
        path: format!("/rooms/{BENDER_AND_KEVIN}/{key}/messages"),
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: b"from the API".to_vec(),
    });
    assert_eq!(r.status, 201);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(bot.deliveries().len(), 1);
}

#[test]
fn elsewhere_only_verified_mentions_deliver_and_replies_trigger_nothing() {
    let bot = FakeBot::start();
    let s = start_with_bot(&bot);
    say(&s, DAVID, WATERCOOLER, "No mention of anyone here");
    // A forged sgid (bad signature) is not a mention.
    say(&s, DAVID, WATERCOOLER, &mention(BENDER).replace("--", "--0"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(bot.deliveries().is_empty(), "{:?}", bot.deliveries());

    // Bender answers with HTML that mentions Robo: Robo gets nothing, the reply is a webhook reply.
    let reply = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>Ask {}</p>", mention(ROBO));
    bot.then(Answer::Raw(Box::leak(reply.into_bytes().into_boxed_slice())));
    let id = say(&s, DAVID, WATERCOOLER, &format!("<div>Hey {} what's up?</div>", mention(BENDER)));
    eventually(5, "the reply", || bot_messages(&s, BENDER, WATERCOOLER) == 1);
    let d = bot.deliveries();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, "/bender");
    assert!(d[0].1.contains(r#""plain":"Hey  what's up?""#), "the bot's own @mention removed: {}", d[0].1);
    assert!(d[0].1.contains(&format!(r#""path":"/rooms/{WATERCOOLER}/@{id}""#)));
    assert!(d[0].1.contains(r#""name":"All Talk""#));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(bot.deliveries().len(), 1, "Robo, mentioned in a webhook reply, gets nothing");

    // A member who is not mentioned and a mentioned non-member bot get nothing either.
    s.srv.sql(&format!("DELETE FROM memberships WHERE user_id = {BENDER} AND room_id = {WATERCOOLER}"));
    say(&s, DAVID, WATERCOOLER, &format!("<div>{} and nobody</div>", mention(BENDER)));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(bot.deliveries().len(), 1);

    // A human's mention of Robo does reach Robo.
    say(&s, DAVID, WATERCOOLER, &mention(ROBO));
    eventually(5, "Robo's delivery", || bot.deliveries().len() == 2);
    assert_eq!(bot.deliveries()[1].0, "/robo");
}

#[test]
fn answers_without_a_content_type_post_nothing() {
    let bot = FakeBot::start();
    let s = start_with_bot(&bot);
    bot.then(Answer::Raw(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops"));
    bot.then(Answer::Raw(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    for n in 1..=2 {
        say(&s, KEVIN, BENDER_AND_KEVIN, &format!("message {n}"));
        eventually(5, "the delivery", || bot.deliveries().len() == n);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(bot_messages(&s, BENDER, BENDER_AND_KEVIN), 0);

    // Nobody listening (connection refused): the job fails, nothing is posted.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    s.srv.sql(&format!("UPDATE webhooks SET url = 'http://127.0.0.1:{closed}/' WHERE user_id = {BENDER}"));
    say(&s, KEVIN, BENDER_AND_KEVIN, "anyone?");
    eventually(5, "the failure log line", || s.srv.stderr().contains("delivery to its webhook failed"));
    assert_eq!(bot_messages(&s, BENDER, BENDER_AND_KEVIN), 0);
}

/// The attachment of the bot's latest message in `room`: (filename, content type, byte size, file on disk).
fn last_attachment(s: &Seeded, room: i64) -> (String, String, i64, Vec<u8>) {
    let q = |col: &str| {
        format!(
            "SELECT b.{col} FROM messages m JOIN active_storage_attachments a ON a.record_type = 'Message' AND a.record_id = m.id \
             AND a.name = 'attachment' JOIN active_storage_blobs b ON b.id = a.blob_id \
             WHERE m.creator_id = {BENDER} AND m.room_id = {room} ORDER BY m.id DESC LIMIT 1"
        )
    };
    let key = s.query_text(&q("key"));
    let path = s.srv.db_path().parent().unwrap().parent().unwrap().join("files").join(&key[0..2]).join(&key[2..4]).join(&key);
    (s.query_text(&q("filename")), s.query_text(&q("content_type")), s.query_int(&q("byte_size")), std::fs::read(path).unwrap())
}

#[test]
fn other_typed_answers_become_attachment_messages() {
    let bot = FakeBot::start();
    let s = start_with_bot(&bot);
    bot.then(Answer::Raw(b"HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: 4\r\n\r\n\xff\xd8\xff\xd9"));
    say(&s, KEVIN, BENDER_AND_KEVIN, "a picture please");
    eventually(5, "the attachment reply", || bot_messages(&s, BENDER, BENDER_AND_KEVIN) == 1);
    assert_eq!(last_attachment(&s, BENDER_AND_KEVIN), ("attachment.jpeg".into(), "image/jpeg".into(), 4, b"\xff\xd8\xff\xd9".to_vec()));
    assert_eq!(last_plain(&s, BENDER, BENDER_AND_KEVIN), "attachment.jpeg", "searchable by its filename");
    assert_eq!(
        s.query_int("SELECT count(*) FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = (SELECT max(id) FROM messages)"),
        0,
        "no body"
    );

    // Whatever the status: a 500 with an HTML page is an attachment too.
    bot.then(Answer::Raw(b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\noops!"));
    say(&s, KEVIN, BENDER_AND_KEVIN, "and now?");
    eventually(5, "the second reply", || bot_messages(&s, BENDER, BENDER_AND_KEVIN) == 2);
    assert_eq!(last_attachment(&s, BENDER_AND_KEVIN), ("attachment.html".into(), "text/html".into(), 5, b"oops!".to_vec()));

    // A type Rails does not register: no extension.
    bot.then(Answer::Raw(b"HTTP/1.1 200 OK\r\nContent-Type: application/x-campfire-test\r\nContent-Length: 2\r\n\r\nok"));
    say(&s, KEVIN, BENDER_AND_KEVIN, "one more");
    eventually(5, "the third reply", || bot_messages(&s, BENDER, BENDER_AND_KEVIN) == 3);
    assert_eq!(last_attachment(&s, BENDER_AND_KEVIN).0, "attachment.");

    // The room page shows the attachment message.
    let r = s.get(KEVIN, &format!("/rooms/{BENDER_AND_KEVIN}/messages"));
    assert!(r.body.contains("attachment.jpeg"), "{}", r.body);
}

#[test]
fn a_bot_that_does_not_answer_in_7_seconds_says_so() {
    let bot = FakeBot::start();
    let s = start_with_bot(&bot);
    bot.then(Answer::Stall(Duration::from_secs(9)));
    let t = Instant::now();
    say(&s, KEVIN, BENDER_AND_KEVIN, "still there?");
    eventually(12, "the timeout reply", || bot_messages(&s, BENDER, BENDER_AND_KEVIN) == 1);
    assert!(t.elapsed() >= Duration::from_secs(7));
    assert_eq!(last_plain(&s, BENDER, BENDER_AND_KEVIN), "Failed to respond within 7 seconds");
}
