//! Rooms::DirectsController (spec/02 §4.23, spec/07 §9.3–§9.4): pings — direct rooms whose
//! member set is their identity. new (the sidebar's picker frame), create (find or create,
//! then every member's sidebar gets the link), edit (members and the delete button) and
//! destroy (any member may).

use super::rooms;
use crate::app::{room_scope, room_streams};
use crate::app::room_scope::Scope;
use super::rooms_closeds::user_ids;
use super::sidebars::{self, DirectLink};
use crate::app::layout::{self, Page};
use crate::app::message_view::write_avatar_url;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::rooms::{Member, Room};
use crate::db::{self, Conn};
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /rooms/directs/new`: the picker, shown inside the sidebar's frame.
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    layout::page(cx, rq, res, 200, &NewPing)?;
    Ok(Flow::Done)
}

struct NewPing;

impl Page for NewPing {
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"New Ping");
    }
    fn main(&self, o: &mut Out<'_>) {
        views::rooms::directs_new::render(&NoHoles, o);
    }
}

struct NoHoles;
impl views::rooms::directs_new::View for NoHoles {}

/// `POST /rooms/directs`: the ping with exactly the chosen people and me.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let me = user.id;
    let mut ids = user_ids(rq);
    ids.push(me);
    cx.write(
        rq,
        move |c: &Conn| {
            let mut people = Vec::with_capacity(ids.len());
            for id in ids {
                if db::users::find(c, id)?.is_some() {
                    people.push(id);
                }
            }
            let (id, _) = db::rooms::find_or_create_direct(c, me, &people, db::time::now_us())?;
            Ok(id)
        },
        move |cx, res, result| {
            let id = result?;
            broadcast_direct(cx, id)?;
            respond::redirect(res, &format!("/rooms/{id}"));
            Ok(())
        },
    )
}

/// Prepends the ping's link into each member's `direct_rooms`, as that member sees it, and
/// removes that member's placeholders for the others (they now share a ping with them).
fn broadcast_direct(cx: &Ctx, room_id: i64) -> Result<(), AppError> {
    let Some(room) = db::rooms::find(&cx.db, room_id)? else { return Ok(()) };
    let members = db::rooms::members(&cx.db, room_id)?;
    for m in &members {
        let others: Vec<Member> = members.iter().filter(|o| o.id != m.id).cloned().collect();
        let other_ids: Vec<i64> = others.iter().map(|o| o.id).collect();
        let shown = if others.is_empty() { vec![m.clone()] } else { others };
        let link = DirectLink { room_id, updated_at: room.updated_at, unread: false, shown };
        let mut html = sidebars::direct_stream(&cx.keys, &link);
        html.extend_from_slice(&sidebars::remove_placeholders_stream(&other_ids));
        room_streams::broadcast_html(&room_streams::user_rooms_stream(m.id), &html);
    }
    Ok(())
}

/// `GET /rooms/directs/:id/edit`.
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.id, Scope::Direct)? else { return room_scope::not_found(cx, rq, res) };
    let shown = sidebars::shown_members(&cx.db, room.id, &user)?;
    let name = room_scope::display_name(&cx.db, &room, &user)?;
    let back = room_scope::last_room_path(cx, rq, user.id)?;
    let chrome = layout::Chrome::of(cx, rq);
    layout::render(cx, &chrome, res, 200, &EditPing { cx, room, shown, name, back })?;
    Ok(Flow::Done)
}

struct EditPing<'a> {
    cx: &'a Ctx,
    room: Room,
    shown: Vec<Member>,
    name: String,
    back: String,
}

impl Page for EditPing<'_> {
    fn title(&self, o: &mut Out<'_>) {
        o.text(&format!("Edit settings for {}", self.name));
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::rooms::directs_edit::render(self, o);
    }
}

impl views::layouts::back_nav::View for EditPing<'_> {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        o.text(&format!("Edit settings for {}", self.name));
    }
    fn actions(&self, _o: &mut Out<'_>) {}
}

impl views::rooms::directs_edit::View for EditPing<'_> {
    fn members(&self, o: &mut Out<'_>) {
        for m in &self.shown {
            views::rooms::direct_member::render(&MemberRow(&self.cx.keys, m), o);
        }
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
}

struct MemberRow<'a>(&'a crate::crypto::Keys, &'a Member);

impl views::rooms::direct_member::View for MemberRow<'_> {
    fn avatar_url(&self, o: &mut Out<'_>) {
        write_avatar_url(self.0, self.1.id, self.1.updated_at, o);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.1.name);
    }
}

/// `DELETE /rooms/directs/:id`: any member deletes the ping.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.id, Scope::Direct)? else { return room_scope::not_found(cx, rq, res) };
    rooms::destroy_room(cx, rq, room)
}
