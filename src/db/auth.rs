//! The lookups of the authentication path and the sign-in pages that the model files do not
//! cover: the signed-in user with their session in one indexed query (every request), whether
//! anyone has signed up yet, the first administrator (the sign-in page's help contact), the
//! room a signed-in user lands in, and forgetting a device's push subscription at sign-out.

use super::conn::Conn;
use super::error::Result;
use super::users::User;

/// A login session joined with its user.
#[derive(Clone, Debug)]
pub struct SessionUser {
    pub session_id: i64,
    /// µs since the epoch.
    pub last_active_at: i64,
    pub user: User,
}

/// The session whose token is `token` and its user, in one lookup on
/// `index_sessions_on_token` and the users primary key. No status check: deactivation and
/// bans delete the sessions (spec/03 §5).
pub fn session_user(c: &Conn, token: &str) -> Result<Option<SessionUser>> {
    let mut s = c.prepare_cached(
        "SELECT s.id, s.last_active_at, u.id, u.name, u.email_address, u.password_digest, u.bio, u.bot_token, \
         u.role, u.status, u.created_at, u.updated_at \
         FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token = ?1",
    )?;
    s.bind(1, token)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(SessionUser {
        session_id: s.int(0),
        last_active_at: s.time(1)?,
        user: User {
            id: s.int(2),
            name: s.string(3)?,
            email_address: s.opt_string(4)?,
            password_digest: s.opt_string(5)?,
            bio: s.opt_string(6)?,
            bot_token: s.opt_string(7)?,
            role: s.int(8),
            status: s.int(9),
            created_at: s.time(10)?,
            updated_at: s.time(11)?,
        },
    }))
}

/// Whether any user exists (the sign-in page sends everyone to first run until one does).
pub fn any_user(c: &Conn) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT EXISTS (SELECT 1 FROM users)")?;
    Ok(s.row()? && s.int(0) != 0)
}

/// Name and e-mail of the first administrator (lowest id), for the "contact" line of the
/// sign-in and join pages.
pub fn first_administrator(c: &Conn) -> Result<Option<(String, Option<String>)>> {
    let mut s = c.prepare_cached("SELECT name, email_address FROM users WHERE role = 1 ORDER BY id LIMIT 1")?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some((s.string(0)?, s.opt_string(1)?)))
}

/// The user's "original room": the earliest-created room they are a member of.
pub fn original_room(c: &Conn, user_id: i64) -> Result<Option<i64>> {
    let mut s = c.prepare_cached(
        "SELECT r.id FROM rooms r JOIN memberships m ON m.room_id = r.id \
         WHERE m.user_id = ?1 ORDER BY r.created_at, r.id LIMIT 1",
    )?;
    s.bind(1, user_id)?;
    Ok(if s.row()? { Some(s.int(0)) } else { None })
}

/// Deletes `user_id`'s push subscriptions registered at `endpoint` (signing out on a device
/// stops its notifications). Returns how many.
pub fn delete_push_subscriptions(c: &Conn, user_id: i64, endpoint: &str) -> Result<usize> {
    let mut s = c.prepare_cached("DELETE FROM push_subscriptions WHERE user_id = ?1 AND endpoint = ?2")?;
    s.bind(1, user_id)?;
    s.bind(2, endpoint)?;
    s.run()?;
    Ok(c.changes() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::TempDb;

    fn seed(conn: &Conn) {
        conn.exec(concat!(
            "INSERT INTO users (id, name, role, status, email_address, created_at, updated_at) VALUES ",
            "(1, 'Member', 0, 0, 'm@example.com', '2025-01-01 00:00:00', '2025-01-01 00:00:00'),",
            "(2, 'David', 1, 0, 'david@example.com', '2025-01-01 00:00:00', '2025-01-02 03:04:05.123456'),",
            "(3, 'Jason', 1, 0, 'jason@example.com', '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
            "INSERT INTO sessions (id, user_id, token, last_active_at, created_at, updated_at) VALUES ",
            "(7, 2, 'AxJs94fteQ5Autv2VrKsH68c', '2025-01-01 00:00:00', '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
            "INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES ",
            "(10, 'Newer', 'Rooms::Open', 2, '2025-02-01 00:00:00', '2025-02-01 00:00:00'),",
            "(11, 'Older', 'Rooms::Closed', 2, '2025-01-05 00:00:00', '2025-01-05 00:00:00'),",
            "(12, 'Oldest', 'Rooms::Closed', 2, '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
            "INSERT INTO memberships (room_id, user_id, created_at, updated_at) VALUES ",
            "(10, 1, '2025-02-01 00:00:00', '2025-02-01 00:00:00'),",
            "(11, 1, '2025-02-01 00:00:00', '2025-02-01 00:00:00'),",
            "(10, 2, '2025-02-01 00:00:00', '2025-02-01 00:00:00');",
        ))
        .unwrap();
    }

    #[test]
    fn session_lookup_joins_the_user() {
        let (_db, conn) = TempDb::with_schema();
        seed(&conn);
        let s = session_user(&conn, "AxJs94fteQ5Autv2VrKsH68c").unwrap().unwrap();
        assert_eq!(s.session_id, 7);
        assert_eq!(s.user.name, "David");
        assert!(s.user.is_administrator());
        assert_eq!(s.user.updated_at, crate::db::time::parse("2025-01-02 03:04:05.123456").unwrap());
        assert!(session_user(&conn, "nope").unwrap().is_none());
    }

    #[test]
    fn sign_in_page_facts() {
        let (_db, conn) = TempDb::with_schema();
        assert!(!any_user(&conn).unwrap());
        assert_eq!(first_administrator(&conn).unwrap(), None);
        seed(&conn);
        assert!(any_user(&conn).unwrap());
        assert_eq!(first_administrator(&conn).unwrap(), Some(("David".into(), Some("david@example.com".into()))));
    }

    #[test]
    fn original_room_is_the_earliest_of_the_users_rooms() {
        let (_db, conn) = TempDb::with_schema();
        seed(&conn);
        assert_eq!(original_room(&conn, 1).unwrap(), Some(11), "not room 12: not a member");
        assert_eq!(original_room(&conn, 2).unwrap(), Some(10));
        assert_eq!(original_room(&conn, 3).unwrap(), None);
    }

    #[test]
    fn push_subscriptions_of_a_device() {
        let (_db, conn) = TempDb::with_schema();
        seed(&conn);
        conn.exec(concat!(
            "INSERT INTO push_subscriptions (user_id, endpoint, created_at, updated_at) VALUES ",
            "(2, 'https://push.example/a', '2025-01-01 00:00:00', '2025-01-01 00:00:00'),",
            "(2, 'https://push.example/b', '2025-01-01 00:00:00', '2025-01-01 00:00:00'),",
            "(1, 'https://push.example/a', '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
        ))
        .unwrap();
        assert_eq!(delete_push_subscriptions(&conn, 2, "https://push.example/a").unwrap(), 1);
        let mut st = conn.prepare("SELECT count(*) FROM push_subscriptions").unwrap();
        assert!(st.row().unwrap());
        assert_eq!(st.int(0), 2);
    }
}
