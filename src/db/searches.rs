//! Full-text search over messages and the per-user search history (spec/01 §9).
//!
//! The user's text is never FTS5 syntax: every character that is not a word character
//! becomes a space (as the Rails controller does), and each remaining word is wrapped in
//! double quotes, so `AND`, `OR`, `NOT`, `NEAR`, `*`, `^` are plain words and no input can
//! make the MATCH fail. Results are the 100 highest message ids the user can reach (any
//! membership, invisible included), presented in ascending id order.

use super::conn::Conn;
use super::error::Result;
use super::messages::MessageRow;
use super::stmt::Step;
use super::time;

/// Most results shown.
pub const MAX_RESULTS: i64 = 100;
/// Search-history rows kept per user.
pub const HISTORY_SIZE: i64 = 10;

/// `\p{Word}` as Ruby's `[[:word:]]`: letters, marks, decimal digits, connector punctuation.
/// Rust's `is_alphanumeric` covers letters and numbers (and most script marks through
/// Other_Alphabetic); combining marks and connector punctuation are added explicitly.
fn is_word(ch: char) -> bool {
    ch.is_alphanumeric()
        || matches!(ch, '_' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}' | '\u{FE4D}'..='\u{FE4F}' | '\u{FF3F}')
        || matches!(ch, '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}' | '\u{20D0}'..='\u{20FF}' | '\u{FE20}'..='\u{FE2F}')
}

/// The query as Rails keeps it (history, the search box): every non-word character
/// replaced by a space. `None` when nothing but spaces remains (no search).
pub fn sanitize(q: &str) -> Option<String> {
    let s: String = q.chars().map(|ch| if is_word(ch) { ch } else { ' ' }).collect();
    if s.trim().is_empty() {
        None
    } else {
        Some(s)
    }
}

/// The FTS5 MATCH expression for a sanitized query: each word quoted, implicitly ANDed.
pub fn match_expression(sanitized: &str) -> String {
    let mut out = String::with_capacity(sanitized.len() + 8);
    for word in sanitized.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push('"');
        out.push_str(word);
        out.push('"');
    }
    out
}

/// Calls `f` for the newest 100 messages matching `sanitized` (from `sanitize`) in rooms
/// where `user_id` has a membership, ascending by id. Returns how many.
pub fn messages(c: &Conn, user_id: i64, sanitized: &str, mut f: impl FnMut(&MessageRow<'_>) -> Result<()>) -> Result<usize> {
    let expr = match_expression(sanitized);
    if expr.is_empty() {
        return Ok(0);
    }
    let mut s = c.prepare_cached(
        "SELECT * FROM (SELECT m.id, m.room_id, m.creator_id, m.client_message_id, m.created_at, m.updated_at \
         FROM message_search_index idx JOIN messages m ON m.id = idx.rowid \
         WHERE idx.body MATCH ?2 AND m.room_id IN (SELECT room_id FROM memberships WHERE user_id = ?1) \
         ORDER BY m.id DESC LIMIT ?3) ORDER BY id",
    )?;
    s.bind(1, user_id)?;
    s.bind(2, expr.as_str())?;
    s.bind(3, MAX_RESULTS)?;
    let mut n = 0;
    while s.step()? == Step::Row {
        f(&MessageRow {
            id: s.int(0),
            room_id: s.int(1),
            creator_id: s.int(2),
            client_message_id: s.text(3)?,
            created_at: s.time(4)?,
            updated_at: s.time(5)?,
        })?;
        n += 1;
    }
    Ok(n)
}

/// Records a search (POST /searches): the user's row with exactly this query gets a fresh
/// `updated_at`, or a new row is created and the history trimmed to the 10 most recent.
pub fn record(c: &Conn, user_id: i64, query: &str, now: i64) -> Result<()> {
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE searches SET updated_at = ?3 WHERE id = (SELECT id FROM searches WHERE user_id = ?1 AND query = ?2 ORDER BY id LIMIT 1)")?;
    s.bind(1, user_id)?;
    s.bind(2, query)?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    drop(s);
    if c.changes() > 0 {
        return Ok(());
    }
    let mut s = c.prepare_cached("INSERT INTO searches (user_id, query, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")?;
    s.bind(1, user_id)?;
    s.bind(2, query)?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    drop(s);
    let mut s = c.prepare_cached(
        "DELETE FROM searches WHERE user_id = ?1 AND id NOT IN \
         (SELECT id FROM searches WHERE user_id = ?1 ORDER BY updated_at DESC, id DESC LIMIT ?2)",
    )?;
    s.bind(1, user_id)?;
    s.bind(2, HISTORY_SIZE)?;
    s.run()
}

/// Calls `f` with each of the user's recorded queries, most recently used first.
pub fn recent(c: &Conn, user_id: i64, mut f: impl FnMut(&str) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached("SELECT query FROM searches WHERE user_id = ?1 ORDER BY updated_at DESC, id DESC")?;
    s.bind(1, user_id)?;
    let mut n = 0;
    while s.step()? == Step::Row {
        f(s.text(0)?)?;
        n += 1;
    }
    Ok(n)
}

/// Deletes the user's search history.
pub fn clear(c: &Conn, user_id: i64) -> Result<()> {
    let mut s = c.prepare_cached("DELETE FROM searches WHERE user_id = ?1")?;
    s.bind(1, user_id)?;
    s.run()
}
