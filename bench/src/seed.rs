//! `campfire-bench seed`: writes the shared harness's benchmark seed (workloads.md §2) without Rails:
//! a Rails-compatible `db/production.sqlite3`, Active Storage files under `files/`, and `labels.json`.
//! Rows are written in the order the harness's seed script creates them, so AUTOINCREMENT ids
//! come out the same (fixture rows get CRC32(label) mod (2^30 - 1)).

use crate::clock::{self, DAY, HOUR, MIN};
use crate::crc32::fixture_id;
use crate::db::{Conn, Val};
use crate::digest::{base64, md5, sha256};
use crate::json;
use crate::media;
use crate::rails;
use std::path::{Path, PathBuf};

/// The seed clock (seed.rb NOW).
pub fn now() -> i64 {
    clock::utc(2026, 3, 2, 16, 0, 0)
}

/// The password of every seeded person. The harness draws a random one per run; ours is fixed so
/// its bcrypt digest can be a constant (the bench has no bcrypt).
pub const PASSWORD: &str = "secret123456";
/// bcrypt (`$2a$`, cost 12, as Rails writes them) of `PASSWORD`.
pub const PASSWORD_DIGEST: &str = "$2a$12$lXxFIU/DpXCi4N6yNmrfFeju7VBFuzTJHEQkdw7nUCRmH44s4MxXW";
/// The SECRET_KEY_BASE the signed tokens in labels.json are made with; the server under test must
/// run with it (bench/run.sh passes it on).
pub const SECRET_KEY_BASE: &str = "campfire-bench-secret-key-base-0123456789abcdef0123456789abcdef0123456789abcdef";

const BENDER_TOKEN: &str = "bndr7Qp2Lx9K";
const DEPLOY_TOKEN: &str = "dply4Wm8Rt2N";
const OLD_TOKEN: &str = "oldb6Hn3Vc5J";

/// Options of the seed command.
pub struct Options {
    pub out: PathBuf,
    /// Where moon.jpg, black_hole.jpg, alpha-centuri.mov and pixel.bmp are read from; None uses
    /// our own stand-ins (`media::stand_in`).
    pub files: Option<PathBuf>,
    /// 1 is the harness's seed; N ≥ 2 adds an account grown N times (`seed_scale`).
    pub scale: u32,
}

/// Builds the seed into `opts.out` (which must not hold a database yet).
pub fn run(opts: &Options) -> Result<(), String> {
    let db_dir = opts.out.join("db");
    std::fs::create_dir_all(&db_dir).map_err(|e| format!("{}: {e}", db_dir.display()))?;
    let db_path = db_dir.join("production.sqlite3");
    if db_path.exists() {
        return Err(format!("{} exists; seed into a fresh directory", db_path.display()));
    }
    let conn = Conn::open(&db_path.to_string_lossy(), true, false)?;
    // Foreign keys stay off while seeding: the unrenderable message points at a user that does not
    // exist, as in the harness's seed (which disables referential integrity for it).
    conn.exec("PRAGMA journal_mode=WAL; PRAGMA foreign_keys=OFF;")?;
    conn.exec(include_str!("schema.sql"))?;
    conn.exec("BEGIN")?;
    let mut s = Seed { conn: &conn, labels: vec![], cmids: 0, blobs: 0, out: opts.out.clone(), files: opts.files.clone() };
    s.labels.push(("clock.now".into(), json::Scalar::Str(clock::iso(now()))));
    let media = if opts.files.is_some() { "fixture files" } else { "stand-ins" };
    s.labels.push(("seed.media".into(), json::Scalar::Str(media.into())));
    s.build()?;
    if opts.scale > 1 {
        let grown = crate::seed_scale::grow(&conn, opts.scale, now(), &s.labels)?;
        s.labels.extend(grown);
    }
    conn.exec("COMMIT")?;
    conn.exec("PRAGMA wal_checkpoint(TRUNCATE)")?;
    let labels = std::mem::take(&mut s.labels);
    drop(s);
    drop(conn);
    write_labels(&opts.out, &labels)
}

/// Writes `labels` sorted by key as pretty JSON to `out/labels.json`.
pub fn write_labels(out: &Path, labels: &[(String, json::Scalar)]) -> Result<(), String> {
    let mut sorted: Vec<&(String, json::Scalar)> = labels.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::from("{\n");
    for (i, (k, v)) in sorted.iter().enumerate() {
        let v = match v {
            json::Scalar::Num(n) => n.to_string(),
            json::Scalar::Str(s) => json::str(s),
            json::Scalar::Null => "null".into(),
        };
        text.push_str(&format!("  {}: {}{}\n", json::str(k), v, if i + 1 < sorted.len() { "," } else { "" }));
    }
    text.push_str("}\n");
    let path = out.join("labels.json");
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
}

struct Seed<'c> {
    conn: &'c Conn,
    labels: Vec<(String, json::Scalar)>,
    cmids: u32,
    blobs: u32,
    out: PathBuf,
    files: Option<PathBuf>,
}

// A file attached to a post or an avatar.
struct File {
    name: &'static str,
    content_type: &'static str,
    bytes: Vec<u8>,
}

impl Seed<'_> {
    fn label(&mut self, key: String, id: i64) -> i64 {
        self.labels.push((key, json::Scalar::Num(id)));
        id
    }

    fn label_str(&mut self, key: &str, v: &str) {
        self.labels.push((key.into(), json::Scalar::Str(v.into())));
    }

    fn run(&self, sql: &str, params: &[Val]) -> Result<i64, String> {
        self.conn.run(sql, params)
    }

    fn build(&mut self) -> Result<(), String> {
        let now = now();
        let t = |x: i64| clock::db(x);

        // -- Fixtures (test/fixtures/*.yml), timestamps spread as default.rb does. ------------
        let signal = self.label("accounts.signal".into(), fixture_id("signal"));
        self.run(
            "INSERT INTO accounts (id, name, join_code, created_at, updated_at) VALUES (?, '37signals', 'CRMu-l8Ge-KB9B', ?, ?)",
            &[Val::Int(signal), Val::Text(&t(now - 60 * DAY)), Val::Text(&t(now - 60 * DAY))],
        )?;

        // name, email, role, bio, bot token
        let users = [
            ("david", "David", Some("david@37signals.com"), 1, None, None),
            ("jason", "Jason", Some("jason@37signals.com"), 1, None, None),
            ("jz", "JZ", Some("jz@37signals.com"), 0, Some("Designer"), None),
            ("kevin", "Kevin", Some("kevin@37signals.com"), 0, Some("Programmer"), None),
            ("bender", "Bender Bot", None, 2, None, Some(BENDER_TOKEN)),
        ];
        for (i, (label, name, email, role, bio, token)) in users.iter().enumerate() {
            let id = self.label(format!("users.{label}"), fixture_id(label));
            let at = t(now - 59 * DAY + i as i64 * HOUR);
            let digest = if token.is_none() { Some(PASSWORD_DIGEST) } else { None };
            self.insert_user(id, name, *email, digest, *role, *bio, *token, &at)?;
        }
        let [david, jason, jz, kevin, bender] = ["david", "jason", "jz", "kevin", "bender"].map(fixture_id);

        let rooms: [(&str, Option<&str>, &str, i64); 7] = [
            ("pets", Some("All Pets"), "Rooms::Open", david),
            ("hq", Some("HQ"), "Rooms::Open", david),
            ("watercooler", Some("All Talk"), "Rooms::Closed", david),
            ("designers", Some("Designers"), "Rooms::Closed", david),
            ("david_and_jason", None, "Rooms::Direct", david),
            ("david_and_kevin", None, "Rooms::Direct", david),
            ("bender_and_kevin", None, "Rooms::Direct", kevin),
        ];
        for (i, (label, name, kind, creator)) in rooms.iter().enumerate() {
            let id = self.label(format!("rooms.{label}"), fixture_id(label));
            let at = t(now - 58 * DAY + i as i64 * HOUR);
            self.run(
                "INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                &[Val::Int(id), name.map_or(Val::Null, Val::Text), Val::Text(kind), Val::Int(*creator), Val::Text(&at), Val::Text(&at)],
            )?;
        }
        let [pets, hq, watercooler, designers, david_and_jason, david_and_kevin, bender_and_kevin] =
            ["pets", "hq", "watercooler", "designers", "david_and_jason", "david_and_kevin", "bender_and_kevin"]
                .map(fixture_id);

        let memberships: [(&str, i64, i64, &str); 19] = [
            ("david_designers", designers, david, "mentions"),
            ("jason_designers", designers, jason, "everything"),
            ("jz_designers", designers, jz, "everything"),
            ("kevin_designers", designers, kevin, "mentions"),
            ("david_pets", pets, david, "everything"),
            ("jason_pets", pets, jason, "everything"),
            ("david_watercooler", watercooler, david, "everything"),
            ("jason_watercooler", watercooler, jason, "everything"),
            ("bender_watercooler", watercooler, bender, "mentions"),
            ("david_hq", hq, david, "everything"),
            ("jason_hq", hq, jason, "everything"),
            ("jz_hq", hq, jz, "everything"),
            ("kevin_hq", hq, kevin, "everything"),
            ("david_david_and_jason", david_and_jason, david, "everything"),
            ("jason_david_and_jason", david_and_jason, jason, "everything"),
            ("david_david_and_kevin", david_and_kevin, david, "everything"),
            ("kevin_david_and_kevin", david_and_kevin, kevin, "everything"),
            ("bender_bender_and_kevin", bender_and_kevin, bender, "everything"),
            ("kevin_bender_and_kevin", bender_and_kevin, kevin, "everything"),
        ];
        for (i, (label, room, user, involvement)) in memberships.iter().enumerate() {
            let id = self.label(format!("memberships.{label}"), fixture_id(label));
            let at = t(now - 57 * DAY + i as i64 * MIN);
            self.run(
                "INSERT INTO memberships (id, room_id, user_id, involvement, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                &[Val::Int(id), Val::Int(*room), Val::Int(*user), Val::Text(involvement), Val::Text(&at), Val::Text(&at)],
            )?;
        }

        // Fixture messages: (label, room, creator, minutes before NOW, body).
        let fixture_messages: [(&str, i64, i64, i64, &str); 13] = [
            ("first", designers, jason, 60, "First post!"),
            ("second", designers, david, 36, "Seconded."),
            ("third", designers, jz, 7, "Third time's a charm."),
            ("fourth", watercooler, jz, 30, "You know what the fellow said – in Italy, for thirty years under the Borgias, they had warfare, terror, murder and bloodshed, but they produced Michelangelo, Leonardo da Vinci and the Renaissance. In Switzerland, they had brotherly love, they had five hundred years of democracy and peace – and what did that produce? The cuckoo clock."),
            ("fifth", watercooler, jason, 29, "Champagne, if you are seeking the truth, is better than a lie detector."),
            ("sixth", watercooler, david, 27, "The sense of unhappiness is so much easier to convey than that of happiness. In misery we seem aware of our own existence, even though it may be in the form of a monstrous egotism—this pain of mine is individual, this nerve that winces belongs to me and to no other. But happiness annihilates us—we lose our identity."),
            ("seventh", watercooler, jason, 26, "A story has no beginning or end—arbitrarily one chooses that moment of experience from which to look back or from which to look ahead."),
            ("eighth", watercooler, jz, 25, "Hate is a lack of imagination."),
            ("ninth", watercooler, jz, 24, "And innocence is a kind of insanity"),
            ("tenth", watercooler, david, 23, "I don't care a damn about men who are loyal to the people who pay them, to organizations...I don't think even my country means all that much. There are many countries in our blood, aren't there, but only one person. Would the world be in the mess it is if we were loyal to love and not to countries?"),
            ("eleventh", watercooler, jason, 22, "People who like quotes love meaningless generalizations"),
            ("twelfth", watercooler, jason, 21, "Pain is easy to write. In pain we're all happily individual. But what can one write about happiness?"),
            ("thirteenth", watercooler, jz, 5, "When we are not sure, we are alive."),
        ];
        for (n, (label, room, creator, ago, body)) in fixture_messages.iter().enumerate() {
            let id = self.label(format!("messages.{label}"), fixture_id(label));
            self.label(format!("action_text_rich_texts.{label}"), fixture_id(label));
            let at = t(now - ago * MIN);
            let cmid = format!("{:04}", n + 1);
            self.run(
                "INSERT INTO messages (id, room_id, creator_id, client_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                &[Val::Int(id), Val::Int(*room), Val::Int(*creator), Val::Text(&cmid), Val::Text(&at), Val::Text(&at)],
            )?;
            self.run(
                "INSERT INTO action_text_rich_texts (id, record_type, record_id, name, body, created_at, updated_at) VALUES (?, 'Message', ?, 'body', ?, ?, ?)",
                &[Val::Int(id), Val::Int(id), Val::Text(body), Val::Text(&at), Val::Text(&at)],
            )?;
        }

        let boosts: [(&str, &str, i64, &str); 3] =
            [("first", "first", david, "Hello"), ("thirteenth", "thirteenth", jason, "💯"), ("fourth_by_bender", "fourth", bender, "👀")];
        for (i, (label, message, booster, content)) in boosts.iter().enumerate() {
            let id = self.label(format!("boosts.{label}"), fixture_id(label));
            let msg_at = fixture_messages.iter().find(|m| m.0 == *message).map_or(0, |m| now - m.3 * MIN);
            let at = t(msg_at + MIN + i as i64);
            self.run(
                "INSERT INTO boosts (id, message_id, booster_id, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                &[Val::Int(id), Val::Int(fixture_id(message)), Val::Int(*booster), Val::Text(content), Val::Text(&at), Val::Text(&at)],
            )?;
        }

        let subs = [("david_chrome", david, "123"), ("jason_chrome", jason, "567"), ("jz_chrome", jz, "456"), ("kevin_chrome", kevin, "789")];
        for (i, (label, user, n)) in subs.iter().enumerate() {
            let id = self.label(format!("push_subscriptions.{label}"), fixture_id(label));
            let at = t(now - 55 * DAY + i as i64 * MIN);
            let key = if i == 0 { "123" } else { "456" };
            self.run(
                "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh_key, auth_key, user_agent, created_at, updated_at) VALUES (?, ?, ?, ?, 'xxx2DtgvmLkevKRwoyahJl0efg', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/113.0.0.0 Safari/537.36', ?, ?)",
                &[
                    Val::Int(id),
                    Val::Int(*user),
                    Val::Text(&format!("https://fcm.googleapis.com/fcm/send/{n}")),
                    Val::Text(&format!("{key}-RIXcMgkdjhRnFZaYjjGvo00dydRQbCpQTuXFjLaCPSE7ofxi19awgGc3Doqa1RmYQqsbQDfQTifFZgc")),
                    Val::Text(&at),
                    Val::Text(&at),
                ],
            )?;
        }

        let id = self.label("searches.david_pizza".into(), fixture_id("david_pizza"));
        self.run(
            "INSERT INTO searches (id, user_id, query, created_at, updated_at) VALUES (?, ?, 'pizza', ?, ?)",
            &[Val::Int(id), Val::Int(david), Val::Text(&t(now - 3 * DAY)), Val::Text(&t(now - 3 * DAY))],
        )?;
        let id = self.label("sessions.david_safari".into(), fixture_id("david_safari"));
        self.run(
            "INSERT INTO sessions (id, user_id, token, user_agent, last_active_at, created_at, updated_at) VALUES (?, ?, 'AxJs94fteQ5Autv2VrKsH68c', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/537.36 (KHTML, like Gecko) HEY/1.0.4 Chrome/83.0.4103.100 Electron/9.0.3 Safari/537.36', ?, ?, ?)",
            &[Val::Int(id), Val::Int(david), Val::Text(&t(now - 2 * HOUR)), Val::Text(&t(now - 54 * DAY)), Val::Text(&t(now - 54 * DAY))],
        )?;
        let id = self.label("webhooks.bender".into(), fixture_id("bender"));
        self.run(
            "INSERT INTO webhooks (id, user_id, url, created_at, updated_at) VALUES (?, ?, 'http://example.com/bender', ?, ?)",
            &[Val::Int(id), Val::Int(bender), Val::Text(&t(now - 56 * DAY)), Val::Text(&t(now - 56 * DAY))],
        )?;
        // Fixtures bypass callbacks: the seed indexes their messages afterwards.
        for (label, _, _, _, body) in fixture_messages.iter() {
            self.index(fixture_id(label), &plain_text(body))?;
        }

        // -- More people -------------------------------------------------------------------
        let rita = self.create_user("rita", "Rita Lopez", Some("rita@37signals.com"), true, 0, Some("Support"), None, now - 40 * DAY)?;
        let mallory = self.create_user("mallory", "Mallory Banned", Some("mallory@example.com"), true, 0, None, None, now - 39 * DAY)?;
        let deploy_bot = self.create_user("deploy_bot", "Deploy Bot", None, false, 2, None, Some(DEPLOY_TOKEN), now - 38 * DAY)?;
        let old_bot = self.create_user("old_bot", "Old Bot", None, false, 2, None, Some(OLD_TOKEN), now - 37 * DAY)?;
        self.run(
            "INSERT INTO webhooks (user_id, url, created_at, updated_at) VALUES (?, 'https://example.com/old-bot', ?, ?)",
            &[Val::Int(old_bot), Val::Text(&t(now - 37 * DAY)), Val::Text(&t(now - 37 * DAY))],
        )?;
        let moon = self.file("moon.jpg", "image/jpeg")?;
        self.attach("User", jason, "avatar", &moon, now - 36 * DAY)?;
        self.attach("User", deploy_bot, "avatar", &moon, now - 36 * DAY + MIN)?;

        // -- More rooms --------------------------------------------------------------------
        let quiet = self.create_room("quiet", Some("Quiet Corner"), "Rooms::Closed", kevin, &[kevin, david], now - 35 * DAY)?;
        let active = self.active_users()?;
        let archive = self.create_room("archive", Some("Archive"), "Rooms::Open", david, &active, now - 34 * DAY)?;
        let broken = self.create_room("broken", Some("Broken"), "Rooms::Closed", david, &[david], now - 33 * DAY)?;
        let group = self.create_room("group_direct", None, "Rooms::Direct", david, &[david, jason, jz, kevin], now - 32 * DAY)?;
        let _ = (quiet, archive);
        self.grant(designers, &[rita, deploy_bot], "mentions", now - 31 * DAY)?;
        self.grant(designers, &[mallory], "mentions", now - 31 * DAY + MIN)?;

        // -- Designers: one message of every presentation type ----------------------------
        let day = clock::utc(2026, 3, 1, 9, 0, 0);
        let m = |x: i64| day + x * MIN;
        let kevin_sgid = rails::user_sgid(SECRET_KEY_BASE, kevin);
        let kevin_avatar = rails::signed_id(SECRET_KEY_BASE, kevin, "user/avatar", None);
        let mention_kevin = format!(
            "<action-text-attachment sgid=\"{kevin_sgid}\" content-type=\"application/vnd.campfire.mention\" content=\"{}\"></action-text-attachment>",
            escape_html(&format!("<span class=\"mention\"><img src=\"/users/{kevin_avatar}/avatar\" class=\"avatar\" alt=\"\">Kevin</span>"))
        );
        // The Rails 7 form: a dual-serialized envelope around a Marshal dump, with a MAC that no longer verifies.
        let marshal_gid = format!("\x04\x08I\"\x1egid://campfire/User/{david}\x06:\x06ET");
        let envelope = format!(
            "{{\"_rails\":{{\"message\":\"{}\",\"exp\":null,\"pur\":\"attachable\"}}}}",
            base64(marshal_gid.as_bytes(), false, true)
        );
        let marshal_mention = format!(
            "<action-text-attachment sgid=\"{}--0123456789abcdef0123456789abcdef01234567\" content-type=\"application/vnd.campfire.mention\"></action-text-attachment>",
            base64(envelope.as_bytes(), false, true)
        );
        let long = "<p>Here's the plan for the <strong>spring launch</strong>, as discussed on <em>Friday</em>:</p> <ol><li>Finish the onboarding copy</li><li>Record the walkthrough video</li><li>Ship it on <code>2026-03-16</code></li></ol> <blockquote>Simplicity is prerequisite for reliability.</blockquote> <p>Everything else can wait. The details are on <a href=\"https://example.com/launch\">the launch page</a>.</p> <ul><li>Design review on Tuesday</li><li>Copy review on Wednesday</li></ul> <h2>Open questions</h2> <p>We still need to decide whether the walkthrough video should autoplay, how long the free trial runs, and who owns the announcement post. None of these block the build, but all of them block the launch, so let's get answers by Thursday. If you have opinions, now is the time to share them, preferably with reasons, alternatives, and a rough idea of what each option would cost us in time and attention.</p>";
        let table = "<figure class=\"lexxy-content__table-wrapper\"><table><tbody> <tr><th><p>Name</p></th><th><p>Role</p></th><th><p>Points</p></th></tr> <tr><td><p>Jason</p></td><td><p>Design</p></td><td><p>10</p></td></tr> <tr><td><p>Kevin</p></td><td><p>Programming</p></td><td><p>7</p></td></tr> </tbody></table></figure>";
        let opengraph = format!(
            "<p>This is what we're up against: <a href=\"https://example.com/cookies\">https://example.com/cookies</a></p> {}",
            og_embed("https://example.com/cookies", "Free cookies for everyone", "A bakery gives away a cookie to anyone who asks nicely, every day at noon.", "https://example.com/og/cookies.jpg")
        );
        let solo = format!(
            "<p><a href=\"https://example.com/launch\">https://example.com/launch</a></p> {}",
            og_embed("https://example.com/launch", "Spring launch", "Everything you need to know about the spring launch.", "https://example.com/og/launch.jpg")
        );
        let tweet = "<div>https://twitter.com/37signals/status/1750290547908952568<action-text-attachment content-type=\"application/vnd.actiontext.opengraph-embed\" url=\"https://pbs.twimg.com/profile_images/1671940407633010689/avatar_200x200.jpg\" href=\"https://twitter.com/37signals/status/1750290547908952568\" filename=\"37signals (@37signals)\" caption=\"We're back up on all apps, everyone.\"></action-text-attachment></div>";

        self.post(designers, jason, m(0), Some("<p>Morning! Anyone around?</p>"), None, Some("plain"))?;
        self.post(designers, jason, m(2), Some("<p>Coffee first, then the launch plan.</p>"), None, Some("threaded"))?;
        self.post(designers, jz, m(10), Some(long), None, Some("long"))?;
        self.post(designers, kevin, m(20), Some("<p>🎉🔥</p>"), None, Some("emoji"))?;
        self.post(designers, david, m(30), Some("<p>The helper we talked about:</p><pre data-language=\"ruby\">def greet(name)<br>  \"Hello, #{name}!\"<br>end</pre>"), None, Some("code"))?;
        self.post(designers, jz, m(36), Some("<pre>plain preformatted\n  text without a language</pre>"), None, Some("code_plain"))?;
        self.post(designers, jason, m(40), Some(table), None, Some("table"))?;
        self.post(designers, jz, m(50), Some("<p>Hello <s>struck</s> <u>underlined</u> <mark>marked</mark> and <strong>bold</strong> <em>italic</em> <del>deleted</del>.</p>"), None, Some("formatting"))?;
        self.post(designers, david, m(60), Some(&format!("<p>Hey {mention_kevin}, can you check the table above?</p>")), None, Some("mention"))?;
        let marshal = self.post(designers, jason, m(70), Some("<p>placeholder</p>"), None, Some("mention_marshal"))?;
        self.store_raw_body(marshal, &format!("<div>Thanks {marshal_mention}, that was from the old days.</div>"))?;
        self.post(designers, kevin, m(80), Some("/play 56k"), None, Some("sound_image"))?;
        self.post(designers, jz, m(90), Some("/play bell"), None, Some("sound_text"))?;
        self.post(designers, david, m(100), Some(&opengraph), None, Some("opengraph"))?;
        self.post(designers, jason, m(110), Some(&solo), None, Some("solo_unfurl"))?;
        let tw = self.post(designers, kevin, m(120), Some("<p>placeholder</p>"), None, Some("opengraph_trix_tweet"))?;
        self.store_raw_body(tw, tweet)?;
        self.post(designers, jz, m(125), Some("<p>Docs are at https://example.com/docs and the old ones at http://example.org/docs</p>"), None, Some("autolink"))?;
        let image = self.post(designers, kevin, m(130), None, Some(&moon), Some("image"))?;
        let black_hole = self.file("black_hole.jpg", "image/jpeg")?;
        self.post(designers, jason, m(140), None, Some(&black_hole), Some("image_large"))?;
        let video = self.file("alpha-centuri.mov", "video/quicktime")?;
        self.post(designers, jz, m(150), None, Some(&video), Some("video"))?;
        let notes = File { name: "launch-notes.txt", content_type: "text/plain", bytes: b"Launch notes\n\n1. Copy\n2. Video\n3. Ship\n".to_vec() };
        self.post(designers, jason, m(160), None, Some(&notes), Some("file"))?;
        let bmp = self.file("pixel.bmp", "image/bmp")?;
        self.post(designers, kevin, m(170), None, Some(&bmp), Some("file_bmp"))?;
        self.post(designers, deploy_bot, m(180), Some("<p>Deployed campfire@4f2c1e9 to production ✅</p>"), None, Some("bot"))?;
        self.post(designers, rita, m(190), Some("<p>I'll be out of office next week.</p>"), None, Some("by_deactivated_user"))?;
        let edited = self.post(designers, david, m(200), Some("<p>Launch is on the 15th.</p>"), None, Some("edited"))?;
        self.edit(edited, designers, "<p>Launch is on the 16th.</p>", m(203))?;
        self.post(designers, jz, m(210), Some("<p>Nobody boosted this one.</p>"), None, Some("unboosted"))?;
        let many = self.post(designers, kevin, m(220), Some("<p>Big news: the beta is open!</p>"), None, Some("boosted_many"))?;
        let one = self.post(designers, jason, m(230), Some("<p>Lunch is here.</p>"), None, Some("boosted_one"))?;
        let by_david = self.post(designers, jz, m(240), Some("<p>Who's reviewing the copy?</p>"), None, Some("boosted_by_david"))?;
        for (who, content, at) in [(david, "👍", 221), (jz, "🎉", 222), (jason, "Finally!", 223), (kevin, "❤️", 224), (rita, "😂", 225), (david, "+1", 226)] {
            self.boost(many, designers, who, content, m(at))?;
        }
        let b = self.boost(one, designers, jz, "🍕", m(231))?;
        self.label("boosts.jz_on_boosted_one".into(), b);
        let b = self.boost(by_david, designers, david, "Me!", m(241))?;
        self.label("boosts.david_on_boosted_by_david".into(), b);
        self.boost(image, designers, jason, "🌕", m(131))?;

        // -- Watercooler: the busy room -------------------------------------------------------
        let lines = [
            "Did anyone see the game last night?", "Coffee machine is fixed!", "I'm heading out for lunch.",
            "New plants in the kitchen.", "Who took my stapler?", "Friday demo is at 3pm.",
            "The wifi is flaky again.", "Congrats on the launch!", "Anyone up for a walk?", "Back in 5.",
        ];
        let busy_start = clock::utc(2026, 2, 28, 8, 0, 0);
        let authors = [david, jason, david, jason, bender];
        for i in 1..=120i64 {
            let body = format!("<p>{i:03}. {}</p>", lines[(i % 10) as usize]);
            let label = format!("busy_{i:03}");
            self.post(watercooler, authors[(i % 5) as usize], busy_start + i * 7 * MIN, Some(&body), None, Some(&label))?;
        }
        let bot_msg = self.post(watercooler, bender, now - 20 * MIN, Some("<p>Build 1043 passed.</p>"), None, Some("bot_in_watercooler"))?;

        // -- Direct rooms -------------------------------------------------------------------
        self.post(david_and_jason, jason, now - 5 * HOUR, Some("<p>Got a minute?</p>"), None, Some("direct_first"))?;
        self.post(david_and_jason, david, now - 5 * HOUR + 2 * MIN, Some("<p>Sure, what's up?</p>"), None, None)?;
        self.post(david_and_jason, jason, now - 5 * HOUR + 3 * MIN, Some("<p>The pricing page. Let's talk after lunch.</p>"), None, None)?;
        self.post(bender_and_kevin, bender, now - 4 * HOUR, Some("<p>Your nightly report is ready.</p>"), None, None)?;
        let group_first = self.post(group, jz, now - 3 * HOUR, Some("<p>Group ping: who's in for Thursday?</p>"), None, Some("group_direct_first"))?;
        let unread = self.post(david_and_kevin, kevin, now - 2 * HOUR, Some("<p>Can you approve my PR?</p>"), None, Some("direct_unread"))?;

        // -- The unrenderable message: its author row is gone -----------------------------
        let lost = self.post(broken, david, now - 6 * HOUR, Some("<p>This message lost its author.</p>"), None, Some("unrenderable"))?;
        self.run("UPDATE messages SET creator_id = 999999 WHERE id = ?", &[Val::Int(lost)])?;

        // -- People states -------------------------------------------------------------------
        self.deactivate(rita, Some("rita-deactivated-00000000-0000-4000-8000-000000000000@37signals.com"), now - 30 * DAY)?;
        self.deactivate(old_bot, None, now - 29 * DAY)?;
        self.run("UPDATE users SET status = 2, updated_at = ? WHERE id = ?", &[Val::Text(&t(now - 28 * DAY)), Val::Int(mallory)])?;
        let ban = self.run(
            "INSERT INTO bans (user_id, ip_address, created_at, updated_at) VALUES (?, '203.0.113.9', ?, ?)",
            &[Val::Int(mallory), Val::Text(&t(now - 28 * DAY)), Val::Text(&t(now - 28 * DAY))],
        )?;
        self.label("bans.mallory".into(), ban);
        let loner = self.create_user("loner", "Lonely Lou", Some("lou@37signals.com"), true, 0, None, None, now - 27 * DAY)?;
        self.run("DELETE FROM memberships WHERE user_id = ?", &[Val::Int(loner)])?;

        for (room, inv) in [(designers, "mentions"), (pets, "everything"), (watercooler, "everything"), (hq, "nothing"), (archive, "invisible"), (david_and_kevin, "nothing")] {
            self.run("UPDATE memberships SET involvement = ? WHERE room_id = ? AND user_id = ?", &[Val::Text(inv), Val::Int(room), Val::Int(david)])?;
        }

        let at = t(now - 20 * DAY);
        let sub = self.run(
            "INSERT INTO push_subscriptions (user_id, endpoint, p256dh_key, auth_key, user_agent, created_at, updated_at) VALUES (?, 'https://updates.push.services.mozilla.com/wpush/v2/parity-firefox', 'BFirefoxKeyRIXcMgkdjhRnFZaYjjGvo00dydRQbCpQTuXFjLaCPSE7ofxi19awgGc3Doqa1RmYQqsbQDfQTifFZgc', 'firefoxAuthKeyAAAAAAAAA', 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14.3; rv:124.0) Gecko/20100101 Firefox/124.0', ?, ?)",
            &[Val::Int(david), Val::Text(&at), Val::Text(&at)],
        )?;
        self.label("push_subscriptions.david_firefox".into(), sub);
        for (q, ago) in [("Borgias", 2), ("cuckoo", 1)] {
            let at = t(now - ago * DAY);
            self.run("INSERT INTO searches (user_id, query, created_at, updated_at) VALUES (?, ?, ?, ?)", &[Val::Int(david), Val::Text(q), Val::Text(&at), Val::Text(&at)])?;
        }

        // -- Final bookkeeping ---------------------------------------------------------------
        self.run(
            "UPDATE rooms SET updated_at = (SELECT MAX(created_at) FROM messages WHERE room_id = rooms.id) WHERE (SELECT MAX(created_at) FROM messages WHERE room_id = rooms.id) > updated_at",
            &[],
        )?;
        self.run("UPDATE memberships SET unread_at = NULL, connected_at = NULL, connections = 0", &[])?;
        let created = |id: i64| self.conn.text("SELECT created_at FROM messages WHERE id = ?", &[Val::Int(id)]);
        for (room, user, msg) in [(watercooler, david, bot_msg), (david_and_kevin, david, unread), (group, david, group_first), (designers, kevin, by_david)] {
            let at = created(msg)?.unwrap_or_default();
            self.run("UPDATE memberships SET unread_at = ? WHERE room_id = ? AND user_id = ?", &[Val::Text(&at), Val::Int(room), Val::Int(user)])?;
        }
        self.run(
            "INSERT INTO ar_internal_metadata (key, value, created_at, updated_at) VALUES ('environment', 'production', ?, ?)",
            &[Val::Text(&t(now)), Val::Text(&t(now))],
        )?;

        // -- Strings screens and tools need ---------------------------------------------------
        for (key, user, at) in [("transfers.david", david, now), ("transfers.david_expired", david, now - 5 * HOUR), ("transfers.kevin", kevin, now)] {
            let v = rails::signed_id(SECRET_KEY_BASE, user, "user/transfer", Some(&clock::iso_ms(at + 4 * HOUR)));
            self.label_str(key, &v);
        }
        self.label_str("bot_keys.bender", &format!("{bender}-{BENDER_TOKEN}"));
        self.label_str("bot_keys.deploy_bot", &format!("{deploy_bot}-{DEPLOY_TOKEN}"));
        self.label_str("join_codes.signal", "CRMu-l8Ge-KB9B");
        for (key, user) in [("avatar_tokens.david", david), ("avatar_tokens.jason", jason)] {
            self.label_str(key, &rails::signed_id(SECRET_KEY_BASE, user, "user/avatar", None));
        }
        self.label_str("passwords.all", PASSWORD);
        self.label_str("ips.banned", "203.0.113.9");
        self.label_str("bench.secret_key_base", SECRET_KEY_BASE);
        let people: Vec<(String, i64)> = self
            .labels
            .iter()
            .filter_map(|(k, v)| match (k.strip_prefix("users."), v) {
                (Some(name), json::Scalar::Num(id)) => Some((name.to_string(), *id)),
                _ => None,
            })
            .collect();
        for (name, id) in people {
            if let Some(email) = self.conn.text("SELECT email_address FROM users WHERE id = ? AND email_address IS NOT NULL", &[Val::Int(id)])? {
                self.label_str(&format!("emails.{name}"), &email);
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn insert_user(&self, id: i64, name: &str, email: Option<&str>, digest: Option<&str>, role: i64, bio: Option<&str>, token: Option<&str>, at: &str) -> Result<i64, String> {
        self.run(
            "INSERT INTO users (id, name, email_address, password_digest, role, bio, bot_token, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                if id == 0 { Val::Null } else { Val::Int(id) },
                Val::Text(name),
                email.map_or(Val::Null, Val::Text),
                digest.map_or(Val::Null, Val::Text),
                Val::Int(role),
                bio.map_or(Val::Null, Val::Text),
                token.map_or(Val::Null, Val::Text),
                Val::Text(at),
                Val::Text(at),
            ],
        )
    }

    // User.create! plus its after-create grant of every Open room.
    #[allow(clippy::too_many_arguments)]
    fn create_user(&mut self, label: &str, name: &str, email: Option<&str>, password: bool, role: i64, bio: Option<&str>, token: Option<&str>, at: i64) -> Result<i64, String> {
        let digest = if password { Some(PASSWORD_DIGEST) } else { None };
        let id = self.insert_user(0, name, email, digest, role, bio, token, &clock::db(at))?;
        self.label(format!("users.{label}"), id);
        let open = self.ids("SELECT id FROM rooms WHERE type = 'Rooms::Open' ORDER BY id", &[])?;
        for room in open {
            self.grant(room, &[id], "mentions", at)?;
        }
        Ok(id)
    }

    fn active_users(&self) -> Result<Vec<i64>, String> {
        self.ids("SELECT id FROM users WHERE status = 0 ORDER BY id", &[])
    }

    fn ids(&self, sql: &str, params: &[Val]) -> Result<Vec<i64>, String> {
        let mut st = self.conn.prepare(sql)?;
        st.bind_all(params)?;
        let mut v = vec![];
        while st.step()? {
            v.push(st.int(0));
        }
        Ok(v)
    }

    // Room.create_for: the room, then memberships with the room's default involvement.
    fn create_room(&mut self, label: &str, name: Option<&str>, kind: &str, creator: i64, users: &[i64], at: i64) -> Result<i64, String> {
        let ts = clock::db(at);
        let id = self.run(
            "INSERT INTO rooms (name, type, creator_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            &[name.map_or(Val::Null, Val::Text), Val::Text(kind), Val::Int(creator), Val::Text(&ts), Val::Text(&ts)],
        )?;
        self.label(format!("rooms.{label}"), id);
        let involvement = if kind == "Rooms::Direct" { "everything" } else { "mentions" };
        self.grant(id, users, involvement, at)
            .map(|_| id)
    }

    // Membership.insert_all: duplicates are skipped, as the unique index makes Rails do.
    fn grant(&self, room: i64, users: &[i64], involvement: &str, at: i64) -> Result<(), String> {
        let ts = clock::db(at);
        for user in users {
            self.run(
                "INSERT OR IGNORE INTO memberships (room_id, user_id, involvement, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
                &[Val::Int(room), Val::Int(*user), Val::Text(involvement), Val::Text(&ts), Val::Text(&ts)],
            )?;
        }
        Ok(())
    }

    fn deactivate(&self, user: i64, email: Option<&str>, at: i64) -> Result<(), String> {
        let ts = clock::db(at);
        self.run(
            "DELETE FROM memberships WHERE user_id = ? AND room_id IN (SELECT id FROM rooms WHERE type != 'Rooms::Direct')",
            &[Val::Int(user)],
        )?;
        for table in ["push_subscriptions", "searches", "sessions"] {
            self.run(&format!("DELETE FROM {table} WHERE user_id = ?"), &[Val::Int(user)])?;
        }
        self.run(
            "UPDATE users SET status = 1, email_address = ?, updated_at = ? WHERE id = ?",
            &[email.map_or(Val::Null, Val::Text), Val::Text(&ts), Val::Int(user)],
        )?;
        Ok(())
    }

    // A post the way MessagesController#create makes one: message, rich text, attachment, search
    // index row, the room touched and its other members' memberships bumped (Room#receive).
    fn post(&mut self, room: i64, creator: i64, at: i64, body: Option<&str>, file: Option<&File>, label: Option<&str>) -> Result<i64, String> {
        self.cmids += 1;
        let cmid = rails::uuid_v5_url(&format!("https://parity.campfire.test/messages/{}", self.cmids));
        let ts = clock::db(at);
        let id = self.run(
            "INSERT INTO messages (room_id, creator_id, client_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            &[Val::Int(room), Val::Int(creator), Val::Text(&cmid), Val::Text(&ts), Val::Text(&ts)],
        )?;
        self.run(
            "INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) VALUES ('Message', ?, 'body', ?, ?, ?)",
            &[Val::Int(id), body.map_or(Val::Null, Val::Text), Val::Text(&ts), Val::Text(&ts)],
        )?;
        let mut plain = body.map(plain_text).unwrap_or_default();
        if let Some(f) = file {
            self.attach("Message", id, "attachment", f, at)?;
            if plain.is_empty() {
                plain = f.name.to_string();
            }
        }
        self.index(id, &plain)?;
        self.touch_room(room, at)?;
        self.run(
            "UPDATE memberships SET updated_at = ? WHERE room_id = ? AND involvement != 'invisible' AND connections = 0 AND user_id != ?",
            &[Val::Text(&ts), Val::Int(room), Val::Int(creator)],
        )?;
        if let Some(l) = label {
            self.label(format!("messages.{l}"), id);
        }
        Ok(id)
    }

    fn touch_room(&self, room: i64, at: i64) -> Result<(), String> {
        self.run("UPDATE rooms SET updated_at = ? WHERE id = ?", &[Val::Text(&clock::db(at)), Val::Int(room)]).map(|_| ())
    }

    fn index(&self, id: i64, plain: &str) -> Result<(), String> {
        self.run("INSERT INTO message_search_index (rowid, body) VALUES (?, ?)", &[Val::Int(id), Val::Text(plain)]).map(|_| ())
    }

    // Rewrites a body in place without canonicalization, then reindexes (seed.rb store_raw_body).
    fn store_raw_body(&self, id: i64, html: &str) -> Result<(), String> {
        self.run("UPDATE action_text_rich_texts SET body = ? WHERE record_type = 'Message' AND record_id = ?", &[Val::Text(html), Val::Int(id)])?;
        self.run("UPDATE message_search_index SET body = ? WHERE rowid = ?", &[Val::Text(&plain_text(html)), Val::Int(id)]).map(|_| ())
    }

    fn edit(&self, id: i64, room: i64, html: &str, at: i64) -> Result<(), String> {
        let ts = clock::db(at);
        self.run(
            "UPDATE action_text_rich_texts SET body = ?, updated_at = ? WHERE record_type = 'Message' AND record_id = ?",
            &[Val::Text(html), Val::Text(&ts), Val::Int(id)],
        )?;
        self.run("UPDATE messages SET updated_at = ? WHERE id = ?", &[Val::Text(&ts), Val::Int(id)])?;
        self.run("UPDATE message_search_index SET body = ? WHERE rowid = ?", &[Val::Text(&plain_text(html)), Val::Int(id)])?;
        self.touch_room(room, at)
    }

    // A boost touches its message, which touches its room.
    fn boost(&self, message: i64, room: i64, booster: i64, content: &str, at: i64) -> Result<i64, String> {
        let ts = clock::db(at);
        let id = self.run(
            "INSERT INTO boosts (message_id, booster_id, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            &[Val::Int(message), Val::Int(booster), Val::Text(content), Val::Text(&ts), Val::Text(&ts)],
        )?;
        self.run("UPDATE messages SET updated_at = ? WHERE id = ?", &[Val::Text(&ts), Val::Int(message)])?;
        self.touch_room(room, at)?;
        Ok(id)
    }

    fn file(&self, name: &'static str, content_type: &'static str) -> Result<File, String> {
        Ok(File { name, content_type, bytes: media_bytes(self.files.as_deref(), name)? })
    }

    // A new blob (numbered, deterministic key) with its file on disk, attached to a record.
    fn attach(&mut self, record_type: &str, record_id: i64, name: &str, f: &File, at: i64) -> Result<i64, String> {
        self.blobs += 1;
        let key = blob_key(self.blobs);
        let dir = self.out.join("files").join(&key[0..2]).join(&key[2..4]);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::write(dir.join(&key), &f.bytes).map_err(|e| format!("{}: {e}", dir.display()))?;
        let metadata = match jpeg_size(&f.bytes).or_else(|| bmp_size(&f.bytes)) {
            Some((w, h)) => format!("{{\"identified\":true,\"width\":{w},\"height\":{h},\"analyzed\":true}}"),
            None => "{\"identified\":true,\"analyzed\":true}".to_string(),
        };
        let ts = clock::db(at);
        let blob = self.run(
            "INSERT INTO active_storage_blobs (key, filename, content_type, metadata, service_name, byte_size, checksum, created_at) VALUES (?, ?, ?, ?, 'local', ?, ?, ?)",
            &[
                Val::Text(&key),
                Val::Text(f.name),
                Val::Text(f.content_type),
                Val::Text(&metadata),
                Val::Int(f.bytes.len() as i64),
                Val::Text(&base64(&md5(&f.bytes), false, true)),
                Val::Text(&ts),
            ],
        )?;
        self.run(
            "INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) VALUES (?, ?, ?, ?, ?)",
            &[Val::Text(name), Val::Text(record_type), Val::Int(record_id), Val::Int(blob), Val::Text(&ts)],
        )?;
        Ok(blob)
    }
}

/// The bytes of fixture file `name`: read from `files` when given, else our stand-in for it.
fn media_bytes(files: Option<&Path>, name: &str) -> Result<Vec<u8>, String> {
    match files {
        Some(dir) => {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|e| format!("{}: {e} (--files DIR must hold the Rails test fixture files)", path.display()))
        }
        None => media::stand_in(name).ok_or_else(|| format!("no stand-in for {name}")),
    }
}

/// The seed's n-th blob key: the first 28 base-36 digits of SHA-256("parity-blob-<n>") read as a
/// big-endian integer (the harness's deterministic scheme).
pub fn blob_key(n: u32) -> String {
    let mut num = sha256(format!("parity-blob-{n}").as_bytes());
    let mut digits = Vec::new();
    while num.iter().any(|b| *b != 0) {
        let mut rem = 0u32;
        for b in num.iter_mut() {
            let cur = (rem << 8) | *b as u32;
            *b = (cur / 36) as u8;
            rem = cur % 36;
        }
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[rem as usize]);
    }
    digits.reverse();
    digits.truncate(28);
    String::from_utf8(digits).unwrap_or_default()
}

fn og_embed(href: &str, title: &str, description: &str, image: &str) -> String {
    let content = format!(
        "<actiontext-opengraph-embed><div class=\"og-embed gap \"> <div class=\"og-embed__content\"><div class=\"og-embed__title\"><a href=\"{href}\" rel=\"noreferrer\" target=\"_blank\">{}</a></div> <div class=\"og-embed__description\">{}</div></div><div class=\"og-embed__image\"><img src=\"{image}\" class=\"image center\" alt=\"\" /></div></div></actiontext-opengraph-embed>",
        escape_html(title),
        escape_html(description)
    );
    format!("<action-text-attachment content-type=\"application/vnd.actiontext.opengraph-embed\" content=\"{}\"></action-text-attachment>", escape_html(&content))
}

/// HTML-escapes `& < > " '` the way Rails' `html_escape` does.
pub fn escape_html(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The plain text of a rich-text body for the search index: tags dropped (block ends become line
/// breaks), the common entities decoded, surrounding whitespace trimmed. An approximation of Action
/// Text's `to_plain_text` that is exact for the seed's simple bodies.
pub fn plain_text(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(lt) = rest.find('<') {
        out.push_str(&decode_entities(&rest[..lt]));
        let Some(gt) = rest[lt..].find('>') else {
            rest = &rest[lt..];
            break;
        };
        let tag = rest[lt + 1..lt + gt].trim_start_matches('/').to_ascii_lowercase();
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if matches!(name.as_str(), "p" | "div" | "br" | "li" | "h1" | "h2" | "h3" | "blockquote" | "pre" | "tr") && !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        rest = &rest[lt + gt + 1..];
    }
    out.push_str(&decode_entities(rest));
    out.trim().to_string()
}

fn decode_entities(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&nbsp;", " ").replace("&amp;", "&")
}

// Width and height from a JPEG's first SOFn segment.
fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    if b.get(0..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut i = 2;
    while i + 9 < b.len() {
        if b[i] != 0xFF {
            return None;
        }
        let marker = b[i + 1];
        let len = u16::from_be_bytes([b[i + 2], b[i + 3]]) as usize;
        if (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            let h = u16::from_be_bytes([b[i + 5], b[i + 6]]) as u32;
            let w = u16::from_be_bytes([b[i + 7], b[i + 8]]) as u32;
            return Some((w, h));
        }
        i += 2 + len;
    }
    None
}

fn bmp_size(b: &[u8]) -> Option<(u32, u32)> {
    if b.get(0..2)? != b"BM" {
        return None;
    }
    let w = i32::from_le_bytes(b.get(18..22)?.try_into().ok()?);
    let h = i32::from_le_bytes(b.get(22..26)?.try_into().ok()?);
    Some((w.unsigned_abs(), h.unsigned_abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("campfire-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    // Builds the seed with no fixture folder (our stand-in media) and returns (dir, connection).
    fn seeded() -> (PathBuf, Conn) {
        let dir = temp_dir("seed");
        let out = dir.join("out");
        run(&Options { out: out.clone(), files: None, scale: 1 }).unwrap();
        let conn = Conn::open(&out.join("db/production.sqlite3").to_string_lossy(), false, true).unwrap();
        (out, conn)
    }

    fn col(c: &Conn, sql: &str) -> Vec<String> {
        let mut st = c.prepare(sql).unwrap();
        let mut v = vec![];
        while st.step().unwrap() {
            v.push(st.text(0));
        }
        v
    }

    #[test]
    fn seed_matches_the_harness_shape() {
        let (out, c) = seeded();
        let one = |sql: &str| col(&c, sql).join("|");
        assert_eq!(one("SELECT COUNT(*) FROM users"), "10");
        assert_eq!(one("SELECT COUNT(*) FROM rooms"), "11");
        assert_eq!(one("SELECT COUNT(*) FROM messages"), "169");
        assert_eq!(one("SELECT COUNT(*) FROM messages WHERE room_id = 486777696"), "131");
        assert_eq!(one("SELECT COUNT(*) FROM messages WHERE room_id = 654632876"), "31");
        assert_eq!(one("SELECT COUNT(*) FROM messages WHERE room_id = 201306877"), "0");
        assert_eq!(one("SELECT COUNT(*) FROM message_search_index"), "169");
        assert_eq!(one("SELECT COUNT(*) FROM messages m LEFT JOIN action_text_rich_texts r ON r.record_type = 'Message' AND r.record_id = m.id WHERE r.id IS NULL"), "0");
        // busy_060 and its neighbours: exact id, time, author and body.
        assert_eq!(
            one("SELECT m.id || ' ' || m.created_at || ' ' || m.creator_id || ' ' || r.body FROM messages m JOIN action_text_rich_texts r ON r.record_id = m.id AND r.record_type = 'Message' WHERE m.id = 933434569"),
            "933434569 2026-02-28 15:00:00 127326141 <p>060. Did anyone see the game last night?</p>"
        );
        assert_eq!(one("SELECT created_at FROM messages WHERE id = 933434629"), "2026-02-28 22:00:00");
        // The room page window: the newest 40 watercooler messages end with bot_in_watercooler, thirteenth.
        let window = col(&c, "SELECT id FROM (SELECT id, created_at FROM messages WHERE room_id = 486777696 ORDER BY created_at DESC LIMIT 40) ORDER BY created_at");
        assert_eq!(window.first().map(String::as_str), Some("933434601"));
        assert_eq!(window[window.len() - 2..].join(","), "933434630,136976342");
        // Search for coffee over david's rooms: threaded plus twelve busy messages.
        let hits = col(&c, "SELECT m.id FROM messages m JOIN message_search_index i ON i.rowid = m.id WHERE i.body MATCH 'coffee' AND m.room_id IN (SELECT room_id FROM memberships WHERE user_id = 127326141) ORDER BY m.id");
        assert_eq!(hits.len(), 13);
        assert_eq!(hits[0], "933434483");
        // David's bells and unread flags.
        assert_eq!(one("SELECT involvement FROM memberships WHERE user_id = 127326141 AND room_id = 699448327"), "invisible");
        assert_eq!(one("SELECT involvement FROM memberships WHERE user_id = 127326141 AND room_id = 201306877"), "nothing");
        assert_eq!(one("SELECT COUNT(*) FROM memberships WHERE unread_at IS NOT NULL"), "4");
        assert_eq!(one("SELECT unread_at FROM memberships WHERE user_id = 127326141 AND room_id = 486777696"), "2026-03-02 15:40:00");
        assert_eq!(one("SELECT COUNT(*) FROM memberships WHERE user_id = 773523958"), "0");
        assert_eq!(one("SELECT status || email_address FROM users WHERE id = 773523954"), "1rita-deactivated-00000000-0000-4000-8000-000000000000@37signals.com");
        assert_eq!(one("SELECT updated_at FROM rooms WHERE id = 486777696"), "2026-03-02 15:55:00");
        assert_eq!(one("SELECT COUNT(*) FROM boosts WHERE message_id = 933434507"), "6");
        assert_eq!(one("SELECT query FROM searches WHERE user_id = 127326141 ORDER BY created_at"), "pizza|Borgias|cuckoo");
        assert_eq!(one("SELECT creator_id FROM messages WHERE id = 933434637"), "999999");
        assert_eq!(one("PRAGMA integrity_check"), "ok");
        // jason's avatar: a blob whose file exists in the Active Storage layout.
        let key = one("SELECT b.key FROM active_storage_blobs b JOIN active_storage_attachments a ON a.blob_id = b.id WHERE a.record_type = 'User' AND a.record_id = 149087659 AND a.name = 'avatar'");
        assert_eq!(key.len(), 28);
        assert!(out.join("files").join(&key[0..2]).join(&key[2..4]).join(&key).is_file());
        assert_eq!(one(&format!("SELECT metadata FROM active_storage_blobs WHERE key = '{key}'")), "{\"identified\":true,\"width\":640,\"height\":640,\"analyzed\":true}");
        // Every blob's file is on disk, with the blob's byte size and Active Storage checksum.
        let blobs = col(&c, "SELECT key || ' ' || byte_size || ' ' || checksum || ' ' || content_type || ' ' || filename || ' ' || metadata FROM active_storage_blobs ORDER BY id");
        assert_eq!(blobs.len(), 7);
        for row in &blobs {
            let f: Vec<&str> = row.split(' ').collect();
            let bytes = std::fs::read(out.join("files").join(&f[0][0..2]).join(&f[0][2..4]).join(f[0])).unwrap();
            assert_eq!(f[1], bytes.len().to_string(), "{row}");
            assert_eq!(f[2], base64(&md5(&bytes), false, true), "{row}");
            let want = match f[4] {
                "moon.jpg" => ("image/jpeg", "{\"identified\":true,\"width\":640,\"height\":640,\"analyzed\":true}"),
                "black_hole.jpg" => ("image/jpeg", "{\"identified\":true,\"width\":3840,\"height\":2160,\"analyzed\":true}"),
                "pixel.bmp" => ("image/bmp", "{\"identified\":true,\"width\":1,\"height\":1,\"analyzed\":true}"),
                "alpha-centuri.mov" => ("video/quicktime", "{\"identified\":true,\"analyzed\":true}"),
                "launch-notes.txt" => ("text/plain", "{\"identified\":true,\"analyzed\":true}"),
                other => panic!("unexpected blob {other}"),
            };
            assert_eq!((f[3], f[5]), want, "{row}");
        }
        // labels.json carries what the load generator needs.
        let labels = crate::json::parse_flat(&std::fs::read_to_string(out.join("labels.json")).unwrap()).unwrap();
        let get = |k: &str| labels.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert_eq!(get("messages.busy_060"), Some(crate::json::Scalar::Num(933434569)));
        assert_eq!(get("emails.david"), Some(crate::json::Scalar::Str("david@37signals.com".into())));
        assert_eq!(get("passwords.all"), Some(crate::json::Scalar::Str(PASSWORD.into())));
        assert_eq!(get("seed.media"), Some(crate::json::Scalar::Str("stand-ins".into())));
        assert!(matches!(get("avatar_tokens.jason"), Some(crate::json::Scalar::Str(s)) if s.starts_with("eyJfcmFpbHMiOnsiZGF0YSI6MTQ5MDg3NjU5")));
        let _ = std::fs::remove_dir_all(out.parent().unwrap());
    }

    #[test]
    fn a_fixture_folder_takes_precedence_over_the_stand_ins() {
        let dir = temp_dir("fixture-files");
        std::fs::write(dir.join("moon.jpg"), b"the real moon").unwrap();
        assert_eq!(media_bytes(Some(&dir), "moon.jpg").unwrap(), b"the real moon");
        let missing = media_bytes(Some(&dir), "pixel.bmp").unwrap_err();
        assert!(missing.contains("pixel.bmp"), "{missing}");
        assert_eq!(media_bytes(None, "moon.jpg").unwrap(), media::stand_in("moon.jpg").unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn plain_text_and_keys() {
        assert_eq!(plain_text("<p>001. Coffee machine is fixed!</p>"), "001. Coffee machine is fixed!");
        assert_eq!(plain_text("<p>a &amp; b</p><p>c</p>"), "a & b\nc");
        assert_eq!(blob_key(1).len(), 28);
        assert_ne!(blob_key(1), blob_key(2));
    }

    #[test]
    fn synthetic_c_seed() {
        let dir = temp_dir("seed-c");
        crate::seed_c::run(&dir).unwrap();
        let c = Conn::open(&dir.join("db/production.sqlite3").to_string_lossy(), false, true).unwrap();
        assert_eq!(col(&c, "SELECT COUNT(*) FROM messages WHERE room_id = 1"), ["131"]);
        assert_eq!(col(&c, "SELECT COUNT(*) FROM memberships"), ["15"]);
        assert_eq!(col(&c, "SELECT body FROM action_text_rich_texts WHERE record_id = 70"), ["<p>060. Did anyone see the game last night?</p>"]);
        drop(c);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
