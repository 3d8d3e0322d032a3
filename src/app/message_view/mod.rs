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
//! Here: the renderer. Beside it: `partials` (the template views), `fragments` (the cache),
//! `json` (the bot API's message and user JSON), `urls` (signed and escaped links).
//!
//! Known staleness, the same as Rails' `cache message`: a mentioned user's or a booster's new
//! name or avatar shows in a message only after that message is next touched.

use crate::app::attachments;
use crate::crypto::variation::Variation;
use crate::crypto::{signed_id, Keys};
use crate::images::{THUMB_MAX_HEIGHT, THUMB_MAX_WIDTH};
use crate::db::messages::{self, Attachment, Message, MessageRow};
use crate::db::{self, boosts, users, Conn};
use crate::richtext::{self, Mention, Safe};
use crate::views::{self, Out};
use crate::gzip;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

mod fragments;
mod json;
mod partials;
mod urls;

pub use fragments::FRAGMENT_CACHE_BYTES;
pub use json::{message_json, user_json};
pub use urls::{avatar_url, write_avatar_url};
use fragments::{Entry, FRAGMENTS};
use urls::push_path_segment;
use partials::*;

/// Collects the rows a page query visits (`db::messages::last_page`, `page_before`, ...)
/// into owned messages, oldest first, ready for `render_messages`.
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

/// Renders a message just written without attachment from what its post holds (`Written`),
/// reading none of it back: a post's broadcast then costs no body, attachment, boosts, creator
/// or room query, and the fill that makes it no read transaction at all.
pub fn render_new_message(db: &Conn, keys: &Keys, m: &Message, w: &Written<'_>, out: &mut Vec<u8>) -> db::Result<()> {
    let mut r = Renderer::new(db, keys);
    r.new_text = Some((m.id, w.html, w.plain));
    if let Some(u) = w.creator.filter(|u| u.id == m.creator_id) {
        r.people.borrow_mut().push(Person::of(keys, u));
    }
    if let Some(name) = w.room_name {
        r.know_room_name(m.room_id, name);
    }
    r.message(m, out)
}

/// What the post that wrote a message without attachment already holds, so its render after
/// the commit reads and parses nothing again: the body as rendered for the blank check
/// (`richtext::render_body`) and its plain text, the creator (the signed-in user) and the
/// room's stored name (none for a direct room, named from its members).
pub struct Written<'a> {
    pub html: &'a Safe,
    pub plain: &'a str,
    pub creator: Option<&'a users::User>,
    pub room_name: Option<&'a str>,
}

/// A rich-text body from its plain text: a `/play` sound, or the text as `render` makes it.
fn text_body(plain: &str, render: impl FnOnce() -> Vec<u8>) -> Body {
    let emoji = richtext::is_emoji_only(plain);
    if let Some(sound) = richtext::play_sound(plain) {
        let mut html = Vec::with_capacity(256);
        views::messages::body_sound::render(&SoundView(sound), &mut Out::new(&mut html));
        return Body { html, emoji };
    }
    Body { html: render(), emoji }
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
    /// A message just written without an attachment: its rendered body and plain text.
    new_text: Option<(i64, &'a Safe, &'a str)>,
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

impl Person {
    fn of(keys: &Keys, u: &users::User) -> Person {
        let bio = u.bio.as_deref().map(str::trim).unwrap_or("");
        let title = if bio.is_empty() { u.name.clone() } else { format!("{} – {}", u.name, bio) };
        Person { id: u.id, avatar_url: avatar_url(keys, u.id, u.updated_at), name: u.name.clone(), title, updated_at: u.updated_at }
    }
}

impl<'a> Renderer<'a> {
    pub fn new(db: &'a Conn, keys: &'a Keys) -> Renderer<'a> {
        Renderer { db, keys, people: RefCell::new(Vec::new()), stamps: Vec::new(), room_names: Vec::new(), new_text: None }
    }

    /// The user `id` as the partial shows them; a missing row gives an empty name and the
    /// avatar URL of the id (which answers the default avatar).
    pub fn person(&self, id: i64) -> db::Result<Person> {
        if let Some(p) = self.people.borrow().iter().find(|p| p.id == id) {
            return Ok(p.clone());
        }
        let p = match users::find(self.db, id)? {
            Some(u) => Person::of(self.keys, &u),
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

    /// Tells the pass a creator's `updated_at` read elsewhere (the search statement carries
    /// it), so `message` does not look it up.
    pub fn know_stamp(&mut self, user_id: i64, updated_at: i64) {
        if !self.stamps.iter().any(|(u, _)| *u == user_id) {
            self.stamps.push((user_id, updated_at));
        }
    }

    /// Tells the pass a room's stored name read elsewhere (the search statement carries it).
    /// A direct room has none and is still named from its members on first use.
    pub fn know_room_name(&mut self, room_id: i64, name: &str) {
        if !self.room_names.iter().any(|(id, _)| *id == room_id) {
            let mut html = Vec::with_capacity(name.len() + 8);
            Out::new(&mut html).text(name);
            self.room_names.push((room_id, html));
        }
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
        // A message just written is rendered before anyone has seen it: it has no boosts.
        if self.new_text.is_some_and(|(id, ..)| id == m.id) {
            return Ok(rows);
        }
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
        if let Some((_, html, plain)) = self.new_text.filter(|(id, ..)| *id == m.id) {
            return Ok(text_body(plain, || html.as_str().as_bytes().to_vec()));
        }
        if let Some(a) = messages::attachment(self.db, m.id)? {
            return Ok(Body { html: self.attachment(&a), emoji: false });
        }
        let stored = messages::body(self.db, m.id)?.unwrap_or_default();
        let resolve = |sgid: &str| self.mention(sgid);
        let plain = richtext::plain_text(&stored, &resolve);
        Ok(text_body(&plain, || {
            let safe = richtext::render_body(&stored, &resolve);
            let mut html = Vec::with_capacity(safe.as_str().len());
            Out::new(&mut html).html(&safe);
            html
        }))
    }

    /// A mention's user for the rich-text renderer (sgid read leniently, spec/01 §8.3).
    /// A mentioned user for the rich-text functions (lenient sgid, spec/01 §8.3), or None when
    /// no such user exists.
    pub fn mention(&self, sgid: &str) -> Option<Mention> {
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
        // The size the markup states is the stored thumbnail's (a budget-bound decode can
        // make it smaller than 1200×800), else the original's scaled to the limit.
        let size = a
            .variant_metadata
            .as_deref()
            .and_then(image_size)
            .or_else(|| a.metadata.as_deref().and_then(image_size).map(preview_size));
        let preview_url = self.thumb_url(a, &signed).unwrap_or_else(|| blob_url.clone());
        let mut html = Vec::with_capacity(512);
        let o = &mut Out::new(&mut html);
        let poster_url = a.preview_blob_id.map(|id| {
            let mut signed = Vec::with_capacity(64);
            signed_id::blob_signed_id(self.keys, id, &mut signed);
            let base = a.filename.rsplit_once('.').map_or(a.filename.as_str(), |(b, _)| b);
            let mut url = String::from("/rails/active_storage/blobs/redirect/");
            url.push_str(std::str::from_utf8(&signed).unwrap_or(""));
            url.push('/');
            push_path_segment(&mut url, &format!("{base}.jpg"));
            url
        });
        let v = AttachmentView { a, blob_url: &blob_url, download_url: &download_url, preview_url: &preview_url, size, poster_url };
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

/// Names joined as Rails' `to_sentence`: "A", "A and B", "A, B, and C".
pub fn to_sentence(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [init @ .., last] => format!("{}, and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests;
