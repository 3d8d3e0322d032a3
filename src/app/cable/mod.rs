//! Action Cable (spec/06): the `/cable` endpoint, the protocol the unmodified
//! `@rails/actioncable` client speaks, one file per channel, and the in-process pub/sub.
//!
//! A socket lives on the loop that accepted it (`server` runs the WebSocket framing); this
//! module is the handler's side of it. The connection is authenticated once, at the upgrade,
//! from the same `session_token` cookie as HTTP: a good one gets `welcome`, anything else
//! gets the `unauthorized` disconnect and is closed. Commands are then handled in order as
//! they arrive: subscribe (confirm or reject, the identifier echoed byte for byte; a
//! duplicate is ignored as Rails does), unsubscribe, and channel actions. Every 3 s each loop
//! sends every socket a ping.
//!
//! Other modules call `broadcast` (from writer after-commit closures), `disconnect_user`
//! (ban, deactivation) and `membership_removed` (a user taken out of a room).

mod channel;
mod heartbeat_channel;
pub mod hub;
mod presence_channel;
pub mod protocol;
mod read_rooms_channel;
mod room_messages_channel;
pub mod streams;
mod turbo_streams_channel;
mod typing_notifications_channel;
mod unread_rooms_channel;

use crate::app::Ctx;
use crate::db;
use crate::http::{Request, Response};
use crate::server::{Address, Call, Flow, Ws};
use channel::{Channel, Outcome};
use protocol::Verb;
use std::sync::Arc;

/// Sends `message_json` (the JSON value of the frame's `"message"`) to every subscriber of
/// `stream`, on every loop. The frame is built once per identifier and shared. Safe from any
/// thread; returns at once.
pub fn broadcast(stream: &str, message_json: &[u8]) {
    hub::broadcast(stream.as_bytes(), message_json);
}

/// Sends `message_json` on the stream `name(user, buf)` of each of `user_ids` (ascending; one lock, one
/// post per loop; names built only for users with a socket here). Safe from any thread.
pub fn broadcast_to_users(user_ids: &[i64], name: impl Fn(i64, &mut Vec<u8>), message_json: &[u8]) {
    hub::broadcast_to_users(user_ids, name, message_json);
}

/// Closes every socket of `user_id` with `{"type":"disconnect","reason":"remote",
/// "reconnect":false}` after removing all their subscriptions (ban, deactivation: the client
/// does not come back). Call after the commit.
pub fn disconnect_user(user_id: i64) {
    let sockets = hub::drop_user(user_id);
    hub::close_all(sockets, &protocol::frame(protocol::REMOTE_FINAL));
}

/// `user_id` lost their membership of `room_id`: their subscriptions for that room stop at
/// once, then each of their sockets gets the `remote` disconnect with `reconnect:true`, so the
/// page reconnects, resubscribes, and is refused the room. Call after the commit.
pub fn membership_removed(user_id: i64, room_id: i64) {
    let sockets = hub::drop_room(user_id, room_id);
    hub::close_all(sockets, &protocol::frame(protocol::REMOTE_RECONNECT));
}

/// The authenticated user of a socket.
pub struct User {
    pub id: i64,
    pub name: Box<str>,
}

struct Subscription {
    ident: Arc<[u8]>,
    channel: Channel,
    room_id: i64,
    stream: Option<Arc<[u8]>>,
}

/// A socket's state: who it is and what it listens to.
pub struct Connection {
    /// None: authentication failed; the socket is told so and closed.
    user: Option<User>,
    subs: Vec<Subscription>,
    /// Set at open, once the socket has an address.
    addr: Option<Address>,
}

/// `GET /cable`: checks the origin, authenticates the cookie and upgrades (spec/06 §1, §5.2).
/// A request that is not a WebSocket handshake from our own origin gets 404 `Page not found`.
pub fn connect(cx: &mut Ctx, req: &Request, res: &mut Response, call: &mut Call<Ctx>) -> Flow {
    if !same_origin(req) {
        not_found(res);
        return Flow::Done;
    }
    let user = authenticate(cx, req);
    let state = Connection { user, subs: Vec::new(), addr: None };
    if call.upgrade(req, res, Some(b"actioncable-v1-json"), state).is_err() {
        not_found(res);
    }
    Flow::Done
}

fn not_found(res: &mut Response) {
    res.status(404);
    res.header("Content-Type", b"text/plain; charset=utf-8");
    res.body().extend_from_slice(b"Page not found");
}

/// Rails' request-origin check: `Origin` is this server as the client addressed it. We accept
/// either scheme (TLS usually ends at a proxy in front of us; the host is what matters against
/// cross-site socket hijacking).
fn same_origin(req: &Request) -> bool {
    let (Some(origin), Some(host)) = (req.header(b"origin"), req.header(b"host")) else { return false };
    let rest = origin.strip_prefix(b"https://").or_else(|| origin.strip_prefix(b"http://"));
    rest.is_some_and(|h| h.eq_ignore_ascii_case(host))
}

fn authenticate(cx: &mut Ctx, req: &Request) -> Option<User> {
    let raw = req.cookie(b"session_token")?;
    let token = crate::app::cookies::read_session_token(cx, raw)?;
    match db::auth::session_user(&cx.db, &token) {
        Ok(Some(s)) if s.user.is_active() => Some(User { id: s.user.id, name: s.user.name.into_boxed_str() }),
        Ok(_) => None,
        Err(e) => {
            eprintln!("cable: session lookup failed: {e}");
            None
        }
    }
}

/// The socket is open: welcome, or the unauthorized disconnect.
pub fn opened(ws: &mut Ws<Ctx>) {
    let addr = ws.address().clone();
    match &ws.state.user {
        Some(u) => {
            hub::add_user(u.id, &addr);
            ws.state.addr = Some(addr);
            ws.send_text(protocol::WELCOME);
        }
        None => {
            ws.send_text(protocol::UNAUTHORIZED);
            ws.close();
        }
    }
}

/// One text message from the client: a command.
pub fn received(cx: &mut Ctx, ws: &mut Ws<Ctx>, text: &[u8]) {
    let Some(cmd) = protocol::command(text) else {
        eprintln!("cable: unreadable command ({} bytes)", text.len());
        return;
    };
    let conn = &mut *ws.state;
    let (Some(user), Some(addr)) = (&conn.user, &conn.addr) else { return };
    match cmd.verb {
        Verb::Subscribe => {
            if conn.subs.iter().any(|s| *s.ident == *cmd.ident) {
                return;
            }
            let limit = cx.config.ws.max_subscriptions;
            let outcome = if conn.subs.len() >= limit {
                eprintln!("cable: user {} reached {limit} subscriptions", user.id);
                Outcome::Reject
            } else {
                subscribe(cx, user, cmd.ident)
            };
            let mut reply = Vec::with_capacity(cmd.ident.len() + 48);
            match outcome {
                Outcome::Reject => protocol::subscription_reply(cmd.ident, false, &mut reply),
                Outcome::Confirm { stream, room_id } => {
                    // The hub's copies of the names, shared by every socket on the stream.
                    let (stream, ident) = match stream.and_then(|s| hub::subscribe(&s, addr, cmd.ident, user.id, room_id)) {
                        Some((stream, ident)) => (Some(stream), ident),
                        None => (None, Arc::from(cmd.ident)),
                    };
                    let channel = channel_of(cmd.ident).unwrap_or(Channel::Heartbeat);
                    conn.subs.push(Subscription { ident, channel, room_id, stream });
                    protocol::subscription_reply(cmd.ident, true, &mut reply);
                }
            }
            ws.send_text(&reply);
        }
        Verb::Unsubscribe => {
            let Some(at) = conn.subs.iter().position(|s| *s.ident == *cmd.ident) else { return };
            let sub = conn.subs.swap_remove(at);
            if let Some(s) = &sub.stream {
                hub::unsubscribe(s, addr, &sub.ident);
            }
            unsubscribed(cx, user, &sub);
        }
        Verb::Message => {
            let Some(sub) = conn.subs.iter().find(|s| *s.ident == *cmd.ident) else {
                eprintln!("cable: message for an unknown subscription");
                return;
            };
            let Some(action) = protocol::action(cmd.data) else { return };
            match sub.channel {
                Channel::Presence => presence_channel::perform(cx, user, sub.room_id, &action),
                Channel::TypingNotifications => {
                    if let Some(s) = &sub.stream {
                        typing_notifications_channel::perform(user, s, &action);
                    }
                }
                // The other channels have no actions.
                _ => {}
            }
        }
    }
}

fn channel_of(ident: &[u8]) -> Option<Channel> {
    Channel::named(&protocol::params(ident)?.channel)
}

fn subscribe(cx: &mut Ctx, user: &User, ident: &[u8]) -> Outcome {
    let Some(params) = protocol::params(ident) else { return Outcome::Reject };
    let Some(channel) = Channel::named(&params.channel) else { return Outcome::Reject };
    match channel {
        Channel::Heartbeat => heartbeat_channel::subscribe(),
        Channel::Presence => presence_channel::subscribe(cx, user, &params),
        Channel::TypingNotifications => typing_notifications_channel::subscribe(cx, user, &params),
        Channel::ReadRooms => read_rooms_channel::subscribe(user),
        Channel::UnreadRooms => unread_rooms_channel::subscribe(user),
        Channel::RoomMessages => room_messages_channel::subscribe(cx, user, &params),
        Channel::TurboStreams => turbo_streams_channel::subscribe(cx, &params),
    }
}

fn unsubscribed(cx: &mut Ctx, user: &User, sub: &Subscription) {
    if sub.channel == Channel::Presence {
        presence_channel::unsubscribed(cx, user, sub.room_id);
    }
}

/// The socket is gone: every subscription's unsubscribe logic runs and the hub forgets it.
pub fn closed(cx: &mut Ctx, conn: Connection) {
    let (Some(user), Some(addr)) = (&conn.user, &conn.addr) else { return };
    let streams: Vec<Arc<[u8]>> = conn.subs.iter().filter_map(|s| s.stream.clone()).collect();
    hub::remove_socket(user.id, addr, &streams);
    for sub in &conn.subs {
        unsubscribed(cx, user, sub);
    }
}

/// The ping every socket gets every 3 s: `{"type":"ping","message":<unix seconds>}`.
pub fn heartbeat(payload: &mut Vec<u8>) {
    let secs = crate::crypto::time::now_ms().max(0) as u64 / 1000;
    protocol::ping(secs, payload);
}
