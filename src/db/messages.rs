//! Messages: pages of 40 (spec/01 §7.3), create / edit / destroy with their rich-text body
//! and search-index row in the same transaction (spec/01 §7–§9, §14).
//!
//! Pages are delivered to a callback oldest first, with rows borrowed from the statement;
//! a page of the newest messages before a point is read newest first (the index's order,
//! backwards) and handed over reversed from a buffer, rather than sorted again by SQLite.
//! Ordering is by `created_at` as in Rails; `id` breaks exact ties so pages are deterministic.

use super::conn::Conn;
use super::error::Result;
use super::memberships;
use super::rooms;
use super::stmt::{Step, Stmt};
use super::time;

/// Messages per page.
pub const PAGE_SIZE: i64 = 40;

/// The columns every message query selects, in `row`'s order (a macro so that each query
/// stays one `&'static str` for the statement cache).
macro_rules! columns {
    () => {
        "id, room_id, creator_id, client_message_id, created_at, updated_at"
    };
}

/// A message row borrowed from a page query (valid during the callback only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRow<'s> {
    pub id: i64,
    pub room_id: i64,
    pub creator_id: i64,
    /// The DOM identity of the message (`message_<client_message_id>`).
    pub client_message_id: &'s str,
    pub created_at: i64,
    pub updated_at: i64,
}

/// An owned message row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub id: i64,
    pub room_id: i64,
    pub creator_id: i64,
    pub client_message_id: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl MessageRow<'_> {
    pub fn to_message(&self) -> Message {
        Message {
            id: self.id,
            room_id: self.room_id,
            creator_id: self.creator_id,
            client_message_id: self.client_message_id.to_owned(),
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

pub(super) fn row<'s>(s: &'s Stmt<'_>) -> Result<MessageRow<'s>> {
    Ok(MessageRow {
        id: s.int(0),
        room_id: s.int(1),
        creator_id: s.int(2),
        client_message_id: s.text(3)?,
        created_at: s.time(4)?,
        updated_at: s.time(5)?,
    })
}

/// Steps `s` (a query selecting `columns!()` first), handing each row to `f`; returns how many.
pub(super) fn each(s: &mut Stmt<'_>, f: &mut dyn FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut n = 0;
    while s.step()? == Step::Row {
        f(&row(s)?)?;
        n += 1;
    }
    Ok(n)
}

/// Steps `s` (a query selecting `columns!()` first, newest first) to the end, then hands the
/// rows to `f` oldest first; returns how many. A page is at most 81 rows. The rows' DOM keys are
/// copied into one buffer, not a `String` each (two allocations a page instead of 41).
fn each_reversed(s: &mut Stmt<'_>, f: &mut dyn FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut rows: Vec<(MessageRow<'static>, std::ops::Range<usize>)> = Vec::with_capacity(PAGE_SIZE as usize);
    let mut keys = String::with_capacity(PAGE_SIZE as usize * 40);
    while s.step()? == Step::Row {
        let r = row(s)?;
        let at = keys.len();
        keys.push_str(r.client_message_id);
        let MessageRow { id, room_id, creator_id, created_at, updated_at, .. } = r;
        rows.push((MessageRow { id, room_id, creator_id, client_message_id: "", created_at, updated_at }, at..keys.len()));
    }
    for (r, key) in rows.iter().rev() {
        f(&MessageRow { client_message_id: keys.get(key.clone()).unwrap_or_default(), ..*r })?;
    }
    Ok(rows.len())
}

/// The message with `id`.
pub fn find(c: &Conn, id: i64) -> Result<Option<Message>> {
    let mut s = c.prepare_cached(concat!("SELECT ", columns!(), " FROM messages WHERE id = ?1"))?;
    s.bind(1, id)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(row(&s)?.to_message()))
}

/// The message with `id` if it belongs to `room_id`.
pub fn find_in_room(c: &Conn, room_id: i64, id: i64) -> Result<Option<Message>> {
    Ok(find(c, id)?.filter(|m| m.room_id == room_id))
}

/// The 40 newest messages of the room, oldest first. Returns how many were visited.
pub fn last_page(c: &Conn, room_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(concat!(
        "SELECT ", columns!(), " FROM messages WHERE room_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2"
    ))?;
    s.bind(1, room_id)?;
    s.bind(2, PAGE_SIZE)?;
    each_reversed(&mut s, &mut f)
}

/// The 40 oldest messages of the room, oldest first.
pub fn first_page(c: &Conn, room_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(concat!("SELECT ", columns!(), " FROM messages WHERE room_id = ?1 ORDER BY created_at, id LIMIT ?2"))?;
    s.bind(1, room_id)?;
    s.bind(2, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// The last page of the room's messages created strictly before message `anchor_id`
/// (nothing if the anchor does not exist).
pub fn page_before(c: &Conn, room_id: i64, anchor_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(concat!(
        "SELECT ", columns!(), " FROM messages \
         WHERE room_id = ?1 AND created_at < (SELECT created_at FROM messages WHERE id = ?2) \
         ORDER BY created_at DESC, id DESC LIMIT ?3"
    ))?;
    s.bind(1, room_id)?;
    s.bind(2, anchor_id)?;
    s.bind(3, PAGE_SIZE)?;
    each_reversed(&mut s, &mut f)
}

/// The first page of the room's messages created strictly after message `anchor_id`.
pub fn page_after(c: &Conn, room_id: i64, anchor_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let sql = concat!(
        "SELECT ", columns!(), " FROM messages \
         WHERE room_id = ?1 AND created_at > (SELECT created_at FROM messages WHERE id = ?2) \
         ORDER BY created_at, id LIMIT ?3"
    );
    anchored(c, sql, room_id, anchor_id, &mut f)
}

/// Runs a page query bound as (room, anchor message, page size).
fn anchored(c: &Conn, sql: &'static str, room_id: i64, anchor_id: i64, f: &mut dyn FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(sql)?;
    s.bind(1, room_id)?;
    s.bind(2, anchor_id)?;
    s.bind(3, PAGE_SIZE)?;
    each(&mut s, f)
}

/// The anchor message of `page_around`, bound as (message, room).
const ANCHOR: &str = concat!("SELECT ", columns!(), " FROM messages WHERE id = ?1 AND room_id = ?2");

/// Up to 40 before, the anchor itself, up to 40 after (up to 81), oldest first. Visits
/// nothing when the anchor is not a message of the room.
pub fn page_around(c: &Conn, room_id: i64, anchor_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(ANCHOR)?;
    s.bind(1, anchor_id)?;
    s.bind(2, room_id)?;
    if !s.row()? {
        return Ok(0);
    }
    drop(s);
    let mut n = page_before(c, room_id, anchor_id, &mut f)?;
    let mut s = c.prepare_cached(ANCHOR)?;
    s.bind(1, anchor_id)?;
    s.bind(2, room_id)?;
    n += each(&mut s, &mut f)?;
    drop(s);
    n += page_after(c, room_id, anchor_id, &mut f)?;
    Ok(n)
}

/// The first page of messages created strictly after `since` (µs).
pub fn page_created_since(c: &Conn, room_id: i64, since: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let t = time::format(since);
    let mut s = c.prepare_cached(
        concat!("SELECT ", columns!(), " FROM messages WHERE room_id = ?1 AND created_at > ?2 ORDER BY created_at, id LIMIT ?3"),
    )?;
    s.bind(1, room_id)?;
    s.bind(2, t.as_str())?;
    s.bind(3, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// The last page of messages updated strictly after `since` (µs).
pub fn page_updated_since(c: &Conn, room_id: i64, since: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let t = time::format(since);
    let mut s = c.prepare_cached(concat!(
        "SELECT * FROM (SELECT ", columns!(), " FROM messages WHERE room_id = ?1 AND updated_at > ?2 \
         ORDER BY created_at DESC, id DESC LIMIT ?3) ORDER BY created_at, id"
    ))?;
    s.bind(1, room_id)?;
    s.bind(2, t.as_str())?;
    s.bind(3, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// Number of messages in the room (a room is "paged" when this exceeds PAGE_SIZE).
pub fn count(c: &Conn, room_id: i64) -> Result<i64> {
    let mut s = c.prepare_cached("SELECT count(*) FROM messages WHERE room_id = ?1")?;
    s.bind(1, room_id)?;
    Ok(if s.row()? { s.int(0) } else { 0 })
}

/// The stored rich-text HTML of a message (`None` when it has no body row, e.g. uploads).
pub fn body(c: &Conn, id: i64) -> Result<Option<String>> {
    let mut s = c.prepare_cached(
        "SELECT body FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = ?1 AND name = 'body'",
    )?;
    s.bind(1, id)?;
    if !s.row()? {
        return Ok(None);
    }
    s.opt_string(0)
}

/// The file attached to a message (Active Storage `attachment`), as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attachment {
    pub blob_id: i64,
    /// 28 base36 characters; the file lives at `storage/files/<k[0..2]>/<k[2..4]>/<key>`.
    pub key: String,
    pub filename: String,
    pub content_type: Option<String>,
    pub byte_size: i64,
    /// JSON text (width, height, analyzed, ...).
    pub metadata: Option<String>,
    /// The metadata of its thumbnail (a tracked variant), whose size the markup states.
    pub variant_metadata: Option<String>,
    /// A video's preview image (Rails' `preview_image`, or the poster the browser sent).
    pub preview_blob_id: Option<i64>,
}

/// The attachment of message `id`, if it has one.
pub fn attachment(c: &Conn, id: i64) -> Result<Option<Attachment>> {
    let mut s = c.prepare_cached(
        "SELECT b.id, b.key, b.filename, b.content_type, b.byte_size, b.metadata, \
         (SELECT vb.metadata FROM active_storage_variant_records v \
          JOIN active_storage_attachments va ON va.record_type = 'ActiveStorage::VariantRecord' AND va.record_id = v.id AND va.name = 'image' \
          JOIN active_storage_blobs vb ON vb.id = va.blob_id WHERE v.blob_id = b.id ORDER BY v.id LIMIT 1), \
         (SELECT p.blob_id FROM active_storage_attachments p \
          WHERE p.record_type = 'ActiveStorage::Blob' AND p.record_id = b.id AND p.name = 'preview_image' ORDER BY p.id LIMIT 1) \
         FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id \
         WHERE a.record_type = 'Message' AND a.record_id = ?1 AND a.name = 'attachment' ORDER BY a.id LIMIT 1",
    )?;
    s.bind(1, id)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Attachment {
        blob_id: s.int(0),
        key: s.string(1)?,
        filename: s.string(2)?,
        content_type: s.opt_string(3)?,
        byte_size: s.int(4),
        metadata: s.opt_string(5)?,
        variant_metadata: s.opt_string(6)?,
        preview_blob_id: s.opt_int(7),
    }))
}

/// The name of room `room_id` (`None` for direct rooms, which have none, or no such room):
/// the room part of the message partial.
pub fn room_name(c: &Conn, room_id: i64) -> Result<Option<String>> {
    let mut s = c.prepare_cached("SELECT name FROM rooms WHERE id = ?1")?;
    s.bind(1, room_id)?;
    if !s.row()? {
        return Ok(None);
    }
    s.opt_string(0)
}

/// The names of the members of `room_id` in membership order: a direct room's display name
/// in the message partial (Rails' `room.users.pluck(:name)`).
pub fn room_member_names(c: &Conn, room_id: i64) -> Result<Vec<String>> {
    let mut s = c.prepare_cached(
        "SELECT u.name FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.room_id = ?1 ORDER BY m.id",
    )?;
    s.bind(1, room_id)?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push(s.string(0)?);
    }
    Ok(out)
}

/// A message to create.
#[derive(Clone, Copy, Debug)]
pub struct NewMessage<'a> {
    pub room_id: i64,
    pub creator_id: i64,
    /// From the browser, or a fresh UUID v4 made by the caller (bots, webhooks).
    pub client_message_id: &'a str,
    /// Canonical rich-text HTML; `None` for attachment-only messages (no body row).
    pub body: Option<&'a str>,
    /// Plain text for the search index (spec/01 §8.4; the attachment filename when empty).
    pub plain_text: &'a str,
}

/// Creates a message with its body row and search row, touches the room and marks the
/// room unread for the other members (spec/01 §6.4, §14), all in the caller's
/// transaction. `created_at` = `updated_at` = `now`. Returns the new id.
pub fn create(c: &Conn, m: &NewMessage<'_>, now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO messages (room_id, creator_id, client_message_id, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
    )?;
    s.bind(1, m.room_id)?;
    s.bind(2, m.creator_id)?;
    s.bind(3, m.client_message_id)?;
    s.bind(4, ts.as_str())?;
    s.run()?;
    drop(s);
    let id = c.last_insert_rowid();
    if let Some(body) = m.body {
        write_body(c, id, body, now)?;
    }
    let plain = m.plain_text.to_owned();
    c.defer(move |c| insert_search_row(c, id, &plain))?;
    rooms::touch(c, m.room_id, now)?;
    memberships::mark_unread(c, m.room_id, m.creator_id, now, now)?;
    Ok(id)
}

fn write_body(c: &Conn, id: i64, body: &str, now: i64) -> Result<()> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) \
         VALUES ('Message', ?1, 'body', ?2, ?3, ?3) \
         ON CONFLICT (record_type, record_id, name) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at",
    )?;
    s.bind(1, id)?;
    s.bind(2, body)?;
    s.bind(3, ts.as_str())?;
    s.run()
}

/// Replaces message `id`'s search row. The search row's writes go through `Conn::defer`: on
/// the writer they run at the end of the transaction, after every job of the group, in the
/// order they were made.
fn reindex(c: &Conn, id: i64, plain_text: &str) -> Result<()> {
    let plain = plain_text.to_owned();
    c.defer(move |c| {
        delete_search_row(c, id)?;
        insert_search_row(c, id, &plain)
    })
}

fn insert_search_row(c: &Conn, id: i64, plain_text: &str) -> Result<()> {
    let mut s = c.prepare_cached("INSERT INTO message_search_index (rowid, body) VALUES (?1, ?2)")?;
    s.bind(1, id)?;
    s.bind(2, plain_text)?;
    s.run()
}

fn delete_search_row(c: &Conn, id: i64) -> Result<()> {
    let mut s = c.prepare_cached("DELETE FROM message_search_index WHERE rowid = ?1")?;
    s.bind(1, id)?;
    s.run()
}

/// Replaces a message's body (and its search row), touching the message and its room.
/// Returns false when there is no such message.
pub fn update(c: &Conn, id: i64, body: &str, plain_text: &str, now: i64) -> Result<bool> {
    let Some(m) = find(c, id)? else { return Ok(false) };
    write_body(c, id, body, now)?;
    touch_one(c, id, now)?;
    reindex(c, id, plain_text)?;
    rooms::touch(c, m.room_id, now)?;
    Ok(true)
}

fn touch_one(c: &Conn, id: i64, now: i64) -> Result<()> {
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE messages SET updated_at = ?2 WHERE id = ?1")?;
    s.bind(1, id)?;
    s.bind(2, ts.as_str())?;
    s.run()
}

/// Touches a message and its room (a boost was added or removed). Returns false when
/// there is no such message. The search row is unchanged: the body did not change.
pub fn touch(c: &Conn, id: i64, now: i64) -> Result<bool> {
    let Some(m) = find(c, id)? else { return Ok(false) };
    touch_one(c, id, now)?;
    rooms::touch(c, m.room_id, now)?;
    Ok(true)
}

/// Destroys a message with its boosts, body row, attachment (its blobs and variants too,
/// through `blobs::detach`) and search row, and touches its room. Returns the keys of the
/// removed blobs, whose files the caller deletes after COMMIT, or `None` when there is no
/// such message.
pub fn destroy(c: &Conn, id: i64, now: i64) -> Result<Option<Vec<String>>> {
    let Some(m) = find(c, id)? else { return Ok(None) };
    let mut s = c.prepare_cached("DELETE FROM boosts WHERE message_id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    let mut s = c.prepare_cached(
        "DELETE FROM action_text_rich_texts WHERE record_type = 'Message' AND record_id = ?1 AND name = 'body'",
    )?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    let keys = super::blobs::detach(c, "Message", id, "attachment")?;
    let mut s = c.prepare_cached("DELETE FROM active_storage_attachments WHERE record_type = 'Message' AND record_id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    c.defer(move |c| delete_search_row(c, id))?;
    let mut s = c.prepare_cached("DELETE FROM messages WHERE id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    rooms::touch(c, m.room_id, now)?;
    Ok(Some(keys))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::memberships::{self, Involvement};
    use crate::db::rooms::{self, Kind};
    use crate::db::testing::{one_int, one_text, user, TempDb, SEC, T0};

    fn post(c: &Conn, room: i64, creator: i64, text: &str, at: i64) -> i64 {
        let cid = format!("cid-{at}-{room}");
        let body = format!("<div>{text}</div>");
        create(c, &NewMessage { room_id: room, creator_id: creator, client_message_id: &cid, body: Some(&body), plain_text: text }, at).unwrap()
    }

    fn ids(f: impl FnOnce(&mut dyn FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize>) -> Vec<i64> {
        let mut out = Vec::new();
        f(&mut |m| {
            out.push(m.id);
            Ok(())
        })
        .unwrap();
        out
    }

    /// 50 messages one second apart in room A, one message in room B.
    fn fixture() -> (TempDb, Conn, i64, Vec<i64>) {
        let (db, c) = TempDb::with_schema();
        let u = user(&c, "David");
        let a = rooms::create_for(&c, Kind::Closed, Some("A"), u, &[u], T0).unwrap();
        let b = rooms::create_for(&c, Kind::Closed, Some("B"), u, &[u], T0).unwrap();
        let msgs: Vec<i64> = (0..50).map(|i| post(&c, a, u, &format!("message {i}"), T0 + i * SEC)).collect();
        post(&c, b, u, "elsewhere", T0 + 25 * SEC + SEC / 2);
        (db, c, a, msgs)
    }

    #[test]
    fn pages_follow_created_at() {
        let (_db, c, a, m) = fixture();
        assert_eq!(ids(|f| last_page(&c, a, f)), m[10..50].to_vec());
        assert_eq!(ids(|f| first_page(&c, a, f)), m[0..40].to_vec());
        assert_eq!(ids(|f| page_before(&c, a, m[10], f)), m[0..10].to_vec());
        assert_eq!(ids(|f| page_before(&c, a, m[45], f)), m[5..45].to_vec());
        assert_eq!(ids(|f| page_after(&c, a, m[5], f)), m[6..46].to_vec());
        assert_eq!(ids(|f| page_after(&c, a, m[49], f)), Vec::<i64>::new());
        assert_eq!(ids(|f| page_around(&c, a, m[20], f)), m.clone());
        let around = ids(|f| page_around(&c, a, m[45], f));
        assert_eq!(around.len(), 40 + 1 + 4);
        assert_eq!(around.first(), Some(&m[5]));
        assert_eq!(ids(|f| page_created_since(&c, a, T0 + 44 * SEC, f)), m[45..50].to_vec());
        assert_eq!(count(&c, a).unwrap(), 50);
        // An anchor from another room yields nothing around it.
        let other = one_int(&c, "SELECT id FROM messages WHERE client_message_id LIKE 'cid-%' ORDER BY id DESC LIMIT 1");
        assert_eq!(ids(|f| page_around(&c, a, other, f)), Vec::<i64>::new());
        assert!(find_in_room(&c, a, other).unwrap().is_none());
        assert!(find_in_room(&c, a, m[3]).unwrap().is_some());
    }

    #[test]
    fn updated_since_and_edit() {
        let (_db, c, a, m) = fixture();
        assert!(update(&c, m[3], "<div>edited eels</div>", "edited eels", T0 + 100 * SEC).unwrap());
        assert_eq!(ids(|f| page_updated_since(&c, a, T0 + 60 * SEC, f)), vec![m[3]]);
        assert_eq!(body(&c, m[3]).unwrap().as_deref(), Some("<div>edited eels</div>"));
        assert_eq!(one_text(&c, &format!("SELECT body FROM message_search_index WHERE rowid = {}", m[3])).as_deref(), Some("edited eels"));
        assert_eq!(one_text(&c, &format!("SELECT updated_at FROM rooms WHERE id = {a}")).as_deref(), Some("2025-12-12 15:45:20"));
        assert!(!update(&c, 999_999, "x", "x", T0).unwrap());
    }

    #[test]
    fn create_writes_body_search_row_and_touches_room() {
        let (_db, c) = TempDb::with_schema();
        let u = user(&c, "David");
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), u, &[u], T0).unwrap();
        let id = create(&c, &NewMessage { room_id: room, creator_id: u, client_message_id: "abc", body: None, plain_text: "photo.jpg" }, T0 + 5 * SEC + 7).unwrap();
        let m = find(&c, id).unwrap().unwrap();
        assert_eq!((m.room_id, m.creator_id, m.client_message_id.as_str()), (room, u, "abc"));
        assert_eq!(m.created_at, T0 + 5 * SEC + 7);
        assert_eq!(one_text(&c, &format!("SELECT created_at FROM messages WHERE id = {id}")).as_deref(), Some("2025-12-12 15:43:45.000007"));
        assert_eq!(body(&c, id).unwrap(), None, "attachment-only message: no rich text row");
        assert_eq!(one_text(&c, &format!("SELECT body FROM message_search_index WHERE rowid = {id}")).as_deref(), Some("photo.jpg"));
        assert_eq!(rooms::find(&c, room).unwrap().unwrap().updated_at, T0 + 5 * SEC + 7);
        let id2 = post(&c, room, u, "hello", T0 + 6 * SEC);
        assert_eq!(
            one_text(&c, &format!("SELECT record_type || '/' || name || '/' || body FROM action_text_rich_texts WHERE record_id = {id2}")).as_deref(),
            Some("Message/body/<div>hello</div>")
        );
    }

    #[test]
    fn create_marks_the_room_unread_for_disconnected_visible_others() {
        let (_db, c) = TempDb::with_schema();
        let (d, j, k, l) = (user(&c, "David"), user(&c, "Jason"), user(&c, "Kevin"), user(&c, "Lisa"));
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), d, &[d, j, k, l], T0).unwrap();
        memberships::set_involvement(&c, room, k, Involvement::Invisible, T0).unwrap();
        memberships::present(&c, room, l, T0).unwrap();
        post(&c, room, d, "hi", T0 + 30 * SEC);
        let unread = |u: i64| memberships::find(&c, room, u).unwrap().unwrap().unread_at;
        assert_eq!(unread(d), None, "creator");
        assert_eq!(unread(j), Some(T0 + 30 * SEC), "disconnected");
        assert_eq!(unread(k), None, "invisible");
        assert_eq!(unread(l), None, "connected 30 s ago");
        post(&c, room, d, "later", T0 + 61 * SEC);
        assert_eq!(unread(l), Some(T0 + 61 * SEC), "connection went stale after 60 s");
        // Already unread: still unread (Rails moves the time on; nothing reads it but as set/unset).
        assert!(unread(j).is_some(), "stays unread");
        assert_eq!((unread(d), unread(k)), (None, None), "creator and invisible after a second post");
        // Read again (presence), then the next post marks it again.
        memberships::present(&c, room, j, T0 + 62 * SEC).unwrap();
        assert_eq!(unread(j), None, "read on presence");
        memberships::disconnected(&c, room, j, T0 + 63 * SEC).unwrap();
        post(&c, room, k, "again", T0 + 64 * SEC);
        assert_eq!(unread(j), Some(T0 + 64 * SEC), "unread again after reading");
        assert_eq!(unread(d), Some(T0 + 64 * SEC), "the earlier creator is marked by another's post");
        // An invisible member made visible again is marked by the next post.
        memberships::set_involvement(&c, room, k, Involvement::Everything, T0 + 65 * SEC).unwrap();
        post(&c, room, d, "visible", T0 + 66 * SEC);
        assert_eq!(unread(k), Some(T0 + 66 * SEC), "visible again");
    }

    #[test]
    fn destroy_removes_everything_that_hangs_off_a_message() {
        let (_db, c) = TempDb::with_schema();
        let u = user(&c, "David");
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), u, &[u], T0).unwrap();
        let id = post(&c, room, u, "bye", T0);
        crate::db::boosts::create(&c, id, u, "👍", T0 + SEC).unwrap();
        c.exec("INSERT INTO active_storage_blobs (key, filename, service_name, byte_size, created_at) VALUES ('k1', 'a.png', 'local', 3, '2025-01-01 00:00:00')").unwrap();
        let blob = c.last_insert_rowid();
        c.exec(&format!("INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) VALUES ('attachment', 'Message', {id}, {blob}, '2025-01-01 00:00:00')")).unwrap();
        let a = attachment(&c, id).unwrap().unwrap();
        assert_eq!((a.blob_id, a.key.as_str(), a.filename.as_str(), a.byte_size), (blob, "k1", "a.png", 3));
        assert_eq!(destroy(&c, id, T0 + 2 * SEC).unwrap(), Some(vec!["k1".to_string()]));
        assert_eq!(attachment(&c, id).unwrap(), None);
        for table in ["messages", "boosts", "action_text_rich_texts", "active_storage_attachments", "message_search_index"] {
            assert_eq!(one_int(&c, &format!("SELECT count(*) FROM {table}")), 0, "{table}");
        }
        assert_eq!(one_int(&c, "SELECT count(*) FROM active_storage_blobs"), 0, "the blob goes with it; its file after COMMIT");
        assert_eq!(rooms::find(&c, room).unwrap().unwrap().updated_at, T0 + 2 * SEC);
        assert_eq!(destroy(&c, id, T0).unwrap(), None);
    }
}
