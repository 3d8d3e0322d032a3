//! Rooms::OpensController (spec/02 §4.21): open rooms — everyone on the account is a member.
//! new/create, edit/update (turning a closed room open), and show (a redirect to the room).

use super::room_forms;
use super::rooms::{self, room_key, Scope};
use super::rooms_involvements::Stream;
use super::sidebars;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::rooms::Kind;
use crate::db::{self, Conn};
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /rooms/opens/:id`: to the room itself.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = rooms::find(cx, user.id, rq.route.params.id, Scope::Shared)? else { return rooms::not_found(cx, rq, res) };
    rooms::remember_last_room(cx, rq, res, room.id);
    respond::redirect(res, &format!("/rooms/{}", room.id));
    Ok(Flow::Done)
}

/// `GET /rooms/opens/new`.
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    room_forms::ensure_can_create(cx, rq)?;
    room_forms::render(cx, rq, res, Kind::Open, None)
}

/// `GET /rooms/opens/:id/edit`: any member may look.
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = rooms::find(cx, user.id, rq.route.params.id, Scope::Shared)? else { return rooms::not_found(cx, rq, res) };
    room_forms::render(cx, rq, res, Kind::Open, Some(room))
}

/// `POST /rooms/opens`: creates the room (everyone joins), tells every sidebar.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    room_forms::ensure_can_create(cx, rq)?;
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let name = room_forms::room_name(rq)?.to_owned();
    let me = user.id;
    let shown = name.clone();
    cx.write(
        rq,
        move |c: &Conn| db::rooms::create_for(c, Kind::Open, Some(&name), me, &[me], db::time::now_us()),
        move |_cx, res, result| {
            let id = result?;
            broadcast_shared("rooms", "prepend", Kind::Open, id, &shown);
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}

/// `PATCH/PUT /rooms/opens/:id`: admin or creator; renames and opens the room.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let Some(room) = rooms::find(cx, user.id, rq.route.params.id, Scope::Shared)? else { return rooms::not_found(cx, rq, res) };
    if !rooms::can_administer(&user, &room) {
        return Err(AppError::Head(403));
    }
    let name = room_forms::room_name(rq)?.to_owned();
    let id = room.id;
    let shown = name.clone();
    cx.write(
        rq,
        move |c: &Conn| db::rooms::update(c, id, Some(&name), Kind::Open, db::time::now_us()),
        move |_cx, res, result| {
            result?;
            broadcast_shared("rooms", "replace", Kind::Open, id, &shown);
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}

/// Broadcasts a shared room link to `stream`: `prepend` into `shared_rooms` or `replace`
/// of the room's own link (rendered without `unread`, as Rails' broadcasts are).
pub fn broadcast_shared(stream: &str, action: &str, kind: Kind, id: i64, name: &str) {
    let mut link = Vec::with_capacity(400);
    sidebars::render_shared(kind, id, name, false, &mut Out::new(&mut link));
    let mut html = Vec::with_capacity(link.len() + 128);
    if action == "prepend" {
        views::streams::prepend::render(&Stream { target: "shared_rooms", content: &link }, &mut Out::new(&mut html));
    } else {
        let target = format!("list_{}_{id}", room_key(kind));
        views::streams::replace::render(&Stream { target: &target, content: &link }, &mut Out::new(&mut html));
    }
    rooms::broadcast_html(stream, &html);
}
