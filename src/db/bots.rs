//! Bots (spec/01 §4.9): users with role bot and a `bot_token`, and their webhook row
//! (`webhooks`, one per bot). Delivering webhooks is `app::webhooks`.

use super::conn::Conn;
use super::error::Result;
use super::stmt::Step;
use super::time;

/// A bot as the administration pages show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bot {
    pub id: i64,
    pub name: String,
    pub bot_token: String,
    pub updated_at: i64,
}

/// Active bots ordered by name (Rails' `User.active_bots.ordered`).
pub fn active(c: &Conn) -> Result<Vec<Bot>> {
    let mut s = c.prepare_cached(
        "SELECT id, name, coalesce(bot_token, ''), updated_at FROM users WHERE role = 2 AND status = 0 ORDER BY name, id",
    )?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push(Bot { id: s.int(0), name: s.string(1)?, bot_token: s.string(2)?, updated_at: s.time(3)? });
    }
    Ok(out)
}

/// The active bot `id`, if it is one.
pub fn find_active(c: &Conn, id: i64) -> Result<Option<Bot>> {
    let mut s = c.prepare_cached(
        "SELECT id, name, coalesce(bot_token, ''), updated_at FROM users WHERE id = ?1 AND role = 2 AND status = 0",
    )?;
    s.bind(1, id)?;
    Ok(if s.row()? { Some(Bot { id: s.int(0), name: s.string(1)?, bot_token: s.string(2)?, updated_at: s.time(3)? }) } else { None })
}

/// The (id, name) of the non-direct rooms bot `id` belongs to, by name: the rooms the
/// bots page offers curl commands for.
pub fn shared_rooms(c: &Conn, id: i64) -> Result<Vec<(i64, String)>> {
    let mut s = c.prepare_cached(
        "SELECT rooms.id, coalesce(rooms.name, '') FROM rooms JOIN memberships ON memberships.room_id = rooms.id \
         WHERE memberships.user_id = ?1 AND rooms.type <> 'Rooms::Direct' ORDER BY rooms.name, rooms.id",
    )?;
    s.bind(1, id)?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push((s.int(0), s.string(1)?));
    }
    Ok(out)
}

/// The webhook URL of bot `id`, if it has a webhook.
pub fn webhook_url(c: &Conn, id: i64) -> Result<Option<String>> {
    let mut s = c.prepare_cached("SELECT url FROM webhooks WHERE user_id = ?1 ORDER BY id LIMIT 1")?;
    s.bind(1, id)?;
    Ok(if s.row()? { s.opt_string(0)? } else { None })
}

/// An active bot of a room with a webhook URL: who a new message there may be delivered to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hooked {
    pub id: i64,
    pub name: String,
    pub bot_token: String,
    pub url: String,
}

/// The active bots that are members of room `room_id` and have a non-blank webhook URL (a
/// blank one, which Rails stores for bots created without a URL, counts as none), by id.
/// Driven from `webhooks`, which is tiny, so a room's size does not matter.
pub fn hooked_in_room(c: &Conn, room_id: i64) -> Result<Vec<Hooked>> {
    let mut s = c.prepare_cached(
        "SELECT users.id, users.name, coalesce(users.bot_token, ''), webhooks.url FROM webhooks \
         JOIN users ON users.id = webhooks.user_id AND users.role = 2 AND users.status = 0 \
         JOIN memberships ON memberships.user_id = users.id AND memberships.room_id = ?1 \
         WHERE trim(coalesce(webhooks.url, '')) <> '' GROUP BY users.id ORDER BY users.id",
    )?;
    s.bind(1, room_id)?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push(Hooked { id: s.int(0), name: s.string(1)?, bot_token: s.string(2)?, url: s.string(3)? });
    }
    Ok(out)
}

/// Sets bot `id`'s webhook to `url`, or deletes it when `url` is `None` or blank (Rails'
/// `update_webhook_url!`): an existing row keeps its id and gets the new URL.
pub fn set_webhook(c: &Conn, id: i64, url: Option<&str>, now: i64) -> Result<()> {
    let ts = time::format(now);
    match url.filter(|u| !u.trim().is_empty()) {
        None => {
            let mut s = c.prepare_cached("DELETE FROM webhooks WHERE user_id = ?1")?;
            s.bind(1, id)?;
            s.run()
        }
        Some(url) => {
            let mut s = c.prepare_cached("UPDATE webhooks SET url = ?2, updated_at = ?3 WHERE user_id = ?1")?;
            s.bind(1, id)?;
            s.bind(2, url)?;
            s.bind(3, ts.as_str())?;
            s.run()?;
            drop(s);
            if c.changes() > 0 {
                return Ok(());
            }
            let mut s = c.prepare_cached("INSERT INTO webhooks (user_id, url, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")?;
            s.bind(1, id)?;
            s.bind(2, url)?;
            s.bind(3, ts.as_str())?;
            s.run()
        }
    }
}

/// Creates a bot (Rails' `create_bot!`): a user with role bot, `bot_token`, the open rooms
/// (through `users::create`), and a webhook row when `webhook_url` was given — even a blank
/// one, as Rails tests only for the key's presence. Returns the new id.
pub fn create(c: &Conn, name: &str, bot_token: &str, webhook_url: Option<&str>, now: i64) -> Result<i64> {
    let nu = super::users::NewUser { name, bot_token: Some(bot_token), role: super::users::ROLE_BOT, ..Default::default() };
    let id = super::users::create(c, &nu, now)?;
    if let Some(url) = webhook_url {
        let ts = time::format(now);
        let mut s = c.prepare_cached("INSERT INTO webhooks (user_id, url, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")?;
        s.bind(1, id)?;
        s.bind(2, url)?;
        s.bind(3, ts.as_str())?;
        s.run()?;
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::rooms::{self, Kind};
    use crate::db::testing::{one_int, user, TempDb, T0};

    #[test]
    fn create_lists_and_finds_active_bots() {
        let (_db, c) = TempDb::with_schema();
        let human = user(&c, "Zed");
        let open = rooms::create_for(&c, Kind::Open, Some("Lobby"), human, &[], T0).unwrap();
        rooms::create_for(&c, Kind::Direct, None, human, &[human], T0).unwrap();
        let b = create(&c, "Bender", "AbCdEf123456", None, T0).unwrap();
        let a = create(&c, "Alpha", "ZyXwVu987654", Some(""), T0).unwrap();
        let names: Vec<String> = active(&c).unwrap().into_iter().map(|b| b.name).collect();
        assert_eq!(names, ["Alpha", "Bender"], "by name, humans left out");
        assert_eq!(find_active(&c, b).unwrap().map(|b| b.bot_token), Some("AbCdEf123456".into()));
        assert_eq!(find_active(&c, human).unwrap(), None);
        assert_eq!(shared_rooms(&c, b).unwrap(), [(open, "Lobby".to_string())]);
        assert_eq!(webhook_url(&c, b).unwrap(), None, "no webhook_url: no row");
        assert_eq!(webhook_url(&c, a).unwrap(), Some(String::new()), "a blank webhook_url still makes a row, as in Rails");
    }

    #[test]
    fn set_webhook_updates_in_place_and_deletes_when_blank() {
        let (_db, c) = TempDb::with_schema();
        let b = create(&c, "Bender", "AbCdEf123456", None, T0).unwrap();
        set_webhook(&c, b, Some("https://a.example/"), T0).unwrap();
        let id = one_int(&c, "SELECT id FROM webhooks");
        set_webhook(&c, b, Some("https://b.example/"), T0).unwrap();
        assert_eq!(one_int(&c, "SELECT id FROM webhooks"), id);
        assert_eq!(webhook_url(&c, b).unwrap().as_deref(), Some("https://b.example/"));
        set_webhook(&c, b, Some("  "), T0).unwrap();
        assert_eq!(one_int(&c, "SELECT count(*) FROM webhooks"), 0);
        set_webhook(&c, b, Some("https://c.example/"), T0).unwrap();
        set_webhook(&c, b, None, T0).unwrap();
        assert_eq!(one_int(&c, "SELECT count(*) FROM webhooks"), 0);
    }

    #[test]
    fn hooked_bots_are_active_members_with_a_url() {
        let (_db, c) = TempDb::with_schema();
        let human = user(&c, "Zed");
        let hooked = create(&c, "Hooked", "Tok1", Some("http://h/1"), T0).unwrap();
        let blank = create(&c, "Blank", "Tok2", Some(" "), T0).unwrap();
        create(&c, "Outside", "Tok3", Some("http://h/3"), T0).unwrap();
        let gone = create(&c, "Gone", "Tok4", Some("http://h/4"), T0).unwrap();
        c.exec(&format!("UPDATE users SET status = 1 WHERE id = {gone}")).unwrap();
        let room = rooms::create_for(&c, Kind::Closed, Some("R"), human, &[human, hooked, blank, gone], T0).unwrap();
        let got = hooked_in_room(&c, room).unwrap();
        assert_eq!(got, [Hooked { id: hooked, name: "Hooked".into(), bot_token: "Tok1".into(), url: "http://h/1".into() }]);
        assert!(hooked_in_room(&c, room + 1000).unwrap().is_empty());
    }
}
