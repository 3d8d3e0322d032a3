//! Login sessions (spec/01 §5): one row per sign-in, found by its token on every request
//! (`auth::session_user`, with its user),
//! refreshed at most once an hour, removed on logout, deactivation and ban.

use super::conn::Conn;
use super::error::Result;
use super::time::{self, US_PER_SEC};

/// `last_active_at` is refreshed when older than this.
pub const ACTIVITY_REFRESH_US: i64 = 3600 * US_PER_SEC;

/// Starts a session for `user_id` with a fresh `token` (24 base58 characters, made by the
/// caller). Returns the new session id.
pub fn create(c: &Conn, user_id: i64, token: &str, ip_address: Option<&str>, user_agent: Option<&str>, now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO sessions (user_id, token, ip_address, user_agent, last_active_at, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?5)",
    )?;
    s.bind(1, user_id)?;
    s.bind(2, token)?;
    s.bind(3, ip_address)?;
    s.bind(4, user_agent)?;
    s.bind(5, ts.as_str())?;
    s.run()?;
    Ok(c.last_insert_rowid())
}

/// Refreshes user agent, IP and `last_active_at` if the last activity is more than an hour
/// old (checked again here, so a racing refresh writes once). Returns whether it wrote.
pub fn resume(c: &Conn, session_id: i64, ip_address: Option<&str>, user_agent: Option<&str>, now: i64) -> Result<bool> {
    let ts = time::format(now);
    let stale = time::format(now - ACTIVITY_REFRESH_US);
    let mut s = c.prepare_cached(
        "UPDATE sessions SET ip_address = ?2, user_agent = ?3, last_active_at = ?4, updated_at = ?4 \
         WHERE id = ?1 AND last_active_at < ?5",
    )?;
    s.bind(1, session_id)?;
    s.bind(2, ip_address)?;
    s.bind(3, user_agent)?;
    s.bind(4, ts.as_str())?;
    s.bind(5, stale.as_str())?;
    s.run()?;
    Ok(c.changes() > 0)
}

/// Logout: deletes that one session. Returns whether it existed.
pub fn destroy(c: &Conn, session_id: i64) -> Result<bool> {
    let mut s = c.prepare_cached("DELETE FROM sessions WHERE id = ?1")?;
    s.bind(1, session_id)?;
    s.run()?;
    Ok(c.changes() > 0)
}

/// Deletes every session of `user_id` (deactivation, ban). Returns how many.
pub fn destroy_all_for_user(c: &Conn, user_id: i64) -> Result<usize> {
    let mut s = c.prepare_cached("DELETE FROM sessions WHERE user_id = ?1")?;
    s.bind(1, user_id)?;
    s.run()?;
    Ok(c.changes() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{one_text, user, TempDb, SEC, T0};

    #[test]
    fn sessions_authenticate_refresh_hourly_and_end() {
        let (_db, c) = TempDb::with_schema();
        let d = user(&c, "David");
        let id = create(&c, d, "AxJs94fteQ5Autv2VrKsH68c", Some("203.0.113.5"), Some("Firefox"), T0).unwrap();
        let a = crate::db::auth::session_user(&c, "AxJs94fteQ5Autv2VrKsH68c").unwrap().unwrap();
        assert_eq!((a.session_id, a.user.id, a.last_active_at), (id, d, T0));
        assert!(crate::db::auth::session_user(&c, "axJs94fteQ5Autv2VrKsH68c").unwrap().is_none());
        assert!(crate::db::auth::session_user(&c, "").unwrap().is_none());
        assert!(!resume(&c, id, Some("198.51.100.1"), Some("Chrome"), T0 + 1800 * SEC).unwrap());
        assert!(resume(&c, id, Some("198.51.100.1"), Some("Chrome"), T0 + 3601 * SEC).unwrap());
        assert_eq!(one_text(&c, &format!("SELECT ip_address || ' ' || user_agent || ' ' || last_active_at FROM sessions WHERE id = {id}")).as_deref(), Some("198.51.100.1 Chrome 2025-12-12 16:43:41"));
        assert!(!resume(&c, id, None, None, T0 + 3602 * SEC).unwrap(), "refreshed once");
        let dup = create(&c, d, "AxJs94fteQ5Autv2VrKsH68c", None, None, T0).unwrap_err();
        assert!(dup.is_constraint());
        create(&c, d, "second", None, None, T0).unwrap();
        assert!(destroy(&c, id).unwrap());
        assert!(!destroy(&c, id).unwrap());
        assert_eq!(destroy_all_for_user(&c, d).unwrap(), 1);
    }
}
