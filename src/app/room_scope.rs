//! Which room a request may act on, and the visit it leaves behind (spec/02 §4, Rails'
//! `RoomScoped` and `TrackedRoomVisit` concerns): the lookup narrowed to the viewer's rooms and a
//! kind, Rails' "not found" answer, who may administer a room, its title, and the `last_room`
//! cookie. Every room controller, the cable channels and the bot API share these.

use crate::app::params::parse_id;
use crate::app::{cookies, message_view, respond, AppError, Ctx, Flow, Req};
use crate::crypto::cookies as crypto_cookies;
use crate::db::rooms::{Kind, Room};
use crate::db::{self, users::User, Conn};
use crate::http::Response;

/// The alert Rails shows when a room is missing or not the viewer's.
pub const NOT_FOUND_ALERT: &str = "Room not found or inaccessible";

/// Which rooms a controller may act on (Rails' `room_scope` narrowing).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Any,
    Shared,
    Direct,
}

/// The room named by `raw_id` if the viewer belongs to it and it is in `scope`; `None` means
/// Rails' "not found" (answer it with `not_found`).
pub fn find(cx: &Ctx, user_id: i64, raw_id: &[u8], scope: Scope) -> Result<Option<Room>, AppError> {
    let Some(id) = parse_id(raw_id) else { return Ok(None) };
    let Some(room) = db::rooms::find_for_user(&cx.db, user_id, id)? else { return Ok(None) };
    let fits = match scope {
        Scope::Any => true,
        Scope::Shared => room.kind != Kind::Direct,
        Scope::Direct => room.kind == Kind::Direct,
    };
    Ok(fits.then_some(room))
}

/// Rails' answer to a missing room: 302 to `/` with the alert.
pub fn not_found(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.flash_alert(cx, NOT_FOUND_ALERT);
    respond::redirect(res, "/");
    Ok(Flow::Done)
}

/// Admin or the room's creator (`can_administer?`).
pub fn can_administer(user: &User, room: &Room) -> bool {
    user.is_administrator() || room.creator_id == user.id
}

/// The room's title: its name, or for a direct room the other members' names as a sentence
/// (the viewer's own name when alone).
pub fn display_name(c: &Conn, room: &Room, viewer: &User) -> Result<String, AppError> {
    if room.kind != Kind::Direct {
        return Ok(room.name.clone().unwrap_or_default());
    }
    let others: Vec<String> = db::rooms::members(c, room.id)?.into_iter().filter(|m| m.id != viewer.id).map(|m| m.name).collect();
    if others.is_empty() {
        return Ok(viewer.name.clone());
    }
    Ok(message_view::to_sentence(&others))
}

/// The edit page of a room by kind.
pub fn edit_path(room: &Room) -> String {
    let kind = match room.kind {
        Kind::Open => "opens",
        Kind::Closed => "closeds",
        Kind::Direct => "directs",
    };
    format!("/rooms/{kind}/{}/edit", room.id)
}

/// The room the viewer visited last (for back links): `last_room` if still theirs, else
/// their original room, else `/`.
pub fn last_room_path(cx: &Ctx, rq: &Req<'_, '_>, user_id: i64) -> Result<String, AppError> {
    let last = rq.cookie(b"last_room").and_then(crypto_cookies::read_last_room);
    let room = match last {
        Some(id) if db::memberships::exists(&cx.db, id, user_id)? => Some(id),
        _ => db::auth::original_room(&cx.db, user_id)?,
    };
    Ok(room.map_or_else(|| "/".to_string(), |id| format!("/rooms/{id}")))
}

/// Sets `last_room` unless the request already carries it (pages stay byte-stable).
pub fn remember_last_room(cx: &Ctx, rq: &Req<'_, '_>, res: &mut Response, room_id: i64) {
    if rq.cookie(b"last_room").and_then(crypto_cookies::read_last_room) != Some(room_id) {
        cookies::set_last_room(cx, res, room_id);
    }
}
