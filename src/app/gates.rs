//! The `before_action` chain every application request passes, in Rails' order (spec/02 §1.2):
//! 1. browser gate — old browsers get the unsupported-browser page (200) and nothing else runs;
//! 2. authentication — the `session_token` cookie (one indexed lookup), else a bot key, else
//!    302 to `/session/new` remembering where the visitor was going;
//! 3. deny bots — a bot key outside the bot API is 403;
//! 4. forgery protection — by Fetch Metadata instead of per-form tokens (design §6):
//!    `Sec-Fetch-Site: cross-site` is 422; without that header, an `Origin` naming another
//!    host is 422; requests with neither (curl, scripts) pass, as they cannot ride a victim's
//!    cookies from a browser anyway;
//! 5. banned addresses — a non-GET from a banned IP is 429 with an empty body;
//! 6. version headers `X-Version` / `X-Rev`;
//! 7. `require_unauthenticated_access` — signed-in users are sent to `/`.
//!
//! Routes with `Auth::Capability` (Active Storage files, spec/02 §4.15) skip the whole chain.
//!
//! Plus the headers every response carries (spec/02 §1.1).

use super::request::Current;
use super::session_memo::Found;
use super::router::Auth;
use super::{controllers, AppError, Ctx, Req};
use crate::db::{self, Job};
use crate::http::{Method, Response};
use std::rc::Rc;

/// The chain's verdict.
pub enum Gate {
    /// Run the action.
    Pass,
    /// The chain answered (unsupported browser, redirect to sign in or to `/`).
    Answered,
}

/// Runs the chain for `rq`. `Err` answers with that error; `Ok(Answered)` means `res` is
/// complete.
pub fn run(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Gate, AppError> {
    // Active Storage's controllers are not application controllers: none of the chain applies.
    if rq.route.access.auth == Auth::Capability {
        return Ok(Gate::Pass);
    }
    if cx.browsers.blocked(rq.header(b"user-agent")) {
        controllers::sessions::incompatible_browser(cx, rq, res)?;
        return Ok(Gate::Answered);
    }
    let access = rq.route.access;
    restore_session(cx, rq)?;
    if access.auth == Auth::Required && rq.current.is_none() {
        authenticate_bot(cx, rq)?;
        if rq.current.is_none() {
            request_authentication(cx, rq, res);
            return Ok(Gate::Answered);
        }
    }
    if rq.by_bot_key && !access.bots {
        return Err(AppError::Head(403));
    }
    let writes = !matches!(rq.method, Method::Get | Method::Head);
    if writes && access.forgery && !rq.by_bot_key && !same_origin(rq) {
        return Err(AppError::Unprocessable("forgery protection: cross-site request"));
    }
    if writes && db::bans::is_banned(&cx.db, &rq.ip.to_string())? {
        return Err(AppError::Head(429));
    }
    rq.chain_passed = true;
    if access.auth == Auth::SignedOut && rq.current.is_some() {
        super::respond::redirect(res, "/");
        return Ok(Gate::Answered);
    }
    Ok(Gate::Pass)
}

/// Finds the login session named by the `session_token` cookie. The cookie's signature is
/// checked once per cookie and the session row read once per data version
/// (`session_memo`: every revocation is a commit, which moves the stamp, so it is seen by
/// the next request all the same). A session whose last activity is over an hour old is
/// "resumed" (user agent, address, time) by a writer job nobody waits for.
fn restore_session(cx: &mut Ctx, rq: &mut Req<'_, '_>) -> Result<(), AppError> {
    let Some(raw) = rq.cookie(b"session_token") else { return Ok(()) };
    let Ctx { keys, scratch, session_memo, db, .. } = cx;
    let now = db::time::now_us();
    let now_ms = now.div_euclid(1000);
    let verify = |v: &[u8]| crate::crypto::cookies::read_session_token_until(keys, v, now_ms, scratch);
    let Some(mut verified) = session_memo.verified(raw, now_ms, verify) else { return Ok(()) };
    let found = match rq.stamp.and_then(|stamp| verified.session(stamp)) {
        Some(remembered) => remembered,
        None => {
            // Tokens are base58; anything else names no session.
            let found = match std::str::from_utf8(verified.token()) {
                Ok(token) => db::auth::session_user(db, token)?.map(|f| Found {
                    session_id: f.session_id,
                    last_active_at: f.last_active_at,
                    user: Rc::new(f.user),
                }),
                Err(_) => None,
            };
            if let Some(stamp) = rq.stamp {
                verified.remember(stamp, found.clone());
            }
            found
        }
    };
    let Some(found) = found else { return Ok(()) };
    if found.last_active_at < now - db::sessions::ACTIVITY_REFRESH_US {
        let id = found.session_id;
        let ua = rq.header(b"user-agent").map(|v| String::from_utf8_lossy(v).into_owned());
        let ip = rq.ip.to_string();
        cx.outbox.submit(Job::new(
            move |c| db::sessions::resume(c, id, Some(&ip), ua.as_deref(), now),
            |result| {
                if let Err(e) = result {
                    eprintln!("app: session resume failed: {e}");
                }
            },
        ));
    }
    rq.current = Some(Current { session_id: Some(found.session_id), user: found.user });
    Ok(())
}

/// A bot key in the path (`/rooms/:room_id/:bot_key/messages`) or in any parameter
/// authenticates that bot (an invalid one authenticates nobody).
fn authenticate_bot(cx: &mut Ctx, rq: &mut Req<'_, '_>) -> Result<(), AppError> {
    let path_key = rq.route.params.bot_key;
    let key = if path_key.is_empty() { rq.params.get("bot_key") } else { Some(path_key) };
    let Some(key) = key.and_then(|k| std::str::from_utf8(k).ok()) else { return Ok(()) };
    if let Some(bot) = db::users::authenticate_bot(&cx.db, key)? {
        rq.current = Some(Current { session_id: None, user: Rc::new(bot) });
        rq.by_bot_key = true;
    }
    Ok(())
}

/// Remembers the requested URL (path and query) in the Rails session and redirects to the
/// sign-in page. We store the path rather than Rails' absolute URL so the redirect after
/// sign-in never switches scheme or host behind a proxy; Rails follows either form.
fn request_authentication(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) {
    let target = rq.http.target;
    let url = if target.first() == Some(&b'/') { String::from_utf8_lossy(target).into_owned() } else { "/".into() };
    rq.session(cx).return_to = Some(url);
    rq.session_changed();
    super::respond::redirect(res, "/session/new");
}

/// Forgery protection by Fetch Metadata (design §6), falling back to `Origin` (spec/03 §7
/// step 1: it must name this host; `null` never passes).
fn same_origin(rq: &Req<'_, '_>) -> bool {
    match rq.header(b"sec-fetch-site") {
        Some(v) if v.eq_ignore_ascii_case(b"same-origin") || v.eq_ignore_ascii_case(b"none") => return true,
        Some(v) if v.eq_ignore_ascii_case(b"cross-site") => return false,
        Some(_) => {
            // same-site (another subdomain) or unknown: only a matching Origin passes.
            return rq.header(b"origin").is_some_and(|o| origin_is_host(o, rq.host()));
        }
        None => {}
    }
    match rq.header(b"origin") {
        None => true,
        Some(o) => origin_is_host(o, rq.host()),
    }
}

/// Whether `origin` (`scheme://host[:port]`) names `host` (`host[:port]`). Either scheme is
/// accepted: TLS usually ends at a proxy in front of us, so the scheme the browser used is
/// not something we can check.
fn origin_is_host(origin: &[u8], host: Option<&[u8]>) -> bool {
    let Some(host) = host else { return false };
    let rest = origin
        .strip_prefix(b"https://")
        .or_else(|| origin.strip_prefix(b"http://"));
    rest.is_some_and(|r| !r.is_empty() && r.eq_ignore_ascii_case(host))
}

/// The headers every application response carries (spec/02 §1.1); HSTS on HTTPS only, as a
/// browser ignores it over plain HTTP and a plain deployment must not be pinned to TLS.
pub fn default_headers(cx: &Ctx, res: &mut Response) {
    res.header("X-Frame-Options", b"SAMEORIGIN");
    res.header("X-XSS-Protection", b"0");
    res.header("X-Content-Type-Options", b"nosniff");
    res.header("X-Permitted-Cross-Domain-Policies", b"none");
    res.header("Referrer-Policy", b"strict-origin-when-cross-origin");
    if cx.https {
        res.header("Strict-Transport-Security", b"max-age=63072000; includeSubDomains");
    }
}

/// `X-Version` and `X-Rev` (spec/02 §1.2 step 7).
pub fn version_headers(cx: &Ctx, res: &mut Response) {
    res.header("X-Version", cx.env.version.as_bytes());
    if let Some(rev) = &cx.env.rev {
        res.header("X-Rev", rev.as_bytes());
    }
}

/// Rails' default `Cache-Control` for responses whose action set none: private revalidation
/// for pages, `no-cache` for redirects and empty answers.
pub fn cache_headers(res: &mut Response) {
    match res.code() {
        200 | 201 => res.header("Cache-Control", b"max-age=0, private, must-revalidate"),
        204 | 300..=399 => res.header("Cache-Control", b"no-cache"),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_matching() {
        assert!(origin_is_host(b"https://chat.example.com", Some(b"chat.example.com")));
        assert!(origin_is_host(b"http://127.0.0.1:3000", Some(b"127.0.0.1:3000")));
        assert!(origin_is_host(b"https://Chat.Example.com", Some(b"chat.example.com")));
        assert!(!origin_is_host(b"https://evil.example", Some(b"chat.example.com")));
        assert!(!origin_is_host(b"https://chat.example.com.evil", Some(b"chat.example.com")));
        assert!(!origin_is_host(b"null", Some(b"chat.example.com")));
        assert!(!origin_is_host(b"https://chat.example.com", None));
        assert!(!origin_is_host(b"ftp://chat.example.com", Some(b"chat.example.com")));
    }
}
