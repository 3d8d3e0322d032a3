//! Bans (spec/01 §4.5): banning a user bans the public IPs of their sessions, ends the
//! sessions and marks the user banned; `is_banned` is an exact string match on the IP.

use super::conn::Conn;
use super::error::Result;
use super::stmt::Step;
use super::users::{STATUS_ACTIVE, STATUS_BANNED};
use super::{sessions, time};
use std::net::IpAddr;

/// Why a ban was refused (Rails' validation messages; nothing was changed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// "cannot be a private or internal IP address"
    PrivateAddress,
    /// "is not a valid IP address"
    InvalidAddress,
}

impl Refused {
    pub fn message(self) -> &'static str {
        match self {
            Refused::PrivateAddress => "cannot be a private or internal IP address",
            Refused::InvalidAddress => "is not a valid IP address",
        }
    }
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

/// Bans `user_id`: one ban per distinct non-blank session IP, all sessions deleted,
/// status = banned. If any of those IPs is internal or invalid, nothing changes and the
/// reason is returned. The caller disconnects cable connections and schedules the removal
/// of the user's messages (`messages::destroy` for each of `message_ids`).
pub fn ban(c: &Conn, user_id: i64, now: i64) -> Result<std::result::Result<(), Refused>> {
    let mut ips: Vec<String> = Vec::new();
    let mut s = c.prepare_cached(
        "SELECT DISTINCT ip_address FROM sessions WHERE user_id = ?1 AND ip_address IS NOT NULL AND trim(ip_address) != '' ORDER BY id",
    )?;
    s.bind(1, user_id)?;
    while s.step()? == Step::Row {
        ips.push(s.string(0)?);
    }
    drop(s);
    for ip in &ips {
        if let Err(r) = check_address(ip) {
            return Ok(Err(r));
        }
    }
    let ts = time::format(now);
    for ip in &ips {
        let mut s = c.prepare_cached("INSERT INTO bans (user_id, ip_address, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")?;
        s.bind(1, user_id)?;
        s.bind(2, ip.as_str())?;
        s.bind(3, ts.as_str())?;
        s.run()?;
    }
    sessions::destroy_all_for_user(c, user_id)?;
    set_status(c, user_id, STATUS_BANNED, now)?;
    Ok(Ok(()))
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
