//! TypingNotificationsChannel (spec/06 §6.4): RoomChannel's membership guard, streams
//! `typing_notifications:<room gid>`; actions `start` and `stop` broadcast
//! `{"action":"start|stop","user":{"id":N,"name":"…"}}` to every subscriber, the sender
//! included (the page filters itself out). No server-side state.

use super::channel::{member_room, Outcome};
use super::protocol::Params;
use super::{hub, streams, User};
use crate::app::Ctx;
use crate::crypto::json;

pub fn subscribe(cx: &Ctx, user: &User, params: &Params) -> Outcome {
    match member_room(cx, user, params) {
        Some(room) => Outcome::Confirm { stream: Some(streams::typing(room.kind, room.id)), room_id: room.id },
        None => Outcome::Reject,
    }
}

/// Runs `action` for a confirmed subscription streaming from `stream`.
pub fn perform(user: &User, stream: &[u8], action: &[u8]) {
    let verb = match action {
        b"start" => "start",
        b"stop" => "stop",
        _ => return,
    };
    let mut m = Vec::with_capacity(64 + user.name.len());
    m.extend_from_slice(b"{\"action\":\"");
    m.extend_from_slice(verb.as_bytes());
    m.extend_from_slice(b"\",\"user\":{\"id\":");
    m.extend_from_slice(user.id.to_string().as_bytes());
    m.extend_from_slice(b",\"name\":");
    json::write_string(user.name.as_bytes(), &mut m);
    m.extend_from_slice(b"}}");
    hub::broadcast(stream, &m);
}
