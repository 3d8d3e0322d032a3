//! PresenceChannel (spec/06 §6.3): RoomChannel's membership guard; streams
//! `presence:<room gid>` (never broadcast on). Subscribing performs `present`, unsubscribing
//! (or the socket closing) `absent`; the page sends `refresh` every 50 s while visible. Each
//! is a membership update on the writer; `present` then tells the user's other tabs the room
//! is read (`user_<id>_reads`, `{"room_id":N}`).

use super::channel::{member_room, Outcome};
use super::protocol::Params;
use super::{hub, streams, User};
use crate::app::Ctx;
use crate::db::{self, writer::Job};

pub fn subscribe(cx: &Ctx, user: &User, params: &Params) -> Outcome {
    let Some(room) = member_room(cx, user, params) else { return Outcome::Reject };
    let mut stream = b"presence:".to_vec();
    streams::gid_param(room.kind.as_str(), room.id, &mut stream);
    present(cx, user.id, room.id);
    Outcome::Confirm { stream: Some(stream), room_id: room.id }
}

/// Runs `action` (`present`, `absent`, `refresh`) for the room of a confirmed subscription.
pub fn perform(cx: &Ctx, user: &User, room_id: i64, action: &[u8]) {
    match action {
        b"present" => present(cx, user.id, room_id),
        b"absent" => absent(cx, user.id, room_id),
        b"refresh" => {
            let user_id = user.id;
            submit(cx, "refresh", move |c| db::memberships::refresh(c, room_id, user_id, db::time::now_us()), |_| {});
        }
        _ => {}
    }
}

/// The unsubscribe logic of a confirmed subscription.
pub fn unsubscribed(cx: &Ctx, user: &User, room_id: i64) {
    absent(cx, user.id, room_id);
}

fn present(cx: &Ctx, user_id: i64, room_id: i64) {
    submit(
        cx,
        "present",
        move |c| db::memberships::present(c, room_id, user_id, db::time::now_us()),
        move |found| {
            if found {
                hub::broadcast(streams::user_reads(user_id).as_bytes(), format!("{{\"room_id\":{room_id}}}").as_bytes());
            }
        },
    );
}

fn absent(cx: &Ctx, user_id: i64, room_id: i64) {
    submit(cx, "absent", move |c| db::memberships::disconnected(c, room_id, user_id, db::time::now_us()), |_| {});
}

fn submit(
    cx: &Ctx,
    what: &'static str,
    work: impl FnOnce(&db::Conn) -> db::Result<bool> + Send + 'static,
    then: impl FnOnce(bool) + Send + 'static,
) {
    cx.outbox.submit(Job::new(work, move |r| match r {
        Ok(found) => then(found),
        Err(e) => eprintln!("cable: presence {what} failed: {e}"),
    }));
}
