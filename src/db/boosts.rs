//! Boosts (reactions) on messages (spec/01 §10): listed in creation order, created by
//! anyone in the room, destroyed only by their booster; both touch the message and room.

use super::conn::Conn;
use super::error::Result;
use super::messages;
use super::stmt::Step;
use super::time;

/// A boost borrowed from a query (valid during the callback only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoostRow<'s> {
    pub id: i64,
    pub message_id: i64,
    pub booster_id: i64,
    /// Free text; the UI limits it to 16 characters, the database does not.
    pub content: &'s str,
    pub created_at: i64,
}

/// Calls `f` for each boost of `message_id`, oldest first. Returns how many.
pub fn for_message(c: &Conn, message_id: i64, mut f: impl FnMut(&BoostRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached(
        "SELECT id, message_id, booster_id, content, created_at FROM boosts WHERE message_id = ?1 ORDER BY created_at, id",
    )?;
    s.bind(1, message_id)?;
    let mut n = 0;
    while s.step()? == Step::Row {
        f(&BoostRow {
            id: s.int(0),
            message_id: s.int(1),
            booster_id: s.int(2),
            content: s.text(3)?,
            created_at: s.time(4)?,
        })?;
        n += 1;
    }
    Ok(n)
}

/// The (message id, booster id) of boost `id`, if it exists.
pub fn find(c: &Conn, id: i64) -> Result<Option<(i64, i64)>> {
    let mut s = c.prepare_cached("SELECT message_id, booster_id FROM boosts WHERE id = ?1")?;
    s.bind(1, id)?;
    Ok(if s.row()? { Some((s.int(0), s.int(1))) } else { None })
}

/// Boosts `message_id` as `booster_id` with `content` and touches the message and its
/// room. Returns the new boost id, or `None` when the message does not exist.
pub fn create(c: &Conn, message_id: i64, booster_id: i64, content: &str, now: i64) -> Result<Option<i64>> {
    if !messages::touch(c, message_id, now)? {
        return Ok(None);
    }
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO boosts (message_id, booster_id, content, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
    )?;
    s.bind(1, message_id)?;
    s.bind(2, booster_id)?;
    s.bind(3, content)?;
    s.bind(4, ts.as_str())?;
    s.run()?;
    Ok(Some(c.last_insert_rowid()))
}

/// Destroys boost `id` if `booster_id` made it, touching its message and room. Returns the
/// message id it was on, or `None` when there is no such boost of that booster.
pub fn destroy(c: &Conn, id: i64, booster_id: i64, now: i64) -> Result<Option<i64>> {
    let mut s = c.prepare_cached("SELECT message_id FROM boosts WHERE id = ?1 AND booster_id = ?2")?;
    s.bind(1, id)?;
    s.bind(2, booster_id)?;
    if !s.row()? {
        return Ok(None);
    }
    let message_id = s.int(0);
    drop(s);
    let mut s = c.prepare_cached("DELETE FROM boosts WHERE id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    messages::touch(c, message_id, now)?;
    Ok(Some(message_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::messages::NewMessage;
    use crate::db::rooms::{self, Kind};
    use crate::db::testing::{user, TempDb, SEC, T0};

    #[test]
    fn boosts_touch_their_message_and_only_the_booster_removes_them() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let room = rooms::create_for(&c, Kind::Open, Some("R"), d, &[], T0).unwrap();
        let m = messages::create(&c, &NewMessage { room_id: room, creator_id: d, client_message_id: "c", body: Some("hi"), plain_text: "hi" }, T0).unwrap();
        let b1 = create(&c, m, j, "👍", T0 + SEC).unwrap().unwrap();
        let b2 = create(&c, m, d, "a very long boost, longer than sixteen", T0 + 2 * SEC).unwrap().unwrap();
        assert_eq!(create(&c, 999, d, "x", T0).unwrap(), None);
        assert_eq!(messages::find(&c, m).unwrap().unwrap().updated_at, T0 + 2 * SEC);
        assert_eq!(rooms::find(&c, room).unwrap().unwrap().updated_at, T0 + 2 * SEC);
        let mut seen = Vec::new();
        for_message(&c, m, |b| {
            seen.push((b.id, b.booster_id, b.content.to_owned(), b.created_at));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec![(b1, j, "👍".to_owned(), T0 + SEC), (b2, d, "a very long boost, longer than sixteen".to_owned(), T0 + 2 * SEC)]);
        assert_eq!(destroy(&c, b1, d, T0 + 3 * SEC).unwrap(), None, "not David's boost");
        assert_eq!(destroy(&c, b1, j, T0 + 3 * SEC).unwrap(), Some(m));
        assert_eq!(messages::find(&c, m).unwrap().unwrap().updated_at, T0 + 3 * SEC);
        assert_eq!(for_message(&c, m, |_| Ok(())).unwrap(), 1);
    }
}
