//! Messages::Boosts::ByBotsController (spec/02 §5.2): a bot boosts a message of one of its
//! rooms with the raw request body as the content, and takes its own boost back. The
//! broadcasts are the browser's (`boosts::create`/`destroy`, M4/M5).

use crate::app::params::parse_id;
use crate::app::posting::StreamView;
use super::messages_by_bots::{raw_text, room};
use crate::app::message_view::{self, Renderer};
use crate::app::room_streams;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::db::messages::Message;
use crate::db::{self, boosts, messages};
use crate::http::Response;
use crate::views::{self, Out};

/// `POST /rooms/:room_id/:bot_key/messages/:message_id/boosts`: boosts a message of that
/// room (404 otherwise, blank body 422) as the bot; 201 with the boost JSON.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = message(cx, rq, room.id)?;
    let booster_id = rq.user().map(|u| u.id).ok_or(AppError::Head(404))?;
    let content = raw_text(rq)?;
    let origin = rq.origin();
    let now = db::time::now_us();
    let kind = room.kind;
    cx.write(
        rq,
        {
            let content = content.clone();
            move |c| boosts::create(c, m.id, booster_id, &content, now)
        },
        move |cx, res, created| {
            let boost_id = created?.ok_or(AppError::Head(404))?;
            let r = Renderer::new(&cx.db, &cx.keys);
            let mut chip = Vec::with_capacity(1024);
            r.boost(m.id, boost_id, booster_id, &content, &mut chip)?;
            let target = format!("boosts_message_{}", m.client_message_id);
            let mut stream = Vec::with_capacity(chip.len() + 128);
            views::streams::append_maintain_scroll::render(&StreamView { target: &target, content: &chip }, &mut Out::new(&mut stream));
            room_streams::broadcast_html(&room_streams::messages_stream(kind, m.room_id), &stream);
            let mut json = Vec::with_capacity(512);
            boost_json(&r, boost_id, &content, now, booster_id, &m, &origin, &mut json)?;
            res.status(201);
            res.header("Content-Type", b"application/json; charset=utf-8");
            res.body().extend_from_slice(&json);
            Ok(())
        },
    )
}

/// `DELETE /rooms/:room_id/:bot_key/messages/:message_id/boosts/:id`: the bot's own boost
/// on that message (404 otherwise); broadcasts `remove boost_<id>`; 204.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = message(cx, rq, room.id)?;
    super::boosts::destroy_own(cx, rq, m, room.kind, || AppError::Head(404))
}

/// The message of the path within room `room_id` (empty 404 otherwise).
fn message(cx: &Ctx, rq: &Req<'_, '_>, room_id: i64) -> Result<Message, AppError> {
    let id = parse_id(rq.route.params.message_id).ok_or(AppError::Head(404))?;
    messages::find_in_room(&cx.db, room_id, id)?.ok_or(AppError::Head(404))
}

/// The boost JSON of spec/02 §5.3 (`messages/boosts/_boost.json.jbuilder`).
#[allow(clippy::too_many_arguments)]
fn boost_json(r: &Renderer<'_>, id: i64, content: &str, created_at: i64, booster_id: i64, m: &Message, origin: &str, out: &mut Vec<u8>) -> db::Result<()> {
    use crate::crypto::json::write_string;
    out.extend_from_slice(format!("{{\"id\":{id},\"content\":").as_bytes());
    write_string(content.as_bytes(), out);
    out.extend_from_slice(b",\"created_at\":\"");
    crate::crypto::time::write_iso8601(created_at.div_euclid(1000), out);
    out.extend_from_slice(b"\",\"booster\":");
    message_view::user_json(r, booster_id, origin, out)?;
    out.extend_from_slice(format!(",\"message\":{{\"id\":{},\"url\":", m.id).as_bytes());
    write_string(format!("{origin}/rooms/{}/messages/{}", m.room_id, m.id).as_bytes(), out);
    out.extend_from_slice(b"}}");
    Ok(())
}
