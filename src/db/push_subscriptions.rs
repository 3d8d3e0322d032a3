//! Push subscriptions (spec/01 §2.10, spec/04 §3): a browser's Web Push endpoint and keys per
//! device, who receives a push for a new message, and the unread count the notification
//! badge shows. Signing out on a device deletes its rows through `auth::delete_push_subscriptions`.

use super::conn::Conn;
use super::error::Result;
use super::memberships::CONNECTION_TTL_US;
use super::stmt::Stmt;
use super::time;

/// One `push_subscriptions` row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    pub id: i64,
    pub user_id: i64,
    pub endpoint: String,
    pub p256dh_key: String,
    pub auth_key: String,
    pub user_agent: Option<String>,
}

fn read(s: &Stmt<'_>) -> Result<Subscription> {
    Ok(Subscription {
        id: s.int(0),
        user_id: s.int(1),
        endpoint: s.opt_string(2)?.unwrap_or_default(),
        p256dh_key: s.opt_string(3)?.unwrap_or_default(),
        auth_key: s.opt_string(4)?.unwrap_or_default(),
        user_agent: s.opt_string(5)?,
    })
}

fn all(mut s: Stmt<'_>) -> Result<Vec<Subscription>> {
    let mut out = Vec::new();
    while s.row()? {
        out.push(read(&s)?);
    }
    Ok(out)
}

/// A subscription that may get a message's push, with its user's involvement in the room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub subscription: Subscription,
    /// `everything`; otherwise `mentions` (only when mentioned).
    pub everything: bool,
}

impl Candidate {
    /// Rails' `Room::MessagePusher`: `everything` always, `mentions` when among `mentionees`.
    pub fn wants(&self, mentionees: &[i64]) -> bool {
        self.everything || mentionees.contains(&self.subscription.user_id)
    }
}

/// Who may get a push for a message `creator_id` posted in `room_id`: every subscription of a
/// user whose membership of the room is visible, disconnected (no presence within the TTL as
/// of `now`), not the creator's, and involved in `everything` or `mentions` (`nothing` never
/// is). `Candidate::wants` then applies the mentions. Ordered by subscription id. One indexed
/// query, so a room where nobody can be notified costs nothing more.
pub fn candidates(c: &Conn, room_id: i64, creator_id: i64, now: i64) -> Result<Vec<Candidate>> {
    let stale = time::format(now - CONNECTION_TTL_US);
    let mut s = c.prepare_cached(
        "SELECT p.id, p.user_id, p.endpoint, p.p256dh_key, p.auth_key, p.user_agent, m.involvement = 'everything' \
         FROM push_subscriptions p JOIN memberships m ON m.user_id = p.user_id \
         WHERE m.room_id = ?1 AND m.user_id != ?2 AND m.involvement IN ('everything', 'mentions') \
         AND (m.connected_at IS NULL OR m.connected_at < ?3) \
         ORDER BY p.id",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, creator_id)?;
    s.bind(3, stale.as_str())?;
    let mut out = Vec::new();
    while s.row()? {
        out.push(Candidate { subscription: read(&s)?, everything: s.int(6) != 0 });
    }
    Ok(out)
}

/// The badge: how many of the user's memberships are unread (any room).
pub fn unread_count(c: &Conn, user_id: i64) -> Result<i64> {
    let mut s = c.prepare_cached("SELECT count(*) FROM memberships WHERE user_id = ?1 AND unread_at IS NOT NULL")?;
    s.bind(1, user_id)?;
    Ok(if s.row()? { s.int(0) } else { 0 })
}

/// The user's subscriptions, oldest first (the development listing).
pub fn of_user(c: &Conn, user_id: i64) -> Result<Vec<Subscription>> {
    const SQL: &str = "SELECT p.id, p.user_id, p.endpoint, p.p256dh_key, p.auth_key, p.user_agent FROM push_subscriptions p WHERE p.user_id = ?1 ORDER BY p.id";
    let mut s = c.prepare_cached(SQL)?;
    s.bind(1, user_id)?;
    all(s)
}

/// One of the user's subscriptions.
pub fn find_for_user(c: &Conn, user_id: i64, id: i64) -> Result<Option<Subscription>> {
    let mut s = c.prepare_cached(
        "SELECT p.id, p.user_id, p.endpoint, p.p256dh_key, p.auth_key, p.user_agent FROM push_subscriptions p WHERE p.id = ?1 AND p.user_id = ?2",
    )?;
    s.bind(1, id)?;
    s.bind(2, user_id)?;
    Ok(if s.row()? { Some(read(&s)?) } else { None })
}

/// `POST /users/me/push_subscriptions`: touches the user's row with exactly these three
/// values, else creates one recording `user_agent`. Returns the row id.
pub fn create_or_touch(c: &Conn, user_id: i64, endpoint: &str, p256dh: &str, auth: &str, user_agent: Option<&str>, now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "SELECT id FROM push_subscriptions WHERE user_id = ?1 AND endpoint = ?2 AND p256dh_key = ?3 AND auth_key = ?4 ORDER BY id LIMIT 1",
    )?;
    s.bind(1, user_id)?;
    s.bind(2, endpoint)?;
    s.bind(3, p256dh)?;
    s.bind(4, auth)?;
    if s.row()? {
        let id = s.int(0);
        drop(s);
        let mut u = c.prepare_cached("UPDATE push_subscriptions SET updated_at = ?2 WHERE id = ?1")?;
        u.bind(1, id)?;
        u.bind(2, ts.as_str())?;
        u.run()?;
        return Ok(id);
    }
    drop(s);
    let mut i = c.prepare_cached(
        "INSERT INTO push_subscriptions (user_id, endpoint, p256dh_key, auth_key, user_agent, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    )?;
    i.bind(1, user_id)?;
    i.bind(2, endpoint)?;
    i.bind(3, p256dh)?;
    i.bind(4, auth)?;
    i.bind(5, user_agent)?;
    i.bind(6, ts.as_str())?;
    i.run()?;
    Ok(c.last_insert_rowid())
}

/// Deletes one of the user's subscriptions; absent is fine. Returns how many (0 or 1).
pub fn delete_for_user(c: &Conn, user_id: i64, id: i64) -> Result<usize> {
    let mut s = c.prepare_cached("DELETE FROM push_subscriptions WHERE id = ?1 AND user_id = ?2")?;
    s.bind(1, id)?;
    s.bind(2, user_id)?;
    s.run()?;
    Ok(c.changes() as usize)
}

/// Forgets a subscription the push service reported gone (404/410) or whose keys cannot be
/// used. Only the row that was pushed to: `endpoint` must still match, so a row re-created
/// meanwhile with the same id is left alone. Returns how many (0 or 1).
pub fn delete_gone(c: &Conn, id: i64, endpoint: &str) -> Result<usize> {
    let mut s = c.prepare_cached("DELETE FROM push_subscriptions WHERE id = ?1 AND endpoint = ?2")?;
    s.bind(1, id)?;
    s.bind(2, endpoint)?;
    s.run()?;
    Ok(c.changes() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{one_int, TempDb};
    use crate::db::time::US_PER_SEC;

    const NOW: i64 = 1_750_000_000 * US_PER_SEC;

    /// Rails' fixtures in small: David (1) posts; Jason (2) and JZ (3) follow `designers` (10)
    /// for everything, Kevin (4) for mentions; everyone has one subscription; `hq` (11) has
    /// all four with the default involvement of shared rooms.
    fn seed(c: &Conn) {
        let t = "'2025-01-01 00:00:00'";
        let mut sql = String::new();
        for (id, name) in [(1, "David"), (2, "Jason"), (3, "JZ"), (4, "Kevin")] {
            sql += &format!("INSERT INTO users (id, name, role, status, created_at, updated_at) VALUES ({id}, '{name}', 0, 0, {t}, {t});");
            sql += &format!(
                "INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh_key, auth_key, created_at, updated_at) \
                 VALUES ({}, {id}, 'https://fcm.googleapis.com/fcm/send/{id}', 'p', 'a', {t}, {t});",
                100 + id
            );
        }
        sql += &format!("INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES (10, 'Designers', 'Rooms::Closed', 1, {t}, {t}), (11, 'HQ', 'Rooms::Open', 1, {t}, {t});");
        for (room, user, inv) in [(10, 1, "everything"), (10, 2, "everything"), (10, 3, "everything"), (10, 4, "mentions"), (11, 1, "everything"), (11, 2, "everything"), (11, 3, "everything"), (11, 4, "everything")] {
            sql += &format!("INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) VALUES ({room}, {user}, '{inv}', {t}, {t});");
        }
        c.exec(&sql).unwrap();
    }

    fn users(c: &Conn, room: i64, mentionees: &[i64]) -> Vec<i64> {
        candidates(c, room, 1, NOW).unwrap().iter().filter(|c| c.wants(mentionees)).map(|c| c.subscription.user_id).collect()
    }

    #[test]
    fn who_gets_a_push() {
        let (_db, c) = TempDb::with_schema();
        seed(&c);
        // hq: every other member
        assert_eq!(users(&c, 11, &[]), [2, 3, 4]);
        // designers: Jason and JZ (everything); Kevin only when mentioned
        assert_eq!(users(&c, 10, &[]), [2, 3]);
        assert_eq!(users(&c, 10, &[4]), [2, 3, 4]);
        // a mention of the creator or of a non-member adds nobody
        assert_eq!(users(&c, 10, &[1, 99]), [2, 3]);
        // Kevin connected to designers: skipped; a stale connection counts as disconnected
        let recent = time::format(NOW - 5 * US_PER_SEC);
        c.exec(&format!("UPDATE memberships SET connected_at = '{}', connections = 1 WHERE room_id = 10 AND user_id = 4", recent.as_str())).unwrap();
        assert_eq!(users(&c, 10, &[4]), [2, 3]);
        let stale = time::format(NOW - CONNECTION_TTL_US - US_PER_SEC);
        c.exec(&format!("UPDATE memberships SET connected_at = '{}' WHERE room_id = 10 AND user_id = 4", stale.as_str())).unwrap();
        assert_eq!(users(&c, 10, &[4]), [2, 3, 4]);
        // invisible and nothing never get one, mentioned or not
        c.exec("UPDATE memberships SET involvement = 'invisible' WHERE room_id = 10 AND user_id = 4").unwrap();
        assert_eq!(users(&c, 10, &[4]), [2, 3]);
        c.exec("UPDATE memberships SET involvement = 'nothing' WHERE room_id = 10 AND user_id = 2").unwrap();
        assert_eq!(users(&c, 10, &[2]), [3]);
        // every device of a recipient
        c.exec("INSERT INTO push_subscriptions (user_id, endpoint, p256dh_key, auth_key, created_at, updated_at) VALUES (3, 'https://x/2', 'p', 'a', '2025-01-01', '2025-01-01')").unwrap();
        assert_eq!(users(&c, 10, &[]), [3, 3]);
    }

    #[test]
    fn create_touch_find_delete() {
        let (_db, c) = TempDb::with_schema();
        seed(&c);
        let id = create_or_touch(&c, 1, "https://e/new", "k1", "a1", Some("Mozilla/5.0"), NOW).unwrap();
        let again = create_or_touch(&c, 1, "https://e/new", "k1", "a1", Some("Other"), NOW + US_PER_SEC).unwrap();
        assert_eq!(id, again);
        assert_eq!(one_int(&c, "SELECT count(*) FROM push_subscriptions WHERE user_id = 1"), 2);
        let s = find_for_user(&c, 1, id).unwrap().unwrap();
        assert_eq!((s.endpoint.as_str(), s.p256dh_key.as_str(), s.auth_key.as_str(), s.user_agent.as_deref()), ("https://e/new", "k1", "a1", Some("Mozilla/5.0")));
        assert_eq!(
            crate::db::testing::one_text(&c, &format!("SELECT updated_at FROM push_subscriptions WHERE id = {id}")).unwrap(),
            time::format(NOW + US_PER_SEC).as_str()
        );
        // a different key is another row
        assert_ne!(create_or_touch(&c, 1, "https://e/new", "k2", "a1", None, NOW).unwrap(), id);
        assert_eq!(find_for_user(&c, 2, id).unwrap(), None);
        assert_eq!(of_user(&c, 1).unwrap().len(), 3);
        assert_eq!(delete_for_user(&c, 2, id).unwrap(), 0);
        assert_eq!(delete_for_user(&c, 1, id).unwrap(), 1);
        assert_eq!(delete_gone(&c, 102, "https://elsewhere").unwrap(), 0);
        assert_eq!(delete_gone(&c, 102, "https://fcm.googleapis.com/fcm/send/2").unwrap(), 1);
    }

    #[test]
    fn badge_counts_unread_memberships() {
        let (_db, c) = TempDb::with_schema();
        seed(&c);
        assert_eq!(unread_count(&c, 2).unwrap(), 0);
        c.exec("UPDATE memberships SET unread_at = '2025-01-02 00:00:00' WHERE user_id = 2").unwrap();
        assert_eq!(unread_count(&c, 2).unwrap(), 2);
    }
}
