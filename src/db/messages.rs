//! Messages: pages of 40 (spec/01 §7.3), create / edit / destroy with their rich-text body
//! and search-index row in the same transaction (spec/01 §7–§9, §14).
//!
//! Pages are delivered to a callback with rows borrowed from the statement, oldest first,
//! so rendering a page allocates nothing here. Ordering is by `created_at` as in Rails;
//! `id` breaks exact ties so pages are deterministic.

use super::conn::Conn;
use super::error::Result;
use super::memberships;
use super::rooms;
use super::stmt::{Step, Stmt};
use super::time;

/// Messages per page.
pub const PAGE_SIZE: i64 = 40;

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

fn row<'s>(s: &'s Stmt<'_>) -> Result<MessageRow<'s>> {
    Ok(MessageRow {
        id: s.int(0),
        room_id: s.int(1),
        creator_id: s.int(2),
        client_message_id: s.text(3)?,
        created_at: s.time(4)?,
        updated_at: s.time(5)?,
    })
}

fn each(s: &mut Stmt<'_>, f: &mut dyn FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut n = 0;
    while s.step()? == Step::Row {
        f(&row(s)?)?;
        n += 1;
    }
    Ok(n)
}

/// The message with `id`.
pub fn find(c: &Conn, id: i64) -> Result<Option<Message>> {
    let mut s = c.prepare_cached(
        "SELECT id, room_id, creator_id, client_message_id, created_at, updated_at FROM messages WHERE id = ?1",
    )?;
    s.bind(1, id)?;
    if !s.row()? {
        return Ok(None);
    }
    let r = row(&s)?;
    Ok(Some(Message {
        id: r.id,
        room_id: r.room_id,
        creator_id: r.creator_id,
        client_message_id: r.client_message_id.to_owned(),
        created_at: r.created_at,
        updated_at: r.updated_at,
    }))
}

/// The message with `id` if it belongs to `room_id`.
pub fn find_in_room(c: &Conn, room_id: i64, id: i64) -> Result<Option<Message>> {
    Ok(find(c, id)?.filter(|m| m.room_id == room_id))
}

/// The 40 newest messages of the room, oldest first. Returns how many were visited.
pub fn last_page(c: &Conn, room_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(
        "SELECT * FROM (SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE room_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2) ORDER BY created_at, id",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// The 40 oldest messages of the room, oldest first.
pub fn first_page(c: &Conn, room_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(
        "SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE room_id = ?1 ORDER BY created_at, id LIMIT ?2",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// The last page of the room's messages created strictly before message `anchor_id`
/// (nothing if the anchor does not exist).
pub fn page_before(c: &Conn, room_id: i64, anchor_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(
        "SELECT * FROM (SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE room_id = ?1 AND created_at < (SELECT created_at FROM messages WHERE id = ?2) \
         ORDER BY created_at DESC, id DESC LIMIT ?3) ORDER BY created_at, id",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, anchor_id)?;
    s.bind(3, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// The first page of the room's messages created strictly after message `anchor_id`.
pub fn page_after(c: &Conn, room_id: i64, anchor_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(
        "SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE room_id = ?1 AND created_at > (SELECT created_at FROM messages WHERE id = ?2) \
         ORDER BY created_at, id LIMIT ?3",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, anchor_id)?;
    s.bind(3, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// Up to 40 before, the anchor itself, up to 40 after (up to 81), oldest first. Visits
/// nothing when the anchor is not a message of the room.
pub fn page_around(c: &Conn, room_id: i64, anchor_id: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(
        "SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE id = ?1 AND room_id = ?2",
    )?;
    s.bind(1, anchor_id)?;
    s.bind(2, room_id)?;
    if !s.row()? {
        return Ok(0);
    }
    drop(s);
    let mut n = page_before(c, room_id, anchor_id, &mut f)?;
    let mut s = c.prepare_cached(
        "SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE id = ?1 AND room_id = ?2",
    )?;
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
        "SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE room_id = ?1 AND created_at > ?2 ORDER BY created_at, id LIMIT ?3",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, t.as_str())?;
    s.bind(3, PAGE_SIZE)?;
    each(&mut s, &mut f)
}

/// The last page of messages updated strictly after `since` (µs).
pub fn page_updated_since(c: &Conn, room_id: i64, since: i64, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let t = time::format(since);
    let mut s = c.prepare_cached(
        "SELECT * FROM (SELECT id, room_id, creator_id, client_message_id, created_at, updated_at \
         FROM messages WHERE room_id = ?1 AND updated_at > ?2 ORDER BY created_at DESC, id DESC LIMIT ?3) \
         ORDER BY created_at, id",
    )?;
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
    let mut s = c.prepare_cached("INSERT INTO message_search_index (rowid, body) VALUES (?1, ?2)")?;
    s.bind(1, id)?;
    s.bind(2, m.plain_text)?;
    s.run()?;
    drop(s);
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

fn reindex(c: &Conn, id: i64, plain_text: &str) -> Result<()> {
    let mut s = c.prepare_cached("DELETE FROM message_search_index WHERE rowid = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    let mut s = c.prepare_cached("INSERT INTO message_search_index (rowid, body) VALUES (?1, ?2)")?;
    s.bind(1, id)?;
    s.bind(2, plain_text)?;
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

/// Destroys a message with its boosts, body row, attachment rows and search row, and
/// touches its room. Returns the blob ids of its attachments (the caller purges their
/// files and rows later), or `None` when there is no such message.
pub fn destroy(c: &Conn, id: i64, now: i64) -> Result<Option<Vec<i64>>> {
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
    let mut blobs = Vec::new();
    let mut s = c.prepare_cached(
        "SELECT blob_id FROM active_storage_attachments WHERE record_type = 'Message' AND record_id = ?1 ORDER BY id",
    )?;
    s.bind(1, id)?;
    while s.step()? == Step::Row {
        blobs.push(s.int(0));
    }
    drop(s);
    let mut s = c.prepare_cached("DELETE FROM active_storage_attachments WHERE record_type = 'Message' AND record_id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    let mut s = c.prepare_cached("DELETE FROM message_search_index WHERE rowid = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    let mut s = c.prepare_cached("DELETE FROM messages WHERE id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    rooms::touch(c, m.room_id, now)?;
    Ok(Some(blobs))
}
