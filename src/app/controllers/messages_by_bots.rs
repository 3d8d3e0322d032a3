//! Messages::ByBotsController (spec/02 §5): the bot API's messages. A bot, authenticated by
//! the key in the path (`/rooms/:room_id/:bot_key/messages`, see `gates.rs`), reads a room's
//! messages as JSON and posts, edits and deletes its own messages with the raw request body
//! as the text. Writes go through the browser controller's write path (`messages::post`,
//! `revise`, `remove`), so the search row, unread marks and broadcasts are the same.
//!
//! A multipart `attachment` file field posts that file as the message (stored and
//! thumbnailed like a browser upload). Posts deliver bot webhooks like browser posts do
//! (`messages::post` → `app::webhooks`).

use crate::app::params::parse_id;
use super::messages as browser;
use crate::app::attachments::Upload;
use crate::app::message_view;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::db::messages::{self, Message};
use crate::db::rooms::{self, Room};
use crate::http::Response;
use crate::richtext;

const JSON: &[u8] = b"application/json; charset=utf-8";

/// `GET /rooms/:room_id/:bot_key/messages[?before=<id>|after=<id>]`: a page of 40 as a JSON
/// array (oldest first), `X-Total-Count` = the room's messages, and a `Link rel="next"` to
/// the older page (or, with `after`, the newer one) when there is one.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let (list, after) = browser::page(cx, rq, room.id)?;
    let origin = rq.origin();
    let next = match (after, list.first(), list.last()) {
        (None, Some(first), _) if messages::page_before(&cx.db, room.id, first.id, |_| Ok(()))? > 0 => {
            Some(("before", first.id))
        }
        (Some(_), _, Some(last)) if messages::page_after(&cx.db, room.id, last.id, |_| Ok(()))? > 0 => {
            Some(("after", last.id))
        }
        _ => None,
    };
    res.status(200);
    res.header("Content-Type", JSON);
    res.header("X-Total-Count", messages::count(&cx.db, room.id)?.to_string().as_bytes());
    if let Some((dir, id)) = next {
        let key = String::from_utf8_lossy(rq.route.params.bot_key);
        let link = format!("<{origin}/rooms/{}/{key}/messages?{dir}={id}>; rel=\"next\"", room.id);
        res.header("Link", link.as_bytes());
    }
    let out = res.body();
    out.push(b'[');
    for (i, m) in list.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        message_view::message_json(&cx.db, &cx.keys, m, &origin, out)?;
    }
    out.push(b']');
    Ok(Flow::Done)
}

/// `POST /rooms/:room_id/:bot_key/messages`: the raw body becomes a message by the bot
/// (blank, or nothing left once sanitized → 422 JSON); 201 with `Location: <origin>/messages/<id>` and no body.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let bot_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    // A multipart `attachment` is the message alone (Rails ignores any text then);
    // otherwise Rails gives the raw text to Action Text, which takes it as HTML: the same
    // canonical form as a browser body.
    let upload = rq.params.file("attachment", rq.http.body).map(|f| Upload::of(&f, rq.http.spooled));
    let body = match upload {
        Some(_) => None,
        None => Some(richtext::canonicalize_for_save(&raw_body(rq)?)),
    };
    let cmid = String::from_utf8_lossy(&crate::crypto::token::uuid_v4()).into_owned();
    let origin = rq.origin();
    let posted = browser::post(cx, rq, &room, bot_id, body, upload, cmid, move |_, res, m, _| {
        res.status(201);
        res.header("Location", format!("{origin}/messages/{}", m.id).as_bytes());
        Ok(())
    });
    refused_as_json(rq, res, posted)
}

/// `PATCH/PUT /rooms/:room_id/:bot_key/messages/:id`: the bot's own message (404 outside
/// the room, 403 when another user wrote it) gets the raw body as its text; 200 with the
/// message JSON, 422 JSON when the body is blank (the message stays as it was).
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = own_message(cx, rq, &room)?;
    let body = richtext::canonicalize_for_save(&raw_body(rq)?);
    let origin = rq.origin();
    let revised = browser::revise(cx, rq, &room, m, body, move |cx, res, fresh| {
        res.status(200);
        res.header("Content-Type", JSON);
        message_view::message_json(&cx.db, &cx.keys, fresh, &origin, res.body())?;
        Ok(())
    });
    refused_as_json(rq, res, revised)
}

/// A bot's message refused as blank (an empty or whitespace body, or one that shows nothing
/// once sanitized) is answered 422 with the JSON error body whatever the request's Accept: a
/// bot reads JSON (Rails sends an empty 422 for the first kind and stores the second). Other
/// errors keep their form (Rails' empty 404 and 403).
fn refused_as_json(rq: &Req<'_, '_>, res: &mut Response, result: Result<Flow, AppError>) -> Result<Flow, AppError> {
    match result {
        Err(e @ AppError::Unprocessable(_)) => {
            crate::app::errors::render(&e, rq.route.name, true, res);
            Ok(Flow::Done)
        }
        other => other,
    }
}

/// `DELETE /rooms/:room_id/:bot_key/messages/:id`: same checks as `update`; 204.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = own_message(cx, rq, &room)?;
    browser::remove(cx, rq, &room, m, |res, _| {
        res.status(204);
        Ok(())
    })
}

/// The room of the path among the bot's rooms; Rails answers a missing one with an empty 404.
pub(crate) fn room(cx: &Ctx, rq: &Req<'_, '_>) -> Result<Room, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or(AppError::Head(404))?;
    let id = parse_id(rq.route.params.room_id).ok_or(AppError::Head(404))?;
    rooms::find_for_user(&cx.db, user_id, id)?.ok_or(AppError::Head(404))
}

/// The message of the path in `room` (404) written by the bot (403).
fn own_message(cx: &Ctx, rq: &Req<'_, '_>, room: &Room) -> Result<Message, AppError> {
    let id = parse_id(rq.route.params.id).ok_or(AppError::Head(404))?;
    let m = messages::find_in_room(&cx.db, room.id, id)?.ok_or(AppError::Head(404))?;
    match rq.user() {
        Some(u) if u.id == m.creator_id => Ok(m),
        _ => Err(AppError::Head(403)),
    }
}

/// The whole request body as text (`RawRequestBody`): invalid UTF-8 is replaced, blank
/// (empty or whitespace only) is 422. A body declared as JSON must parse, as Rails parses it
/// before the action runs (400 otherwise).
pub(crate) fn raw_text(rq: &Req<'_, '_>) -> Result<String, AppError> {
    let text = raw_body(rq)?;
    if text.trim().is_empty() {
        return Err(AppError::Unprocessable("blank body"));
    }
    Ok(text)
}

/// `raw_text` without the blank check: messages check what their body shows instead.
fn raw_body(rq: &Req<'_, '_>) -> Result<String, AppError> {
    let body = rq.http.body;
    let declared_json = rq
        .header(b"content-type")
        .is_some_and(|t| t.trim_ascii_start().get(..16).is_some_and(|p| p.eq_ignore_ascii_case(b"application/json")));
    if declared_json && !is_json(body) {
        return Err(AppError::BadRequest("body declared as JSON does not parse"));
    }
    Ok(String::from_utf8_lossy(body).into_owned())
}

/// True when `b` is one JSON value with nothing but whitespace around it.
fn is_json(b: &[u8]) -> bool {
    let mut r = crate::crypto::json::Reader::new(b);
    r.value().is_ok() && r.peek().is_none()
}
