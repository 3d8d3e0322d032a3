//! Bans (spec/01 §4.5): banning a user bans the public IPs of their sessions, ends the
//! sessions and marks the user banned; `is_banned` is an exact string match on the IP.

use super::conn::Conn;
use super::error::Result;
use super::stmt::Step;
use super::users::{STATUS_ACTIVE, STATUS_BANNED};
use super::{sessions, time};
use std::net::IpAddr;

/// Why Rails' validation refuses to ban an address ("cannot be a private or internal IP
/// address", "is not a valid IP address").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// "cannot be a private or internal IP address"
    PrivateAddress,
    /// "is not a valid IP address"
    InvalidAddress,
}

/// True when a ban row has exactly this `ip_address`.
pub fn is_banned(c: &Conn, ip_address: &str) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT 1 FROM bans WHERE ip_address = ?1 LIMIT 1")?;
    s.bind(1, ip_address)?;
    s.row()
}

/// Rails' Ban validation: a parseable address that is not loopback, private or link-local.
pub fn check_address(ip: &str) -> std::result::Result<(), Refused> {
    let addr: IpAddr = ip.trim().parse().map_err(|_| Refused::InvalidAddress)?;
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 => v4,
    };
    let internal = match addr {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_link_local(),
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            v6.is_loopback() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
    };
    if internal {
        Err(Refused::PrivateAddress)
    } else {
        Ok(())
    }
}

/// The distinct non-blank addresses `user_id`'s sessions came from, oldest session first.
pub fn session_addresses(c: &Conn, user_id: i64) -> Result<Vec<String>> {
    let mut ips: Vec<String> = Vec::new();
    let mut s = c.prepare_cached(
        "SELECT DISTINCT ip_address FROM sessions WHERE user_id = ?1 AND ip_address IS NOT NULL AND trim(ip_address) != '' ORDER BY id",
    )?;
    s.bind(1, user_id)?;
    while s.step()? == Step::Row {
        ips.push(s.string(0)?);
    }
    Ok(ips)
}

/// Bans `user_id`: one ban per distinct public session IP, all sessions deleted, status =
/// banned. Addresses that Rails' validation refuses (internal or invalid, `check_address`)
/// are left out. Rails refuses the whole ban then (422), which leaves an administrator whose
/// people reach the server through a proxy or a LAN no way to ban anyone; here the person is
/// banned and only those addresses stay open (banning a shared private address would lock out
/// everyone behind it). The caller disconnects cable connections and removes the user's
/// messages (`messages::destroy` for each of `message_ids`).
pub fn ban(c: &Conn, user_id: i64, now: i64) -> Result<()> {
    let ts = time::format(now);
    for ip in session_addresses(c, user_id)? {
        if check_address(&ip).is_err() {
            continue;
        }
        let mut s = c.prepare_cached("INSERT INTO bans (user_id, ip_address, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")?;
        s.bind(1, user_id)?;
        s.bind(2, ip.as_str())?;
        s.bind(3, ts.as_str())?;
        s.run()?;
    }
    sessions::destroy_all_for_user(c, user_id)?;
    set_status(c, user_id, STATUS_BANNED, now)
}

/// Unbans `user_id`: their bans are deleted and status is active again (sessions are not
/// restored).
pub fn unban(c: &Conn, user_id: i64, now: i64) -> Result<()> {
    let mut s = c.prepare_cached("DELETE FROM bans WHERE user_id = ?1")?;
    s.bind(1, user_id)?;
    s.run()?;
    drop(s);
    set_status(c, user_id, STATUS_ACTIVE, now)
}

fn set_status(c: &Conn, user_id: i64, status: i64, now: i64) -> Result<()> {
    let ts = time::format(now);
    let mut s = c.prepare_cached("UPDATE users SET status = ?2, updated_at = ?3 WHERE id = ?1")?;
    s.bind(1, user_id)?;
    s.bind(2, status)?;
    s.bind(3, ts.as_str())?;
    s.run()
}

/// Ids of every message by `user_id` (for removing a banned user's content), oldest first.
pub fn message_ids(c: &Conn, user_id: i64) -> Result<Vec<i64>> {
    let mut s = c.prepare_cached("SELECT id FROM messages WHERE creator_id = ?1 ORDER BY created_at, id")?;
    s.bind(1, user_id)?;
    let mut out = Vec::new();
    while s.step()? == Step::Row {
        out.push(s.int(0));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{one_int, user, TempDb, T0};
    use crate::db::users;

    #[test]
    fn address_rules_match_rails() {
        for ok in ["203.0.113.9", "8.8.8.8", "2001:db8::1", "172.32.0.1", "::ffff:8.8.8.8"] {
            assert_eq!(check_address(ok), Ok(()), "{ok}");
        }
        for private in ["127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.1.1", "::1", "fc00::1", "fd12::1", "fe80::1", "::ffff:10.0.0.1"] {
            assert_eq!(check_address(private), Err(Refused::PrivateAddress), "{private}");
        }
        for bad in ["", "nope", "1.2.3", "300.1.1.1"] {
            assert_eq!(check_address(bad), Err(Refused::InvalidAddress), "{bad}");
        }
    }

    #[test]
    fn ban_and_unban() {
        let (_db, c) = TempDb::with_schema();
        let d = user(&c, "David");
        for (tok, ip) in [("t1", Some("203.0.113.9")), ("t2", Some("203.0.113.9")), ("t3", Some("198.51.100.7")), ("t4", Some("")), ("t5", None)] {
            sessions::create(&c, d, tok, ip, None, T0).unwrap();
        }
        ban(&c, d, T0).unwrap();
        assert_eq!(one_int(&c, "SELECT count(*) FROM bans"), 2);
        assert!(is_banned(&c, "203.0.113.9").unwrap());
        assert!(is_banned(&c, "198.51.100.7").unwrap());
        assert!(!is_banned(&c, "203.0.113.90").unwrap());
        assert_eq!(one_int(&c, "SELECT count(*) FROM sessions"), 0);
        assert_eq!(users::find(&c, d).unwrap().unwrap().status, STATUS_BANNED);
        unban(&c, d, T0).unwrap();
        assert_eq!(one_int(&c, "SELECT count(*) FROM bans"), 0);
        assert_eq!(users::find(&c, d).unwrap().unwrap().status, STATUS_ACTIVE);
    }

    #[test]
    fn a_private_session_address_is_left_out_of_the_ban() {
        let (_db, c) = TempDb::with_schema();
        let d = user(&c, "David");
        sessions::create(&c, d, "t1", Some("203.0.113.9"), None, T0).unwrap();
        sessions::create(&c, d, "t2", Some("192.168.0.4"), None, T0).unwrap();
        sessions::create(&c, d, "t3", Some("not an address"), None, T0).unwrap();
        assert_eq!(session_addresses(&c, d).unwrap(), ["203.0.113.9", "192.168.0.4", "not an address"]);
        ban(&c, d, T0).unwrap();
        assert!(is_banned(&c, "203.0.113.9").unwrap());
        assert!(!is_banned(&c, "192.168.0.4").unwrap());
        assert_eq!(one_int(&c, "SELECT count(*) FROM bans"), 1);
        assert_eq!(one_int(&c, "SELECT count(*) FROM sessions"), 0);
        assert_eq!(users::find(&c, d).unwrap().unwrap().status, STATUS_BANNED);
    }

    #[test]
    fn lists_the_messages_to_remove() {
        let (_db, c) = TempDb::with_schema();
        let (d, j) = (user(&c, "David"), user(&c, "Jason"));
        let room = crate::db::rooms::create_for(&c, crate::db::rooms::Kind::Open, Some("R"), d, &[], T0).unwrap();
        let mut mine = Vec::new();
        for (i, who) in [d, j, d].into_iter().enumerate() {
            let cid = format!("c{i}");
            let id = crate::db::messages::create(&c, &crate::db::messages::NewMessage { room_id: room, creator_id: who, client_message_id: &cid, body: None, plain_text: "" }, T0 + i as i64).unwrap();
            if who == d {
                mine.push(id);
            }
        }
        assert_eq!(message_ids(&c, d).unwrap(), mine);
    }
}
