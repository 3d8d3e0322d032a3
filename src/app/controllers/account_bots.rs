//! Accounts::BotsController and Accounts::Bots::KeysController (spec/02 §4.7, spec/07
//! §11.4): administrators list, create, edit, update and remove chat bots, and reset a bot's
//! key. A bot is a user with role bot and a `bot_token`; its webhook URL lives in `webhooks`.
//!
//! A bot picture (`user[avatar]`) takes the profile's upload path (`form_file`). Webhooks are
//! delivered by `app::webhooks`.

use crate::app::params::parse_id;
use crate::app::form_file::{self, FormFile};
use crate::app::layout::{self, Page};
use crate::app::message_view;
use crate::app::{respond, storage, AppError, Ctx, Flow, Req};
use crate::db::{self, bots::Bot, Conn, Job};
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /account/bots`: the active bots by name, each with curl commands for its rooms.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    administrator(rq)?;
    let origin = rq.origin();
    let mut cards = Vec::new();
    for bot in db::bots::active(&cx.db)? {
        let rooms = db::bots::shared_rooms(&cx.db, bot.id)?;
        let avatar_url = message_view::avatar_url(&cx.keys, bot.id, bot.updated_at);
        views::accounts::bots::bot::render(&Card { bot: &bot, avatar_url, rooms, origin: &origin }, &mut Out::new(&mut cards));
    }
    layout::page(cx, rq, res, 200, &Index { cards })?;
    Ok(Flow::Done)
}

/// `GET /account/bots/new`: the empty bot form.
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    administrator(rq)?;
    let avatar_url = crate::assets::url("default-bot.svg").unwrap_or("").to_owned();
    layout::page(cx, rq, res, 200, &Form { bot: None, avatar_url, webhook_url: String::new() })?;
    Ok(Flow::Done)
}

/// `POST /account/bots`: `user[name]`, `user[webhook_url]` → a new bot with a fresh token
/// (and a webhook row when the URL key was sent); 302 `/account/bots`.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    administrator(rq)?;
    let form = BotParams::read(rq)?;
    let name = form.name.unwrap_or_default();
    let token = String::from_utf8_lossy(&crate::crypto::token::bot_token()).into_owned();
    let webhook_url = form.webhook_url;
    save(cx, rq, form.avatar, "account/bots#create", move |c, now| db::bots::create(c, &name, &token, webhook_url.as_deref(), now))
}

/// `GET /account/bots/:id/edit` (an active bot, else 404): the form with its name, webhook
/// URL, and the reset-key and delete buttons.
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let bot = active_bot(cx, rq)?;
    let avatar_url = message_view::avatar_url(&cx.keys, bot.id, bot.updated_at);
    let webhook_url = db::bots::webhook_url(&cx.db, bot.id)?.unwrap_or_default();
    layout::page(cx, rq, res, 200, &Form { bot: Some(bot), avatar_url, webhook_url })?;
    Ok(Flow::Done)
}

/// `PATCH/PUT /account/bots/:id`: renames the bot when `user[name]` is sent and sets its
/// webhook to `user[webhook_url]`, deleting the webhook when that is blank or missing
/// (Rails' `update_bot!`); 302 `/account/bots`.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let bot = active_bot(cx, rq)?;
    let form = BotParams::read(rq)?;
    let (name, webhook_url) = (form.name, form.webhook_url);
    save(cx, rq, form.avatar, "account/bots#update", move |c, now| {
        db::bots::set_webhook(c, bot.id, webhook_url.as_deref(), now)?;
        let changes = db::users::Changes { name: name.as_deref(), ..Default::default() };
        db::users::update(c, bot.id, &changes, now)?;
        Ok(bot.id)
    })
}

/// Runs `write` (which returns the bot's id) on the writer and redirects to `/account/bots`;
/// with a picture, the worker first stores the file and the same job attaches it as the bot's
/// avatar (a file whose rows do not commit is deleted again, as for profiles).
fn save(
    cx: &mut Ctx,
    rq: &mut Req<'_, '_>,
    avatar: Option<FormFile>,
    who: &'static str,
    write: impl FnOnce(&Conn, i64) -> db::Result<i64> + Send + 'static,
) -> Result<Flow, AppError> {
    let Some(avatar) = avatar else {
        let now = db::time::now_us();
        return cx.write(rq, move |c| write(c, now), |_, res, done| {
            done?;
            respond::redirect(res, "/account/bots");
            Ok(())
        });
    };
    let (root, writer, ticket) = (cx.config.storage_path.clone(), cx.writer.clone(), rq.ticket());
    let queued = cx.worker.submit(move || {
        let Some((stored, ticket)) = form_file::store(Some(avatar), &root, form_file::AVATAR, who, ticket) else { return };
        let new_keys = stored.as_ref().map(|s| s.keys()).unwrap_or_default();
        let now = db::time::now_us();
        writer.submit(Job::new(
            move |c| {
                let id = write(c, now)?;
                match &stored {
                    Some(s) => s.attach(c, "User", id, "avatar", now),
                    None => Ok(Vec::new()),
                }
            },
            move |saved| storage::finish_upload(ticket, saved, new_keys, "/account/bots"),
        ));
    });
    if !queued {
        eprintln!("app: {who}: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
}

/// `DELETE /account/bots/:id`: deactivates the bot (spec/01 §4.4); 302 `/account/bots`.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let bot = active_bot(cx, rq)?;
    let uuid = String::from_utf8_lossy(&crate::crypto::token::uuid_v4()).into_owned();
    let now = db::time::now_us();
    cx.write(rq, move |c| db::users::deactivate(c, bot.id, &uuid, now), move |_, res, done| {
        done?;
        crate::app::cable::disconnect_user(bot.id);
        respond::redirect(res, "/account/bots");
        Ok(())
    })
}

/// `PATCH/PUT /account/bots/:id/key`: a fresh bot token (the old key stops working at
/// once); 302 `/account/bots`.
pub fn update_key(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let bot = active_bot(cx, rq)?;
    let token = String::from_utf8_lossy(&crate::crypto::token::bot_token()).into_owned();
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| db::users::update(c, bot.id, &db::users::Changes { bot_token: Some(Some(&token)), ..Default::default() }, now),
        |_, res, done| {
            done?;
            respond::redirect(res, "/account/bots");
            Ok(())
        },
    )
}

/// Administrators only (403).
fn administrator(rq: &Req<'_, '_>) -> Result<(), AppError> {
    if rq.is_admin() { Ok(()) } else { Err(AppError::Head(403)) }
}

/// The active bot of the path, for administrators (403; 404 when not an active bot).
fn active_bot(cx: &Ctx, rq: &Req<'_, '_>) -> Result<Bot, AppError> {
    administrator(rq)?;
    let id = parse_id(rq.route.params.id).ok_or(AppError::NotFound)?;
    db::bots::find_active(&cx.db, id)?.ok_or(AppError::NotFound)
}

/// `params.require(:user).permit(:name, :avatar, :webhook_url)`.
struct BotParams {
    name: Option<String>,
    webhook_url: Option<String>,
    avatar: Option<FormFile>,
}

impl BotParams {
    fn read(rq: &Req<'_, '_>) -> Result<BotParams, AppError> {
        if !rq.params.has_group("user") {
            return Err(AppError::BadRequest("param is missing or the value is empty: user"));
        }
        Ok(BotParams {
            name: rq.params.get_str("user[name]").map(str::to_owned),
            webhook_url: rq.params.get_str("user[webhook_url]").map(str::to_owned),
            avatar: FormFile::from_request(rq, "user[avatar]")?,
        })
    }
}

struct Index {
    cards: Vec<u8>,
}

impl Page for Index {
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Chat bots");
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(&Back { path: "/account/edit", title: "Chat bots".into() }, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::accounts::bots::index::render(self, o);
    }
}

impl views::accounts::bots::index::View for Index {
    fn bots(&self, o: &mut Out<'_>) {
        // Rendered by `bot.html` through `Out`, which escapes every hole.
        o.0.extend_from_slice(&self.cards);
    }
}

struct Card<'a> {
    bot: &'a Bot,
    avatar_url: String,
    rooms: Vec<(i64, String)>,
    origin: &'a str,
}

impl views::accounts::bots::bot::View for Card<'_> {
    fn bot_id(&self, o: &mut Out<'_>) {
        o.int(self.bot.id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(&self.avatar_url);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(&self.bot.name);
    }
    fn rooms(&self, o: &mut Out<'_>) {
        for (id, name) in &self.rooms {
            let url = format!("{}/rooms/{id}/{}-{}/messages", self.origin, self.bot.id, self.bot.bot_token);
            views::accounts::bots::bot_room::render(&RoomCommands { name, url }, o);
        }
    }
}

struct RoomCommands<'a> {
    name: &'a str,
    url: String,
}

impl views::accounts::bots::bot_room::View for RoomCommands<'_> {
    fn room_name(&self, o: &mut Out<'_>) {
        o.text(self.name);
    }
    fn text_curl(&self, o: &mut Out<'_>) {
        o.attr(&format!("curl -d 'Hello!' {}", self.url));
    }
    fn file_curl(&self, o: &mut Out<'_>) {
        o.attr(&format!("curl -F \"attachment=@/path/to/file\" {}", self.url));
    }
}

struct Form {
    bot: Option<Bot>,
    avatar_url: String,
    webhook_url: String,
}

impl Form {
    fn title(&self) -> String {
        match &self.bot {
            Some(b) => format!("Edit {}", b.name),
            None => "New chat bot".into(),
        }
    }
}

impl Page for Form {
    fn title(&self, o: &mut Out<'_>) {
        o.text(&self.title());
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::layouts::back_nav::render(&Back { path: "/account/bots", title: self.title() }, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::accounts::bots::form::render(self, o);
    }
}

impl views::accounts::bots::form::View for Form {
    fn action(&self, o: &mut Out<'_>) {
        match &self.bot {
            Some(b) => o.attr(&format!("/account/bots/{}", b.id)),
            None => o.static_bytes(b"/account/bots"),
        }
    }
    fn method_field(&self, o: &mut Out<'_>) {
        if self.bot.is_some() {
            views::layouts::method_field::render(&Method("patch"), o);
        }
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(&self.avatar_url);
    }
    fn name(&self, o: &mut Out<'_>) {
        o.attr(self.bot.as_ref().map(|b| b.name.as_str()).unwrap_or(""));
    }
    fn webhook_url(&self, o: &mut Out<'_>) {
        o.attr(&self.webhook_url);
    }
    fn edit_actions(&self, o: &mut Out<'_>) {
        if let Some(b) = &self.bot {
            views::accounts::bots::edit_actions::render(&EditActions(b.id), o);
        }
    }
}

struct EditActions(i64);

impl views::accounts::bots::edit_actions::View for EditActions {
    fn bot_id(&self, o: &mut Out<'_>) {
        o.int(self.0);
    }
}

struct Method(&'static str);

impl views::layouts::method_field::View for Method {
    fn method(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}

struct Back {
    path: &'static str,
    title: String,
}

impl views::layouts::back_nav::View for Back {
    fn back_path(&self, o: &mut Out<'_>) {
        o.attr(self.path);
    }
    fn back_label(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Go back");
    }
    fn title(&self, o: &mut Out<'_>) {
        o.text(&self.title);
    }
    fn actions(&self, _o: &mut Out<'_>) {}
}
