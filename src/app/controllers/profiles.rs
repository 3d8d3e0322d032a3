//! Users::ProfilesController (spec/02 §4.16, spec/07 §10.1): my own settings page — avatar,
//! name, e-mail, password, bio, my rooms with their notification toggles, the sign-in transfer
//! link — and saving it. The `:user_id` in the path is ignored: it is always me.
//!
//! Saving runs on the worker first (bcrypt for a new password, writing an uploaded avatar's
//! file), then on the writer (the user row, the avatar's blob and attachment rows), then back
//! on the loop. A file written for a save that then fails is deleted again.

use crate::app::translations::{self, Phrase};
use crate::app::room_scope;
use crate::app::room_streams::param_key as room_key;
use super::rooms_involvements::{label, next};
use super::users_show::Transfer;
use crate::app::layout::{self, Page};
use crate::app::message_view::avatar_url;
use crate::app::form_file::{self, FormFile};
use crate::app::{storage, AppError, Ctx, Flow, Req};
use crate::db::memberships::Involvement;
use crate::db::rooms::Kind;
use crate::db::{self, users::User, Job};
use crate::http::Response;
use crate::views::{self, Out};

/// The notice after an avatar upload (variants take time to reach every cache in Rails).
pub const AVATAR_NOTICE: &str = "It may take up to 30 minutes to change everywhere.";

/// `GET /users/:user_id/profile`.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let me = rq.user().cloned().ok_or(AppError::Head(401))?;
    let mut shared = Vec::new();
    let mut direct = Vec::new();
    db::memberships::all_rooms(&cx.db, me.id, |r| {
        let row = Row { room_id: r.room_id, kind: r.kind, name: r.name.unwrap_or("").to_owned(), involvement: r.involvement.unwrap_or(Involvement::Mentions) };
        if r.kind == Kind::Direct { direct.push(row) } else { shared.push(row) }
        Ok(())
    })?;
    // A ping is shown by its members' names, so those rows are named and sorted here.
    for row in &mut direct {
        if let Some(room) = db::rooms::find(&cx.db, row.room_id)? {
            row.name = room_scope::display_name(&cx.db, &room, &me)?;
        }
    }
    direct.sort_by_key(|r| r.name.to_lowercase());
    shared.extend(direct);
    let has_avatar = db::blobs::attached(&cx.db, "User", me.id, "avatar")?.is_some();
    let back = rq
        .header(b"referer")
        .and_then(|r| std::str::from_utf8(r).ok())
        .map(str::to_owned)
        .unwrap_or_else(|| "/".to_owned());
    let transfer = Transfer::new(cx, rq, me.id, true);
    let avatar = avatar_url(&cx.keys, me.id, me.updated_at);
    layout::page(cx, rq, res, 200, &Profile { me, rows: shared, has_avatar, back, transfer, avatar })?;
    Ok(Flow::Done)
}

/// `PATCH/PUT /users/:user_id/profile`: `user[name]`, `user[email_address]`, `user[bio]`,
/// `user[password]` (empty = unchanged), `user[avatar]` (a file). 400 without any `user[…]`.
/// 302 to `/users/me/profile` with a notice. A duplicate e-mail is a 500, as in Rails.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let me = rq.user().ok_or(AppError::Head(401))?.id;
    let avatar = FormFile::from_request(rq, "user[avatar]")?;
    if !rq.params.has_group("user") && avatar.is_none() {
        return Err(AppError::BadRequest("param is missing or the value is empty: user"));
    }
    let text = |n: &str| rq.params.get_str(n).map(str::to_owned);
    let form = Form {
        name: text("user[name]"),
        email_address: text("user[email_address]"),
        bio: text("user[bio]"),
        password: rq.params.get("user[password]").filter(|p| !p.is_empty()).map(<[u8]>::to_vec),
        avatar,
    };
    rq.flash_notice(cx, if form.avatar.is_some() { AVATAR_NOTICE } else { "✓" });
    let storage_root = cx.config.storage_path.clone();
    let writer = cx.writer.clone();
    let ticket = rq.ticket();
    let queued = cx.worker.submit(move || {
        let digest = form.password.as_deref().map(crate::crypto::bcrypt::hash);
        let Some((stored, ticket)) = form_file::store(form.avatar, &storage_root, form_file::AVATAR, "profiles#update", ticket) else { return };
        let new_keys = stored.as_ref().map(|s| s.keys()).unwrap_or_default();
        let now = db::time::now_us();
        writer.submit(Job::new(
            move |c| {
                let changes = db::users::Changes {
                    name: form.name.as_deref(),
                    email_address: form.email_address.as_deref().map(Some),
                    bio: form.bio.as_deref().map(Some),
                    password_digest: digest.as_deref().map(Some),
                    ..db::users::Changes::default()
                };
                db::users::update(c, me, &changes, now)?;
                match &stored {
                    Some(s) => s.attach(c, "User", me, "avatar", now),
                    None => Ok(Vec::new()),
                }
            },
            move |saved| storage::finish_upload(ticket, saved, new_keys, "/users/me/profile"),
        ));
    });
    if !queued {
        eprintln!("app: profiles#update: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
}

struct Form {
    name: Option<String>,
    email_address: Option<String>,
    bio: Option<String>,
    password: Option<Vec<u8>>,
    avatar: Option<FormFile>,
}

struct Row {
    room_id: i64,
    kind: Kind,
    name: String,
    involvement: Involvement,
}

struct Profile {
    me: User,
    rows: Vec<Row>,
    has_avatar: bool,
    back: String,
    transfer: Transfer,
    avatar: String,
}

impl Page for Profile {
    fn title(&self, o: &mut Out<'_>) {
        o.text(&self.me.name);
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::users::profile_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::users::profile::render(self, o);
    }
}

impl views::users::profile_nav::View for Profile {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.me.name);
    }
}

impl views::users::profile::View for Profile {
    fn install(&self, o: &mut Out<'_>) {
        views::users::install::render(&NoHoles, o);
    }
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.me.id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(&self.avatar);
    }
    fn delete_avatar(&self, o: &mut Out<'_>) {
        if self.has_avatar {
            views::users::delete_avatar::render(self, o);
        }
    }
    fn name(&self, o: &mut Out<'_>) {
        o.attr(&self.me.name);
    }
    fn email_address(&self, o: &mut Out<'_>) {
        o.attr(self.me.email_address.as_deref().unwrap_or(""));
    }
    fn bio(&self, o: &mut Out<'_>) {
        o.text(self.me.bio.as_deref().unwrap_or(""));
    }
    fn memberships(&self, o: &mut Out<'_>) {
        for r in &self.rows {
            views::users::membership::render(r, o);
        }
    }
    fn transfer(&self, o: &mut Out<'_>) {
        views::users::transfer::render(&self.transfer, o);
    }
    fn translate_name(&self, o: &mut Out<'_>) {
        translations::button(Phrase::YourName, o);
    }
    fn translate_email(&self, o: &mut Out<'_>) {
        translations::button(Phrase::EmailAddress, o);
    }
    fn translate_password(&self, o: &mut Out<'_>) {
        translations::button(Phrase::ChangePassword, o);
    }
    fn translate_bio(&self, o: &mut Out<'_>) {
        translations::button(Phrase::Bio, o);
    }
}

impl views::users::delete_avatar::View for Profile {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.me.id);
    }
}

struct NoHoles;
impl views::users::install::View for NoHoles {}

impl views::users::membership::View for Row {
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room_id);
    }
    fn room_name(&self, o: &mut Out<'_>) {
        o.text(&self.name);
    }
    fn involvement(&self, o: &mut Out<'_>) {
        views::rooms::involvement::render(self, o);
    }
}

impl views::rooms::involvement::View for Row {
    fn room_key(&self, o: &mut Out<'_>) {
        o.attr(room_key(self.kind));
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room_id);
    }
    fn next(&self, o: &mut Out<'_>) {
        o.attr(next(self.kind, self.involvement).as_str());
    }
    fn current(&self, o: &mut Out<'_>) {
        o.attr(self.involvement.as_str());
    }
    fn label(&self, o: &mut Out<'_>) {
        o.attr(label(self.involvement));
    }
}
