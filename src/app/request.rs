//! The request context every controller receives: the parsed HTTP request, the route's path
//! parameters and format, the form parameters, the client IP, the signed-in user (`Current`),
//! and the Rails session (decrypted only when a controller asks for it).
//!
//! Cookies are sent only when their value changes (design §6): unlike Rails we do not re-issue
//! `session_token` or re-encrypt `_campfire_session` on every request, which keeps pages
//! byte-stable and cacheable (docs/architecture.md "Deviations from Rails").

use super::params::Params;
use super::router::{self, Format};
use super::Ctx;
use crate::crypto::cookies::Session;
use crate::http::{Method, Request, Response};
use crate::server::Call;
use std::net::IpAddr;

/// The signed-in user of this request and the login session that authenticated them.
#[derive(Clone, Debug)]
pub struct Current {
    /// `sessions.id`; `None` when a bot key authenticated the request.
    pub session_id: Option<i64>,
    /// Shared with the loop's session memo, so a remembered session costs no copy.
    pub user: std::rc::Rc<crate::db::users::User>,
}

/// One request as the controllers see it.
pub struct Req<'r, 'c> {
    pub http: &'r Request<'r>,
    /// The method after the `_method` override of POST forms.
    pub method: Method,
    pub route: router::Route<'r>,
    pub params: &'r Params,
    pub ip: IpAddr,
    /// The socket peer is a trusted proxy: its `X-Forwarded-Host` and `-Proto` are believed.
    pub proxied: bool,
    /// Served over HTTPS: our own TLS, or a trusted proxy's `X-Forwarded-Proto: https`, and
    /// `DISABLE_SSL` unset. Absolute URLs, `Secure` cookies and HSTS follow it.
    pub https: bool,
    /// The data version this request reads (`None` when the cache is off or for writes):
    /// what the session memo's remembered lookups are checked against.
    pub stamp: Option<crate::cache::Stamp>,
    pub current: Option<Current>,
    /// True when a `bot_key` authenticated the request (bot API).
    pub by_bot_key: bool,
    /// `None` until a controller looks at it: the cookie stays encrypted until then.
    session: Option<Session>,
    /// The flash the session carried in: shown by this request's page, never written back.
    arrived_flash: Vec<(String, String)>,
    /// The chain got past the ban check: the response carries the version headers.
    pub(super) chain_passed: bool,
    /// The action set its own Cache-Control (the default one is then not added).
    pub(super) own_cache_control: bool,
    session_dirty: bool,
    call: &'r mut Call<'c, Ctx>,
}

impl<'r, 'c> Req<'r, 'c> {
    pub(super) fn new(
        http: &'r Request<'r>,
        method: Method,
        route: router::Route<'r>,
        params: &'r Params,
        ip: IpAddr,
        stamp: Option<crate::cache::Stamp>,
        call: &'r mut Call<'c, Ctx>,
    ) -> Req<'r, 'c> {
        Req {
            http,
            method,
            route,
            params,
            ip,
            proxied: false,
            https: false,
            stamp,
            current: None,
            by_bot_key: false,
            session: None,
            arrived_flash: Vec::new(),
            own_cache_control: false,
            chain_passed: false,
            session_dirty: false,
            call,
        }
    }

    /// The signed-in user (always present in actions behind the authentication gate).
    pub fn user(&self) -> Option<&crate::db::users::User> {
        self.current.as_ref().map(|c| &*c.user)
    }

    /// Whether the signed-in user is an administrator.
    pub fn is_admin(&self) -> bool {
        self.user().is_some_and(|u| u.is_administrator())
    }

    /// A request header (name given in lower case).
    pub fn header(&self, lowercase_name: &[u8]) -> Option<&'r [u8]> {
        self.http.header(lowercase_name)
    }

    /// The host the client addressed: a trusted proxy's `X-Forwarded-Host` (first entry), else
    /// `Host`.
    pub fn host(&self) -> Option<&'r [u8]> {
        let forwarded = if self.proxied { self.header(b"x-forwarded-host") } else { None };
        forwarded
            .and_then(|h| h.split(|&b| b == b',').next())
            .map(<[u8]>::trim_ascii)
            .filter(|h| !h.is_empty())
            .or_else(|| self.header(b"host"))
    }

    /// `scheme://host` as the client addressed us, for absolute URLs (Rails' `base_url`).
    pub fn origin(&self) -> String {
        let host = self.host().and_then(|h| std::str::from_utf8(h).ok()).unwrap_or("localhost");
        format!("{}://{host}", if self.https { "https" } else { "http" })
    }

    /// The value of cookie `name`, as sent.
    pub fn cookie(&self, name: &[u8]) -> Option<&'r [u8]> {
        self.http.cookie(name)
    }

    /// Whether the client wants JSON (`.json` suffix or an `Accept` that starts with JSON).
    pub fn wants_json(&self) -> bool {
        match self.route.format {
            Format::Json => true,
            Format::None => self
                .header(b"accept")
                .is_some_and(|a| a.trim_ascii_start().starts_with(b"application/json")),
            _ => false,
        }
    }

    /// Whether the client takes a Turbo Stream (`.turbo_stream` or Turbo's Accept header).
    pub fn wants_turbo_stream(&self) -> bool {
        match self.route.format {
            Format::TurboStream => true,
            Format::None => self
                .header(b"accept")
                .is_some_and(|a| a.windows(26).any(|w| w == b"text/vnd.turbo-stream.html")),
            _ => false,
        }
    }

    /// For actions that only render HTML: 406 when the path asked for another format
    /// (`/session/new.json`), as Rails answers a format it has no template for.
    pub fn html_only(&self) -> Result<(), super::AppError> {
        match self.route.format {
            Format::None | Format::Html => Ok(()),
            _ => Err(super::AppError::NotAcceptable),
        }
    }

    /// Whether this is a Turbo Frame request (it gets the frame layout).
    pub fn turbo_frame(&self) -> bool {
        self.header(b"turbo-frame").is_some()
    }

    /// The Rails session, decrypted from `_campfire_session` on first use (an absent or
    /// unreadable cookie is an empty session, as in Rails).
    pub fn session(&mut self, cx: &mut Ctx) -> &mut Session {
        if self.session.is_none() {
            let mut loaded = self.http.cookie(b"_campfire_session").map(|r| super::cookies::read_session(cx, r)).unwrap_or_default();
            // Like Rails, a flash lives for one request: whatever arrived is dropped from the
            // session this request writes back.
            self.arrived_flash = std::mem::take(&mut loaded.flash);
            if !self.arrived_flash.is_empty() {
                self.session_dirty = true;
            }
            self.session = Some(loaded);
        }
        self.session.get_or_insert_with(Session::default)
    }

    /// Takes the Rails session out of the request, for a parked action that writes it when it
    /// resumes (`cookies::write_session`).
    pub fn take_session(&mut self, cx: &mut Ctx) -> Session {
        let s = std::mem::take(self.session(cx));
        self.session_dirty = false;
        s
    }

    /// Marks the session as changed: it is written back with the response.
    pub fn session_changed(&mut self) {
        self.session_dirty = true;
    }

    /// Stores a notice for the next page (Rails `flash[:notice]` before a redirect).
    pub fn flash_notice(&mut self, cx: &mut Ctx, text: &str) {
        self.session(cx).flash.push(("notice".into(), text.into()));
        self.session_dirty = true;
    }

    /// Stores an alert for the next page (Rails `flash[:alert]` before a redirect).
    pub fn flash_alert(&mut self, cx: &mut Ctx, text: &str) {
        self.session(cx).flash.push(("alert".into(), text.into()));
        self.session_dirty = true;
    }

    /// The flash that arrived with this request as `(kind, message)` pairs, to show on the
    /// page being rendered. Taking it consumes it: the session is rewritten without it.
    pub fn take_flash(&mut self, cx: &mut Ctx) -> Vec<(String, String)> {
        if self.session.is_none() && self.cookie(b"_campfire_session").is_none() {
            return Vec::new();
        }
        self.session(cx);
        std::mem::take(&mut self.arrived_flash)
    }

    /// Sets `Cache-Control` to `value` instead of Rails' default for the response.
    pub fn cache_control(&mut self, res: &mut Response, value: &[u8]) {
        res.header("Cache-Control", value);
        self.own_cache_control = true;
    }

    /// Parks the connection: the action returns `Flow::Parked` and the response is filled
    /// through the ticket later (flow.rs). Call at most once per request. A session changed
    /// before parking (a flash for the next page, say) travels with the ticket and is written
    /// with the response if that succeeds.
    pub fn ticket(&mut self) -> super::Ticket {
        let json = self.wants_json();
        let session = if self.session_dirty { self.session.take() } else { None };
        self.session_dirty = false;
        super::Ticket::new(self.call.park(), self.route.name, json, session, self.https)
    }

    /// Writes the `_campfire_session` cookie if the session changed during this request.
    pub(super) fn finish(&mut self, cx: &mut Ctx, res: &mut Response) {
        if self.session_dirty {
            if let Some(session) = self.session.as_mut() {
                super::cookies::write_session(cx, res, session);
            }
        }
    }
}

/// Whether `req` is HTTPS: it came over our own TLS, or from a trusted proxy (`proxied`) that says
/// `X-Forwarded-Proto: https` (its first entry, as Rack reads a proxy chain); never with
/// `DISABLE_SSL`.
pub(super) fn is_https(req: &Request, proxied: bool, ssl_disabled: bool) -> bool {
    if ssl_disabled {
        return false;
    }
    req.tls
        || (proxied
            && req
                .header(b"x-forwarded-proto")
                .and_then(|p| p.split(|&b| b == b',').next())
                .is_some_and(|p| p.trim_ascii().eq_ignore_ascii_case(b"https")))
}
