//! What every channel file shares: the channel names of spec/06 §6, the outcome of a
//! subscribe, and RoomChannel's guard (membership in the room named by `room_id`), which
//! PresenceChannel and TypingNotificationsChannel inherit.

use super::protocol::Params;
use super::User;
use crate::app::Ctx;
use crate::db;

/// The channels a Campfire page subscribes to (spec/06 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Heartbeat,
    Presence,
    TypingNotifications,
    ReadRooms,
    UnreadRooms,
    RoomMessages,
    TurboStreams,
}

impl Channel {
    /// The channel an identifier's `channel` names; None for any other (rejected).
    pub fn named(name: &[u8]) -> Option<Channel> {
        Some(match name {
            b"HeartbeatChannel" => Channel::Heartbeat,
            b"PresenceChannel" => Channel::Presence,
            b"TypingNotificationsChannel" => Channel::TypingNotifications,
            b"ReadRoomsChannel" => Channel::ReadRooms,
            b"UnreadRoomsChannel" => Channel::UnreadRooms,
            b"RoomMessagesChannel" => Channel::RoomMessages,
            b"Turbo::StreamsChannel" => Channel::TurboStreams,
            _ => return None,
        })
    }
}

/// What a channel's subscribe logic decided.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Reject,
    /// Confirm, streaming from `stream` (None: no stream). `room_id` (0 for none) is the room
    /// the subscription depends on: losing that membership revokes it.
    Confirm { stream: Option<Vec<u8>>, room_id: i64 },
}

/// RoomChannel's subscribe guard: the room named by `room_id` exists and the user has a
/// membership in it (any involvement). Its kind gives the room's stream names.
pub fn member_room(cx: &Ctx, user: &User, params: &Params) -> Option<db::rooms::Room> {
    let room_id = params.room_id?;
    match db::rooms::find_for_user(&cx.db, user.id, room_id) {
        Ok(room) => room,
        Err(e) => {
            eprintln!("cable: room lookup failed: {e}");
            None
        }
    }
}
