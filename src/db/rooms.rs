//! Rooms: open, closed and direct (single-table inheritance on `rooms.type`), their
//! creation with memberships, type changes, direct-room find-or-create, and destruction
//! (spec/01 §6.1–§6.2).

use super::conn::Conn;
use super::error::{Error, Result};
use super::memberships::{self, Involvement};
use super::messages;
use super::stmt::Step;
use super::time;
use libsqlite3_sys as ffi;

/// `rooms.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Open,
    Closed,
    Direct,
}

impl Kind {
    /// The stored STI class name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Open => "Rooms::Open",
            Kind::Closed => "Rooms::Closed",
            Kind::Direct => "Rooms::Direct",
        }
    }

    /// Parses a stored `rooms.type`.
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "Rooms::Open" => Some(Kind::Open),
            "Rooms::Closed" => Some(Kind::Closed),
            "Rooms::Direct" => Some(Kind::Direct),
            _ => None,
        }
    }

    /// Involvement given to memberships granted in rooms of this kind.
    pub fn default_involvement(self) -> Involvement {
        match self {
            Kind::Direct => Involvement::Everything,
            Kind::Open | Kind::Closed => Involvement::Mentions,
        }
    }
}

/// One room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Room {
    pub id: i64,
    pub name: Option<String>,
    pub kind: Kind,
    pub creator_id: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

fn kind_of(s: &str) -> Result<Kind> {
    Kind::parse(s).ok_or_else(|| Error::new(ffi::SQLITE_MISMATCH, format!("unknown rooms.type {s:?}")))
}

/// The room with `id`.
pub fn find(c: &Conn, id: i64) -> Result<Option<Room>> {
    let mut s = c.prepare_cached("SELECT id, name, type, creator_id, created_at, updated_at FROM rooms WHERE id = ?1")?;
    s.bind(1, id)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Room {
        id: s.int(0),
        name: s.opt_string(1)?,
        kind: kind_of(s.text(2)?)?,
        creator_id: s.int(3),
        created_at: s.time(4)?,
        updated_at: s.time(5)?,
    }))
}

/// The room with `id` if `user_id` is a member of it (any involvement): the Rails
/// "set room" lookup through the user's memberships.
pub fn find_for_user(c: &Conn, user_id: i64, id: i64) -> Result<Option<Room>> {
    if !memberships::exists(c, id, user_id)? {
        return Ok(None);
    }
    find(c, id)
}

/// Creates a room of `kind` (name NULL for direct rooms) and grants it to `user_ids`
/// with the kind's default involvement; an open room is also granted to every active
/// user. Run in one transaction (a writer job). Returns the new room id.
pub fn create_for(c: &Conn, kind: Kind, name: Option<&str>, creator_id: i64, user_ids: &[i64], now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO rooms (name, type, creator_id, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
    )?;
    s.bind(1, name)?;
    s.bind(2, kind.as_str())?;
    s.bind(3, creator_id)?;
    s.bind(4, ts.as_str())?;
    s.run()?;
    drop(s);
    let id = c.last_insert_rowid();
    memberships::grant(c, id, user_ids, kind.default_involvement(), now)?;
    if kind == Kind::Open {
        memberships::grant_to_all_active(c, id, kind.default_involvement(), now)?;
    }
    Ok(id)
}

/// Renames a room and converts it between open and closed. A direct room can never change
/// type (Rails' validation: an error, nothing changes); an open or closed room cannot
/// become direct. Becoming open grants the room to every active user. Returns false when
/// there is no such room.
pub fn update(c: &Conn, id: i64, name: Option<&str>, kind: Kind, now: i64) -> Result<bool> {
    let Some(room) = find(c, id)? else { return Ok(false) };
    if room.kind != kind && (room.kind == Kind::Direct || kind == Kind::Direct) {
        return Err(Error::new(ffi::SQLITE_CONSTRAINT, "Type can't be changed for a direct room"));
    }
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE rooms SET name = ?2, type = ?3, updated_at = ?4 WHERE id = ?1")?;
    s.bind(1, id)?;
    s.bind(2, name)?;
    s.bind(3, kind.as_str())?;
    s.bind(4, ts.as_str())?;
    s.run()?;
    drop(s);
    if kind == Kind::Open && room.kind != Kind::Open {
        memberships::grant_to_all_active(c, id, kind.default_involvement(), now)?;
    }
    Ok(true)
}

/// Bumps `updated_at` (a message of the room was created, edited, destroyed or boosted).
pub fn touch(c: &Conn, id: i64, now: i64) -> Result<()> {
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE rooms SET updated_at = ?2 WHERE id = ?1")?;
    s.bind(1, id)?;
    s.bind(2, ts.as_str())?;
    s.run()
}

/// The direct room whose member set is exactly `user_ids` (duplicates ignored), lowest id
/// first, or a new one granted to them. Returns (room id, created).
pub fn find_or_create_direct(c: &Conn, creator_id: i64, user_ids: &[i64], now: i64) -> Result<(i64, bool)> {
    let mut ids = user_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if let Some(id) = find_direct(c, &ids)? {
        return Ok((id, false));
    }
    Ok((create_for(c, Kind::Direct, None, creator_id, &ids, now)?, true))
}

fn find_direct(c: &Conn, sorted_ids: &[i64]) -> Result<Option<i64>> {
    if sorted_ids.is_empty() {
        return Ok(None);
    }
    // The member set is bound as one JSON array (digits only) and expanded by json_each:
    // a room matches when it has as many members as the set and none outside it (members
    // are unique per room, so that is set equality).
    let mut set = String::with_capacity(sorted_ids.len() * 8 + 2);
    set.push('[');
    for (k, id) in sorted_ids.iter().enumerate() {
        if k > 0 {
            set.push(',');
        }
        set.push_str(&id.to_string());
    }
    set.push(']');
    let mut s = c.prepare_cached(
        "SELECT r.id FROM rooms r WHERE r.type = 'Rooms::Direct' \
         AND (SELECT count(*) FROM memberships m WHERE m.room_id = r.id) = ?2 \
         AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.room_id = r.id \
                         AND m.user_id NOT IN (SELECT value FROM json_each(?1))) \
         ORDER BY r.id LIMIT 1",
    )?;
    s.bind(1, set.as_str())?;
    s.bind(2, sorted_ids.len() as i64)?;
    Ok(if s.row()? { Some(s.int(0)) } else { None })
}

/// Destroys a room: its memberships, then every message (with boosts, rich text, search
/// row and attachment with its blobs), then the room. Returns the blob keys whose files the
/// caller deletes after COMMIT, or `None` when there is no such room.
pub fn destroy(c: &Conn, id: i64, now: i64) -> Result<Option<Vec<String>>> {
    if find(c, id)?.is_none() {
        return Ok(None);
    }
    memberships::changed();
    let mut s = c.prepare_cached("DELETE FROM memberships WHERE room_id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    let mut message_ids = Vec::new();
    let mut s = c.prepare_cached("SELECT id FROM messages WHERE room_id = ?1 ORDER BY id")?;
    s.bind(1, id)?;
    while s.step()? == Step::Row {
        message_ids.push(s.int(0));
    }
    drop(s);
    let mut keys = Vec::new();
    for m in message_ids {
        if let Some(mut k) = messages::destroy(c, m, now)? {
            keys.append(&mut k);
        }
    }
    let mut s = c.prepare_cached("DELETE FROM rooms WHERE id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    Ok(Some(keys))
}

/// The id of `user_id`'s room with the highest id (GET /rooms), if any.
pub fn last_for_user(c: &Conn, user_id: i64) -> Result<Option<i64>> {
    let mut s = c.prepare_cached("SELECT max(room_id) FROM memberships WHERE user_id = ?1")?;
    s.bind(1, user_id)?;
    Ok(if s.row()? { s.opt_int(0) } else { None })
}

/// The room created first ("original room"), if any.
pub fn original(c: &Conn) -> Result<Option<i64>> {
    let mut s = c.prepare_cached("SELECT id FROM rooms ORDER BY created_at, id LIMIT 1")?;
    Ok(if s.row()? { Some(s.int(0)) } else { None })
}

/// A member of a room, for names and avatars.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub id: i64,
    pub name: String,
    pub updated_at: i64,
}

/// The users of `room_id` in membership order (any status), as Rails' `room.users`.
pub fn members(c: &Conn, room_id: i64) -> Result<Vec<Member>> {
    let mut s = c.prepare_cached(
        "SELECT u.id, u.name, u.updated_at FROM memberships m JOIN users u ON u.id = m.user_id \
         WHERE m.room_id = ?1 ORDER BY m.id",
    )?;
    s.bind(1, room_id)?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push(Member { id: s.int(0), name: s.string(1)?, updated_at: s.time(2)? });
    }
    Ok(out)
}

/// What the sidebar needs of `user_id`'s direct rooms, read in one query.
pub struct Directs {
    /// The members of each direct room the user sees (visible membership) as (room id,
    /// membership id, member), sorted by room and then membership order, as `members` gives them.
    pub members: Vec<(i64, i64, Member)>,
    /// The distinct users sharing any of the user's direct rooms, the user included (invisible
    /// memberships too), ascending: whom the ping placeholders leave out, and how many they make up for.
    pub partners: Vec<i64>,
}

/// `Directs` of `user_id`: one join instead of a `members` query per ping link and a
/// `count(DISTINCT …)` (which sorted every member of every direct room in a temp b-tree).
pub fn directs_of(c: &Conn, user_id: i64) -> Result<Directs> {
    let mut s = c.prepare_cached(
        "SELECT me.involvement != 'invisible', m.room_id, m.id, m.user_id, u.name, u.updated_at FROM memberships me \
         JOIN rooms r ON r.id = me.room_id AND r.type = 'Rooms::Direct' \
         JOIN memberships m ON m.room_id = me.room_id LEFT JOIN users u ON u.id = m.user_id \
         WHERE me.user_id = ?1",
    )?;
    s.bind(1, user_id)?;
    let mut members = Vec::new();
    let mut partners = Vec::new();
    while s.step()? == Step::Row {
        partners.push(s.int(3));
        // A NULL involvement is not visible, nor is a member whose user row is gone (as in `members`).
        if s.int(0) != 0 && !s.is_null(4) {
            members.push((s.int(1), s.int(2), Member { id: s.int(3), name: s.string(4)?, updated_at: s.time(5)? }));
        }
    }
    members.sort_unstable_by_key(|(room, membership, _)| (*room, *membership));
    partners.sort_unstable();
    partners.dedup();
    Ok(Directs { members, partners })
}

/// Marks `user_id`'s membership of `room_id` read (unread_at = NULL) when it is unread.
/// Returns whether anything changed.
pub fn mark_read(c: &Conn, room_id: i64, user_id: i64) -> Result<bool> {
    let mut s = c.prepare_cached(
        "UPDATE memberships SET unread_at = NULL WHERE room_id = ?1 AND user_id = ?2 AND unread_at IS NOT NULL",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, user_id)?;
    s.run()?;
    Ok(c.changes() > 0)
}

/// Whether `user_id`'s membership of `room_id` is unread.
pub fn is_unread(c: &Conn, room_id: i64, user_id: i64) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT 1 FROM memberships WHERE room_id = ?1 AND user_id = ?2 AND unread_at IS NOT NULL")?;
    s.bind(1, room_id)?;
    s.bind(2, user_id)?;
    s.row()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{one_int, user, TempDb, SEC, T0};
    use crate::db::users;

    #[test]
    fn open_rooms_are_granted_to_every_active_user_now_and_later() {
        let (_db, c) = TempDb::with_schema();
        let (d, j, gone) = (user(&c, "David"), user(&c, "Jason"), user(&c, "Gone"));
        users::deactivate(&c, gone, "uuid", T0).unwrap();
        let open = create_for(&c, Kind::Open, Some("Lobby"), d, &[d], T0).unwrap();
        assert_eq!(memberships::user_ids(&c, open).unwrap(), vec![d, j]);
        let later = user(&c, "Kevin");
        assert_eq!(memberships::user_ids(&c, open).unwrap(), vec![d, j, later]);
        let m = memberships::find(&c, open, later).unwrap().unwrap();
        assert_eq!(m.involvement, Some(Involvement::Mentions));
        let closed = create_for(&c, Kind::Closed, Some("Secret"), d, &[d], T0).unwrap();
        assert_eq!(memberships::user_ids(&c, closed).unwrap(), vec![d]);
        assert!(find_for_user(&c, j, closed).unwrap().is_none());
        assert_eq!(find_for_user(&c, d, closed).unwrap().unwrap().name.as_deref(), Some("Secret"));
    }

    #[test]
    fn open_and_closed_convert_but_direct_never_changes_type() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let room = create_for(&c, Kind::Closed, Some("Secret"), d, &[d], T0).unwrap();
        assert!(update(&c, room, Some("Public"), Kind::Open, T0 + SEC).unwrap());
        let r = find(&c, room).unwrap().unwrap();
        assert_eq!((r.kind, r.name.as_deref(), r.updated_at), (Kind::Open, Some("Public"), T0 + SEC));
        assert_eq!(memberships::user_ids(&c, room).unwrap(), vec![d, j], "becoming open grants everyone");
        assert!(update(&c, room, Some("Secret again"), Kind::Closed, T0).unwrap());
        assert_eq!(memberships::user_ids(&c, room).unwrap(), vec![d, j], "closing revokes nobody");
        let (dm, _) = find_or_create_direct(&c, d, &[d, j], T0).unwrap();
        let e = update(&c, dm, Some("x"), Kind::Open, T0).unwrap_err();
        assert_eq!(e.message, "Type can't be changed for a direct room");
        assert_eq!(find(&c, dm).unwrap().unwrap().kind, Kind::Direct);
        assert!(update(&c, room, None, Kind::Direct, T0).is_err());
        assert!(!update(&c, 12345, None, Kind::Open, T0).unwrap());
    }

    #[test]
    fn direct_rooms_are_singletons_per_member_set() {
        let (_db, c) = TempDb::with_schema();
        let (d, j, k) = (user(&c, "David"), user(&c, "Jason"), user(&c, "Kevin"));
        let (dj, created) = find_or_create_direct(&c, d, &[d, j], T0).unwrap();
        assert!(created);
        let r = find(&c, dj).unwrap().unwrap();
        assert_eq!((r.kind, r.name.clone(), r.creator_id), (Kind::Direct, None, d));
        assert_eq!(memberships::find(&c, dj, j).unwrap().unwrap().involvement, Some(Involvement::Everything));
        assert_eq!(find_or_create_direct(&c, j, &[j, d, j], T0).unwrap(), (dj, false), "same set, any order");
        let (djk, created) = find_or_create_direct(&c, d, &[d, j, k], T0).unwrap();
        assert!(created && djk != dj, "a superset is another room");
        let (me, created) = find_or_create_direct(&c, d, &[d], T0).unwrap();
        assert!(created && me != dj, "self-DM");
        assert_eq!(find_or_create_direct(&c, d, &[d], T0).unwrap(), (me, false));
        assert_eq!(one_int(&c, "SELECT count(*) FROM rooms WHERE type = 'Rooms::Direct'"), 3);
    }

    #[test]
    fn destroy_takes_memberships_and_messages_with_it() {
        let (_db, c) = TempDb::with_schema();
        let d = user(&c, "David");
        let room = create_for(&c, Kind::Open, Some("Doomed"), d, &[], T0).unwrap();
        let keep = create_for(&c, Kind::Open, Some("Kept"), d, &[], T0 + SEC).unwrap();
        for (i, r) in [room, room, keep].into_iter().enumerate() {
            let cid = format!("c{i}");
            messages::create(&c, &messages::NewMessage { room_id: r, creator_id: d, client_message_id: &cid, body: Some("<p>x</p>"), plain_text: "x" }, T0).unwrap();
        }
        assert_eq!(destroy(&c, room, T0).unwrap(), Some(vec![]));
        assert!(find(&c, room).unwrap().is_none());
        assert_eq!(one_int(&c, "SELECT count(*) FROM messages"), 1);
        assert_eq!(one_int(&c, &format!("SELECT count(*) FROM memberships WHERE room_id = {room}")), 0);
        assert_eq!(one_int(&c, "SELECT count(*) FROM message_search_index"), 1);
        assert_eq!(destroy(&c, room, T0).unwrap(), None);
        assert_eq!(last_for_user(&c, d).unwrap(), Some(keep));
        assert_eq!(original(&c).unwrap(), Some(keep));
    }

    #[test]
    fn members_in_membership_order_and_mark_read_only_when_unread() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let (dm, _) = find_or_create_direct(&c, j, &[j, d], T0).unwrap();
        let names: Vec<String> = members(&c, dm).unwrap().into_iter().map(|m| m.name).collect();
        assert_eq!(names, vec!["David", "Jason"]);
        memberships::mark_unread(&c, dm, j, T0, T0).unwrap();
        assert!(is_unread(&c, dm, d).unwrap());
        assert!(mark_read(&c, dm, d).unwrap());
        assert!(!is_unread(&c, dm, d).unwrap());
        assert!(!mark_read(&c, dm, d).unwrap(), "already read: no write");
    }
}
