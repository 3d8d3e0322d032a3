//! The new/edit room page shared by Rooms::OpensController and Rooms::ClosedsController
//! (spec/07 §9.1–§9.2): name field, the "Everyone" switch between the two variants, the
//! people list, and the delete panel.

use crate::app::translations::{self, Phrase};
use crate::app::room_scope;
use crate::app::room_scope::Scope;
use crate::app::layout::{self, Page};
use crate::app::message_view::write_avatar_url;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::db::rooms::{Kind, Room};
use crate::db::{self, users::User};
use crate::http::Response;
use crate::views::{self, Out};

/// Above this many people the list gets a filter box.
const FILTER_THRESHOLD: usize = 20;

/// One person of the list.
struct Person {
    id: i64,
    name: String,
    updated_at: i64,
    member: bool,
}

/// Renders the new (`room` = None) or edit page of the `variant` form.
pub fn render(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response, variant: Kind, room: Option<Room>) -> Result<Flow, AppError> {
    rq.html_only()?;
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let members = match &room {
        Some(r) => db::memberships::user_ids(&cx.db, r.id)?,
        None => vec![user.id],
    };
    let mut rows: Vec<(i64, String)> = Vec::new();
    db::users::active_ordered(&cx.db, |u| {
        rows.push((u.id, u.name.to_owned()));
        Ok(())
    })?;
    let mut people = Vec::with_capacity(rows.len());
    for (id, name) in rows {
        let updated_at = db::users::find(&cx.db, id)?.map_or(0, |u| u.updated_at);
        people.push(Person { id, name, updated_at, member: members.contains(&id) });
    }
    let back = room_scope::last_room_path(cx, rq, user.id)?;
    let can_administer = room.as_ref().is_none_or(|r| room_scope::can_administer(&user, r));
    let chrome = layout::Chrome::of(cx, rq);
    let page = FormPage { cx, user, variant, room, people, back, can_administer };
    layout::render(cx, &chrome, res, 200, &page)?;
    Ok(Flow::Done)
}

struct FormPage<'a> {
    cx: &'a Ctx,
    user: User,
    variant: Kind,
    room: Option<Room>,
    people: Vec<Person>,
    back: String,
    can_administer: bool,
}

impl FormPage<'_> {
    fn name(&self) -> &str {
        self.room.as_ref().and_then(|r| r.name.as_deref()).unwrap_or("New room")
    }
    /// The page's title, also the heading of its nav.
    fn heading(&self, o: &mut Out<'_>) {
        match &self.room {
            Some(_) => o.text(&format!("Edit settings for {}", self.name())),
            None => o.static_bytes(b"New chat room"),
        }
    }
    fn path(&self, kind: Kind) -> String {
        let plural = if kind == Kind::Open { "opens" } else { "closeds" };
        match &self.room {
            Some(r) => format!("/rooms/{plural}/{}", r.id),
            None => format!("/rooms/{plural}"),
        }
    }
}

impl Page for FormPage<'_> {
    fn title(&self, o: &mut Out<'_>) {
        self.heading(o);
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::rooms::panel::render(self, o);
    }
}

impl views::layouts::back_nav::View for FormPage<'_> {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        self.heading(o);
    }
    fn actions(&self, _o: &mut Out<'_>) {}
}

impl views::rooms::panel::View for FormPage<'_> {
    fn transition_name(&self, o: &mut Out<'_>) {
        match &self.room {
            Some(r) => o.attr(&format!("edit-room-{}", r.id)),
            None => o.static_bytes(b"new-room"),
        }
    }
    fn form(&self, o: &mut Out<'_>) {
        views::rooms::form::render(self, o);
    }
    fn delete_panel(&self, o: &mut Out<'_>) {
        if let Some(r) = &self.room {
            if self.can_administer {
                views::rooms::delete_panel::render(&DeletePanel(r), o);
            }
        }
    }
}

struct DeletePanel<'a>(&'a Room);

impl views::rooms::delete_panel::View for DeletePanel<'_> {
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.0.id);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(self.0.name.as_deref().unwrap_or(""));
    }
}

impl views::rooms::form::View for FormPage<'_> {
    fn action(&self, o: &mut Out<'_>) {
        o.attr(&self.path(self.variant));
    }
    fn method_field(&self, o: &mut Out<'_>) {
        if self.room.is_some() {
            views::layouts::method_field::render(&Method, o);
        }
    }
    fn name_field(&self, o: &mut Out<'_>) {
        if self.can_administer {
            views::rooms::name_input::render(self, o);
        } else {
            views::rooms::name_heading::render(self, o);
        }
    }
    fn everyone_href(&self, o: &mut Out<'_>) {
        let other = if self.variant == Kind::Open { Kind::Closed } else { Kind::Open };
        let base = self.path(other);
        o.attr(&if self.room.is_some() { format!("{base}/edit") } else { format!("{base}/new") });
    }
    fn everyone_checked(&self, o: &mut Out<'_>) {
        if self.variant == Kind::Open {
            o.static_bytes(b"checked");
        }
    }
    fn filter(&self, o: &mut Out<'_>) {
        if self.people.len() > FILTER_THRESHOLD {
            views::rooms::filter_input::render(&NoHoles, o);
        }
    }
    fn people(&self, o: &mut Out<'_>) {
        let keys = &self.cx.keys;
        if self.variant == Kind::Open {
            for p in &self.people {
                views::rooms::person::render(&Row(keys, p, Control::Check), o);
            }
            return;
        }
        let new_room = self.room.is_none();
        for p in self.people.iter().filter(|p| p.member) {
            let control = if new_room && p.id == self.user.id { Control::Creator } else { Control::Switch };
            views::rooms::person::render(&Row(keys, p, control), o);
        }
        if self.people.iter().any(|p| p.member) && self.people.iter().any(|p| !p.member) {
            views::layouts::rule::render(&NoHoles, o);
        }
        for p in self.people.iter().filter(|p| !p.member) {
            views::rooms::person::render(&Row(keys, p, Control::Switch), o);
        }
    }
    fn submit(&self, o: &mut Out<'_>) {
        if self.can_administer {
            views::rooms::save_button::render(&NoHoles, o);
        }
    }
}

impl views::rooms::name_input::View for FormPage<'_> {
    fn name(&self, o: &mut Out<'_>) {
        o.attr(self.name());
    }
    fn translate_name(&self, o: &mut Out<'_>) {
        translations::button(Phrase::RoomName, o);
    }
}

impl views::rooms::name_heading::View for FormPage<'_> {
    fn name(&self, o: &mut Out<'_>) {
        o.text(self.name());
    }
}

struct Method;
impl views::layouts::method_field::View for Method {
    fn method(&self, o: &mut Out<'_>) {
        o.static_bytes(b"patch");
    }
}

struct NoHoles;
impl views::rooms::filter_input::View for NoHoles {}
impl views::rooms::save_button::View for NoHoles {}
impl views::layouts::rule::View for NoHoles {}
impl views::rooms::person_open::View for NoHoles {}

/// What a person's row offers after the name.
#[derive(Clone, Copy)]
enum Control {
    /// Open room: everyone is a member.
    Check,
    /// Closed room: a membership switch.
    Switch,
    /// The creator of a new closed room: always a member.
    Creator,
}

struct Row<'a>(&'a crate::crypto::Keys, &'a Person, Control);

impl views::rooms::person::View for Row<'_> {
    fn value(&self, o: &mut Out<'_>) {
        o.attr(&self.1.name.to_lowercase());
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        write_avatar_url(self.0, self.1.id, self.1.updated_at, o);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.1.name);
    }
    fn control(&self, o: &mut Out<'_>) {
        match self.2 {
            Control::Check => views::rooms::person_open::render(&NoHoles, o),
            Control::Switch => views::rooms::person_closed::render(self, o),
            Control::Creator => views::rooms::person_creator::render(self, o),
        }
    }
}

impl views::rooms::person_closed::View for Row<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.1.id);
    }
    fn checked(&self, o: &mut Out<'_>) {
        if self.1.member {
            o.static_bytes(b"checked");
        }
    }
    fn name(&self, o: &mut Out<'_>) {
        o.attr(&self.1.name);
    }
}

impl views::rooms::person_creator::View for Row<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.1.id);
    }
}

/// Rails' "can create rooms" check for open/closed new and create: 403 when the account
/// restricts creation to administrators and the viewer is not one.
pub fn ensure_can_create(cx: &Ctx, rq: &Req<'_, '_>) -> Result<(), AppError> {
    let restrict = db::accounts::restricts_room_creation(&cx.db)?;
    if restrict && !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    Ok(())
}

/// `room[name]`, required as Rails' `params.require(:room)` does (400 when absent).
fn room_name(rq: &Req<'_, '_>) -> Result<String, AppError> {
    let name = rq.params.get_str("room[name]").ok_or(AppError::BadRequest("param is missing or the value is empty: room"))?;
    Ok(name.to_owned())
}

/// For `POST /rooms/{opens,closeds}`: checks the creation permission, then gives the
/// creator's id and the new room's `room[name]`.
pub fn to_create(cx: &Ctx, rq: &Req<'_, '_>) -> Result<(i64, String), AppError> {
    ensure_can_create(cx, rq)?;
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    Ok((user.id, room_name(rq)?))
}

/// `GET /rooms/{opens,closeds}/:id/edit` shown as `variant`: any member of the shared room
/// may look.
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response, variant: Kind) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.id, Scope::Shared)? else { return room_scope::not_found(cx, rq, res) };
    render(cx, rq, res, variant, Some(room))
}

/// For `PATCH/PUT /rooms/{opens,closeds}/:id`: the id of the user's shared room `:id`, which
/// they must be able to administer (else 403, before any change), and its new `room[name]`.
/// `Ok(None)`: no such room, and the "not found" answer is already in `res`.
pub fn to_update(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Option<(i64, String)>, AppError> {
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.id, Scope::Shared)? else {
        room_scope::not_found(cx, rq, res)?;
        return Ok(None);
    };
    if !room_scope::can_administer(&user, &room) {
        return Err(AppError::Head(403));
    }
    Ok(Some((room.id, room_name(rq)?)))
}
