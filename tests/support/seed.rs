//! The fixture database every chat integration test starts from: spec/05 §F's account,
//! people, rooms, memberships, messages, boosts and search, written with plain SQL (Rails
//! fixtures bypass model callbacks too) into the database of a freshly started server.
//!
//! Ids are the fixture ids Rails derives from labels, so "the user's last room" (the highest
//! room id) is the same room as in the Rails tests: david_and_kevin. Messages get ids 1..=13
//! in fixture order. Every person has a live session; `Seeded::jar(user)` signs them in.

use super::client::{Jar, Request, Response, Server};
use std::sync::OnceLock;

pub const DAVID: i64 = 127326141;
pub const JASON: i64 = 149087659;
pub const JZ: i64 = 773523953;
pub const KEVIN: i64 = 712064548;
pub const BENDER: i64 = 394959859;

pub const PETS: i64 = 104393281;
pub const HQ: i64 = 201306877;
pub const WATERCOOLER: i64 = 486777696;
pub const DESIGNERS: i64 = 654632876;
pub const DAVID_AND_JASON: i64 = 186869642;
pub const DAVID_AND_KEVIN: i64 = 699448325;
pub const BENDER_AND_KEVIN: i64 = 340026324;

/// Message ids: first..thirteenth of §F.
pub const FIRST: i64 = 1;
pub const SECOND: i64 = 2;
pub const THIRD: i64 = 3;
pub const FOURTH: i64 = 4;
pub const THIRTEENTH: i64 = 13;

pub const PASSWORD: &str = "secret123456";
/// bcrypt `$2a$12$` of PASSWORD.
const PASSWORD_DIGEST: &str = "$2a$12$F2flUwzfpf3XY8EJNtSfeugfXWXQNoI4ybNQn5.Y05n.TBjjrNqvm";
pub const JOIN_CODE: &str = "CRMu-l8Ge-KB9B";
/// Alphanumeric like Rails' `generate_bot_token`: a bot key is `<id>-<token>`, split at the first dash.
pub const BENDER_TOKEN: &str = "BenderBotKey";

const MINUTE_US: i64 = 60_000_000;

/// (id, name, e-mail, role, bio, session token). Role 1 = administrator, 2 = bot.
type UserFixture = (i64, &'static str, Option<&'static str>, i64, Option<&'static str>, &'static str);
const USERS: &[UserFixture] = &[
    (DAVID, "David", Some("david@37signals.com"), 1, None, super::client::VECTOR_TOKEN),
    (JASON, "Jason", Some("jason@37signals.com"), 1, None, "JasonSessionToken0000001"),
    (JZ, "JZ", Some("jz@37signals.com"), 0, Some("Designer"), "JzSessionToken0000000001"),
    (KEVIN, "Kevin", Some("kevin@37signals.com"), 0, Some("Programmer"), "KevinSessionToken0000001"),
    (BENDER, "Bender Bot", None, 2, None, "BenderSessionToken000001"),
];

/// (id, name, type, creator).
const ROOMS: &[(i64, Option<&str>, &str, i64)] = &[
    (PETS, Some("All Pets"), "Rooms::Open", DAVID),
    (HQ, Some("HQ"), "Rooms::Open", DAVID),
    (WATERCOOLER, Some("All Talk"), "Rooms::Closed", DAVID),
    (DESIGNERS, Some("Designers"), "Rooms::Closed", DAVID),
    (DAVID_AND_JASON, None, "Rooms::Direct", DAVID),
    (DAVID_AND_KEVIN, None, "Rooms::Direct", DAVID),
    (BENDER_AND_KEVIN, None, "Rooms::Direct", KEVIN),
];

/// (room, user, involvement).
const MEMBERSHIPS: &[(i64, i64, &str)] = &[
    (DESIGNERS, DAVID, "mentions"),
    (DESIGNERS, JASON, "everything"),
    (DESIGNERS, JZ, "everything"),
    (DESIGNERS, KEVIN, "mentions"),
    (PETS, DAVID, "everything"),
    (PETS, JASON, "everything"),
    (WATERCOOLER, DAVID, "everything"),
    (WATERCOOLER, JASON, "everything"),
    (WATERCOOLER, BENDER, "mentions"),
    (HQ, DAVID, "everything"),
    (HQ, JASON, "everything"),
    (HQ, JZ, "everything"),
    (HQ, KEVIN, "everything"),
    (DAVID_AND_JASON, DAVID, "everything"),
    (DAVID_AND_JASON, JASON, "everything"),
    (DAVID_AND_KEVIN, DAVID, "everything"),
    (DAVID_AND_KEVIN, KEVIN, "everything"),
    (BENDER_AND_KEVIN, BENDER, "everything"),
    (BENDER_AND_KEVIN, KEVIN, "everything"),
];

/// (room, creator, minutes before the seed, plain text). Ids are the position + 1.
const MESSAGES: &[(i64, i64, i64, &str)] = &[
    (DESIGNERS, JASON, 60, "First post!"),
    (DESIGNERS, DAVID, 36, "Seconded."),
    (DESIGNERS, JZ, 7, "Third time's a charm."),
    (WATERCOOLER, JZ, 30, "In Italy, for thirty years under the Borgias, they had warfare, terror, murder and bloodshed, but they produced Michelangelo, Leonardo da Vinci and the Renaissance. In Switzerland, they had brotherly love, they had five hundred years of democracy and peace, and what did that produce? The cuckoo clock."),
    (WATERCOOLER, JASON, 29, "Champagne, if you are seeking the truth, is better than a lie detector."),
    (WATERCOOLER, DAVID, 27, "The only thing unhappiness is good for is the making of stories."),
    (WATERCOOLER, JASON, 26, "A story has no beginning or end\u{2014}arbitrarily one chooses that moment of experience from which to look back or from which to look ahead."),
    (WATERCOOLER, JZ, 25, "Hate is a lack of imagination."),
    (WATERCOOLER, JZ, 24, "And innocence is a kind of insanity"),
    (WATERCOOLER, DAVID, 23, "Loyalty is the one thing you keep even when everything else is gone."),
    (WATERCOOLER, JASON, 22, "People who like quotes love meaningless generalizations"),
    (WATERCOOLER, JASON, 21, "Pain is easy to write. In pain we are all individualists."),
    (WATERCOOLER, JZ, 5, "When we are not sure, we are alive."),
];

/// (message id, booster, content).
const BOOSTS: &[(i64, i64, &str)] = &[(FIRST, DAVID, "Hello"), (THIRTEENTH, JASON, "\u{1F4AF}"), (FOURTH, BENDER, "\u{1F440}")];

/// A running server over the fixture database.
pub struct Seeded {
    pub srv: Server,
    /// The seed's clock (µs since the epoch); messages are placed relative to it.
    pub now: i64,
}

/// Starts the real binary (SECRET_KEY_BASE=dummy, DISABLE_SSL=1) and seeds its database.
pub fn start() -> Seeded {
    start_with(&[])
}

/// Like `start`, with extra environment for the server.
pub fn start_with(env: &[(&str, &str)]) -> Seeded {
    let srv = Server::start(env);
    let now = campfire::db::time::now_us();
    let conn = campfire::db::Conn::open(srv.db_path().to_str().expect("utf-8 path"), campfire::db::Mode::ReadWrite)
        .expect("open the server's database");
    conn.transaction(|c| {
        c.exec(&sql(now))?;
        Ok(())
    })
    .expect("seed");
    Seeded { srv, now }
}

/// The whole seed as one SQL script (also handy from the `sqlite3` shell when debugging).
pub fn sql(now: i64) -> String {
    let ts = |us: i64| q(campfire::db::time::format(us).as_str());
    let t = ts(now);
    let mut s = String::new();
    s += &format!(
        "INSERT INTO accounts (name, join_code, settings, created_at, updated_at) VALUES ('37signals', {}, '{{\"restrict_room_creation_to_administrators\":false}}', {t}, {t});\n",
        q(JOIN_CODE)
    );
    for &(id, name, email, role, bio, token) in USERS {
        let (email, digest, bot) = match email {
            Some(e) => (q(e), q(PASSWORD_DIGEST), "NULL".to_string()),
            None => ("NULL".into(), "NULL".into(), q(BENDER_TOKEN)),
        };
        let bio = bio.map_or("NULL".into(), q);
        s += &format!(
            "INSERT INTO users (id, name, email_address, password_digest, bio, bot_token, role, status, created_at, updated_at) \
             VALUES ({id}, {}, {email}, {digest}, {bio}, {bot}, {role}, 0, {t}, {t});\n",
            q(name)
        );
        s += &format!(
            "INSERT INTO sessions (user_id, token, ip_address, user_agent, last_active_at, created_at, updated_at) \
             VALUES ({id}, {}, '127.0.0.1', 'Mozilla/5.0', {t}, {t}, {t});\n",
            q(token)
        );
    }
    s += &format!("INSERT INTO webhooks (user_id, url, created_at, updated_at) VALUES ({BENDER}, 'http://example.com/bender', {t}, {t});\n");
    for &(id, name, kind, creator) in ROOMS {
        let name = name.map_or("NULL".into(), q);
        s += &format!("INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES ({id}, {name}, '{kind}', {creator}, {t}, {t});\n");
    }
    for &(room, user, involvement) in MEMBERSHIPS {
        s += &format!(
            "INSERT INTO memberships (room_id, user_id, involvement, connections, created_at, updated_at) VALUES ({room}, {user}, '{involvement}', 0, {t}, {t});\n"
        );
    }
    for (k, &(room, creator, minutes, text)) in MESSAGES.iter().enumerate() {
        let id = k as i64 + 1;
        let at = ts(now - minutes * MINUTE_US);
        s += &format!(
            "INSERT INTO messages (id, room_id, creator_id, client_message_id, created_at, updated_at) VALUES ({id}, {room}, {creator}, '{:04}', {at}, {at});\n",
            id
        );
        s += &format!(
            "INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) VALUES ('Message', {id}, 'body', {}, {at}, {at});\n",
            q(&format!("<div>{}</div>", html_escape(text)))
        );
        s += &format!("INSERT INTO message_search_index (rowid, body) VALUES ({id}, {});\n", q(text));
    }
    for &(message, booster, content) in BOOSTS {
        s += &format!("INSERT INTO boosts (message_id, booster_id, content, created_at, updated_at) VALUES ({message}, {booster}, {}, {t}, {t});\n", q(content));
    }
    s += &format!("INSERT INTO searches (user_id, query, created_at, updated_at) VALUES ({DAVID}, 'pizza', {t}, {t});\n");
    s
}

fn q(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// The signed `session_token` cookie value of `token` under SECRET_KEY_BASE=dummy, as a
/// browser would send it back.
pub fn session_cookie(token: &str) -> String {
    static KEYS: OnceLock<campfire::crypto::Keys> = OnceLock::new();
    let keys = KEYS.get_or_init(|| campfire::crypto::Keys::derive(b"dummy"));
    let mut out = Vec::new();
    campfire::crypto::cookies::set_session_token(keys, token.as_bytes(), campfire::crypto::time::now_ms(), false, &mut out);
    let set_cookie = String::from_utf8(out).expect("ascii cookie");
    let pair = set_cookie.split(';').next().unwrap_or("");
    pair.split_once('=').map(|(_, v)| v.to_string()).unwrap_or_default()
}

impl Seeded {
    /// A cookie jar signed in as `user_id` (one of the fixture people).
    pub fn jar(&self, user_id: i64) -> Jar {
        let token = USERS.iter().find(|u| u.0 == user_id).map(|u| u.5).expect("a fixture user");
        Jar(vec![("session_token".to_string(), session_cookie(token))])
    }

    /// GET `path` as `user_id`.
    pub fn get(&self, user_id: i64, path: &str) -> Response {
        self.srv.send(&Request::get(path).cookies(&self.jar(user_id)))
    }

    /// A same-origin form POST to `path` as `user_id`.
    pub fn post(&self, user_id: i64, path: &str, fields: &[(&str, &str)]) -> Response {
        self.srv.send(&Request::post_form(path, fields).cookies(&self.jar(user_id)))
    }

    pub fn query_int(&self, sql: &str) -> i64 {
        self.srv.query_int(sql)
    }

    pub fn query_text(&self, sql: &str) -> String {
        self.srv.query_text(sql)
    }
}
