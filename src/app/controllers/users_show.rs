//! UsersController#show (spec/02 §4.12, spec/07 §10.2): a person's page — their avatar and
//! name, e-mail for administrators, bio, and the buttons that apply (ping, sign-in transfer
//! for administrators, ban/unban for administrators looking at someone else). Also the
//! session transfer widget (§10.3) that the own-profile page shares.

use crate::app::params::parse_id;
use crate::app::room_scope;
use crate::app::layout::{self, Page};
use crate::app::message_view::avatar_url;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::crypto::{base64, signed_id, time};
use crate::db::{self, users::User};
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /users/:id`: any user, any status (404 when there is no such user).
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let viewer = rq.user().cloned().ok_or(AppError::Head(401))?;
    let id = parse_id(rq.route.params.id).ok_or(AppError::NotFound)?;
    let user = db::users::find(&cx.db, id)?.ok_or(AppError::NotFound)?;
    let back = room_scope::last_room_path(cx, rq, viewer.id)?;
    let transfer = if viewer.is_administrator() && user.is_active() && !user.is_bot() {
        Some(Transfer::new(cx, rq, user.id, user.id == viewer.id))
    } else {
        None
    };
    let avatar = avatar_url(&cx.keys, user.id, user.updated_at);
    layout::page(cx, rq, res, 200, &UserPage { viewer, user, back, transfer, avatar })?;
    Ok(Flow::Done)
}

struct UserPage {
    viewer: User,
    user: User,
    back: String,
    transfer: Option<Transfer>,
    avatar: String,
}

impl UserPage {
    fn banned(&self) -> bool {
        self.user.status == db::users::STATUS_BANNED
    }
    fn deactivated(&self) -> bool {
        self.user.status == db::users::STATUS_DEACTIVATED
    }
}

impl Page for UserPage {
    fn title(&self, o: &mut Out<'_>) {
        o.text(&self.user.name);
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::users::show::render(self, o);
    }
}

impl views::layouts::back_nav::View for UserPage {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        o.text(&self.user.name);
    }
    fn actions(&self, o: &mut Out<'_>) {
        if self.user.id == self.viewer.id {
            o.static_bytes(b"<a class=\"btn\" href=\"/users/me/profile\"><span class=\"icon icon--edit\"></span><span class=\"for-screen-reader\">Edit your profile</span></a>");
        }
    }
}

impl views::users::show::View for UserPage {
    fn panel_class(&self, o: &mut Out<'_>) {
        if self.banned() {
            o.static_bytes(b" banned");
        }
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(&self.avatar);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.user.name);
    }
    fn details(&self, o: &mut Out<'_>) {
        if self.user.is_bot() || self.deactivated() {
            return;
        }
        if self.viewer.is_administrator() {
            if let Some(email) = self.user.email_address.as_deref().filter(|e| !e.is_empty()) {
                views::users::email::render(&Text(email), o);
            }
        }
        if let Some(bio) = self.user.bio.as_deref().filter(|b| !b.trim().is_empty()) {
            views::users::bio::render(&Text(bio), o);
        }
    }
    fn actions(&self, o: &mut Out<'_>) {
        let id = Id(self.user.id);
        if self.deactivated() || (self.user.is_bot() && !self.user.is_active()) {
            views::users::gone::render(&Text(&self.user.name), o);
            return;
        }
        if self.user.is_active() {
            views::users::ping_button::render(&id, o);
        }
        if self.user.is_bot() {
            return;
        }
        if let Some(t) = &self.transfer {
            views::users::transfer::render(t, o);
        }
        if self.viewer.is_administrator() && self.user.id != self.viewer.id {
            if self.banned() {
                views::users::unban_button::render(&id, o);
            } else {
                views::users::ban_button::render(&id, o);
            }
        }
    }
}

/// A text value for the one-hole snippets (`bio`, `email`, `gone`).
struct Text<'a>(&'a str);

impl views::users::email::View for Text<'_> {
    fn email_address(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}
impl views::users::bio::View for Text<'_> {
    fn bio(&self, o: &mut Out<'_>) {
        o.text(self.0);
    }
}
impl views::users::gone::View for Text<'_> {
    fn name(&self, o: &mut Out<'_>) {
        o.text(self.0);
    }
}

struct Id(i64);

impl views::users::ping_button::View for Id {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.0);
    }
}
impl views::users::ban_button::View for Id {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.0);
    }
}
impl views::users::unban_button::View for Id {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.0);
    }
}

/// The session transfer widget (spec/07 §10.3): a sign-in link for `user_id` valid for 4
/// hours, its QR code path and the label for the viewer.
pub struct Transfer {
    url: String,
    qr_path: String,
    own: bool,
}

impl Transfer {
    /// The widget for `user_id`; `own` when the viewer is that user.
    pub fn new(cx: &Ctx, rq: &Req<'_, '_>, user_id: i64, own: bool) -> Transfer {
        let mut id = Vec::with_capacity(160);
        signed_id::transfer_id(&cx.keys, user_id, time::now_ms(), &mut id);
        let url = format!("{}/session/transfers/{}", rq.origin(), String::from_utf8_lossy(&id));
        let mut qr = Vec::with_capacity(url.len() * 4 / 3 + 4);
        base64::encode(base64::Alphabet::UrlSafe, true, url.as_bytes(), &mut qr);
        Transfer { qr_path: format!("/qr_code/{}", String::from_utf8_lossy(&qr)), url, own }
    }
}

impl views::users::transfer::View for Transfer {
    fn label(&self, o: &mut Out<'_>) {
        o.static_bytes(if self.own { b"Sign in on another device" } else { b"Share to get them back into their account" });
    }
    fn transfer_url(&self, o: &mut Out<'_>) {
        o.attr(&self.url);
    }
    fn qr_path(&self, o: &mut Out<'_>) {
        o.attr(&self.qr_path);
    }
}
