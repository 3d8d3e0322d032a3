//! Bot webhooks (spec/04 §4): when a message is posted through the browser or the bot API,
//! every active bot of the room with a webhook URL that the message concerns (any message in
//! a direct room, a verified @mention elsewhere; never the bot's own message) gets a JSON
//! POST from an outbound job thread. A text answer becomes the bot's reply in the room,
//! stored and broadcast like any message; a timeout becomes the reply "Failed to respond
//! within 7 seconds".
//!
//! On the loop, `candidate` (before the write) decides without a query whether a message can
//! concern any bot, and `message_posted` (after COMMIT) finds the bots and queues one delivery
//! each. The delivery and the reply run on the job thread: the reply goes to the writer
//! through `messages::insert` and is broadcast by `messages::announce`, rendered with the job
//! thread's own read-only connection (opened on the first reply). Replies never go through
//! `messages::post`, so they trigger no webhook: bots cannot loop. Any other answer with a
//! Content-Type becomes an attachment message (`attachment.<Rails MIME symbol>`), its file
//! written through `app::storage` and its rows through `db::blobs::attach`.

use crate::app::posting;
use crate::app::message_view::Renderer;
use crate::app::{storage, Ctx};
use crate::crypto::{self, Keys};
use crate::db::messages::Message;
use crate::db::rooms::{Kind, Room};
use crate::db::{self, bots, users, Conn, Writer};
use crate::outbound;
use crate::richtext;
use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Connect and read timeout of a delivery (Rails' `Webhook::ENDPOINT_TIMEOUT`).
pub const TIMEOUT: Duration = Duration::from_secs(7);
/// The reply posted when the bot's server does not connect or answer in time.
pub const TIMEOUT_REPLY: &str = "Failed to respond within 7 seconds";
/// A reply body larger than this is dropped (and logged) rather than posted.
pub const MAX_REPLY: usize = 1024 * 1024;

/// What `post` keeps of a new message for its webhooks: present only when some bot may be
/// concerned (a direct room, or a body carrying an attachment sgid that may be a mention).
pub(crate) struct Candidate {
    kind: Kind,
    room_name: Option<String>,
    body: Option<String>,
    plain: String,
}

/// The cheap first test, on the loop before the write: no query, no parse.
pub(crate) fn candidate(room: &Room, body: Option<&str>, plain: &str) -> Option<Candidate> {
    if room.kind != Kind::Direct && !body.is_some_and(|b| b.contains("sgid=")) {
        return None;
    }
    Some(Candidate { kind: room.kind, room_name: room.name.clone(), body: body.map(str::to_owned), plain: plain.to_owned() })
}

/// After COMMIT, on the loop: queues one delivery per concerned bot. Failures are logged; the
/// poster's answer never depends on them.
pub(crate) fn message_posted(cx: &mut Ctx, c: Candidate, m: &Message) {
    if let Err(e) = queue(cx, c, m) {
        eprintln!("webhooks: message {}: {e}", m.id);
    }
}

fn queue(cx: &mut Ctx, c: Candidate, m: &Message) -> db::Result<()> {
    let mut hooked = bots::hooked_in_room(&cx.db, m.room_id)?;
    hooked.retain(|b| b.id != m.creator_id);
    if c.kind != Kind::Direct && !hooked.is_empty() {
        let now = crypto::time::now_ms();
        let mentioned: Vec<i64> = richtext::attachments::mentions(c.body.as_deref().unwrap_or(""))
            .iter()
            .filter_map(|sgid| crypto::sgid::verify_user(&cx.keys, sgid.as_bytes(), now, &mut cx.scratch))
            .collect();
        hooked.retain(|b| mentioned.contains(&b.id));
    }
    if hooked.is_empty() {
        return Ok(());
    }
    let creator = users::find(&cx.db, m.creator_id)?.map(|u| u.name).unwrap_or_default();
    for bot in hooked {
        let d = Delivery {
            bot_id: bot.id,
            payload: payload(&creator, m, c.room_name.as_deref(), c.body.as_deref(), &c.plain, &bot),
            url: bot.url,
            room_id: m.room_id,
            kind: c.kind,
            keys: Arc::clone(&cx.keys),
            writer: cx.writer.clone(),
            db_path: cx.config.database_path.to_string_lossy().into_owned(),
            storage: cx.config.storage_path.clone(),
            vapid: cx.env.vapid.clone(),
            room_name: c.room_name.clone(),
        };
        // `spawn` logs a full queue itself.
        outbound::spawn(Box::new(move || d.run()));
    }
    Ok(())
}

/// The JSON body of a delivery to `bot` (spec/04 §4.2), escaped the way Rails' encoder does.
pub(crate) fn payload(creator: &str, m: &Message, room_name: Option<&str>, body: Option<&str>, plain: &str, bot: &bots::Hooked) -> Vec<u8> {
    use crypto::json::write_string as s;
    let plain = plain.replace(&format!("@{}", bot.name), "");
    let mut o = Vec::with_capacity(256 + body.map_or(0, str::len) + plain.len());
    o.extend_from_slice(format!("{{\"user\":{{\"id\":{},\"name\":", m.creator_id).as_bytes());
    s(creator.as_bytes(), &mut o);
    o.extend_from_slice(format!("}},\"room\":{{\"id\":{},\"name\":", m.room_id).as_bytes());
    match room_name {
        Some(n) => s(n.as_bytes(), &mut o),
        None => o.extend_from_slice(b"null"),
    }
    o.extend_from_slice(b",\"path\":");
    s(format!("/rooms/{}/{}-{}/messages", m.room_id, bot.id, bot.bot_token).as_bytes(), &mut o);
    o.extend_from_slice(format!("}},\"message\":{{\"id\":{},\"body\":{{\"html\":", m.id).as_bytes());
    match body {
        Some(b) => s(b.as_bytes(), &mut o),
        None => o.extend_from_slice(b"null"),
    }
    o.extend_from_slice(b",\"plain\":");
    s(plain.trim().as_bytes(), &mut o);
    o.extend_from_slice(b"},\"path\":");
    s(format!("/rooms/{}/@{}", m.room_id, m.id).as_bytes(), &mut o);
    o.extend_from_slice(b"}}");
    o
}

/// What a bot's answer asks for (spec/04 §4.3, rules 1–3).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Rule 1: a 200 `text/html` or `text/plain` answer; its body is the reply.
    Text(String),
    /// Rule 2: any other answer with a Content-Type (media type given), for an attachment.
    Attachment(String),
    /// Rule 3: no Content-Type, nothing to post.
    Nothing,
}

/// Classifies an answer by status, `Content-Type` and body.
pub(crate) fn classify(status: u16, content_type: Option<&str>, body: &[u8]) -> Outcome {
    let media = content_type
        .map(|t| t.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty());
    match media {
        Some(t) if status == 200 && (t == "text/html" || t == "text/plain") => Outcome::Text(String::from_utf8_lossy(body).into_owned()),
        Some(t) => Outcome::Attachment(t),
        None => Outcome::Nothing,
    }
}

/// One queued delivery, owned by a job thread.
struct Delivery {
    bot_id: i64,
    url: String,
    payload: Vec<u8>,
    room_id: i64,
    kind: Kind,
    keys: Arc<Keys>,
    writer: Writer,
    db_path: String,
    storage: PathBuf,
    /// Web Push for the reply (Rails pushes every new message, replies included).
    vapid: Option<Arc<crate::app::push::Vapid>>,
    room_name: Option<String>,
}

impl Delivery {
    /// POSTs the payload and posts the reply it calls for (spec/04 §4.3 rules 1–5).
    fn run(self) {
        let headers = [("Content-Type", "application/json")];
        let req = outbound::Request {
            method: "POST",
            url: &self.url,
            headers: &headers,
            body: &self.payload,
            timeout: TIMEOUT,
            max_body: MAX_REPLY,
        };
        let posted = match outbound::send(&req) {
            Ok(res) => match classify(res.status, res.header("content-type"), &res.body) {
                Outcome::Text(text) => self.reply_text(&text),
                Outcome::Attachment(media) => self.reply_attachment(&media, &res.body),
                Outcome::Nothing => return,
            },
            Err(outbound::Error::Timeout) => self.reply_text(TIMEOUT_REPLY),
            Err(e) => {
                eprintln!("webhooks: bot {} delivery to its webhook failed: {e}", self.bot_id);
                return;
            }
        };
        if let Err(e) = posted {
            eprintln!("webhooks: bot {} reply in room {} not posted: {e}", self.bot_id, self.room_id);
        }
    }

    /// Posts `text` (taken as HTML, like a bot API body) as the bot's message.
    fn reply_text(&self, text: &str) -> db::Result<()> {
        let body = richtext::canonicalize_for_save(text);
        with_db(&self.db_path, |db| {
            let plain = {
                let r = Renderer::new(db, &self.keys);
                richtext::plain_text(&body, &|sgid: &str| r.mention(sgid))
            };
            let (room_id, bot_id) = (self.room_id, self.bot_id);
            self.commit_and_announce(db, move |c, cmid, now| posting::insert(c, room_id, bot_id, cmid, Some(&body), &plain, now))
        })?
    }

    /// Posts `data` as an attachment-only message by the bot: the file `attachment.<ext>`
    /// (ext = Rails' MIME symbol of `media`, empty when Rails knows none) with Rails'
    /// canonical name of the type. A file whose rows did not commit is deleted again.
    fn reply_attachment(&self, media: &str, data: &[u8]) -> db::Result<()> {
        let (ext, canonical) = rails_mime(media);
        let filename = format!("attachment.{ext}");
        let content_type = canonical.unwrap_or(media).to_owned();
        let stored = storage::write(&self.storage, data, &filename, content_type.as_bytes())
            .map_err(|e| db::Error::new(libsqlite3_sys::SQLITE_IOERR, format!("cannot store the attachment: {e}")))?;
        let key = stored.key.clone();
        let result = with_db(&self.db_path, |db| {
            let (room_id, bot_id) = (self.room_id, self.bot_id);
            self.commit_and_announce(db, move |c, cmid, now| {
                let nm = crate::db::messages::NewMessage { room_id, creator_id: bot_id, client_message_id: cmid, body: None, plain_text: &filename };
                let id = crate::db::messages::create(c, &nm, now)?;
                let blob = crate::db::blobs::NewBlob {
                    key: &stored.key,
                    filename: &filename,
                    content_type: &content_type,
                    byte_size: stored.byte_size,
                    checksum: &stored.checksum,
                    metadata: &stored.metadata,
                };
                crate::db::blobs::attach(c, "Message", id, "attachment", &blob, now)?;
                Ok((id, crate::db::memberships::user_ids_cached(c, room_id)?))
            })
        });
        if !matches!(result, Ok(Ok(()))) {
            storage::delete(&self.storage, &[key]);
        }
        result?
    }

    /// Runs `write` (given a fresh client message id and the time) as a writer job, waits for
    /// its COMMIT, then broadcasts the new message with `db`. `Ok` means committed.
    fn commit_and_announce(
        &self,
        db: &Conn,
        write: impl FnOnce(&Conn, &str, i64) -> db::Result<(i64, std::sync::Arc<[i64]>)> + Send + 'static,
    ) -> db::Result<()> {
        let cmid = String::from_utf8_lossy(&crypto::token::uuid_v4()).into_owned();
        let now = db::time::now_us();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job_cmid = cmid.clone();
        self.writer.submit(db::Job::new(
            move |c| write(c, &job_cmid, now),
            move |r| {
                let _ = tx.send(r);
            },
        ));
        let (id, members) = rx.recv().map_err(|_| db::Error::new(libsqlite3_sys::SQLITE_ABORT, "writer gone"))??;
        let m = Message { id, room_id: self.room_id, creator_id: self.bot_id, client_message_id: cmid, created_at: now, updated_at: now };
        // Committed: a failed broadcast is logged, the message stands.
        if let Err(e) = posting::announce(db, &self.keys, self.kind, &m, &members, None) {
            eprintln!("webhooks: message {id} committed but not broadcast: {e}");
        }
        if let Some(vapid) = &self.vapid {
            let from = crate::app::push::message_pusher::From { db, keys: &self.keys, writer: &self.writer, vapid };
            crate::app::push::message_pusher::message_posted_from(&from, self.kind, self.room_name.as_deref(), &m);
        }
        Ok(())
    }
}

/// Rails' MIME symbol (the attachment's extension) and canonical type for a media type
/// (`Mime::Type.lookup`): `("", None)` for a type Rails does not register.
pub(crate) fn rails_mime(media: &str) -> (&'static str, Option<&'static str>) {
    // (symbol, canonical type, synonyms), as Action Dispatch registers them.
    const TYPES: &[(&str, &str, &[&str])] = &[
        ("html", "text/html", &["application/xhtml+xml"]),
        ("text", "text/plain", &[]),
        ("js", "text/javascript", &["application/javascript", "application/x-javascript"]),
        ("css", "text/css", &[]),
        ("ics", "text/calendar", &[]),
        ("csv", "text/csv", &[]),
        ("vcf", "text/vcard", &[]),
        ("vtt", "text/vtt", &["vtt"]),
        ("png", "image/png", &[]),
        ("jpeg", "image/jpeg", &["image/pjpeg"]),
        ("gif", "image/gif", &[]),
        ("bmp", "image/bmp", &[]),
        ("tiff", "image/tiff", &[]),
        ("svg", "image/svg+xml", &[]),
        ("webp", "image/webp", &[]),
        ("mpeg", "video/mpeg", &[]),
        ("mp3", "audio/mpeg", &[]),
        ("ogg", "audio/ogg", &[]),
        ("m4a", "audio/aac", &[]),
        ("webm", "video/webm", &[]),
        ("mp4", "video/mp4", &[]),
        ("otf", "font/otf", &[]),
        ("ttf", "font/ttf", &[]),
        ("woff", "font/woff", &[]),
        ("woff2", "font/woff2", &[]),
        ("xml", "application/xml", &["text/xml", "application/x-xml"]),
        ("rss", "application/rss+xml", &[]),
        ("atom", "application/atom+xml", &[]),
        ("yaml", "application/x-yaml", &["text/yaml", "application/yaml"]),
        ("multipart_form", "multipart/form-data", &[]),
        ("url_encoded_form", "application/x-www-form-urlencoded", &[]),
        ("json", "application/json", &["text/x-json", "application/jsonrequest"]),
        ("pdf", "application/pdf", &[]),
        ("zip", "application/zip", &[]),
        ("gzip", "application/gzip", &[]),
    ];
    let media = media.trim().to_ascii_lowercase();
    TYPES
        .iter()
        .find(|(_, canonical, synonyms)| *canonical == media || synonyms.contains(&media.as_str()))
        .map_or(("", None), |(symbol, canonical, _)| (*symbol, Some(*canonical)))
}

thread_local! {
    /// The job thread's read-only connection, for rendering replies (path, connection).
    static DB: RefCell<Option<(String, Conn)>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's read-only connection on `path`, opening it the first time.
fn with_db<T>(path: &str, f: impl FnOnce(&Conn) -> T) -> db::Result<T> {
    DB.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(p, _)| p != path) {
            *slot = Some((path.to_owned(), Conn::open(path, db::Mode::ReadOnly)?));
        }
        match slot.as_ref() {
            Some((_, c)) => Ok(f(c)),
            None => Err(db::Error::new(libsqlite3_sys::SQLITE_CANTOPEN, "no connection")),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_answers_by_the_rules() {
        assert_eq!(classify(200, Some("text/plain; charset=utf-8"), b"Hello back!"), Outcome::Text("Hello back!".into()));
        assert_eq!(classify(200, Some("TEXT/HTML"), b"<b>hi</b>"), Outcome::Text("<b>hi</b>".into()));
        assert_eq!(classify(200, Some("text/plain"), b""), Outcome::Text(String::new()), "an empty text body is still a reply");
        assert_eq!(classify(500, Some("text/html"), b"oops"), Outcome::Attachment("text/html".into()));
        assert_eq!(classify(200, Some("image/jpeg"), b"\xff\xd8"), Outcome::Attachment("image/jpeg".into()));
        assert_eq!(classify(200, Some("application/json"), b"{}"), Outcome::Attachment("application/json".into()));
        assert_eq!(classify(500, None, b"oops"), Outcome::Nothing);
        assert_eq!(classify(200, None, b""), Outcome::Nothing);
        assert_eq!(classify(200, Some(" "), b"x"), Outcome::Nothing);
    }

    #[test]
    fn names_attachments_by_rails_mime_symbols() {
        assert_eq!(rails_mime("image/jpeg"), ("jpeg", Some("image/jpeg")));
        assert_eq!(rails_mime("image/pjpeg"), ("jpeg", Some("image/jpeg")));
        assert_eq!(rails_mime("text/html"), ("html", Some("text/html")));
        assert_eq!(rails_mime("application/json"), ("json", Some("application/json")));
        assert_eq!(rails_mime("text/xml"), ("xml", Some("application/xml")));
        assert_eq!(rails_mime("application/pdf"), ("pdf", Some("application/pdf")));
        assert_eq!(rails_mime("application/x-unknown"), ("", None));
    }

    #[test]
    fn payload_is_rails_json() {
        let m = Message { id: 9, room_id: 4, creator_id: 2, client_message_id: "c".into(), created_at: 0, updated_at: 0 };
        let bot = bots::Hooked { id: 7, name: "Bender Bot".into(), bot_token: "Tok".into(), url: "http://h/".into() };
        let body = "<div>Hi <action-text-attachment sgid=\"x\"></action-text-attachment> &amp; bye</div>";
        let p = payload("David", &m, Some("All <Talk>"), Some(body), "\u{a0}Hi @Bender Bot & bye, @Bender Bot\n", &bot);
        assert_eq!(
            String::from_utf8(p).unwrap(),
            r#"{"user":{"id":2,"name":"David"},"room":{"id":4,"name":"All \u003cTalk\u003e","path":"/rooms/4/7-Tok/messages"},"message":{"id":9,"body":{"html":"\u003cdiv\u003eHi \u003caction-text-attachment sgid=\"x\"\u003e\u003c/action-text-attachment\u003e \u0026amp; bye\u003c/div\u003e","plain":"Hi  \u0026 bye,"},"path":"/rooms/4/@9"}}"#
        );
        let p = payload("Kevin", &m, None, None, "", &bot);
        assert!(String::from_utf8(p).unwrap().contains(r#""name":null,"#) );
    }
}
