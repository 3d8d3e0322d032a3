//! The three cookies of spec/03 §4 as response headers: `session_token` (signed: which login
//! session this is), `_campfire_session` (the encrypted Rails session hash: flash, return-to
//! URL) and `last_room`. Formats, attributes and form-URL encoding are crypto's
//! (`crypto::cookies`); this file reads them from the request and adds the `Set-Cookie`
//! lines, `Secure` when the request is HTTPS (`Ctx::https`).

use super::Ctx;
use crate::crypto::cookies::{self, Session};
use crate::crypto::time::now_ms;
use crate::http::Response;

/// The login-session token named by a `session_token` cookie value as sent, if its
/// signature, purpose and expiry check out (UTF-8, as tokens are base58).
pub fn read_session_token(cx: &mut Ctx, raw: &[u8]) -> Option<String> {
    let token = cookies::read_session_token(&cx.keys, raw, now_ms(), &mut cx.scratch)?;
    std::str::from_utf8(token.as_bytes()).ok().map(str::to_owned)
}

/// Signs `token` in: sets `session_token`.
pub fn set_session_token(cx: &Ctx, res: &mut Response, token: &str) {
    let mut line = Vec::with_capacity(400);
    cookies::set_session_token(&cx.keys, token.as_bytes(), now_ms(), cx.https, &mut line);
    res.header("Set-Cookie", &line);
}

/// Signs out: deletes `session_token`.
pub fn delete_session_token(res: &mut Response) {
    let mut line = Vec::with_capacity(96);
    cookies::delete_cookie(cookies::SESSION_TOKEN, &mut line);
    res.header("Set-Cookie", &line);
}

/// The Rails session hash from a `_campfire_session` value as sent (empty when it does not
/// decrypt, has expired, or is not a session hash — as in Rails).
pub fn read_session(cx: &mut Ctx, raw: &[u8]) -> Session {
    cookies::read_session(&cx.keys, raw, now_ms(), &mut cx.scratch)
}

/// Writes `_campfire_session` holding `session`, or deletes the cookie when the session is
/// empty. A session id is created first if the hash has none, as Rack does when it first
/// stores a session.
pub fn write_session(cx: &Ctx, res: &mut Response, session: &mut Session) {
    let mut line = Vec::with_capacity(512);
    if session.is_empty() {
        cookies::delete_cookie(cookies::SESSION, &mut line);
    } else {
        if session.session_id.is_none() {
            let id = crate::crypto::token::session_id();
            session.session_id = Some(String::from_utf8_lossy(&id).into_owned());
        }
        cookies::set_session(&cx.keys, session, now_ms(), cx.https, &mut line);
    }
    res.header("Set-Cookie", &line);
}

/// Remembers the room just shown (`last_room`, read by `GET /`).
pub fn set_last_room(cx: &Ctx, res: &mut Response, room_id: i64) {
    let mut line = Vec::with_capacity(96);
    cookies::set_last_room(room_id, now_ms(), cx.https, &mut line);
    res.header("Set-Cookie", &line);
}
