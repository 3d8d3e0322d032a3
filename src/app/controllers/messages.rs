//! MessagesController (spec/02 §4.26, spec/07 §5–§7): pages of messages, one message, the
//! composer's create with its Turbo Stream answer, and edit/update/destroy by the creator or
//! an administrator. Every write goes through the writer; the broadcasts of spec/06 §11.1–11.2
//! go out once the write has committed, rendered once and shared with the HTTP answer.
//!
//! A `message[attachment]` file is stored, analyzed and thumbnailed on the worker before its
//! message is written (`app::attachments`). After the broadcasts of a new message `post` queues
//! bot webhooks (`app::webhooks`) and Web Push (`push::message_posted`).

use crate::app::layout::{self, Page};
use crate::app::attachments::{self, StoredAttachment, Upload};
use crate::app::message_view::{self, Renderer, Written};
use crate::app::webhooks;
use crate::app::posting::{announce, insert, RemoveView, StreamView};
use crate::app::{room_streams, storage};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::messages::Message;
use crate::db::rooms::Room;
use crate::db::{self, messages, rooms, Job};
use crate::http::Response;
use crate::richtext;
use crate::views::{self, Out};
use crate::app::params::parse_id;

const TURBO_STREAM: &[u8] = b"text/vnd.turbo-stream.html; charset=utf-8";

/// `GET /rooms/:room_id/messages[?before=<id>|after=<id>]`: the page before or after a
/// message of the room (404 when it is not one), else the last page; 204 when empty; a
/// weak ETag and `Last-Modified` over the page, 304 when the client's copy is current.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let (list, _) = page(cx, rq, room.id)?;
    if list.is_empty() {
        res.status(204);
        return Ok(Flow::Done);
    }
    let etag = page_etag(&list);
    let last_modified = list.iter().map(|m| m.updated_at).max().unwrap_or(0);
    let mut date = Vec::with_capacity(32);
    crate::crypto::time::write_http_date(last_modified.div_euclid(1000), &mut date);
    res.header("ETag", etag.as_bytes());
    res.header("Last-Modified", &date);
    let fresh = match rq.header(b"if-none-match") {
        Some(inm) => inm.split(|&b| b == b',').any(|t| t.trim_ascii() == etag.as_bytes() || t.trim_ascii() == b"*"),
        None => rq.header(b"if-modified-since").is_some_and(|ims| ims == date.as_slice()),
    };
    if fresh {
        res.status(304);
        return Ok(Flow::Done);
    }
    res.status(200);
    respond::html(res);
    message_view::render_messages(&cx.db, &cx.keys, &list, res.body())?;
    Ok(Flow::Done)
}

/// `GET /rooms/:room_id/messages/:id`: the message partial in the layout (Turbo takes the
/// `edit_message_<cmid>` frame out of it to close an editor).
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = message(cx, rq, &room)?;
    let mut html = Vec::with_capacity(4096);
    message_view::render_messages(&cx.db, &cx.keys, std::slice::from_ref(&m), &mut html)?;
    layout::page(cx, rq, res, 200, &Fragment(html))?;
    Ok(Flow::Done)
}

/// `GET /rooms/:room_id/messages/:id/edit` (creator or administrator, else 403): the edit
/// frame — the Trix form for text, the presentation and a delete button for attachments.
pub fn edit(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = message(cx, rq, &room)?;
    administer(rq, &m)?;
    let mut html = Vec::with_capacity(4096);
    if messages::attachment(&cx.db, m.id)?.is_some() {
        let mut presentation = Vec::with_capacity(1024);
        Renderer::new(&cx.db, &cx.keys).presentation(&m, &mut presentation)?;
        views::messages::edit_attachment::render(&EditAttachment { m: &m, presentation: &presentation }, &mut Out::new(&mut html));
    } else {
        let stored = messages::body(&cx.db, m.id)?.unwrap_or_default();
        let r = Renderer::new(&cx.db, &cx.keys);
        let trix = richtext::to_trix_html(&stored, &|sgid: &str| r.mention(sgid));
        views::messages::edit::render(&EditText { m: &m, body_html: &trix }, &mut Out::new(&mut html));
    }
    layout::page(cx, rq, res, 200, &Fragment(html))?;
    Ok(Flow::Done)
}

/// `POST /rooms/:room_id/messages`: creates the message (the search row, the room touch and
/// the unread marks in the same transaction), broadcasts it to the room (M1) and the unread
/// fan-out (U1), and answers the Turbo Stream `append` of the partial. A plain HTML form
/// (no Turbo) is redirected to the room instead. Not a member (or the room is gone): the
/// composer's "This room was deleted." frame, 200.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let user = rq.user().ok_or(AppError::NotFound)?.clone();
    let Some(room) = parse_id(rq.route.params.room_id).map(|id| rooms::find_for_user(&cx.db, user.id, id)).transpose()?.flatten() else {
        res.status(200);
        respond::html(res);
        views::rooms::room_not_found::render(&NoHoles, &mut Out::new(res.body()));
        return Ok(Flow::Done);
    };
    if !rq.params.has_group("message") {
        return Err(AppError::BadRequest("param is missing or the value is empty: message"));
    }
    let spooled = rq.http.spooled.map(|b| &**b);
    let poster = rq.params.file("message[poster]", rq.http.body).filter(|p| p.range.len() <= attachments::POSTER_MAX_BYTES);
    let poster = poster.map(|p| p.bytes(spooled)).transpose().map_err(|_| AppError::Internal("poster read failed"))?;
    let upload = rq.params.file("message[attachment]", rq.http.body).map(|f| Upload::of(&f, rq.http.spooled).with_poster(poster.as_deref()));
    let body = match upload {
        // Rails takes the attachment alone when one is sent.
        Some(_) => None,
        None => rq.params.get("message[body]").map(|b| richtext::canonicalize_for_save(&String::from_utf8_lossy(b))),
    };
    let cmid = match rq.params.get_str("message[client_message_id]").filter(|s| !s.is_empty()) {
        Some(s) => s.to_owned(),
        None => String::from_utf8_lossy(&crate::crypto::token::uuid_v4()).into_owned(),
    };
    let stream_answer = rq.wants_turbo_stream() || !accepts_only_html(rq);
    post(cx, rq, &room, user.id, body, upload, cmid, move |_, res, m, stream| {
        if stream_answer {
            res.status(200);
            res.header("Content-Type", TURBO_STREAM);
            res.body().extend_from_slice(stream);
        } else {
            respond::redirect(res, &format!("/rooms/{}", m.room_id));
        }
        Ok(())
    })
}

/// The write path of every new message (browser and bot API): stores the message with its
/// search row, room touch and unread marks in one writer job, then — back on the loop
/// after COMMIT — renders the partial once, broadcasts the `append` (M1) and the unread
/// fan-out (U1), hands the message and the stream bytes to `answer` to fill the response, and
/// queues the bot webhooks and pushes the message calls for (spec/04 §3–4; webhook replies are
/// posted by `app::webhooks` through `insert` and `announce`, never through here, so they
/// trigger no webhook). `body` is already canonical rich text (`richtext::canonicalize_for_save`).
/// An `upload` is first stored, analyzed and thumbnailed on the worker (`attachments::store`);
/// its rows join the message's in the same job, and its files are deleted again if that job fails.
/// A message with neither a file nor a body that shows anything (`richtext::is_blank`) is
/// refused with 422 and never stored.
#[allow(clippy::too_many_arguments)]
pub(crate) fn post(
    cx: &mut Ctx,
    rq: &mut Req<'_, '_>,
    room: &Room,
    creator_id: i64,
    body: Option<String>,
    upload: Option<Upload>,
    cmid: String,
    answer: impl FnOnce(&mut Ctx, &mut Response, &Message, &[u8]) -> Result<(), AppError> + Send + 'static,
) -> Result<Flow, AppError> {
    // Without a file the body is rendered here, once: the render says whether it shows
    // anything, and after the commit it is the broadcast's, with the plain text made here too.
    let (plain, rendered) = {
        let r = Renderer::new(&cx.db, &cx.keys);
        let resolve = |sgid: &str| r.mention(sgid);
        let rendered = match (&upload, body.as_deref()) {
            (None, Some(b)) => Some(richtext::render_body(b, &resolve)),
            _ => None,
        };
        if upload.is_none() && rendered.as_ref().is_none_or(richtext::is_blank_render) {
            return Err(AppError::Unprocessable(BLANK));
        }
        (richtext::plain_text(body.as_deref().unwrap_or(""), &resolve), rendered)
    };
    let shown_plain = rendered.as_ref().map(|_| plain.clone());
    // Rails' plain text of an attachment message is its file name (search finds it by that).
    let plain = match &upload {
        Some(u) if plain.is_empty() => u.filename.clone(),
        _ => plain,
    };
    let hook = webhooks::candidate(room, body.as_deref(), &plain);
    let now = db::time::now_us();
    let (room_id, kind) = (room.id, room.kind);
    let pushed_room = room.clone();
    let ticket = rq.ticket();
    // Without a file the broadcast renders from the body rendered above, the signed-in creator
    // and the room as read here, not from a read-back.
    let creator = rq.user().filter(|u| u.id == creator_id).cloned();
    let write = {
        let cmid = cmid.clone();
        move |c: &db::Conn, attachment: Option<&StoredAttachment>| -> db::Result<(i64, std::sync::Arc<[i64]>)> {
            let (id, members) = insert(c, room_id, creator_id, &cmid, body.as_deref(), &plain, now)?;
            if let Some(a) = attachment {
                a.attach(c, id, now)?;
            }
            Ok((id, members))
        }
    };
    // Back on the loop after COMMIT: render once, broadcast, answer, then webhooks and pushes.
    let then = {
        move |cx: &mut Ctx, res: &mut Response, created: db::Result<(i64, std::sync::Arc<[i64]>)>| -> Result<(), AppError> {
            let (id, members) = created?;
            let m = Message { id, room_id, creator_id, client_message_id: cmid, created_at: now, updated_at: now };
            let written = rendered.as_ref().zip(shown_plain.as_deref()).map(|(html, plain)| Written {
                html,
                plain,
                creator: creator.as_ref(),
                room_name: pushed_room.name.as_deref(),
            });
            let stream = announce(&cx.db, &cx.keys, kind, &m, &members, written.as_ref())?;
            crate::app::push::message_posted(cx, &pushed_room, &m);
            if let Some(hook) = hook {
                webhooks::message_posted(cx, hook, &m);
            }
            answer(cx, res, &m, &stream)
        }
    };
    // Without a file the message goes straight to the writer; with one, the worker stores it
    // first and hands the rows to the writer itself.
    let Some(upload) = upload else {
        cx.outbox.submit(Job::new(move |c| write(c, None), move |r| ticket.finish(move |cx, res| then(cx, res, r))));
        return Ok(Flow::Parked);
    };
    let (root, writer, route) = (cx.config.storage_path.clone(), cx.writer.clone(), rq.route.name);
    let queued = cx.worker.submit(move || match attachments::store(&root, upload) {
        Err(e) => {
            eprintln!("messages#create: cannot store the attachment: {e}");
            let err = AppError::file_not_stored(&e, "attachment not stored");
            ticket.finish(move |_, _| Err(err));
        }
        Ok(stored) => {
            let keys = stored.keys();
            writer.submit(Job::new(
                move |c| write(c, Some(&stored)),
                move |r| {
                    ticket.finish(move |cx, res| {
                        if r.is_err() {
                            // No rows refer to these files: they must not outlive the failure.
                            storage::delete(&cx.config.storage_path, &keys);
                        }
                        then(cx, res, r)
                    })
                },
            ))
        }
    });
    if !queued {
        eprintln!("app: {route}: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
}

/// Why a message that would show nothing is refused (logged with the 422).
const BLANK: &str = "blank message: no text and no attachment after sanitizing";

/// `POST /messages`: a composer whose room is gone (its form lost the room id).
pub fn create_without_room(_cx: &mut Ctx, _rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    res.status(200);
    respond::html(res);
    views::rooms::room_not_found::render(&NoHoles, &mut Out::new(res.body()));
    Ok(Flow::Done)
}

/// `PATCH /rooms/:room_id/messages/:id` (creator or administrator, else 403): replaces the
/// body (and its search row), broadcasts the new presentation (M2, keeping scroll), and
/// redirects to the message (JSON requests get the message JSON of spec/02 §5.3).
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = message(cx, rq, &room)?;
    administer(rq, &m)?;
    if !rq.params.has_group("message") {
        return Err(AppError::BadRequest("param is missing or the value is empty: message"));
    }
    let Some(raw) = rq.params.get("message[body]") else {
        // Nothing this action can change was sent: Rails saves nothing and redirects.
        respond::redirect(res, &format!("/rooms/{}/messages/{}", m.room_id, m.id));
        return Ok(Flow::Done);
    };
    let body = richtext::canonicalize_for_save(&String::from_utf8_lossy(raw));
    let json_origin = rq.wants_json().then(|| rq.origin());
    revise(cx, rq, &room, m, body, move |cx, res, fresh| {
        match json_origin {
            Some(origin) => {
                res.status(200);
                res.header("Content-Type", b"application/json; charset=utf-8");
                message_view::message_json(&cx.db, &cx.keys, fresh, &origin, res.body())?;
            }
            None => respond::redirect(res, &format!("/rooms/{}/messages/{}", fresh.room_id, fresh.id)),
        }
        Ok(())
    })
}

/// The write path of every edit (browser and bot API): replaces the body of `m` (in `room`)
/// and its search row, then after COMMIT broadcasts the new presentation (M2, keeping
/// scroll) and calls `answer` with the updated message. A message gone meanwhile is 404; a
/// blank body on a message without a file is refused with 422 (the message stays as it was).
pub(crate) fn revise(
    cx: &mut Ctx,
    rq: &mut Req<'_, '_>,
    room: &Room,
    m: Message,
    body: String,
    answer: impl FnOnce(&mut Ctx, &mut Response, &Message) -> Result<(), AppError> + Send + 'static,
) -> Result<Flow, AppError> {
    if richtext::is_blank(&body) && messages::attachment(&cx.db, m.id)?.is_none() {
        return Err(AppError::Unprocessable(BLANK));
    }
    let plain = {
        let r = Renderer::new(&cx.db, &cx.keys);
        richtext::plain_text(&body, &|sgid: &str| r.mention(sgid))
    };
    let plain = if plain.is_empty() { messages::attachment(&cx.db, m.id)?.map(|a| a.filename).unwrap_or_default() } else { plain };
    let now = db::time::now_us();
    let kind = room.kind;
    cx.write(
        rq,
        move |c| messages::update(c, m.id, &body, &plain, now),
        move |cx, res, updated| {
            if !updated? {
                return Err(AppError::NotFound);
            }
            let fresh = Message { updated_at: now, ..m };
            let mut presentation = Vec::with_capacity(2048);
            Renderer::new(&cx.db, &cx.keys).presentation(&fresh, &mut presentation)?;
            let target = format!("presentation_message_{}", fresh.client_message_id);
            let mut stream = Vec::with_capacity(presentation.len() + 128);
            views::streams::replace_maintain_scroll::render(&StreamView { target: &target, content: &presentation }, &mut Out::new(&mut stream));
            room_streams::broadcast_html(&room_streams::messages_stream(kind, fresh.room_id), &stream);
            answer(cx, res, &fresh)
        },
    )
}

/// `DELETE /rooms/:room_id/messages/:id` (creator or administrator, else 403): destroys the
/// message with its boosts, body and search row, broadcasts `remove` (M3) and answers the
/// same Turbo Stream. As in Rails, a request that does not take Turbo Streams still deletes
/// and is then answered 406.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let room = room(cx, rq)?;
    let m = message(cx, rq, &room)?;
    administer(rq, &m)?;
    let stream_answer = rq.wants_turbo_stream();
    remove(cx, rq, &room, m, move |res, stream| {
        if !stream_answer {
            return Err(AppError::NotAcceptable);
        }
        res.status(200);
        res.header("Content-Type", TURBO_STREAM);
        res.body().extend_from_slice(stream);
        Ok(())
    })
}

/// The write path of every deletion (browser and bot API): destroys `m` with its boosts,
/// body, search row and attachment (rows, then files after COMMIT), then after COMMIT broadcasts `remove` (M3) and calls `answer` with
/// the stream bytes. A message gone meanwhile is 404.
pub(crate) fn remove(
    cx: &mut Ctx,
    rq: &mut Req<'_, '_>,
    room: &Room,
    m: Message,
    answer: impl FnOnce(&mut Response, &[u8]) -> Result<(), AppError> + Send + 'static,
) -> Result<Flow, AppError> {
    let now = db::time::now_us();
    let kind = room.kind;
    cx.write(
        rq,
        // The attachment's blobs and variants go with the message (Rails purges them in a
        // job); their files are deleted once this has committed.
        move |c| messages::destroy(c, m.id, now),
        move |cx, res, destroyed| {
            let files = destroyed?.ok_or(AppError::NotFound)?;
            storage::delete(&cx.config.storage_path, &files);
            let target = format!("message_{}", m.client_message_id);
            let mut stream = Vec::with_capacity(96);
            views::streams::remove::render(&RemoveView(&target), &mut Out::new(&mut stream));
            room_streams::broadcast_html(&room_streams::messages_stream(kind, m.room_id), &stream);
            answer(res, &stream)
        },
    )
}

/// The page `?before=<id>` or `?after=<id>` asks for (40 messages, oldest first), else the last
/// page, with the `after` anchor if one was given; an anchor that is not a message of the room
/// is a 404. Shared by the browser and the bot API.
pub(crate) fn page(cx: &Ctx, rq: &Req<'_, '_>, room_id: i64) -> Result<(Vec<Message>, Option<i64>), AppError> {
    let anchor = |name: &str| -> Result<Option<i64>, AppError> {
        match rq.params.get(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => {
                let id = parse_id(v).ok_or(AppError::NotFound)?;
                messages::find_in_room(&cx.db, room_id, id)?.ok_or(AppError::NotFound)?;
                Ok(Some(id))
            }
        }
    };
    let (before, after) = (anchor("before")?, anchor("after")?);
    let list = match (before, after) {
        (Some(id), _) => message_view::collect(|f| messages::page_before(&cx.db, room_id, id, f))?,
        (None, Some(id)) => message_view::collect(|f| messages::page_after(&cx.db, room_id, id, f))?,
        (None, None) => message_view::collect(|f| messages::last_page(&cx.db, room_id, f))?,
    };
    Ok((list, after))
}


/// The room of the path, through the current user's memberships (404 otherwise).
fn room(cx: &Ctx, rq: &Req<'_, '_>) -> Result<Room, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    let id = parse_id(rq.route.params.room_id).ok_or(AppError::NotFound)?;
    rooms::find_for_user(&cx.db, user_id, id)?.ok_or(AppError::NotFound)
}

/// The message of the path within `room` (404 otherwise).
fn message(cx: &Ctx, rq: &Req<'_, '_>, room: &Room) -> Result<Message, AppError> {
    let id = parse_id(rq.route.params.id).ok_or(AppError::NotFound)?;
    messages::find_in_room(&cx.db, room.id, id)?.ok_or(AppError::NotFound)
}

/// Rails' `can_administer?`: administrators and the message's creator (403 otherwise).
fn administer(rq: &Req<'_, '_>, m: &Message) -> Result<(), AppError> {
    match rq.user() {
        Some(u) if u.is_administrator() || u.id == m.creator_id => Ok(()),
        _ => Err(AppError::Head(403)),
    }
}


/// True when the client names HTML and nothing that would take a stream (`*/*`): a plain
/// form post without Turbo.
fn accepts_only_html(rq: &Req<'_, '_>) -> bool {
    match rq.header(b"accept") {
        Some(a) => a.windows(9).any(|w| w == b"text/html") && !a.windows(3).any(|w| w == b"*/*"),
        None => false,
    }
}

/// A weak ETag over the page: ids and `updated_at`s, plus the build (templates change).
fn page_etag(list: &[Message]) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(crate::assets::url("app.css").unwrap_or("").as_bytes());
    for m in list {
        h.update(m.id.to_le_bytes());
        h.update(m.updated_at.to_le_bytes());
    }
    let d = h.finalize();
    let mut s = String::with_capacity(40);
    s.push_str("W/\"");
    for b in d.iter().take(16) {
        s.push_str(&format!("{b:02x}"));
    }
    s.push('"');
    s
}

/// A page whose `main` is already rendered.
pub(crate) struct Fragment(pub Vec<u8>);

impl Page for Fragment {
    fn main(&self, o: &mut Out<'_>) {
        // Rendered through the templates and the sanitizer by this module.
        o.0.extend_from_slice(&self.0);
    }
}

struct NoHoles;
impl views::rooms::room_not_found::View for NoHoles {}

struct EditText<'a> {
    m: &'a Message,
    body_html: &'a str,
}

impl views::messages::edit::View for EditText<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.m.room_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn body_html(&self, o: &mut Out<'_>) {
        o.attr(self.body_html);
    }
}

struct EditAttachment<'a> {
    m: &'a Message,
    presentation: &'a [u8],
}

impl views::messages::edit_attachment::View for EditAttachment<'_> {
    fn cmid(&self, o: &mut Out<'_>) {
        o.attr(&self.m.client_message_id);
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.m.room_id);
    }
    fn message_id(&self, o: &mut Out<'_>) {
        o.int(self.m.id);
    }
    fn presentation(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.presentation);
    }
}
