//! The single account (spec/01 §3) and first run: the account row, its JSON settings,
//! join code, custom styles, and `first_run`, which creates account, admin and first room.

use super::conn::Conn;
use super::error::Result;
use super::memberships::{self, Involvement};
use super::rooms::{self, Kind};
use super::time;
use super::users::{self, NewUser, ROLE_ADMINISTRATOR};

/// Name given to the account on first run.
pub const ACCOUNT_NAME: &str = "Campfire";
/// Name of the open room made on first run.
pub const FIRST_ROOM_NAME: &str = "All Talk";

/// The account row. `settings` stays raw JSON text; `restrict_room_creation` is its only
/// known key, true only for a JSON `true`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub id: i64,
    pub name: String,
    pub join_code: String,
    pub custom_styles: Option<String>,
    pub settings: Option<String>,
    pub restrict_room_creation: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// `settings`' restriction as SQL: only a JSON `true` restricts (unreadable JSON does not).
macro_rules! restricts {
    () => {
        "CASE WHEN json_valid(settings) THEN json_type(settings, '$.restrict_room_creation_to_administrators') = 'true' ELSE 0 END"
    };
}

/// The account ("the first row of accounts"), if first run has happened.
pub fn get(c: &Conn) -> Result<Option<Account>> {
    let mut s = c.prepare_cached(concat!(
        "SELECT id, name, join_code, custom_styles, settings, ",
        restricts!(),
        ", created_at, updated_at FROM accounts ORDER BY id LIMIT 1"
    ))?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Account {
        id: s.int(0),
        name: s.string(1)?,
        join_code: s.string(2)?,
        custom_styles: s.opt_string(3)?,
        settings: s.opt_string(4)?,
        restrict_room_creation: s.int(5) == 1,
        created_at: s.time(6)?,
        updated_at: s.time(7)?,
    }))
}

/// True once an account exists (first run done).
pub fn exists(c: &Conn) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT 1 FROM accounts LIMIT 1")?;
    s.row()
}

fn settings_json(restrict: bool) -> &'static str {
    if restrict {
        r#"{"restrict_room_creation_to_administrators":true}"#
    } else {
        r#"{"restrict_room_creation_to_administrators":false}"#
    }
}

/// Creates the account. A second account is a constraint error (singleton guard).
pub fn create(c: &Conn, name: &str, join_code: &str, now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO accounts (name, join_code, settings, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
    )?;
    s.bind(1, name)?;
    s.bind(2, join_code)?;
    s.bind(3, settings_json(false))?;
    s.bind(4, ts.as_str())?;
    s.run()?;
    Ok(c.last_insert_rowid())
}

/// Account changes: each `Some` field is written (custom styles `Some(None)` clears).
#[derive(Clone, Copy, Debug, Default)]
pub struct Changes<'a> {
    pub name: Option<&'a str>,
    pub join_code: Option<&'a str>,
    pub custom_styles: Option<Option<&'a str>>,
    pub restrict_room_creation: Option<bool>,
}

/// Applies `ch` to the account and bumps `updated_at`; settings are rewritten with their
/// defaults filled in, as Rails does on every save. Returns false when there is no account.
pub fn update(c: &Conn, ch: &Changes<'_>, now: i64) -> Result<bool> {
    let Some(account) = get(c)? else { return Ok(false) };
    let restrict = ch.restrict_room_creation.unwrap_or(account.restrict_room_creation);
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "UPDATE accounts SET name = coalesce(?2, name), join_code = coalesce(?3, join_code), \
         custom_styles = CASE WHEN ?4 THEN ?5 ELSE custom_styles END, settings = ?6, updated_at = ?7 WHERE id = ?1",
    )?;
    s.bind(1, account.id)?;
    s.bind(2, ch.name)?;
    s.bind(3, ch.join_code)?;
    s.bind(4, ch.custom_styles.is_some())?;
    s.bind(5, ch.custom_styles.flatten())?;
    s.bind(6, settings_json(restrict))?;
    s.bind(7, ts.as_str())?;
    s.run()?;
    Ok(true)
}

/// The first administrator's details for `first_run`.
#[derive(Clone, Copy, Debug)]
pub struct FirstRun<'a> {
    pub name: &'a str,
    pub email_address: &'a str,
    pub password_digest: &'a str,
    /// `XXXX-XXXX-XXXX` from [A-Za-z0-9], made by the caller.
    pub join_code: &'a str,
}

/// First run, in Rails' order: the account ("Campfire"), the administrator, the open room
/// "All Talk" created by them, their membership. Run as one writer job: a second account
/// or a duplicate e-mail fails it as a whole. Returns (user id, room id).
pub fn first_run(c: &Conn, f: &FirstRun<'_>, now: i64) -> Result<(i64, i64)> {
    create(c, ACCOUNT_NAME, f.join_code, now)?;
    let user_id = users::create(
        c,
        &NewUser {
            name: f.name,
            email_address: Some(f.email_address),
            password_digest: Some(f.password_digest),
            role: ROLE_ADMINISTRATOR,
            ..NewUser::default()
        },
        now,
    )?;
    let room_id = rooms::create_for(c, Kind::Open, Some(FIRST_ROOM_NAME), user_id, &[], now)?;
    memberships::grant(c, room_id, &[user_id], Involvement::Mentions, now)?;
    Ok((user_id, room_id))
}

/// Whether only administrators may create rooms (`get(c)?.restrict_room_creation`, without
/// reading the rest of the row: the sidebar and the new-room forms ask on every render).
pub fn restricts_room_creation(c: &Conn) -> Result<bool> {
    let mut s = c.prepare_cached(concat!("SELECT ", restricts!(), " FROM accounts ORDER BY id LIMIT 1"))?;
    Ok(s.row()? && s.int(0) == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{one_int, one_text, TempDb, SEC, T0};

    fn run(c: &Conn, email: &str) -> Result<(i64, i64)> {
        c.transaction(|c| first_run(c, &FirstRun { name: "David", email_address: email, password_digest: "$2a$12$h", join_code: "CRMu-l8Ge-KB9B" }, T0))
    }

    #[test]
    fn first_run_creates_account_admin_and_all_talk() {
        let (_db, c) = TempDb::with_schema();
        assert!(!exists(&c).unwrap());
        let (user_id, room_id) = run(&c, "david@example.com").unwrap();
        let a = get(&c).unwrap().unwrap();
        assert_eq!((a.name.as_str(), a.join_code.as_str(), a.restrict_room_creation), ("Campfire", "CRMu-l8Ge-KB9B", false));
        assert_eq!(a.settings.as_deref(), Some(r#"{"restrict_room_creation_to_administrators":false}"#));
        let u = users::find(&c, user_id).unwrap().unwrap();
        assert!(u.is_administrator());
        let r = rooms::find(&c, room_id).unwrap().unwrap();
        assert_eq!((r.kind, r.name.as_deref(), r.creator_id), (Kind::Open, Some("All Talk"), user_id));
        assert!(memberships::exists(&c, room_id, user_id).unwrap());
        // A second first run fails as a whole (singleton guard) and changes nothing.
        let e = run(&c, "other@example.com").unwrap_err();
        assert!(e.is_constraint());
        assert_eq!(one_int(&c, "SELECT count(*) FROM users"), 1);
        assert_eq!(one_int(&c, "SELECT count(*) FROM rooms"), 1);
    }

    #[test]
    fn settings_and_changes() {
        let (_db, c) = TempDb::with_schema();
        assert!(!update(&c, &Changes::default(), T0).unwrap());
        assert!(!restricts_room_creation(&c).unwrap(), "no account yet");
        create(&c, "Campfire", "AAAA-BBBB-CCCC", T0).unwrap();
        update(&c, &Changes { restrict_room_creation: Some(true), custom_styles: Some(Some("body{}")), ..Default::default() }, T0 + SEC).unwrap();
        let a = get(&c).unwrap().unwrap();
        assert!(a.restrict_room_creation);
        assert!(restricts_room_creation(&c).unwrap());
        assert_eq!((a.custom_styles.as_deref(), a.updated_at), (Some("body{}"), T0 + SEC));
        update(&c, &Changes { join_code: Some("DDDD-EEEE-FFFF"), name: Some("HQ"), ..Default::default() }, T0).unwrap();
        let a = get(&c).unwrap().unwrap();
        assert_eq!((a.name.as_str(), a.join_code.as_str(), a.restrict_room_creation), ("HQ", "DDDD-EEEE-FFFF", true));
        // Values other than JSON true, or unreadable JSON, mean "not restricted".
        for raw in [r#"{"restrict_room_creation_to_administrators":"true"}"#, "{}", "not json"] {
            let mut s = c.prepare("UPDATE accounts SET settings = ?1").unwrap();
            s.bind(1, raw).unwrap();
            s.run().unwrap();
            drop(s);
            assert!(!get(&c).unwrap().unwrap().restrict_room_creation, "{raw}");
            assert!(!restricts_room_creation(&c).unwrap(), "{raw}");
        }
        c.exec("UPDATE accounts SET settings = NULL").unwrap();
        update(&c, &Changes::default(), T0).unwrap();
        assert_eq!(one_text(&c, "SELECT settings FROM accounts").as_deref(), Some(r#"{"restrict_room_creation_to_administrators":false}"#), "defaults written on save");
        assert!(create(&c, "Second", "x", T0).unwrap_err().is_constraint());
    }
}
