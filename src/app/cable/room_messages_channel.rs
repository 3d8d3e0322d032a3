//! RoomMessagesChannel (spec/06 §6.7): a Turbo stream source for `<room gid>:messages` that
//! also checks, at every subscribe, that the user is still a member of that room (signed names
//! never expire, so a harvested one must not outlive the membership).

use super::channel::Outcome;
use super::protocol::Params;
use super::{streams, User};
use crate::app::Ctx;
use crate::db;

pub fn subscribe(cx: &mut Ctx, user: &User, params: &Params) -> Outcome {
    let Some(name) = super::turbo_streams_channel::verified_name(cx, params) else { return Outcome::Reject };
    let Some(colon) = name.iter().position(|&b| b == b':') else { return Outcome::Reject };
    if &name[colon + 1..] != b"messages" {
        return Outcome::Reject;
    }
    let Some((kind, room_id)) = streams::parse_room_gid(&name[..colon]) else { return Outcome::Reject };
    let room = match db::rooms::find_for_user(&cx.db, user.id, room_id) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cable: room lookup failed: {e}");
            None
        }
    };
    // GlobalID locates through the STI class: a gid naming the wrong class finds nothing.
    match room {
        Some(r) if r.kind == kind => Outcome::Confirm { stream: Some(name), room_id },
        _ => Outcome::Reject,
    }
}
