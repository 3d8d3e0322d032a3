//! RoomsController (spec/02 §4.20, spec/07 §2): `GET /rooms` (the newest room), the room page
//! `GET /rooms/:id` and its permalink form `/rooms/:room_id/@:message_id`, and
//! `DELETE /rooms/:id` (whose `destroy_room` the directs controller shares, as its Rails
//! subclass does). The lookup and title the room controllers share are in `app::room_scope`.
//!
//! The room page is byte-stable for a given viewer and data epoch: `last_room` is sent only
//! when the request's cookie names another room, and marking an unread room read happens on
//! the writer without waiting for it (the page shown is the same either way).

use crate::app::layout::{self, Page};
use crate::app::message_view;
use crate::app::room_scope::{can_administer, display_name, edit_path, find, not_found, remember_last_room, Scope};
use crate::app::room_streams::{broadcast_html, param_key as room_key, signed_stream};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::rooms::{Kind, Room};
use crate::db::{self, users::User, Conn, Job};
use crate::http::Response;
use crate::views::{self, Out};
use std::cell::RefCell;

use crate::app::params::parse_id;

/// `GET /rooms`: the viewer's room with the highest id.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    match db::rooms::last_for_user(&cx.db, user.id)? {
        Some(id) => respond::redirect(res, &format!("/rooms/{id}")),
        // Rails raises here (500); the welcome page is the useful answer.
        None => respond::redirect(res, "/"),
    }
    Ok(Flow::Done)
}

/// `GET /rooms/:id` and `GET /rooms/:room_id/@:message_id`: the room page.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let Some(room) = find(cx, user.id, rq.route.params.id, Scope::Any)? else { return not_found(cx, rq, res) };
    let anchor = match parse_id(rq.route.params.message_id) {
        Some(id) => db::messages::find_in_room(&cx.db, room.id, id)?.map(|m| m.id),
        None => None,
    };
    let list = match anchor {
        Some(id) => message_view::collect(|f| db::messages::page_around(&cx.db, room.id, id, f))?,
        None => message_view::collect(|f| db::messages::last_page(&cx.db, room.id, f))?,
    };
    // Reading the room clears its unread mark; the page does not depend on it, so the
    // writer does it without holding the response.
    if db::rooms::is_unread(&cx.db, room.id, user.id)? {
        let (room_id, user_id) = (room.id, user.id);
        cx.outbox.submit(Job::new(move |c: &Conn| db::rooms::mark_read(c, room_id, user_id), |_| {}));
    }
    let invitation = invitation_shown(&cx.db, room.id)?;
    let chrome = layout::Chrome::of(cx, rq);
    let page = RoomPage {
        cx,
        name: display_name(&cx.db, &room, &user)?,
        origin: rq.origin(),
        room,
        user,
        list,
        invitation,
        error: RefCell::new(None),
    };
    layout::render(cx, &chrome, res, 200, &page)?;
    if let Some(e) = page.error.take() {
        return Err(e.into());
    }
    remember_last_room(cx, rq, res, page.room.id);
    Ok(Flow::Done)
}

/// The room page's parts (spec/07 §2). Rendering errors (database) are kept and returned
/// after the layout has run, since the layout's hole methods cannot fail.
struct RoomPage<'a> {
    cx: &'a Ctx,
    room: Room,
    user: User,
    name: String,
    origin: String,
    list: Vec<db::messages::Message>,
    invitation: bool,
    error: RefCell<Option<db::Error>>,
}

impl RoomPage<'_> {
    fn keep(&self, r: db::Result<()>) {
        if let Err(e) = r {
            self.error.borrow_mut().get_or_insert(e);
        }
    }
}

impl Page for RoomPage<'_> {
    fn title(&self, o: &mut Out<'_>) {
        o.text(&self.name);
    }
    fn head_extra(&self, o: &mut Out<'_>) {
        views::rooms::head::render(self, o);
    }
    fn body_class(&self) -> &'static str {
        "sidebar"
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::rooms::nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::rooms::show::render(self, o);
    }
    fn footer(&self, o: &mut Out<'_>) {
        views::rooms::composer::render(self, o);
    }
    fn sidebar(&self, o: &mut Out<'_>) {
        views::sidebar::frame::render(&NoHoles, o);
    }
}

struct NoHoles;
impl views::sidebar::frame::View for NoHoles {}

impl views::rooms::head::View for RoomPage<'_> {
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
}

impl views::rooms::nav::View for RoomPage<'_> {
    fn account_logo(&self, o: &mut Out<'_>) {
        // Only an uploaded logo shows in the nav; uploads are not built yet (issue: files).
        let _ = o;
    }
    fn sr_prefix(&self, o: &mut Out<'_>) {
        if self.room.kind == Kind::Direct {
            o.static_bytes(b"Ping with ");
        }
    }
    fn room_name(&self, o: &mut Out<'_>) {
        o.text(&self.name);
    }
    fn edit_path(&self, o: &mut Out<'_>) {
        o.attr(&edit_path(&self.room));
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
    fn settings_label(&self, o: &mut Out<'_>) {
        o.static_bytes(if self.room.kind == Kind::Direct { b"Settings for this Ping" } else { b"Settings for this room" });
    }
    fn bell(&self, o: &mut Out<'_>) {
        views::rooms::bell::render(self, o);
    }
}

impl views::rooms::bell::View for RoomPage<'_> {
    fn room_key(&self, o: &mut Out<'_>) {
        o.attr(room_key(self.room.kind));
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
    fn bell_label(&self, o: &mut Out<'_>) {
        o.static_bytes(if self.room.kind == Kind::Direct {
            b"Notification settings for this Ping"
        } else {
            b"Notification settings for this room"
        });
    }
}

impl views::rooms::show::View for RoomPage<'_> {
    fn pending_template(&self, o: &mut Out<'_>) {
        views::messages::pending::render(self, o);
    }
    fn room_key(&self, o: &mut Out<'_>) {
        o.attr(room_key(self.room.kind));
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
    fn origin(&self, o: &mut Out<'_>) {
        o.attr(&self.origin);
    }
    fn loaded_at_ms(&self, o: &mut Out<'_>) {
        o.int(self.room.updated_at / 1000);
    }
    fn actions_menu(&self, o: &mut Out<'_>) {
        views::messages::actions::render(&NoHoles, o);
    }
    fn invitation(&self, o: &mut Out<'_>) {
        if self.invitation {
            views::rooms::invitation::render(self, o);
        }
    }
    fn messages(&self, o: &mut Out<'_>) {
        self.keep(message_view::render_messages(&self.cx.db, &self.cx.keys, &self.list, o.0));
    }
    fn signed_stream(&self, o: &mut Out<'_>) {
        signed_stream(self.cx, &crate::app::room_streams::messages_stream(self.room.kind, self.room.id), o);
    }
}

impl views::messages::actions::View for NoHoles {}

impl views::messages::pending::View for RoomPage<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.user.id);
    }
    fn avatar(&self, o: &mut Out<'_>) {
        views::users::avatar::render(&Avatar(&self.cx.keys, &self.user), o);
    }
    fn user_name(&self, o: &mut Out<'_>) {
        o.text(&self.user.name);
    }
}

/// The standard avatar widget of a user (`users/avatar.html`).
pub struct Avatar<'a>(pub &'a crate::crypto::Keys, pub &'a User);

impl views::users::avatar::View for Avatar<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.1.id);
    }
    fn title(&self, o: &mut Out<'_>) {
        match self.1.bio.as_deref().filter(|b| !b.trim().is_empty()) {
            Some(bio) => o.attr(&format!("{} \u{2013} {bio}", self.1.name)),
            None => o.attr(&self.1.name),
        }
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        message_view::write_avatar_url(self.0, self.1.id, self.1.updated_at, o);
    }
}

impl views::rooms::invitation::View for RoomPage<'_> {
    fn logo_url(&self, o: &mut Out<'_>) {
        o.static_bytes(b"/account/logo");
        // The versioned URL, as the layout's icons use, so a new logo is not served stale.
        if let Ok(Some(v)) = db::layout::account_look(&self.cx.db).map(|l| l.updated_at) {
            o.static_bytes(b"?v=");
            layout::version_stamp(v, o);
        }
    }
    fn invite(&self, o: &mut Out<'_>) {
        views::accounts::invite::render(self, o);
    }
}

impl views::accounts::invite::View for RoomPage<'_> {
    fn join_url(&self, o: &mut Out<'_>) {
        o.attr(&self.join_url());
    }
    fn qr_path(&self, o: &mut Out<'_>) {
        let mut b64 = Vec::with_capacity(96);
        crate::crypto::base64::encode(crate::crypto::base64::Alphabet::UrlSafe, true, self.join_url().as_bytes(), &mut b64);
        o.static_bytes(b"/qr_code/");
        o.attr(std::str::from_utf8(&b64).unwrap_or(""));
    }
    fn can_regenerate(&self, o: &mut Out<'_>) {
        if self.user.is_administrator() {
            views::accounts::regenerate_join::render(&NoHoles, o);
        }
    }
}

impl views::accounts::regenerate_join::View for NoHoles {}

impl RoomPage<'_> {
    fn join_url(&self) -> String {
        let code = db::accounts::get(&self.cx.db).ok().flatten().map(|a| a.join_code).unwrap_or_default();
        format!("{}/join/{code}", self.origin)
    }
}

impl views::rooms::composer::View for RoomPage<'_> {
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
    fn max_upload(&self, o: &mut Out<'_>) {
        o.int(self.cx.config.limits.max_upload as i64);
    }
}

/// The welcome block shows in the account's original room while it has ≤ 40 messages.
fn invitation_shown(c: &Conn, room_id: i64) -> Result<bool, AppError> {
    Ok(db::rooms::original(c)? == Some(room_id) && db::messages::count(c, room_id)? <= 40)
}

/// `DELETE /rooms/:id`: admin or creator; destroys the room and tells every sidebar.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let Some(room) = find(cx, user.id, rq.route.params.id, Scope::Any)? else { return not_found(cx, rq, res) };
    if !can_administer(&user, &room) {
        return Err(AppError::Head(403));
    }
    destroy_room(cx, rq, room)
}

/// Destroys `room` on the writer, broadcasts its removal on `rooms`, then 302 `/`
/// (shared by rooms#destroy and rooms/directs#destroy).
pub fn destroy_room(cx: &mut Ctx, rq: &mut Req<'_, '_>, room: Room) -> Result<Flow, AppError> {
    let (id, kind) = (room.id, room.kind);
    cx.write(
        rq,
        move |c: &Conn| db::rooms::destroy(c, id, db::time::now_us()),
        move |cx, res, result| {
            // The messages' attachment files go once their rows are gone for good.
            if let Some(files) = result? {
                crate::app::storage::delete(&cx.config.storage_path, &files);
                broadcast_html("rooms", &super::sidebars::remove_stream(kind, id));
            }
            respond::redirect(res, "/");
            Ok(())
        },
    )
}
