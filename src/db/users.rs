//! Users (spec/01 §4): lookup, creation (with open-room memberships), profile changes,
//! deactivation, bot authentication, and the lists the UI needs.

use super::conn::Conn;
use super::error::Result;
use super::memberships::Involvement;
use super::rooms::Member;
use super::stmt::{Step, Stmt};
use super::{sessions, time};

pub const ROLE_MEMBER: i64 = 0;
pub const ROLE_ADMINISTRATOR: i64 = 1;
pub const ROLE_BOT: i64 = 2;

pub const STATUS_ACTIVE: i64 = 0;
pub const STATUS_DEACTIVATED: i64 = 1;
pub const STATUS_BANNED: i64 = 2;

/// One user row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub email_address: Option<String>,
    /// bcrypt `$2a$…`; `None` for bots; old rows may hold "".
    pub password_digest: Option<String>,
    pub bio: Option<String>,
    pub bot_token: Option<String>,
    pub role: i64,
    pub status: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl User {
    pub fn is_active(&self) -> bool {
        self.status == STATUS_ACTIVE
    }
    pub fn is_administrator(&self) -> bool {
        self.role == ROLE_ADMINISTRATOR
    }
    pub fn is_bot(&self) -> bool {
        self.role == ROLE_BOT
    }
}

fn user(s: &Stmt<'_>) -> Result<User> {
    Ok(User {
        id: s.int(0),
        name: s.string(1)?,
        email_address: s.opt_string(2)?,
        password_digest: s.opt_string(3)?,
        bio: s.opt_string(4)?,
        bot_token: s.opt_string(5)?,
        role: s.int(6),
        status: s.int(7),
        created_at: s.time(8)?,
        updated_at: s.time(9)?,
    })
}

/// The user with `id`.
pub fn find(c: &Conn, id: i64) -> Result<Option<User>> {
    let mut s = c.prepare_cached(
        "SELECT id, name, email_address, password_digest, bio, bot_token, role, status, created_at, updated_at FROM users WHERE id = ?1",
    )?;
    s.bind(1, id)?;
    if s.row()? { user(&s).map(Some) } else { Ok(None) }
}

/// The user's `updated_at` (µs), or None when there is no such user: what a cached message
/// partial is checked against, without reading the rest of the row.
pub fn updated_at(c: &Conn, id: i64) -> Result<Option<i64>> {
    let mut s = c.prepare_cached("SELECT updated_at FROM users WHERE id = ?1")?;
    s.bind(1, id)?;
    if s.row()? { s.time(0).map(Some) } else { Ok(None) }
}

/// The user whose e-mail is exactly `email` (case-sensitive, no normalisation, as Rails).
pub fn find_by_email(c: &Conn, email: &str) -> Result<Option<User>> {
    let mut s = c.prepare_cached(
        "SELECT id, name, email_address, password_digest, bio, bot_token, role, status, created_at, updated_at FROM users WHERE email_address = ?1",
    )?;
    s.bind(1, email)?;
    if s.row()? { user(&s).map(Some) } else { Ok(None) }
}

/// The active bot for a bot key `"<id>-<token>"` (extra `-` parts ignored; a missing or
/// non-numeric part never matches).
pub fn authenticate_bot(c: &Conn, bot_key: &str) -> Result<Option<User>> {
    let mut parts = bot_key.split('-');
    let (Some(id), Some(token)) = (parts.next(), parts.next()) else { return Ok(None) };
    let Ok(id) = id.parse::<i64>() else { return Ok(None) };
    let mut s = c.prepare_cached(
        "SELECT id, name, email_address, password_digest, bio, bot_token, role, status, created_at, updated_at FROM users \
         WHERE id = ?1 AND bot_token = ?2 AND role = 2 AND status = 0",
    )?;
    s.bind(1, id)?;
    s.bind(2, token)?;
    if s.row()? { user(&s).map(Some) } else { Ok(None) }
}

/// A user to create.
#[derive(Clone, Copy, Debug, Default)]
pub struct NewUser<'a> {
    pub name: &'a str,
    pub email_address: Option<&'a str>,
    pub password_digest: Option<&'a str>,
    pub bio: Option<&'a str>,
    pub bot_token: Option<&'a str>,
    pub role: i64,
}

/// Creates a user and grants them every open room (involvement `mentions`), as Rails'
/// after-create callback does. A duplicate e-mail or bot token is a constraint error.
/// Returns the new id.
pub fn create(c: &Conn, u: &NewUser<'_>, now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO users (name, email_address, password_digest, bio, bot_token, role, status, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, ?7, ?7)",
    )?;
    s.bind(1, u.name)?;
    s.bind(2, u.email_address)?;
    s.bind(3, u.password_digest)?;
    s.bind(4, u.bio)?;
    s.bind(5, u.bot_token)?;
    s.bind(6, u.role)?;
    s.bind(7, ts.as_str())?;
    s.run()?;
    drop(s);
    let id = c.last_insert_rowid();
    super::memberships::changed();
    let mut s = c.prepare_cached(
        "INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) \
         SELECT id, ?1, ?2, ?3, ?3 FROM rooms WHERE type = 'Rooms::Open' ORDER BY id \
         ON CONFLICT (room_id, user_id) DO NOTHING",
    )?;
    s.bind(1, id)?;
    s.bind(2, Involvement::Mentions.as_str())?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(id)
}

/// Profile changes: each `Some` field is written; `password_digest: Some(None)` clears it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Changes<'a> {
    pub name: Option<&'a str>,
    pub email_address: Option<Option<&'a str>>,
    pub password_digest: Option<Option<&'a str>>,
    pub bio: Option<Option<&'a str>>,
    pub role: Option<i64>,
    pub bot_token: Option<Option<&'a str>>,
}

/// Applies `ch` to user `id` and bumps `updated_at`. Returns false when no such user.
pub fn update(c: &Conn, id: i64, ch: &Changes<'_>, now: i64) -> Result<bool> {
    let ts = time::format(now);
    // One statement for every combination: a flag per column says whether to write it.
    let mut s = c.prepare_cached(
        "UPDATE users SET \
         name = CASE WHEN ?2 THEN ?3 ELSE name END, \
         email_address = CASE WHEN ?4 THEN ?5 ELSE email_address END, \
         password_digest = CASE WHEN ?6 THEN ?7 ELSE password_digest END, \
         bio = CASE WHEN ?8 THEN ?9 ELSE bio END, \
         role = CASE WHEN ?10 THEN ?11 ELSE role END, \
         bot_token = CASE WHEN ?12 THEN ?13 ELSE bot_token END, \
         updated_at = ?14 WHERE id = ?1",
    )?;
    s.bind(1, id)?;
    s.bind(2, ch.name.is_some())?;
    s.bind(3, ch.name)?;
    s.bind(4, ch.email_address.is_some())?;
    s.bind(5, ch.email_address.flatten())?;
    s.bind(6, ch.password_digest.is_some())?;
    s.bind(7, ch.password_digest.flatten())?;
    s.bind(8, ch.bio.is_some())?;
    s.bind(9, ch.bio.flatten())?;
    s.bind(10, ch.role.is_some())?;
    s.bind(11, ch.role)?;
    s.bind(12, ch.bot_token.is_some())?;
    s.bind(13, ch.bot_token.flatten())?;
    s.bind(14, ts.as_str())?;
    s.run()?;
    Ok(c.changes() > 0)
}

/// Deactivates a user (spec/01 §4.4): memberships in non-direct rooms, push subscriptions,
/// searches and sessions are deleted; status = deactivated; every `@` of the e-mail
/// becomes `-deactivated-<uuid>@` (`uuid` made by the caller). The caller disconnects the
/// user's cable connections. Returns false when no such user.
pub fn deactivate(c: &Conn, id: i64, uuid: &str, now: i64) -> Result<bool> {
    let ts = time::format(now);
    super::memberships::changed();
    let mut s = c.prepare_cached(
        "DELETE FROM memberships WHERE user_id = ?1 AND room_id IN (SELECT id FROM rooms WHERE type != 'Rooms::Direct')",
    )?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    for sql in ["DELETE FROM push_subscriptions WHERE user_id = ?1", "DELETE FROM searches WHERE user_id = ?1"] {
        let mut s = c.prepare_cached(sql)?;
        s.bind(1, id)?;
        s.run()?;
    }
    sessions::destroy_all_for_user(c, id)?;
    let mut s = c.prepare_cached(
        "UPDATE users SET status = 1, email_address = replace(email_address, '@', '-deactivated-' || ?2 || '@'), \
         updated_at = ?3 WHERE id = ?1",
    )?;
    s.bind(1, id)?;
    s.bind(2, uuid)?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(c.changes() > 0)
}

/// A user borrowed from a list query (valid during the callback only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserRow<'s> {
    pub id: i64,
    pub name: &'s str,
    pub role: i64,
    pub status: i64,
}

/// Active users (bots included) whose name contains `query` (SQLite LIKE: ASCII case-
/// insensitive; `%` and `_` in the query act as wildcards, as in Rails), members of
/// `room_id` when given, ordered by LOWER(name); `limit`/`offset` page it. Returns the
/// total number of matches (for X-Total-Count).
pub fn autocomplete(
    c: &Conn,
    room_id: Option<i64>,
    query: &str,
    limit: i64,
    offset: i64,
    mut f: impl FnMut(&UserRow<'_>) -> Result<()>,
) -> Result<i64> {
    let mut s = c.prepare_cached(
        "SELECT u.id, u.name, u.role, u.status, count(*) OVER () FROM users u \
         WHERE u.status = 0 AND u.name LIKE '%' || ?2 || '%' \
         AND (?1 IS NULL OR u.id IN (SELECT user_id FROM memberships WHERE room_id = ?1)) \
         ORDER BY LOWER(u.name), u.id LIMIT ?3 OFFSET ?4",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, query)?;
    s.bind(3, limit)?;
    s.bind(4, offset)?;
    let mut total = 0;
    while s.step()? == Step::Row {
        total = s.int(4);
        f(&UserRow { id: s.int(0), name: s.text(1)?, role: s.int(2), status: s.int(3) })?;
    }
    if total == 0 && offset > 0 {
        // Past the last page the window count is not seen; count separately.
        drop(s);
        let mut s = c.prepare_cached(
            "SELECT count(*) FROM users u WHERE u.status = 0 AND u.name LIKE '%' || ?2 || '%' \
             AND (?1 IS NULL OR u.id IN (SELECT user_id FROM memberships WHERE room_id = ?1))",
        )?;
        s.bind(1, room_id)?;
        s.bind(2, query)?;
        if s.row()? {
            total = s.int(0);
        }
    }
    Ok(total)
}

/// Active users ordered by LOWER(name) (forms listing people to add to a room).
pub fn active_ordered(c: &Conn, mut f: impl FnMut(&UserRow<'_>) -> Result<()>) -> Result<usize> {
    let mut s = c.prepare_cached("SELECT id, name, role, status FROM users WHERE status = 0 ORDER BY LOWER(name), id")?;
    let mut n = 0;
    while s.step()? == Step::Row {
        f(&UserRow { id: s.int(0), name: s.text(1)?, role: s.int(2), status: s.int(3) })?;
        n += 1;
    }
    Ok(n)
}

/// Sidebar placeholders (spec/02 §4.17): active users other than `user_id` who share no
/// direct room with them (`partners`, sorted: `rooms::directs_of`), oldest account first, at
/// most `limit`. The users are walked in `index_users_on_created_at`'s order and the partners
/// skipped here, which reads `limit` plus at most `partners.len()` rows: a `NOT IN` subquery
/// instead built a temporary b-tree of the partners on every sidebar.
pub fn placeholders(c: &Conn, user_id: i64, partners: &[i64], limit: i64) -> Result<Vec<Member>> {
    let mut people = Vec::new();
    if limit <= 0 {
        return Ok(people);
    }
    let mut s = c.prepare_cached(
        "SELECT id, name, updated_at FROM users WHERE status = 0 AND id != ?1 ORDER BY created_at, id",
    )?;
    s.bind(1, user_id)?;
    while (people.len() as i64) < limit && s.step()? == Step::Row {
        if partners.binary_search(&s.int(0)).is_err() {
            people.push(Member { id: s.int(0), name: s.string(1)?, updated_at: s.time(2)? });
        }
    }
    Ok(people)
}

/// A person on the account settings page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Person {
    pub id: i64,
    pub name: String,
    pub role: i64,
    pub status: i64,
    pub updated_at: i64,
}

/// People (no bots) for account settings, by LOWER(name): active ones, and banned ones too
/// when `with_banned` (administrators see them); `limit`/`offset` page it.
pub fn account_people(c: &Conn, with_banned: bool, limit: i64, offset: i64) -> Result<Vec<Person>> {
    let mut s = c.prepare_cached(
        "SELECT id, name, role, status, updated_at FROM users \
         WHERE role != 2 AND (status = 0 OR (?1 AND status = 2)) ORDER BY LOWER(name), id LIMIT ?2 OFFSET ?3",
    )?;
    s.bind(1, with_banned)?;
    s.bind(2, limit)?;
    s.bind(3, offset)?;
    let mut people = Vec::new();
    while s.step()? == Step::Row {
        people.push(Person { id: s.int(0), name: s.string(1)?, role: s.int(2), status: s.int(3), updated_at: s.time(4)? });
    }
    Ok(people)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::rooms::{self, Kind};
    use crate::db::testing::{one_int, user, TempDb, SEC, T0};
    use crate::db::{memberships, searches};

    #[test]
    fn create_find_and_exact_email_lookup() {
        let (_db, c) = TempDb::with_schema();
        let open = rooms::create_for(&c, Kind::Open, Some("All Talk"), 1, &[], T0).unwrap();
        let id = create(&c, &NewUser { name: "Jean-Luc", email_address: Some("jl@example.com"), bio: Some("Captain"), ..Default::default() }, T0).unwrap();
        let u = find(&c, id).unwrap().unwrap();
        assert_eq!((u.name.as_str(), u.bio.as_deref(), u.role, u.status), ("Jean-Luc", Some("Captain"), ROLE_MEMBER, STATUS_ACTIVE));
        assert_eq!(u.password_digest, None);
        assert!(u.is_active() && !u.is_administrator() && !u.is_bot());
        assert_eq!(find_by_email(&c, "jl@example.com").unwrap().map(|u| u.id), Some(id));
        assert_eq!(find_by_email(&c, "JL@example.com").unwrap(), None, "no normalisation");
        assert!(memberships::exists(&c, open, id).unwrap(), "granted the open rooms");
        let dup = create(&c, &NewUser { name: "Other", email_address: Some("jl@example.com"), ..Default::default() }, T0).unwrap_err();
        assert!(dup.is_constraint());
        assert!(find(&c, 999).unwrap().is_none());
    }

    #[test]
    fn update_writes_only_what_is_given() {
        let (_db, c) = TempDb::with_schema();
        let id = user(&c, "David");
        assert!(update(&c, id, &Changes { bio: Some(Some("hi")), ..Default::default() }, T0 + SEC).unwrap());
        let u = find(&c, id).unwrap().unwrap();
        assert_eq!((u.name.as_str(), u.bio.as_deref(), u.password_digest.as_deref(), u.updated_at), ("David", Some("hi"), Some("$2a$12$x"), T0 + SEC));
        update(&c, id, &Changes { name: Some("Dave"), password_digest: Some(None), role: Some(ROLE_ADMINISTRATOR), ..Default::default() }, T0).unwrap();
        let u = find(&c, id).unwrap().unwrap();
        assert_eq!((u.name.as_str(), u.bio.as_deref(), u.password_digest, u.role), ("Dave", Some("hi"), None, ROLE_ADMINISTRATOR));
        assert!(!update(&c, 999, &Changes::default(), T0).unwrap());
    }

    #[test]
    fn deactivation_frees_the_email_and_keeps_direct_rooms() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let shared = rooms::create_for(&c, Kind::Open, Some("All"), d, &[], T0).unwrap();
        let (dm, _) = rooms::find_or_create_direct(&c, d, &[d, j], T0).unwrap();
        crate::db::sessions::create(&c, d, "tok", None, None, T0).unwrap();
        searches::record(&c, d, "eels", T0).unwrap();
        c.exec(&format!("INSERT INTO push_subscriptions (user_id, endpoint, created_at, updated_at) VALUES ({d}, 'e', '2025-01-01 00:00:00', '2025-01-01 00:00:00')")).unwrap();
        assert!(deactivate(&c, d, "2e7de450-0000-4000-8000-000000000000", T0).unwrap());
        let u = find(&c, d).unwrap().unwrap();
        assert_eq!(u.status, STATUS_DEACTIVATED);
        assert_eq!(u.email_address.as_deref(), Some("david-deactivated-2e7de450-0000-4000-8000-000000000000@example.com"));
        assert!(!memberships::exists(&c, shared, d).unwrap());
        assert!(memberships::exists(&c, dm, d).unwrap());
        for table in ["sessions", "searches", "push_subscriptions"] {
            assert_eq!(one_int(&c, &format!("SELECT count(*) FROM {table} WHERE user_id = {d}")), 0, "{table}");
        }
        // The address is free again.
        create(&c, &NewUser { name: "New David", email_address: Some("david@example.com"), ..Default::default() }, T0).unwrap();
        // NULL e-mails stay NULL.
        let bot = create(&c, &NewUser { name: "Bot", bot_token: Some("tok123456789"), role: ROLE_BOT, ..Default::default() }, T0).unwrap();
        deactivate(&c, bot, "u", T0).unwrap();
        assert_eq!(find(&c, bot).unwrap().unwrap().email_address, None);
    }

    #[test]
    fn bot_keys_authenticate_active_bots_only() {
        let (_db, c) = TempDb::with_schema();
        let bot = create(&c, &NewUser { name: "Bender", bot_token: Some("AbCdEf123456"), role: ROLE_BOT, ..Default::default() }, T0).unwrap();
        let human = create(&c, &NewUser { name: "Hu", bot_token: Some("Human1234567"), ..Default::default() }, T0).unwrap();
        let key = format!("{bot}-AbCdEf123456");
        assert_eq!(authenticate_bot(&c, &key).unwrap().map(|u| u.id), Some(bot));
        assert_eq!(authenticate_bot(&c, &format!("{key}-extra")).unwrap().map(|u| u.id), Some(bot));
        for bad in [format!("{bot}-wrong"), format!("{bot}"), format!("{bot}-"), "x-AbCdEf123456".to_string(), String::new(), format!("{human}-Human1234567")] {
            assert_eq!(authenticate_bot(&c, &bad).unwrap(), None, "{bad}");
        }
        deactivate(&c, bot, "u", T0).unwrap();
        assert_eq!(authenticate_bot(&c, &key).unwrap(), None);
    }

    #[test]
    fn autocomplete_filters_orders_and_pages() {
        let (_db, c) = TempDb::with_schema();
        let names = ["bob", "Alice", "alfred", "Zed", "al_x"];
        let ids: Vec<i64> = names.iter().map(|n| user(&c, n)).collect();
        deactivate(&c, ids[3], "u", T0).unwrap();
        let collect = |room: Option<i64>, q: &str, limit: i64, offset: i64| {
            let mut got = Vec::new();
            let total = autocomplete(&c, room, q, limit, offset, |u| {
                got.push(u.name.to_owned());
                Ok(())
            })
            .unwrap();
            (total, got)
        };
        assert_eq!(collect(None, "", 20, 0), (4, vec!["al_x".into(), "alfred".into(), "Alice".into(), "bob".into()]));
        assert_eq!(collect(None, "AL", 20, 0).1, vec!["al_x", "alfred", "Alice"], "LIKE is ASCII case-insensitive");
        assert_eq!(collect(None, "l_", 20, 0).1, vec!["al_x", "alfred", "Alice"], "_ is a wildcard, as in Rails");
        assert_eq!(collect(None, "", 2, 2), (4, vec!["Alice".into(), "bob".into()]));
        assert_eq!(collect(None, "", 2, 10), (4, vec![]));
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), ids[0], &[ids[0], ids[1]], T0).unwrap();
        assert_eq!(collect(Some(room), "", 20, 0), (2, vec!["Alice".into(), "bob".into()]));
    }

    #[test]
    fn sidebar_placeholders_exclude_direct_partners() {
        let (_db, c) = TempDb::with_schema();
        let (d, j, k, bot) = (user(&c, "David"), user(&c, "Jason"), user(&c, "Kevin"), user(&c, "Bot"));
        deactivate(&c, bot, "u", T0).unwrap();
        assert_eq!(rooms::directs_of(&c, d).unwrap().partners, Vec::<i64>::new());
        rooms::find_or_create_direct(&c, d, &[d, j], T0).unwrap();
        let partners = rooms::directs_of(&c, d).unwrap().partners;
        assert_eq!(partners, vec![d, j]);
        let ids = |limit| placeholders(&c, d, &partners, limit).unwrap().iter().map(|u| u.id).collect::<Vec<_>>();
        assert_eq!(ids(20), vec![k]);
        assert_eq!(ids(0), Vec::<i64>::new());
        // Oldest account first, at most `limit`, partners skipped wherever they fall.
        let (l, m) = (user(&c, "Lena"), user(&c, "Mo"));
        assert_eq!(ids(20), vec![k, l, m]);
        assert_eq!(ids(2), vec![k, l]);
        assert_eq!(placeholders(&c, d, &[], 20).unwrap().iter().map(|u| u.id).collect::<Vec<_>>(), vec![j, k, l, m]);
        let mut all = Vec::new();
        active_ordered(&c, |u| {
            all.push(u.name.to_owned());
            Ok(())
        })
        .unwrap();
        assert_eq!(all, vec!["David", "Jason", "Kevin", "Lena", "Mo"]);
    }
}
