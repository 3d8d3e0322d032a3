//! Messages::BoostsController (spec/02 §4.27, spec/07 §5.5, §5.8): a message's boosts, the
//! inline boost form, boosting, and taking one's own boost back. The message must be in a
//! room the user belongs to (404 otherwise).

use crate::app::params::parse_id;
use super::messages::Fragment;
use crate::app::posting::{RemoveView, StreamView};
use crate::app::layout;
use crate::app::message_view::{self, Renderer};
use crate::app::room_streams;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::messages::Message;
use crate::db::{self, boosts, memberships, messages, rooms};
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /messages/:message_id/boosts`: the boosts block in the layout (Turbo extracts the
/// `boosting_message_<cmid>` frame).
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let m = message(cx, rq)?;
    let mut html = Vec::with_capacity(1024);
    Renderer::new(&cx.db, &cx.keys).boosts(&m, &mut html)?;
    layout::page(cx, rq, res, 200, &Fragment(html))?;
    Ok(Flow::Done)
}

/// `GET /messages/:message_id/boosts/new`: the inline boost form with the viewer's avatar.
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let m = message(cx, rq)?;
    let viewer = rq.user().ok_or(AppError::NotFound)?;
    let avatar_url = message_view::avatar_url(&cx.keys, viewer.id, viewer.updated_at);
    let mut html = Vec::with_capacity(1024);
    views::boosts::new::render(&NewBoost { m: &m, avatar_url: &avatar_url }, &mut Out::new(&mut html));
    layout::page(cx, rq, res, 200, &Fragment(html))?;
    Ok(Flow::Done)
}

/// `POST /messages/:message_id/boosts`: boosts as the viewer (`boost[content]` required, may
/// be empty), touches the message, broadcasts the chip (M4, keeping scroll) and redirects
/// to the boosts list.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let m = message(cx, rq)?;
    let booster_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    let content = rq.params.get("boost[content]").ok_or(AppError::BadRequest("param is missing: boost[content]"))?;
    let content = String::from_utf8_lossy(content).into_owned();
    let kind = rooms::find(&cx.db, m.room_id)?.ok_or(AppError::NotFound)?.kind;
    let now = db::time::now_us();
    cx.write(
        rq,
        {
            let content = content.clone();
            move |c| boosts::create(c, m.id, booster_id, &content, now)
        },
        move |cx, res, created| {
            let boost_id = created?.ok_or(AppError::NotFound)?;
            let mut chip = Vec::with_capacity(1024);
            Renderer::new(&cx.db, &cx.keys).boost(m.id, boost_id, booster_id, &content, &mut chip)?;
            let target = format!("boosts_message_{}", m.client_message_id);
            let mut stream = Vec::with_capacity(chip.len() + 128);
            views::streams::append_maintain_scroll::render(&StreamView { target: &target, content: &chip }, &mut Out::new(&mut stream));
            room_streams::broadcast_html(&room_streams::messages_stream(kind, m.room_id), &stream);
            respond::redirect(res, &format!("/messages/{}/boosts", m.id));
            Ok(())
        },
    )
}

/// `DELETE /messages/:message_id/boosts/:id`: only the booster's own boost on this message
/// (404 otherwise); broadcasts `remove boost_<id>` (M5); 204.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let m = message(cx, rq)?;
    let kind = rooms::find(&cx.db, m.room_id)?.ok_or(AppError::NotFound)?.kind;
    destroy_own(cx, rq, m, kind, || AppError::NotFound)
}

/// Takes back boost `:id` of `m` when the viewer gave it, and removes it from the room's
/// pages (M5); 204. Shared with the bot API, which differs only in how it says "not found".
pub(super) fn destroy_own(
    cx: &mut Ctx,
    rq: &mut Req<'_, '_>,
    m: Message,
    kind: rooms::Kind,
    missing: fn() -> AppError,
) -> Result<Flow, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or_else(missing)?;
    let id = parse_id(rq.route.params.id).ok_or_else(missing)?;
    match boosts::find(&cx.db, id)? {
        Some((message_id, booster_id)) if message_id == m.id && booster_id == user_id => {}
        _ => return Err(missing()),
    }
    let now = db::time::now_us();
    cx.write(rq, move |c| boosts::destroy(c, id, user_id, now), move |_, res, done| {
        done?.ok_or_else(missing)?;
        let target = format!("boost_{id}");
        let mut stream = Vec::with_capacity(96);
        views::streams::remove::render(&RemoveView(&target), &mut Out::new(&mut stream));
        room_streams::broadcast_html(&room_streams::messages_stream(kind, m.room_id), &stream);
        res.status(204);
        Ok(())
    })
}

/// The message of the path, in a room the viewer belongs to (404 otherwise).
fn message(cx: &Ctx, rq: &Req<'_, '_>) -> Result<Message, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    let id = parse_id(rq.route.params.message_id).ok_or(AppError::NotFound)?;
    let m = messages::find(&cx.db, id)?.ok_or(AppError::NotFound)?;
    if !memberships::exists(&cx.db, m.room_id, user_id)? {
        return Err(AppError::NotFound);
    }
    Ok(m)
}

struct NewBoost<'a> {
    m: &'a Message,
    avatar_url: &'a str,
}

impl views::boosts::new::View for NewBoost<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        o.attr(self.avatar_url);
    }
}
