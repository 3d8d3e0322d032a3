//! The message partial (spec/07 §5): the one renderer every list of messages goes through —
//! the room page, paging fragments, single-message pages, Turbo Stream answers and broadcasts,
//! refreshes and search results.
//!
//! A message renders to the same bytes for every viewer ("me", "mentioned", threading and day
//! separators are added in the browser), so each rendered message is kept in a per-loop
//! fragment cache (design §6) keyed by the message id and checked against the message's and
//! its creator's `updated_at`: an edit or a boost touches the message, a profile change
//! touches the user, and either makes the next render miss. The room name (shown only in
//! search results) is not part of the key: the entry remembers where the name sits, and a
//! render that finds another name there rebuilds the partial around the new one without
//! rendering it again, so renaming a room needs no invalidation.
//!
//! A cached partial is a `gzip::Part`: appending it marks the body, and a gzip response splices
//! the part's precompressed deflate piece instead of compressing those bytes again (gzip.rs).
//!
//! Known staleness, the same as Rails' `cache message`: a mentioned user's or a booster's new
//! name or avatar shows in a message only after that message is next touched.

use crate::app::attachments;
use crate::crypto::variation::Variation;
use crate::crypto::{signed_id, Keys};
use crate::images::{THUMB_MAX_HEIGHT, THUMB_MAX_WIDTH};
use crate::db::messages::{self, Attachment, Message, MessageRow};
use crate::db::{self, boosts, users, Conn};
use crate::richtext::{self, Mention};
use crate::views::{self, Out};
use crate::gzip;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// Default byte budget of one loop's fragment cache; `CAMPFIRE_FRAGMENT_CACHE_BYTES`
/// overrides (0 turns the cache off). About 300 typical messages with their deflate pieces, a
/// few rooms' last pages: 2 MiB filled up with messages long scrolled off the pages under a stream of posts and was
/// the largest part of the heap after the benchmark (issue 7).
pub const FRAGMENT_CACHE_BYTES: usize = 512 << 10;

/// Collects the rows a page query visits (`db::messages::last_page`, `page_before`, ...,
/// `db::searches::messages`) into owned messages, oldest first, ready for `render_messages`.
/// Example: `collect(|f| db::messages::last_page(&cx.db, room_id, f))`.
pub fn collect(
    query: impl FnOnce(&mut dyn FnMut(&MessageRow<'_>) -> db::Result<()>) -> db::Result<usize>,
) -> db::Result<Vec<Message>> {
    let mut out = Vec::with_capacity(messages::PAGE_SIZE as usize);
    query(&mut |r: &MessageRow<'_>| {
        out.push(r.to_message());
        Ok(())
    })?;
    Ok(out)
}

/// Appends the message partial (spec/07 §5) of each message to `out`, in the order given,
/// reading what it needs through `db` (a loop's read-only connection, or any other).
/// Viewer-independent: the same messages always give the same bytes. Errors are database
/// errors only; a message whose creator row is gone renders with an empty name.
pub fn render_messages(db: &Conn, keys: &Keys, list: &[Message], out: &mut Vec<u8>) -> db::Result<()> {
    let mut r = Renderer::new(db, keys);
    for m in list {
        r.message(m, out)?;
    }
    Ok(())
}

/// One render pass: remembers the people and room names it has looked up, so a page of 40
/// messages by a handful of people costs a handful of user lookups.
pub struct Renderer<'a> {
    db: &'a Conn,
    keys: &'a Keys,
    people: RefCell<Vec<Person>>,
    /// (user id, `updated_at`) of creators whose partials came from the cache: checking a
    /// cached partial needs only that, not the name or the signed avatar URL.
    stamps: Vec<(i64, i64)>,
    /// Room id and its display name, escaped.
    room_names: Vec<(i64, Vec<u8>)>,
}

/// What the partial shows of a user (creator, booster, mentioned user).
#[derive(Clone)]
pub struct Person {
    pub id: i64,
    pub name: String,
    /// `name – bio`, or just the name.
    pub title: String,
    pub avatar_url: String,
    pub updated_at: i64,
}

impl<'a> Renderer<'a> {
    pub fn new(db: &'a Conn, keys: &'a Keys) -> Renderer<'a> {
        Renderer { db, keys, people: RefCell::new(Vec::new()), stamps: Vec::new(), room_names: Vec::new() }
    }

    /// The user `id` as the partial shows them; a missing row gives an empty name and the
    /// avatar URL of the id (which answers the default avatar).
    pub fn person(&self, id: i64) -> db::Result<Person> {
        if let Some(p) = self.people.borrow().iter().find(|p| p.id == id) {
            return Ok(p.clone());
        }
        let p = match users::find(self.db, id)? {
            Some(u) => {
                let bio = u.bio.as_deref().map(str::trim).unwrap_or("");
                let title = if bio.is_empty() { u.name.clone() } else { format!("{} – {}", u.name, bio) };
                Person { id, avatar_url: avatar_url(self.keys, id, u.updated_at), name: u.name, title, updated_at: u.updated_at }
            }
            None => Person { id, name: String::new(), title: String::new(), avatar_url: avatar_url(self.keys, id, 0), updated_at: 0 },
        };
        self.people.borrow_mut().push(p.clone());
        Ok(p)
    }

    /// The user's `updated_at` as `person` would give it (0 for a missing user), read without
    /// building the person.
    fn stamp(&mut self, id: i64) -> db::Result<i64> {
        if let Some(p) = self.people.borrow().iter().find(|p| p.id == id) {
            return Ok(p.updated_at);
        }
        if let Some((_, at)) = self.stamps.iter().find(|(u, _)| *u == id) {
            return Ok(*at);
        }
        let at = users::updated_at(self.db, id)?.unwrap_or(0);
        self.stamps.push((id, at));
        Ok(at)
    }

    /// The room's name as search results show it, HTML-escaped: its name, or for a direct
    /// room the members' names as an English sentence (Rails'
    /// `room_display_name(room, for_user: nil)`).
    fn room_name_html(&mut self, room_id: i64) -> db::Result<&[u8]> {
        let i = match self.room_names.iter().position(|(id, _)| *id == room_id) {
            Some(i) => i,
            None => {
                let name = match messages::room_name(self.db, room_id)? {
                    Some(n) => n,
                    None => to_sentence(&messages::room_member_names(self.db, room_id)?),
                };
                let mut html = Vec::with_capacity(name.len() + 8);
                Out::new(&mut html).text(&name);
                self.room_names.push((room_id, html));
                self.room_names.len() - 1
            }
        };
        Ok(self.room_names.get(i).map(|(_, n)| n.as_slice()).unwrap_or_default())
    }

    /// Appends one message partial, from the fragment cache when it is current. A cached
    /// partial is appended as a `gzip::Part` and marked, so a gzip response splices its
    /// precompressed piece instead of compressing it again.
    pub fn message(&mut self, m: &Message, out: &mut Vec<u8>) -> db::Result<()> {
        let creator_updated_at = self.stamp(m.creator_id)?;
        let cached = FRAGMENTS.with(|f| match f.borrow().map.get(&m.id) {
            Some(e) if e.updated_at == m.updated_at && e.creator_updated_at == creator_updated_at && *e.cmid == *m.client_message_id => {
                Some((Rc::clone(&e.part), e.room_at, e.name_len))
            }
            _ => None,
        });
        let mut fresh = Vec::new();
        let fresh_room_at = match cached {
            Some(_) => 0,
            None => {
                let creator = self.person(m.creator_id)?;
                match self.render_fresh(m, &creator, &mut fresh) {
                    Ok(at) => at,
                    Err(e) => {
                        // One unreadable message (a corrupt row, a body that is not UTF-8) must
                        // not take the whole page down: it is replaced, as Rails does, and not
                        // cached.
                        eprintln!("message_view: message {} cannot be rendered: {e}", m.id);
                        views::messages::unrenderable::render(&Unrenderable, &mut Out::new(out));
                        return Ok(());
                    }
                }
            }
        };
        let name = self.room_name_html(m.room_id)?;
        let (before, after) = match &cached {
            Some((part, room_at, name_len)) => {
                let b = part.bytes();
                if b.get(*room_at..room_at + name_len) == Some(name) {
                    gzip::mark(out.len(), part);
                    out.extend_from_slice(b);
                    return Ok(());
                }
                // The room was renamed since: same partial, new name.
                (b.get(..*room_at).unwrap_or_default(), b.get(room_at + name_len..).unwrap_or_default())
            }
            None => (fresh.get(..fresh_room_at).unwrap_or_default(), fresh.get(fresh_room_at..).unwrap_or_default()),
        };
        let mut bytes = Vec::with_capacity(before.len() + name.len() + after.len());
        bytes.extend_from_slice(before);
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(after);
        let part = gzip::Part::new(bytes.into_boxed_slice());
        let entry = Entry { updated_at: m.updated_at, creator_updated_at, cmid: m.client_message_id.as_str().into(), room_at: before.len(), name_len: name.len(), part: Rc::clone(&part) };
        if FRAGMENTS.with(|f| f.borrow_mut().insert(m.id, entry)) {
            gzip::mark(out.len(), &part);
        }
        out.extend_from_slice(part.bytes());
        Ok(())
    }

    /// Renders the partial without the room name into `frag`; returns where the name goes.
    fn render_fresh(&self, m: &Message, creator: &Person, frag: &mut Vec<u8>) -> db::Result<usize> {
        let body = self.body(m)?;
        let mut presentation = Vec::with_capacity(body.html.len() + 160);
        views::messages::presentation::render(&PresentationView { cmid: &m.client_message_id, body: &body.html }, &mut Out::new(&mut presentation));
        let mut boosts = Vec::with_capacity(512);
        self.boosts_in_message(m, &mut boosts)?;
        let view = MessageView { m, creator, emoji: body.emoji, presentation: &presentation, boosts: &boosts, room_at: Cell::new(0) };
        views::messages::message::render(&view, &mut Out::new(frag));
        Ok(view.room_at.get())
    }

    /// Appends `div#presentation_message_<cmid>` (spec/07 §5.2.2): the edit broadcast's template.
    pub fn presentation(&self, m: &Message, out: &mut Vec<u8>) -> db::Result<()> {
        let body = self.body(m)?;
        views::messages::presentation::render(&PresentationView { cmid: &m.client_message_id, body: &body.html }, &mut Out::new(out));
        Ok(())
    }

    /// Appends the boosts block (spec/07 §5.5): `turbo-frame#boosting_message_<cmid>`.
    pub fn boosts(&self, m: &Message, out: &mut Vec<u8>) -> db::Result<()> {
        let rows = self.boost_rows(m)?;
        self.boosts_block(m, &rows, out)
    }

    /// The boosts block inside a message: without boosts, only its frame (messages/boosts_slot.html),
    /// which the page completes in the browser.
    fn boosts_in_message(&self, m: &Message, out: &mut Vec<u8>) -> db::Result<()> {
        let rows = self.boost_rows(m)?;
        if rows.is_empty() {
            views::messages::boosts_slot::render(&CmidView(&m.client_message_id), &mut Out::new(out));
            return Ok(());
        }
        self.boosts_block(m, &rows, out)
    }

    /// A message's boosts, oldest first: (id, booster, content).
    fn boost_rows(&self, m: &Message) -> db::Result<Vec<(i64, i64, String)>> {
        let mut rows = Vec::new();
        boosts::for_message(self.db, m.id, |b| {
            rows.push((b.id, b.booster_id, b.content.to_owned()));
            Ok(())
        })?;
        Ok(rows)
    }

    fn boosts_block(&self, m: &Message, rows: &[(i64, i64, String)], out: &mut Vec<u8>) -> db::Result<()> {
        let mut chips = Vec::new();
        for (id, booster_id, content) in rows {
            self.boost(m.id, *id, *booster_id, content, &mut chips)?;
        }
        views::messages::boosts::render(&BoostsView { m, chips: &chips }, &mut Out::new(out));
        Ok(())
    }

    /// Appends one boost chip (spec/07 §5.5): the template of boost broadcasts too.
    pub fn boost(&self, message_id: i64, boost_id: i64, booster_id: i64, content: &str, out: &mut Vec<u8>) -> db::Result<()> {
        let booster = self.person(booster_id)?;
        views::messages::boost::render(&BoostView { message_id, boost_id, booster: &booster, content }, &mut Out::new(out));
        Ok(())
    }

    /// The body variant of spec/07 §5.3: attachment, `/play` sound, or rich text.
    fn body(&self, m: &Message) -> db::Result<Body> {
        if let Some(a) = messages::attachment(self.db, m.id)? {
            return Ok(Body { html: self.attachment(&a), emoji: false });
        }
        let stored = messages::body(self.db, m.id)?.unwrap_or_default();
        let resolve = |sgid: &str| self.mention(sgid);
        let plain = richtext::plain_text(&stored, &resolve);
        let emoji = richtext::is_emoji_only(&plain);
        if let Some(sound) = richtext::play_sound(&plain) {
            let mut html = Vec::with_capacity(256);
            views::messages::body_sound::render(&SoundView(sound), &mut Out::new(&mut html));
            return Ok(Body { html, emoji });
        }
        let safe = richtext::render_body(&stored, &resolve);
        let mut html = Vec::with_capacity(safe.as_str().len());
        Out::new(&mut html).html(&safe);
        Ok(Body { html, emoji })
    }

    /// A mention's user for the rich-text renderer (sgid read leniently, spec/01 §8.3).
    fn mention(&self, sgid: &str) -> Option<Mention> {
        let id = richtext::sgid::unverified_user_id(sgid)?;
        let p = self.person(id).ok()?;
        if p.updated_at == 0 && p.name.is_empty() {
            return None;
        }
        Some(Mention { id, name: p.name, bio: String::new(), avatar_url: p.avatar_url })
    }

    fn attachment(&self, a: &Attachment) -> Vec<u8> {
        let mut signed = Vec::with_capacity(64);
        signed_id::blob_signed_id(self.keys, a.blob_id, &mut signed);
        let mut blob_url = String::from("/rails/active_storage/blobs/redirect/");
        blob_url.push_str(std::str::from_utf8(&signed).unwrap_or(""));
        blob_url.push('/');
        push_path_segment(&mut blob_url, &a.filename);
        let download_url = format!("{blob_url}?disposition=attachment");
        let ct = a.content_type.as_deref().unwrap_or("");
        let size = a.metadata.as_deref().and_then(image_size);
        let preview_url = self.thumb_url(a, &signed).unwrap_or_else(|| blob_url.clone());
        let mut html = Vec::with_capacity(512);
        let o = &mut Out::new(&mut html);
        let v = AttachmentView { a, blob_url: &blob_url, download_url: &download_url, preview_url: &preview_url, size };
        if ct.starts_with("video/") {
            views::messages::body_video::render(&v, o);
        } else if VARIABLE.contains(&ct) {
            views::messages::body_image::render(&v, o);
        } else {
            views::messages::body_file::render(&v, o);
        }
        html
    }

    /// The representation URL of a web image's `thumb` (Rails' `representation(:thumb)`):
    /// the signed blob id, the signed variation key, the variant's file name. The
    /// representation route serves the variant, or the original when there is none.
    fn thumb_url(&self, a: &Attachment, signed_blob: &[u8]) -> Option<String> {
        let format = attachments::thumb_format(&a.filename, a.content_type.as_deref()?)?;
        let variation = Variation { format, max_width: THUMB_MAX_WIDTH, max_height: THUMB_MAX_HEIGHT };
        let mut key = Vec::with_capacity(160);
        variation.sign(self.keys, &mut key);
        let mut url = String::from("/rails/active_storage/representations/redirect/");
        url.push_str(std::str::from_utf8(signed_blob).ok()?);
        url.push('/');
        url.push_str(std::str::from_utf8(&key).ok()?);
        url.push('/');
        let base = a.filename.rsplit_once('.').map_or(a.filename.as_str(), |(b, _)| b);
        push_path_segment(&mut url, &format!("{base}.{}", variation.format));
        Some(url)
    }
}

/// Image types Rails treats as `variable?` (spec/01 §12.6): shown as a picture. Other images
/// (SVG, BMP, icons, Photoshop) are files to download, as in Rails.
const VARIABLE: [&str; 8] = ["image/png", "image/gif", "image/jpeg", "image/tiff", "image/webp", "image/avif", "image/heic", "image/heif"];

struct Unrenderable;
impl views::messages::unrenderable::View for Unrenderable {}

struct Body {
    html: Vec<u8>,
    emoji: bool,
}

/// Appends the message JSON of spec/02 §5.3 (`messages/_message.json.jbuilder`): id,
/// `created_at` (ISO 8601 with milliseconds), the body's plain text and rendered HTML, the
/// creator, the room id and the message URL. `origin` is `scheme://host` for the absolute URLs.
pub fn message_json(db: &Conn, keys: &Keys, m: &Message, origin: &str, out: &mut Vec<u8>) -> db::Result<()> {
    use crate::crypto::json::write_string;
    let r = Renderer::new(db, keys);
    let stored = messages::body(db, m.id)?.unwrap_or_default();
    let resolve = |sgid: &str| r.mention(sgid);
    let mut plain = richtext::plain_text(&stored, &resolve);
    if plain.is_empty() {
        if let Some(a) = messages::attachment(db, m.id)? {
            plain = a.filename;
        }
    }
    let html = richtext::render_body(&stored, &resolve);
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(m.id.to_string().as_bytes());
    out.extend_from_slice(b",\"created_at\":\"");
    crate::crypto::time::write_iso8601(m.created_at.div_euclid(1000), out);
    out.extend_from_slice(b"\",\"body\":{\"plain_text\":");
    write_string(plain.as_bytes(), out);
    out.extend_from_slice(b",\"html\":");
    write_string(html.as_bytes(), out);
    out.extend_from_slice(b"},\"creator\":");
    user_json(&r, m.creator_id, origin, out)?;
    out.extend_from_slice(format!(",\"room\":{{\"id\":{}}},\"url\":", m.room_id).as_bytes());
    write_string(format!("{origin}/rooms/{}/messages/{}", m.room_id, m.id).as_bytes(), out);
    out.push(b'}');
    Ok(())
}

/// Appends the user JSON of spec/02 §5.3 (`users/_user.json.jbuilder`): id, name, role
/// (`bot`, `administrator` or `member`) and the absolute avatar URL.
pub fn user_json(r: &Renderer<'_>, user_id: i64, origin: &str, out: &mut Vec<u8>) -> db::Result<()> {
    use crate::crypto::json::write_string;
    let person = r.person(user_id)?;
    let role = match users::find(r.db, user_id)? {
        Some(u) if u.is_bot() => "bot",
        Some(u) if u.is_administrator() => "administrator",
        _ => "member",
    };
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(person.id.to_string().as_bytes());
    out.extend_from_slice(b",\"name\":");
    write_string(person.name.as_bytes(), out);
    out.extend_from_slice(b",\"role\":\"");
    out.extend_from_slice(role.as_bytes());
    out.extend_from_slice(b"\",\"avatar_url\":");
    write_string(format!("{origin}{}", person.avatar_url).as_bytes(), out);
    out.push(b'}');
    Ok(())
}

/// `/users/<avatar token>/avatar?v=<updated_at as YYYYMMDDHHMMSS>` (Rails' `fresh_user_avatar_path`).
pub fn avatar_url(keys: &Keys, user_id: i64, updated_at: i64) -> String {
    let mut token = Vec::with_capacity(64);
    signed_id::avatar_token(keys, user_id, &mut token);
    let mut url = String::with_capacity(token.len() + 40);
    url.push_str("/users/");
    push_path_segment(&mut url, std::str::from_utf8(&token).unwrap_or(""));
    url.push_str("/avatar?v=");
    let stamp = db::time::format(updated_at);
    url.extend(stamp.as_str().chars().filter(char::is_ascii_digit).take(14));
    url
}

/// `created_at.iso8601` as Rails writes it: `2025-01-01T12:00:00Z` (whole seconds, UTC).
fn write_iso(us: i64, o: &mut Out<'_>) {
    let stamp = db::time::format(us);
    let s = stamp.as_str();
    let (date, time) = (s.get(..10).unwrap_or(""), s.get(11..19).unwrap_or(""));
    o.attr(date);
    o.static_bytes(b"T");
    o.attr(time);
    o.static_bytes(b"Z");
}

/// Percent-encodes everything but RFC 3986 unreserved characters (file names in blob URLs).
fn push_path_segment(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
}

/// Names joined as Rails' `to_sentence`: "A", "A and B", "A, B, and C".
pub fn to_sentence(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [init @ .., last] => format!("{}, and {last}", init.join(", ")),
    }
}

/// Width and height from Active Storage metadata JSON, when both are positive numbers.
fn image_size(metadata: &str) -> Option<(u32, u32)> {
    let json = richtext::json::Json::parse(metadata)?;
    let num = |k: &str| match json.get(k)? {
        richtext::json::Json::Num(n) => n.parse::<f64>().ok().filter(|n| *n >= 1.0 && *n < 100_000.0).map(|n| n as u32),
        _ => None,
    };
    Some((num("width")?, num("height")?))
}

/// Scales (w, h) down to fit 1200 × 800, keeping the aspect ratio (Rails' `resize_to_limit`).
fn preview_size((w, h): (u32, u32)) -> (u32, u32) {
    let scale = (1200.0 / w as f64).min(800.0 / h as f64).min(1.0);
    (((w as f64 * scale).round() as u32).max(1), ((h as f64 * scale).round() as u32).max(1))
}

struct MessageView<'a> {
    m: &'a Message,
    creator: &'a Person,
    emoji: bool,
    presentation: &'a [u8],
    boosts: &'a [u8],
    /// Where the room name goes (recorded while rendering; the name itself is spliced later).
    room_at: Cell<usize>,
}

impl views::messages::message::View for MessageView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn extra_classes(&self, o: &mut Out<'_>) {
        if self.emoji {
            o.static_bytes(b"message--emoji");
        }
    }
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.m.creator_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn created_ms(&self, o: &mut Out<'_>) {
        o.int(self.m.created_at.div_euclid(1000));
    }
    fn updated_ms(&self, o: &mut Out<'_>) {
        o.int(self.m.updated_at.div_euclid(1000));
    }
    fn created_iso(&self, o: &mut Out<'_>) {
        write_iso(self.m.created_at, o);
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.m.room_id);
    }
    fn avatar(&self, o: &mut Out<'_>) {
        views::users::avatar::render(&AvatarView(self.creator), o);
    }
    fn author_title(&self, o: &mut Out<'_>) {
        o.attr(&self.creator.title);
    }
    fn author_name(&self, o: &mut Out<'_>) {
        o.text(&self.creator.name);
    }
    fn room_name(&self, o: &mut Out<'_>) {
        self.room_at.set(o.0.len());
    }
    fn presentation(&self, o: &mut Out<'_>) {
        // Rendered by this module through the templates and the sanitizer.
        o.0.extend_from_slice(self.presentation);
    }
    fn boosts(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.boosts);
    }
}

struct AvatarView<'a>(&'a Person);

impl views::users::avatar::View for AvatarView<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.0.id);
    }
    fn title(&self, o: &mut Out<'_>) {
        o.attr(&self.0.title);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(&self.0.avatar_url);
    }
}

struct PresentationView<'a> {
    cmid: &'a str,
    body: &'a [u8],
}

impl views::messages::presentation::View for PresentationView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(self.cmid);
    }
    fn body(&self, o: &mut Out<'_>) {
        // Sanitizer output or one of the body templates.
        o.0.extend_from_slice(self.body);
    }
}

struct SoundView(&'static richtext::Sound);

impl views::messages::body_sound::View for SoundView {
    fn name(&self, o: &mut Out<'_>) {
        o.attr(self.0.name);
    }
    fn text(&self, o: &mut Out<'_>) {
        o.text(self.0.text);
    }
}

struct AttachmentView<'a> {
    a: &'a Attachment,
    blob_url: &'a str,
    download_url: &'a str,
    /// The thumbnail's representation URL (the original's for files without one).
    preview_url: &'a str,
    size: Option<(u32, u32)>,
}

impl AttachmentView<'_> {
    fn wrapper_style(&self, o: &mut Out<'_>) {
        if let Some((w, h)) = self.size {
            let (pw, ph) = preview_size((w, h));
            o.attr(&format!("width: {}px; aspect-ratio: {}/{};", pw / 2, pw, ph));
        }
    }
}

impl views::messages::body_image::View for AttachmentView<'_> {
    fn wrapper_style(&self, o: &mut Out<'_>) {
        AttachmentView::wrapper_style(self, o);
    }
    fn blob_url(&self, o: &mut Out<'_>) {
        o.attr(self.blob_url);
    }
    fn download_url(&self, o: &mut Out<'_>) {
        o.attr(self.download_url);
    }
    fn preview_url(&self, o: &mut Out<'_>) {
        o.attr(self.preview_url);
    }
    fn width(&self, o: &mut Out<'_>) {
        if let Some(s) = self.size {
            o.int(preview_size(s).0.into());
        }
    }
    fn height(&self, o: &mut Out<'_>) {
        if let Some(s) = self.size {
            o.int(preview_size(s).1.into());
        }
    }
    fn filename(&self, o: &mut Out<'_>) {
        o.attr(&self.a.filename);
    }
}

impl views::messages::body_video::View for AttachmentView<'_> {
    fn wrapper_style(&self, o: &mut Out<'_>) {
        AttachmentView::wrapper_style(self, o);
    }
    fn blob_url(&self, o: &mut Out<'_>) {
        o.attr(self.blob_url);
    }
    fn poster_url(&self, _o: &mut Out<'_>) {
        // Video posters need the preview pipeline (a later issue); an empty poster shows none.
    }
    fn download_url(&self, o: &mut Out<'_>) {
        o.attr(self.download_url);
    }
}

impl views::messages::body_file::View for AttachmentView<'_> {
    fn filename(&self, o: &mut Out<'_>) {
        o.text(&self.a.filename);
    }
    fn download_url(&self, o: &mut Out<'_>) {
        o.attr(self.download_url);
    }
}

struct CmidView<'a>(&'a str);

impl views::messages::boosts_slot::View for CmidView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}

struct BoostsView<'a> {
    m: &'a Message,
    chips: &'a [u8],
}

impl views::messages::boosts::View for BoostsView<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn boosts(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.chips);
    }
}

struct BoostView<'a> {
    message_id: i64,
    boost_id: i64,
    booster: &'a Person,
    content: &'a str,
}

impl views::messages::boost::View for BoostView<'_> {
    fn boost_id(&self, o: &mut Out<'_>) {
        o.int(self.boost_id);
    }
    fn booster_id(&self, o: &mut Out<'_>) {
        o.int(self.booster.id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.message_id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(&self.booster.avatar_url);
    }
    fn booster_name(&self, o: &mut Out<'_>) {
        o.attr(&self.booster.name);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.text(self.content);
    }
    fn content_class(&self, o: &mut Out<'_>) {
        o.static_bytes(if richtext::is_emoji_only(self.content) { b"txt-small txt-medium" } else { b"txt-small" });
    }
}

/// One cached message: its partial as last rendered (a gzip part, so it carries its CRC-32 and
/// deflate pieces), and where the room name sits in it.
struct Entry {
    updated_at: i64,
    creator_updated_at: i64,
    /// Guards against a reused id (SQLite may hand out a deleted highest rowid again).
    cmid: Box<str>,
    room_at: usize,
    name_len: usize,
    part: Rc<gzip::Part>,
}

impl Entry {
    /// What the entry is charged against the budget: the partial, and half again for the
    /// deflate pieces made for it later (each is about a fifth to a quarter of the partial).
    fn size(&self) -> usize {
        self.part.bytes().len() * 3 / 2 + self.cmid.len() + 96
    }
}

/// A loop's fragment cache. Each loop is one thread, so a thread-local needs no lock. When
/// the budget is exceeded the whole cache is dropped: simple, and a room page refills it in
/// one render.
struct Fragments {
    map: HashMap<i64, Entry>,
    bytes: usize,
    budget: usize,
}

impl Fragments {
    /// Keeps `e` as message `id`'s partial; false when it does not fit the budget at all.
    fn insert(&mut self, id: i64, e: Entry) -> bool {
        let size = e.size();
        if size > self.budget {
            if let Some(old) = self.map.remove(&id) {
                self.bytes = self.bytes.saturating_sub(old.size());
            }
            return false;
        }
        if self.bytes + size > self.budget {
            self.map.clear();
            self.bytes = 0;
        }
        if let Some(old) = self.map.insert(id, e) {
            self.bytes = self.bytes.saturating_sub(old.size());
        }
        self.bytes += size;
        true
    }
}

thread_local! {
    static FRAGMENTS: RefCell<Fragments> = RefCell::new(Fragments {
        map: HashMap::new(),
        bytes: 0,
        budget: std::env::var("CAMPFIRE_FRAGMENT_CACHE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(FRAGMENT_CACHE_BYTES),
    });
}

#[cfg(test)]
mod tests {
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
}
