//! AccountsController (spec/02 §4.5, spec/07 §11.1–11.2): the account settings page — logo,
//! name and room-creation setting for administrators, the invite link, the people — and
//! saving the account. Accounts::UsersController's rows are rendered here too
//! (`account_users.rs` pages through them).

use crate::app::translations::{self, Phrase};
use crate::app::room_scope;
use super::sessions::logo_url;
use crate::app::layout::{self, Page};
use crate::app::message_view::write_avatar_url;
use crate::app::form_file::{self, FormFile};
use crate::app::{storage, AppError, Ctx, Flow, Req};
use crate::crypto::{base64, Keys};
use crate::db::{self, users::Person, users::User, Job};
use crate::http::Response;
use crate::views::{self, Out};

/// People per page of the list (Rails' geared pagination).
pub const PAGE_SIZE: i64 = 500;

/// `GET /account/edit` (any signed-in user; administrators get the editable parts).
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let viewer = rq.user().cloned().ok_or(AppError::Head(401))?;
    let account = db::accounts::get(&cx.db)?.ok_or(AppError::NotFound)?;
    // One more than a page tells whether a next page exists.
    let mut people = db::users::account_people(&cx.db, viewer.is_administrator(), PAGE_SIZE + 1, 0)?;
    let more = people.len() as i64 > PAGE_SIZE;
    people.truncate(PAGE_SIZE as usize);
    let has_logo = db::blobs::attached(&cx.db, "Account", account.id, "logo")?.is_some();
    let page = Settings {
        keys: cx.keys.clone(),
        back: room_scope::last_room_path(cx, rq, viewer.id)?,
        join_url: format!("{}/join/{}", rq.origin(), account.join_code),
        logo_url: logo_url(cx)?,
        version: cx.env.version.clone(),
        viewer,
        account,
        people,
        more,
        has_logo,
    };
    layout::page(cx, rq, res, 200, &page)?;
    Ok(Flow::Done)
}

/// `PATCH/PUT /account` (administrators only, else 403): `account[name]`,
/// `account[settings][restrict_room_creation_to_administrators]` (`"true"`/`"false"`) and
/// `account[logo]` (a file, written on the worker). 400 without any `account[…]`. Then 302
/// `/account/edit` with notice `✓`.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    if !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    let logo = FormFile::from_request(rq, "account[logo]")?;
    if !rq.params.has_group("account") && logo.is_none() {
        return Err(AppError::BadRequest("param is missing or the value is empty: account"));
    }
    let name = rq.params.get_str("account[name]").map(str::to_owned);
    let restrict = match rq.params.get("account[settings][restrict_room_creation_to_administrators]") {
        Some(b"true") | Some(b"1") => Some(true),
        Some(_) => Some(false),
        None => None,
    };
    let needs_worker = logo.is_some();
    rq.flash_notice(cx, "✓");
    let storage_root = cx.config.storage_path.clone();
    let writer = cx.writer.clone();
    let ticket = rq.ticket();
    let save = move || {
        let Some((stored, ticket)) = form_file::store(logo, &storage_root, form_file::LOGO, "accounts#update", ticket) else { return };
        let new_keys = stored.as_ref().map(|s| s.keys()).unwrap_or_default();
        let now = db::time::now_us();
        writer.submit(Job::new(
            move |c| {
                let ch = db::accounts::Changes { name: name.as_deref(), restrict_room_creation: restrict, ..Default::default() };
                db::accounts::update(c, &ch, now)?;
                let Some(s) = &stored else { return Ok(Vec::new()) };
                let Some(account) = db::accounts::get(c)? else { return Ok(Vec::new()) };
                s.attach(c, "Account", account.id, "logo", now)
            },
            move |saved| storage::finish_upload(ticket, saved, new_keys, "/account/edit"),
        ));
    };
    // Only a file needs the worker; a plain save goes straight to the writer.
    if !needs_worker {
        save();
    } else if !cx.worker.submit(save) {
        eprintln!("app: accounts#update: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
}

struct Settings {
    keys: std::sync::Arc<Keys>,
    viewer: User,
    account: db::accounts::Account,
    people: Vec<Person>,
    more: bool,
    has_logo: bool,
    back: String,
    join_url: String,
    logo_url: String,
    version: String,
}

impl Page for Settings {
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Account settings");
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::accounts::edit::render(self, o);
    }
}

impl views::layouts::back_nav::View for Settings {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(&self.back);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Account settings");
    }
    fn actions(&self, o: &mut Out<'_>) {
        if self.viewer.is_administrator() {
            views::accounts::admin_links::render(&NoHoles, o);
        }
    }
}

impl views::accounts::edit::View for Settings {
    fn identity(&self, o: &mut Out<'_>) {
        if self.viewer.is_administrator() {
            views::accounts::identity_admin::render(self, o);
        } else {
            views::accounts::identity::render(self, o);
        }
    }
    fn invite(&self, o: &mut Out<'_>) {
        views::accounts::invite::render(self, o);
    }
    fn users(&self, o: &mut Out<'_>) {
        let (admins, members): (Vec<&Person>, Vec<&Person>) =
            self.people.iter().partition(|p| p.role == db::users::ROLE_ADMINISTRATOR);
        for p in admins {
            render_person(&self.keys, &self.viewer, p, o);
        }
        views::layouts::rule::render(&NoHoles, o);
        for p in members {
            render_person(&self.keys, &self.viewer, p, o);
        }
    }
    fn next_page(&self, o: &mut Out<'_>) {
        if self.more {
            views::accounts::next_page::render(&NextPage(2), o);
        }
    }
    fn version(&self, o: &mut Out<'_>) {
        o.text(&self.version);
    }
}

impl views::accounts::identity::View for Settings {
    fn logo_url(&self, o: &mut Out<'_>) {
        o.attr(&self.logo_url);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.account.name);
    }
}

impl views::accounts::identity_admin::View for Settings {
    fn logo_url(&self, o: &mut Out<'_>) {
        o.attr(&self.logo_url);
    }
    fn delete_logo(&self, o: &mut Out<'_>) {
        if self.has_logo {
            views::accounts::delete_logo::render(&NoHoles, o);
        }
    }
    fn name(&self, o: &mut Out<'_>) {
        o.attr(&self.account.name);
    }
    fn restrict_value(&self, o: &mut Out<'_>) {
        o.static_bytes(if self.account.restrict_room_creation { b"false" } else { b"true" });
    }
    fn restrict_checked(&self, o: &mut Out<'_>) {
        if self.account.restrict_room_creation {
            o.static_bytes(b"checked");
        }
    }
    fn translate_name(&self, o: &mut Out<'_>) {
        translations::button(Phrase::AccountName, o);
    }
}

impl views::accounts::invite::View for Settings {
    fn join_url(&self, o: &mut Out<'_>) {
        o.attr(&self.join_url);
    }
    fn qr_path(&self, o: &mut Out<'_>) {
        let mut b64 = Vec::with_capacity(96);
        base64::encode(base64::Alphabet::UrlSafe, true, self.join_url.as_bytes(), &mut b64);
        o.static_bytes(b"/qr_code/");
        o.attr(&String::from_utf8_lossy(&b64));
    }
    fn can_regenerate(&self, o: &mut Out<'_>) {
        if self.viewer.is_administrator() {
            views::accounts::regenerate_join::render(&NoHoles, o);
        }
    }
}

pub(crate) struct NoHoles;
impl views::accounts::admin_links::View for NoHoles {}
impl views::accounts::delete_logo::View for NoHoles {}
impl views::accounts::regenerate_join::View for NoHoles {}
impl views::accounts::own_row::View for NoHoles {}
impl views::layouts::rule::View for NoHoles {}

/// The lazy loader of page `n` of the people.
pub(crate) struct NextPage(pub i64);

impl views::accounts::next_page::View for NextPage {
    fn page(&self, o: &mut Out<'_>) {
        o.int(self.0);
    }
}

/// One person's row (`accounts/user.html`) as `viewer` sees it: administrators get the role
/// toggle and the remove button for other active people; my own row links to my profile.
pub(crate) fn render_person(keys: &Keys, viewer: &User, p: &Person, o: &mut Out<'_>) {
    views::accounts::user::render(&Row { keys, viewer, p }, o);
}

struct Row<'a> {
    keys: &'a Keys,
    viewer: &'a User,
    p: &'a Person,
}

impl views::accounts::user::View for Row<'_> {
    fn banned_class(&self, o: &mut Out<'_>) {
        if self.p.status == db::users::STATUS_BANNED {
            o.static_bytes(b" banned");
        }
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        write_avatar_url(self.keys, self.p.id, self.p.updated_at, o);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.p.name);
    }
    fn controls(&self, o: &mut Out<'_>) {
        if self.p.id == self.viewer.id {
            views::accounts::own_row::render(&NoHoles, o);
        } else if self.viewer.is_administrator() && self.p.status == db::users::STATUS_ACTIVE {
            views::accounts::user_controls::render(self, o);
        }
    }
}

impl views::accounts::user_controls::View for Row<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.p.id);
    }
    fn checked(&self, o: &mut Out<'_>) {
        if self.p.role == db::users::ROLE_ADMINISTRATOR {
            o.static_bytes(b"checked");
        }
    }
    fn role_label(&self, o: &mut Out<'_>) {
        o.static_bytes(if self.p.role == db::users::ROLE_ADMINISTRATOR { b"Administrator" } else { b"Member" });
    }
}
