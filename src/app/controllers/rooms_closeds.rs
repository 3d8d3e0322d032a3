//! Rooms::ClosedsController (spec/02 §4.22): closed rooms — members chosen by hand.
//! new/create, edit/update (closing an open room and revising its members), and show.

use super::room_forms;
use crate::app::room_streams;
use super::sidebars::{self, Place};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::memberships::Involvement;
use crate::db::rooms::Kind;
use crate::db::{self, Conn};
use crate::http::Response;

/// `GET /rooms/closeds/:id`: to the room itself.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    super::rooms_opens::show(cx, rq, res)
}

/// `GET /rooms/closeds/new`.
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    room_forms::ensure_can_create(cx, rq)?;
    room_forms::render(cx, rq, res, Kind::Closed, None)
}

/// `GET /rooms/closeds/:id/edit`: any member may look.
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    room_forms::edit(cx, rq, res, Kind::Closed)
}

/// The `user_ids[]` of the form, in order, duplicates and non-numbers dropped.
pub fn user_ids(rq: &Req<'_, '_>) -> Vec<i64> {
    let mut ids = Vec::new();
    for raw in rq.params.all("user_ids[]") {
        if let Some(id) = crate::app::params::parse_id(raw) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
    }
    ids
}

/// Of `ids`, those that name a user (any status), as Rails' `User.where(id:)`.
fn existing_users(c: &Conn, ids: &[i64]) -> db::Result<Vec<i64>> {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        if db::users::find(c, id)?.is_some() {
            out.push(id);
        }
    }
    Ok(out)
}

/// `POST /rooms/closeds`: creates the room for the chosen people (the creator is not added
/// unless chosen, as in Rails); each member's sidebar gets the room.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let (me, name) = room_forms::to_create(cx, rq)?;
    let ids = user_ids(rq);
    let shown = name.clone();
    cx.write(
        rq,
        move |c: &Conn| {
            let members = existing_users(c, &ids)?;
            let id = db::rooms::create_for(c, Kind::Closed, Some(&name), me, &members, db::time::now_us())?;
            Ok((id, members))
        },
        move |_cx, res, result| {
            let (id, members) = result?;
            let html = sidebars::shared_stream(Place::Prepend, Kind::Closed, id, &shown);
            for m in members {
                room_streams::broadcast_html(&room_streams::user_rooms_stream(m), &html);
            }
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}

/// `PATCH/PUT /rooms/closeds/:id`: admin or creator; renames, closes, and makes the members
/// exactly `user_ids[]`.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some((id, name)) = room_forms::to_update(cx, rq, res)? else { return Ok(Flow::Done) };
    let ids = user_ids(rq);
    let shown = name.clone();
    cx.write(
        rq,
        move |c: &Conn| {
            let now = db::time::now_us();
            db::rooms::update(c, id, Some(&name), Kind::Closed, now)?;
            let selected = existing_users(c, &ids)?;
            let revoked = db::memberships::revise(c, id, &selected, Involvement::Mentions, now)?;
            Ok((db::memberships::user_ids(c, id)?, revoked))
        },
        move |_cx, res, result| {
            let (members, revoked) = result?;
            let html = sidebars::shared_stream(Place::Replace, Kind::Closed, id, &shown);
            for m in members {
                room_streams::broadcast_html(&room_streams::user_rooms_stream(m), &html);
            }
            // People taken out of the room lose it from their sidebar and stop receiving its
            // messages at once (spec/06 §5.3), not at their next reconnect.
            let gone = sidebars::remove_stream(Kind::Closed, id);
            for u in revoked {
                room_streams::broadcast_html(&room_streams::user_rooms_stream(u), &gone);
                crate::app::cable::membership_removed(u, id);
            }
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}
