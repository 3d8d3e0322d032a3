//! Memberships: who is in which room, how involved they are, unread and presence state
//! (spec/01 §6.2–§6.5). Plain functions over a `Conn`; writes run on the writer.

use super::conn::Conn;
use super::error::{Error, Result};
use super::stmt::Step;
use super::time::{self, US_PER_SEC};
use libsqlite3_sys as ffi;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A membership counts as connected for this long after its last `connected_at`.
pub const CONNECTION_TTL_US: i64 = 60 * US_PER_SEC;

/// `memberships.involvement`, in the order the UI cycles them for shared rooms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Involvement {
    Mentions,
    Everything,
    Nothing,
    Invisible,
}

impl Involvement {
    /// The stored string.
    pub fn as_str(self) -> &'static str {
        match self {
            Involvement::Mentions => "mentions",
            Involvement::Everything => "everything",
            Involvement::Nothing => "nothing",
            Involvement::Invisible => "invisible",
        }
    }

    /// Parses a stored or submitted value; anything else is `None` (Rails raises → 500).
    pub fn parse(s: &str) -> Option<Involvement> {
        match s {
            "mentions" => Some(Involvement::Mentions),
            "everything" => Some(Involvement::Everything),
            "nothing" => Some(Involvement::Nothing),
            "invisible" => Some(Involvement::Invisible),
            _ => None,
        }
    }
}

/// One membership row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    pub id: i64,
    pub room_id: i64,
    pub user_id: i64,
    /// NULL is possible in old data; it is not "visible" (SQL `!=` excludes NULL).
    pub involvement: Option<Involvement>,
    pub unread_at: Option<i64>,
    pub connected_at: Option<i64>,
    pub connections: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Membership {
    /// `connected_at` within the last CONNECTION_TTL (spec/01 §6.5).
    pub fn is_connected(&self, now: i64) -> bool {
        self.connected_at.is_some_and(|t| t >= now - CONNECTION_TTL_US)
    }
}

const COLUMNS_FIND: &str = "SELECT id, room_id, user_id, involvement, unread_at, connected_at, connections, created_at, updated_at \
     FROM memberships WHERE room_id = ?1 AND user_id = ?2";

/// The membership of `user_id` in `room_id`, if any.
pub fn find(c: &Conn, room_id: i64, user_id: i64) -> Result<Option<Membership>> {
    let mut s = c.prepare_cached(COLUMNS_FIND)?;
    s.bind(1, room_id)?;
    s.bind(2, user_id)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Membership {
        id: s.int(0),
        room_id: s.int(1),
        user_id: s.int(2),
        involvement: s.opt_text(3)?.and_then(Involvement::parse),
        unread_at: s.opt_time(4)?,
        connected_at: s.opt_time(5)?,
        connections: s.int(6),
        created_at: s.time(7)?,
        updated_at: s.time(8)?,
    }))
}

/// True when `user_id` has a membership (any involvement) in `room_id`.
pub fn exists(c: &Conn, room_id: i64, user_id: i64) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT 1 FROM memberships WHERE room_id = ?1 AND user_id = ?2")?;
    s.bind(1, room_id)?;
    s.bind(2, user_id)?;
    s.row()
}

/// Grants `room_id` to each of `user_ids` with `involvement`; existing memberships are left
/// as they are (Rails' insert_all: ON CONFLICT DO NOTHING). Returns how many were added.
pub fn grant(c: &Conn, room_id: i64, user_ids: &[i64], involvement: Involvement, now: i64) -> Result<usize> {
    changed();
    let ts = time::format(now);
    let mut added = 0;
    for &user_id in user_ids {
        let mut s = c.prepare_cached(
            "INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT (room_id, user_id) DO NOTHING",
        )?;
        s.bind(1, room_id)?;
        s.bind(2, user_id)?;
        s.bind(3, involvement.as_str())?;
        s.bind(4, ts.as_str())?;
        s.run()?;
        added += c.changes() as usize;
    }
    Ok(added)
}

/// Grants `room_id` to every active user (bots included): open rooms on creation and on
/// becoming open. Returns how many memberships were added.
pub fn grant_to_all_active(c: &Conn, room_id: i64, involvement: Involvement, now: i64) -> Result<usize> {
    changed();
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) \
         SELECT ?1, id, ?2, ?3, ?3 FROM users WHERE status = 0 ORDER BY id \
         ON CONFLICT (room_id, user_id) DO NOTHING",
    )?;
    s.bind(1, room_id)?;
    s.bind(2, involvement.as_str())?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(c.changes() as usize)
}

/// Removes the memberships of `user_ids` in `room_id`. Returns how many were removed.
/// (The caller force-reconnects those users' cable connections.)
pub fn revoke(c: &Conn, room_id: i64, user_ids: &[i64]) -> Result<usize> {
    changed();
    let mut removed = 0;
    for &user_id in user_ids {
        let mut s = c.prepare_cached("DELETE FROM memberships WHERE room_id = ?1 AND user_id = ?2")?;
        s.bind(1, room_id)?;
        s.bind(2, user_id)?;
        s.run()?;
        removed += c.changes() as usize;
    }
    Ok(removed)
}

/// Closed-room edit: grant to `selected`, revoke from current members not in `selected`.
/// Returns the revoked user ids. Run inside the caller's transaction (a writer job).
pub fn revise(c: &Conn, room_id: i64, selected: &[i64], involvement: Involvement, now: i64) -> Result<Vec<i64>> {
    grant(c, room_id, selected, involvement, now)?;
    let revoked: Vec<i64> = user_ids(c, room_id)?.into_iter().filter(|u| !selected.contains(u)).collect();
    revoke(c, room_id, &revoked)?;
    Ok(revoked)
}

/// Bumped by every write that adds or removes memberships (grant, revoke, a new user's open
/// rooms, deactivation, a room's destruction): the key of `user_ids_cached`.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Called before any statement that inserts or deletes memberships.
pub fn changed() {
    EPOCH.fetch_add(1, Ordering::AcqRel);
}

/// Member ids kept per thread (the writer's, in practice) by `user_ids_cached`, at most this
/// many in all (256 KiB): a room of 5,000 costs 40 KB.
const CACHED_IDS_MAX: usize = 32 * 1024;

struct CachedIds {
    room_id: i64,
    /// (membership epoch, rollbacks, the connection's data_version) when read.
    key: (u64, u64, i64),
    ids: Arc<[i64]>,
}

thread_local! {
    static CACHED: RefCell<Vec<CachedIds>> = const { RefCell::new(Vec::new()) };
}

/// `user_ids`, remembered while no membership was added or removed: every post reads the
/// room's member ids for its unread fan-out, 5,000 index entries for a room of 5,000. The
/// key holds the membership epoch (our writes), the rollback count (an uncommitted read) and
/// `c`'s data_version (another process's commits), so a stale list is never returned.
pub fn user_ids_cached(c: &Conn, room_id: i64) -> Result<Arc<[i64]>> {
    let key = (EPOCH.load(Ordering::Acquire), super::conn::rollbacks(), c.data_version()?);
    if let Some(ids) = CACHED.with_borrow(|v| v.iter().find(|e| e.room_id == room_id && e.key == key).map(|e| e.ids.clone())) {
        return Ok(ids);
    }
    let ids: Arc<[i64]> = user_ids(c, room_id)?.into();
    CACHED.with_borrow_mut(|v| {
        v.retain(|e| e.key == key && e.room_id != room_id);
        let held: usize = v.iter().map(|e| e.ids.len()).sum();
        if held + ids.len() > CACHED_IDS_MAX {
            v.clear();
        }
        if ids.len() <= CACHED_IDS_MAX {
            v.push(CachedIds { room_id, key, ids: ids.clone() });
        }
    });
    Ok(ids)
}

/// User ids of `room_id`'s members, ascending.
pub fn user_ids(c: &Conn, room_id: i64) -> Result<Vec<i64>> {
    let mut s = c.prepare_cached("SELECT user_id FROM memberships WHERE room_id = ?1 ORDER BY user_id")?;
    s.bind(1, room_id)?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push(s.int(0));
    }
    Ok(out)
}

/// Sets the involvement of `user_id` in `room_id`. Returns the previous value, or `None`
/// (and changes nothing) when there is no such membership.
pub fn set_involvement(c: &Conn, room_id: i64, user_id: i64, involvement: Involvement, now: i64) -> Result<Option<Option<Involvement>>> {
    let Some(m) = find(c, room_id, user_id)? else { return Ok(None) };
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE memberships SET involvement = ?2, updated_at = ?3 WHERE id = ?1")?;
    s.bind(1, m.id)?;
    s.bind(2, involvement.as_str())?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(Some(m.involvement))
}

/// After a message is created: every visible, disconnected membership of the room other
/// than the creator's becomes unread as of the message (spec/01 §6.4). Returns the count.
///
/// Rails' `Room#unread_memberships` rewrites every such row (`unread_at` = the new message's
/// time, `updated_at` = now), already-unread ones included: a post to a room of 5,000 rewrote
/// 5,000 rows (1.2 MB of WAL). Nothing in Rails or here reads either value of a membership
/// except as `unread_at IS NOT NULL` (the sidebar's unread class, the push badge count), so
/// only the rows still read are written, which leaves every observable state as Rails' does;
/// they are found through `index_memberships_on_room_id_read` (schema.rs), which holds just
/// the visible read memberships: the rows touched are the ones that change (plus the members
/// connected right now), not the room.
///
/// They are found first and written by id after: an UPDATE that scans the very index its
/// write takes rows out of cannot change rows as it goes, so SQLite gathered their ids in a
/// temporary b-tree on every post (opening it, a page, a savepoint: ~10k instructions), even
/// when, as in a busy room, none is still read.
pub fn mark_unread(c: &Conn, room_id: i64, creator_id: i64, message_created_at: i64, now: i64) -> Result<usize> {
    let stale = time::format(now - CONNECTION_TTL_US);
    let mut ids = Vec::new();
    {
        let mut s = c.prepare_cached(
            "SELECT id FROM memberships \
             WHERE room_id = ?1 AND unread_at IS NULL AND involvement != 'invisible' \
             AND user_id != ?2 AND (connected_at IS NULL OR connected_at < ?3)",
        )?;
        s.bind(1, room_id)?;
        s.bind(2, creator_id)?;
        s.bind(3, stale.as_str())?;
        while s.step()? == Step::Row {
            ids.push(s.int(0));
        }
    }
    if ids.is_empty() {
        return Ok(0);
    }
    let at = time::format(message_created_at);
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE memberships SET unread_at = ?2, updated_at = ?3 WHERE id = ?1")?;
    for id in &ids {
        s.bind(1, *id)?;
        s.bind(2, at.as_str())?;
        s.bind(3, ts.as_str())?;
        s.run()?;
    }
    Ok(ids.len())
}

/// Presence subscribe ("present"): connections + 1 if still connected else 1,
/// connected_at = now, and the room is read (unread_at = NULL). False if no membership.
pub fn present(c: &Conn, room_id: i64, user_id: i64, now: i64) -> Result<bool> {
    let Some(m) = find(c, room_id, user_id)? else { return Ok(false) };
    let connections = if m.is_connected(now) { m.connections + 1 } else { 1 };
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE memberships SET connections = ?2, connected_at = ?3, unread_at = NULL WHERE id = ?1")?;
    s.bind(1, m.id)?;
    s.bind(2, connections)?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(true)
}

/// Presence unsubscribe: one connection fewer (0 if stale); at zero, connected_at = NULL.
/// False if no membership.
pub fn disconnected(c: &Conn, room_id: i64, user_id: i64, now: i64) -> Result<bool> {
    let Some(m) = find(c, room_id, user_id)? else { return Ok(false) };
    let connections = if m.is_connected(now) { m.connections - 1 } else { 0 };
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "UPDATE memberships SET connections = ?2, updated_at = ?3, \
         connected_at = CASE WHEN ?2 < 1 THEN NULL ELSE connected_at END WHERE id = ?1",
    )?;
    s.bind(1, m.id)?;
    s.bind(2, connections)?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(true)
}

/// Periodic presence refresh: when stale, connections restart at 1; connected_at = now.
/// False if no membership.
pub fn refresh(c: &Conn, room_id: i64, user_id: i64, now: i64) -> Result<bool> {
    let Some(m) = find(c, room_id, user_id)? else { return Ok(false) };
    let connections = if m.is_connected(now) { m.connections } else { 1 };
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE memberships SET connections = ?2, connected_at = ?3, updated_at = ?3 WHERE id = ?1")?;
    s.bind(1, m.id)?;
    s.bind(2, connections)?;
    s.bind(3, ts.as_str())?;
    s.run()?;
    Ok(true)
}

/// On boot: every connected membership is reset (connected_at NULL, connections 0).
pub fn disconnect_all(c: &Conn, now: i64) -> Result<usize> {
    let ts = time::format(now);
    let stale = time::format(now - CONNECTION_TTL_US);
    let mut s = c.prepare_cached(
        "UPDATE memberships SET connected_at = NULL, connections = 0, updated_at = ?1 WHERE connected_at >= ?2",
    )?;
    s.bind(1, ts.as_str())?;
    s.bind(2, stale.as_str())?;
    s.run()?;
    Ok(c.changes() as usize)
}

/// One visible membership of a user with its room, for the sidebar.
#[derive(Clone, Copy, Debug)]
pub struct SidebarRoom<'s> {
    pub room_id: i64,
    pub name: Option<&'s str>,
    pub kind: super::rooms::Kind,
    /// The room's `updated_at` for direct rooms, 0 for the others.
    pub room_updated_at: i64,
    pub involvement: Option<Involvement>,
    pub unread: bool,
}

/// Calls `f` for each of `user_id`'s visible memberships, rooms ordered by LOWER(name), id
/// (spec/02 §4.17; the caller sorts direct rooms by `room_updated_at` descending).
///
/// The order is made here rather than by SQLite: `ORDER BY LOWER(r.name)` cannot come from an
/// index on this join, so SQLite sorted the rows through a temporary b-tree (0.9 ms for a user
/// in 1,000 rooms); a sort of the collected rows on the same key costs a tenth of that.
/// SQLite's LOWER folds ASCII only and compares bytes, NULL first: so does `lower_order`.
pub fn sidebar(c: &Conn, user_id: i64, mut f: impl FnMut(&SidebarRoom<'_>) -> Result<()>) -> Result<()> {
    let s = c.prepare_cached(
        "SELECT r.id, r.name, r.type, r.updated_at, m.involvement, m.unread_at IS NOT NULL \
         FROM memberships m JOIN rooms r ON r.id = m.room_id \
         WHERE m.user_id = ?1 AND m.involvement != 'invisible'",
    )?;
    let mut rows: Vec<(Option<String>, SidebarRoom<'static>)> = Vec::new();
    rooms_of(s, user_id, |r| {
        let rest = SidebarRoom {
            room_id: r.room_id,
            name: None,
            kind: r.kind,
            room_updated_at: r.room_updated_at,
            involvement: r.involvement,
            unread: r.unread,
        };
        rows.push((r.name.map(str::to_owned), rest));
        Ok(())
    })?;
    rows.sort_unstable_by(|a, b| lower_order(a.0.as_deref(), b.0.as_deref()).then(a.1.room_id.cmp(&b.1.room_id)));
    for (name, r) in &rows {
        f(&SidebarRoom { name: name.as_deref(), ..*r })?;
    }
    Ok(())
}

/// The order of `LOWER(a)` and `LOWER(b)` as SQLite's built-in computes them (ASCII letters
/// only), compared as bytes, NULL first.
fn lower_order(a: Option<&str>, b: Option<&str>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.bytes().map(|c| c.to_ascii_lowercase()).cmp(b.bytes().map(|c| c.to_ascii_lowercase())),
        _ => a.is_some().cmp(&b.is_some()),
    }
}

/// Like `sidebar` but every membership, invisible ones included (the profile page).
pub fn all_rooms(c: &Conn, user_id: i64, f: impl FnMut(&SidebarRoom<'_>) -> Result<()>) -> Result<()> {
    let s = c.prepare_cached(
        "SELECT r.id, r.name, r.type, r.updated_at, m.involvement, m.unread_at IS NOT NULL \
         FROM memberships m JOIN rooms r ON r.id = m.room_id \
         WHERE m.user_id = ?1 ORDER BY LOWER(r.name), r.id",
    )?;
    rooms_of(s, user_id, f)
}

fn rooms_of(mut s: super::stmt::Stmt<'_>, user_id: i64, mut f: impl FnMut(&SidebarRoom<'_>) -> Result<()>) -> Result<()> {
    s.bind(1, user_id)?;
    while s.step()? == Step::Row {
        let kind = super::rooms::Kind::parse(s.text(2)?)
            .ok_or_else(|| Error::new(ffi::SQLITE_MISMATCH, "unknown rooms.type"))?;
        f(&SidebarRoom {
            room_id: s.int(0),
            name: s.opt_text(1)?,
            kind,
            // Only direct rooms are ordered by it: the others skip the parse.
            room_updated_at: if kind == super::rooms::Kind::Direct { s.time(3)? } else { 0 },
            involvement: s.opt_text(4)?.and_then(Involvement::parse),
            unread: s.int(5) != 0,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::rooms::{self, Kind};
    use crate::db::testing::{user, TempDb, SEC, T0};

    #[test]
    fn grant_keeps_existing_involvement_and_revise_revokes_the_rest() {
        let (_db, c) = TempDb::with_schema();
        let (d, j, k) = (user(&c, "David"), user(&c, "Jason"), user(&c, "Kevin"));
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), d, &[d, j], T0).unwrap();
        set_involvement(&c, room, j, Involvement::Nothing, T0).unwrap();
        assert_eq!(grant(&c, room, &[j, k], Involvement::Mentions, T0).unwrap(), 1);
        assert_eq!(find(&c, room, j).unwrap().unwrap().involvement, Some(Involvement::Nothing));
        assert_eq!(revise(&c, room, &[d, k], Involvement::Mentions, T0).unwrap(), vec![j]);
        assert_eq!(user_ids(&c, room).unwrap(), vec![d, k]);
        assert!(!exists(&c, room, j).unwrap());
        assert_eq!(revoke(&c, room, &[d, d]).unwrap(), 1);
    }

    #[test]
    fn involvement_changes_report_the_previous_value() {
        let (_db, c) = TempDb::with_schema();
        let d = user(&c, "David");
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), d, &[d], T0).unwrap();
        assert_eq!(set_involvement(&c, room, d, Involvement::Invisible, T0).unwrap(), Some(Some(Involvement::Mentions)));
        assert_eq!(set_involvement(&c, room, d, Involvement::Everything, T0).unwrap(), Some(Some(Involvement::Invisible)));
        assert_eq!(set_involvement(&c, room, 999, Involvement::Everything, T0).unwrap(), None);
        assert_eq!(Involvement::parse("loud"), None);
        for i in [Involvement::Mentions, Involvement::Everything, Involvement::Nothing, Involvement::Invisible] {
            assert_eq!(Involvement::parse(i.as_str()), Some(i));
        }
    }

    #[test]
    fn cached_member_ids_follow_grants_revokes_rollbacks_and_other_connections() {
        let (db, c) = TempDb::with_schema();
        let (d, j, k) = (user(&c, "David"), user(&c, "Jason"), user(&c, "Kevin"));
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), d, &[d, j], T0).unwrap();
        assert_eq!(&*user_ids_cached(&c, room).unwrap(), &[d, j]);
        assert_eq!(&*user_ids_cached(&c, room).unwrap(), &[d, j], "remembered");
        grant(&c, room, &[k], Involvement::Mentions, T0).unwrap();
        assert_eq!(&*user_ids_cached(&c, room).unwrap(), &[d, j, k], "after a grant");
        revoke(&c, room, &[j]).unwrap();
        assert_eq!(&*user_ids_cached(&c, room).unwrap(), &[d, k], "after a revoke");
        // Read inside a transaction that is rolled back: not kept.
        let undone = c.transaction(|c| {
            grant(c, room, &[j], Involvement::Mentions, T0)?;
            assert_eq!(user_ids_cached(c, room)?.len(), 3);
            Err::<(), _>(Error::new(ffi::SQLITE_ABORT, "undo"))
        });
        assert!(undone.is_err());
        assert_eq!(&*user_ids_cached(&c, room).unwrap(), &[d, k], "after a rollback");
        // Another connection's commit (another process, a console).
        let other = db.open(crate::db::Mode::ReadWrite);
        other.exec(&format!("INSERT INTO memberships (room_id, user_id, created_at, updated_at) VALUES ({room}, {j}, '2025-01-01 00:00:00', '2025-01-01 00:00:00')")).unwrap();
        assert_eq!(&*user_ids_cached(&c, room).unwrap(), &[d, j, k], "after another connection's insert");
    }

    #[test]
    fn sidebar_order_is_sqlites_lower_name_then_id() {
        let (_db, c) = TempDb::with_schema();
        let d = user(&c, "David");
        for name in ["beta", "Beta", "BETA", "Émile", "émile", "_x", "Zed", "apple", "Apple", "10", "9", "", "ß", "Ärger"] {
            rooms::create_for(&c, Kind::Closed, Some(name), d, &[d], T0).unwrap();
        }
        // Direct rooms have no name: NULL sorts first.
        rooms::create_for(&c, Kind::Direct, None, d, &[d], T0).unwrap();
        let mut ours = Vec::new();
        sidebar(&c, d, |r| {
            ours.push(r.room_id);
            Ok(())
        })
        .unwrap();
        let mut s = c
            .prepare_cached("SELECT r.id FROM memberships m JOIN rooms r ON r.id = m.room_id WHERE m.user_id = ?1 ORDER BY LOWER(r.name), r.id")
            .unwrap();
        s.bind(1, d).unwrap();
        let mut sqlite = Vec::new();
        while s.step().unwrap() == Step::Row {
            sqlite.push(s.int(0));
        }
        assert_eq!(ours, sqlite);
    }

    #[test]
    fn sidebar_lists_visible_rooms_by_lowercase_name() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let b = rooms::create_for(&c, Kind::Closed, Some("banana"), d, &[d, j], T0).unwrap();
        let a = rooms::create_for(&c, Kind::Closed, Some("Apple"), d, &[d], T0).unwrap();
        let hidden = rooms::create_for(&c, Kind::Closed, Some("Cherry"), d, &[d], T0).unwrap();
        let (dm, _) = rooms::find_or_create_direct(&c, d, &[d, j], T0).unwrap();
        set_involvement(&c, hidden, d, Involvement::Invisible, T0).unwrap();
        mark_unread(&c, b, j, T0 + SEC, T0 + SEC).unwrap();
        let mut seen = Vec::new();
        sidebar(&c, d, |r| {
            seen.push((r.room_id, r.name.map(str::to_owned), r.kind, r.unread));
            Ok(())
        })
        .unwrap();
        // NULL names (direct rooms) sort first, as LOWER(NULL) does in SQLite.
        assert_eq!(
            seen,
            vec![
                (dm, None, Kind::Direct, false),
                (a, Some("Apple".into()), Kind::Closed, false),
                (b, Some("banana".into()), Kind::Closed, true),
            ]
        );
        let mut all = Vec::new();
        all_rooms(&c, d, |r| {
            all.push((r.room_id, r.involvement));
            Ok(())
        })
        .unwrap();
        assert_eq!(all.len(), 4);
        assert!(all.contains(&(hidden, Some(Involvement::Invisible))));
    }

    #[test]
    fn presence_counts_connections_and_reads_the_room() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), d, &[d, j], T0).unwrap();
        mark_unread(&c, room, j, T0, T0).unwrap();
        let m = |c: &Conn| find(c, room, d).unwrap().unwrap();
        assert!(m(&c).unread_at.is_some());
        assert!(present(&c, room, d, T0).unwrap());
        assert_eq!((m(&c).connections, m(&c).connected_at, m(&c).unread_at), (1, Some(T0), None));
        present(&c, room, d, T0 + SEC).unwrap();
        assert_eq!(m(&c).connections, 2);
        disconnected(&c, room, d, T0 + 2 * SEC).unwrap();
        assert_eq!((m(&c).connections, m(&c).connected_at), (1, Some(T0 + SEC)));
        disconnected(&c, room, d, T0 + 3 * SEC).unwrap();
        assert_eq!((m(&c).connections, m(&c).connected_at), (0, None));
        // A stale connection restarts at one.
        present(&c, room, d, T0).unwrap();
        present(&c, room, d, T0 + 120 * SEC).unwrap();
        assert_eq!(m(&c).connections, 1);
        refresh(&c, room, d, T0 + 130 * SEC).unwrap();
        assert_eq!((m(&c).connections, m(&c).connected_at), (1, Some(T0 + 130 * SEC)));
        refresh(&c, room, d, T0 + 500 * SEC).unwrap();
        assert_eq!(m(&c).connections, 1);
        assert!(m(&c).is_connected(T0 + 560 * SEC));
        assert!(!m(&c).is_connected(T0 + 561 * SEC));
        assert_eq!(disconnect_all(&c, T0 + 510 * SEC).unwrap(), 1);
        assert_eq!((m(&c).connections, m(&c).connected_at), (0, None));
        assert!(!present(&c, room, 999, T0).unwrap());
    }
}
