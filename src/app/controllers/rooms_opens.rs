//! Rooms::OpensController (spec/02 §4.21): open rooms — everyone on the account is a member.
//! new/create, edit/update (turning a closed room open), and show (a redirect to the room).

use super::room_forms;
use crate::app::{room_scope, room_streams};
use crate::app::room_scope::Scope;
use super::sidebars::{self, Place};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::rooms::Kind;
use crate::db::{self, Conn};
use crate::http::Response;

/// `GET /rooms/opens/:id`: to the room itself.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.id, Scope::Shared)? else { return room_scope::not_found(cx, rq, res) };
    room_scope::remember_last_room(cx, rq, res, room.id);
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
    room_forms::edit(cx, rq, res, Kind::Open)
}

/// `POST /rooms/opens`: creates the room (everyone joins), tells every sidebar.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let (me, name) = room_forms::to_create(cx, rq)?;
    let shown = name.clone();
    cx.write(
        rq,
        move |c: &Conn| db::rooms::create_for(c, Kind::Open, Some(&name), me, &[me], db::time::now_us()),
        move |_cx, res, result| {
            let id = result?;
            room_streams::broadcast_html("rooms", &sidebars::shared_stream(Place::Prepend, Kind::Open, id, &shown));
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}

/// `PATCH/PUT /rooms/opens/:id`: admin or creator; renames and opens the room.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some((id, name)) = room_forms::to_update(cx, rq, res)? else { return Ok(Flow::Done) };
    let shown = name.clone();
    cx.write(
        rq,
        move |c: &Conn| db::rooms::update(c, id, Some(&name), Kind::Open, db::time::now_us()),
        move |_cx, res, result| {
            result?;
            room_streams::broadcast_html("rooms", &sidebars::shared_stream(Place::Replace, Kind::Open, id, &shown));
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}
