//! Names that tie a room's page to its live updates (spec/06 §11.1–11.2): the room's Turbo
//! stream `<room gid param>:messages`, the DOM id of its messages container
//! `messages_<room param key>_<id>`, a user's sidebar stream `<user gid param>:rooms`, the
//! signed stream names pages subscribe with, and the helpers that wrap a Turbo Stream for broadcast.

use crate::app::Ctx;
use crate::crypto::memo::Memo;
use crate::crypto::turbo;
use crate::db::rooms::Kind;
use crate::views::Out;
use std::cell::RefCell;

/// Rails' `param_key` of the room's class: `rooms_open`, `rooms_closed`, `rooms_direct`.
pub fn param_key(kind: Kind) -> &'static str {
    match kind {
        Kind::Open => "rooms_open",
        Kind::Closed => "rooms_closed",
        Kind::Direct => "rooms_direct",
    }
}

/// The id of the room page's messages container: `messages_rooms_open_12`.
pub fn messages_target(kind: Kind, room_id: i64) -> String {
    format!("messages_{}_{room_id}", param_key(kind))
}

/// The room's global id: `gid://campfire/Rooms::Open/12`.
pub fn room_gid(kind: Kind, room_id: i64) -> String {
    format!("gid://campfire/{}/{room_id}", kind.as_str())
}

/// The Turbo stream the room's messages are broadcast on: `<gid param>:messages`.
pub fn messages_stream(kind: Kind, room_id: i64) -> String {
    let mut s = Vec::with_capacity(64);
    turbo::gid_param(room_gid(kind, room_id).as_bytes(), &mut s);
    s.extend_from_slice(b":messages");
    String::from_utf8(s).unwrap_or_default()
}

/// `<user gid param>:rooms`, the user's own sidebar stream.
pub fn user_rooms_stream(user_id: i64) -> String {
    let gid = format!("gid://campfire/User/{user_id}");
    let mut out = Vec::with_capacity(64);
    turbo::gid_param(gid.as_bytes(), &mut out);
    let mut s = String::from_utf8(out).unwrap_or_default();
    s.push_str(":rooms");
    s
}

thread_local! {
    /// This thread's signed stream names (a page shows the same few: "rooms", the viewer's
    /// rooms, the room's messages).
    static SIGNED: RefCell<Memo<Box<str>>> = RefCell::new(Memo::new(256));
}

/// Signs `stream` for a `turbo-cable-stream-source` and writes it as an attribute value.
pub fn signed_stream(cx: &Ctx, stream: &str, o: &mut Out<'_>) {
    SIGNED.with(|m| {
        o.attr(m.borrow_mut().get(&cx.keys, stream.into(), || {
            let mut signed = Vec::with_capacity(stream.len() * 2 + 80);
            turbo::sign_stream_name(&cx.keys, stream.as_bytes(), &mut signed);
            String::from_utf8(signed).unwrap_or_default()
        }));
    });
}

/// A stream element with only a target.
pub struct Target<'a>(pub &'a str);

impl crate::views::streams::remove::View for Target<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}

/// Broadcasts a rendered `<turbo-stream>` element on `stream` (as the JSON string Turbo's
/// channel sends, in plain JSON: `crypto::json::write_plain_string`).
pub fn broadcast_html(stream: &str, html: &[u8]) {
    let mut msg = Vec::with_capacity(html.len() + html.len() / 16 + 2);
    crate::crypto::json::write_plain_string(html, &mut msg);
    crate::app::cable::broadcast(stream, &msg);
}

/// The unread fan-out U1: `{"roomId":N}` on `user_<id>_unreads` for each member
/// (`member_ids` ascending, as `memberships::user_ids` returns them).
pub fn broadcast_unreads(room_id: i64, member_ids: &[i64]) {
    let msg = format!("{{\"roomId\":{room_id}}}");
    crate::app::cable::broadcast_to_users(member_ids, crate::app::cable::streams::write_user_unreads, msg.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_rails() {
        assert_eq!(messages_target(Kind::Open, 201306877), "messages_rooms_open_201306877");
        assert_eq!(room_gid(Kind::Direct, 3), "gid://campfire/Rooms::Direct/3");
        assert_eq!(messages_stream(Kind::Open, 1), "Z2lkOi8vY2FtcGZpcmUvUm9vbXM6Ok9wZW4vMQ:messages");
    }
}
