//! The application: the request pipeline around the controllers (design §3–§4, spec/02 §1).
//!
//! Every request on a loop goes through `Ctx::handle`:
//! 1. outside the Rails chain: `/up` and the embedded assets;
//! 2. parameters decoded (query, url-encoded or multipart body), the `_method` override;
//! 3. `router::recognize` → the controller function and its access rules (404 when none);
//! 4. `gates::run`: browser gate, authentication, deny bots, forgery protection, banned
//!    addresses, version headers — spec/02 §1.2, in that order;
//! 5. the action: returns `Flow::Done` with the response filled, or parks the connection
//!    while the writer (`Ctx::write`) or the worker (`Ctx::work`) does its part (flow.rs);
//! 6. errors (`AppError`) become statuses and pages in one place, `errors::render`;
//! 7. the finished response is gzipped when the client accepts it (`crate::gzip`), and a
//!    signed-in GET of a cacheable page is stored in the loop's response cache
//!    (`crate::cache`), which answers the same request after step 4 until the data changes.
//!
//! Controllers are plain functions `fn(&mut Ctx, &mut Req, &mut Response) -> Result<Flow, AppError>`
//! in `controllers/<rails controller>.rs`; see docs/architecture.md "How to add a controller".

pub mod attachments;
pub mod browser;
pub mod cable;
pub mod client_ip;
pub mod content_types;
pub mod controllers;
pub mod cookies;
pub mod errors;
pub mod flow;
pub mod form_file;
pub mod gates;
pub mod layout;
pub mod message_view;
pub mod opengraph;
pub mod params;
pub mod posting;
pub mod push;
pub mod rate_limit;
pub mod request;
pub mod respond;
pub mod room_scope;
pub mod room_streams;
pub mod session_memo;
pub mod storage;
pub mod router;
pub mod test_routes;
pub mod translations;
pub mod webhooks;
pub mod worker;

pub use crate::server::Flow;
pub use errors::AppError;
pub use flow::Ticket;
pub use request::{Current, Req};

use crate::cache::{Cache, Stamp};
use crate::config::Config;
use crate::crypto::Keys;
use crate::db::{self, Conn, Outbox, Writer};
use crate::http::{Method, Request, Response};
use crate::server::{Call, Handler};
use params::Params;
use rate_limit::RateLimiter;
use std::sync::Arc;
use worker::Worker;

/// A controller action.
pub type Action = fn(&mut Ctx, &mut Req<'_, '_>, &mut Response) -> Result<Flow, AppError>;

/// Settings only the application reads, taken from the environment once at start.
#[derive(Clone, Debug)]
pub struct Env {
    /// `DISABLE_SSL`: every request counts as plain HTTP (no `Secure` cookies, no HSTS, `http://`
    /// URLs), as a Rails deployment behind a plain proxy expects (spec/03 §12).
    pub ssl_disabled: bool,
    /// `X-Version`: `APP_VERSION`, else `GIT_REVISION`, else this build's version.
    pub version: String,
    /// `X-Rev`: `GIT_REVISION`, omitted when unset.
    pub rev: Option<String>,
    /// `VAPID_PUBLIC_KEY`, shown to the page's push code (empty when unset).
    pub vapid_public_key: String,
    /// The VAPID key pair when both keys are set and belong together: Web Push is off
    /// without it (a bad pair is logged once at start).
    pub vapid: Option<Arc<crate::app::push::Vapid>>,
}

impl Env {
    /// Reads `DISABLE_SSL`, `APP_VERSION`, `GIT_REVISION`, `VAPID_PUBLIC_KEY` and
    /// `VAPID_PRIVATE_KEY` through `get`.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Env {
        let nonblank = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let rev = nonblank("GIT_REVISION");
        Env {
            ssl_disabled: nonblank("DISABLE_SSL").is_some(),
            version: nonblank("APP_VERSION").or_else(|| rev.clone()).unwrap_or_else(|| crate::VERSION.into()),
            rev,
            vapid_public_key: nonblank("VAPID_PUBLIC_KEY").unwrap_or_default(),
            vapid: match crate::app::push::Vapid::from_config(get("VAPID_PUBLIC_KEY").as_deref(), get("VAPID_PRIVATE_KEY").as_deref()) {
                Ok(v) => v.map(Arc::new),
                Err(e) => {
                    eprintln!("push: {e}; Web Push is off");
                    None
                }
            },
        }
    }
}

/// What every loop shares; built once by `main` and handed to each loop's `Ctx::new`.
#[derive(Clone)]
pub struct Shared {
    pub config: Arc<Config>,
    pub env: Arc<Env>,
    pub keys: Arc<Keys>,
    pub writer: Writer,
    pub worker: Worker,
    /// The `POST /session` limiter: one for the whole process, as Rails' cache is.
    pub sign_in_limiter: Arc<RateLimiter>,
    /// Password checks queued or running on the worker (beyond the bound: 503).
    pub password_checks: Arc<worker::Permits>,
}

impl Shared {
    /// Derives the keys, starts the writer (which creates the schema on an empty database)
    /// and the worker pool.
    pub fn start(config: Config, env: Env) -> Result<Shared, String> {
        let keys = Keys::derive(config.secret_key_base.as_bytes());
        let path = config.database_path.to_string_lossy().into_owned();
        let writer = Writer::start(&path).map_err(|e| format!("cannot open database {path}: {e}"))?;
        let worker = Worker::start(worker_threads()).map_err(|e| format!("cannot start worker threads: {e}"))?;
        // No socket survives a restart: every membership counts as disconnected (spec/06 §6.3).
        writer.submit(db::writer::Job::new(
            |c| db::memberships::disconnect_all(c, db::time::now_us()),
            |r| {
                if let Err(e) = r {
                    eprintln!("app: resetting presence failed: {e}");
                }
            },
        ));
        Ok(Shared {
            config: Arc::new(config),
            env: Arc::new(env),
            keys: Arc::new(keys),
            writer,
            worker,
            sign_in_limiter: Arc::new(RateLimiter::sessions()),
            password_checks: worker::Permits::new(PASSWORD_CHECKS_PER_THREAD * worker_threads()),
        })
    }
}

/// Password checks per worker thread that may wait or run at once: about a second of bcrypt
/// at cost 12, so a flood of wrong passwords delays a real sign-in by a second at most and is
/// otherwise answered 503 at once.
const PASSWORD_CHECKS_PER_THREAD: usize = 4;

/// Worker threads for bcrypt and other slow work: two on machines with cores to spare, so one
/// slow hash does not queue every other sign-in; one on one- and two-core machines, so a flood
/// of sign-ins always leaves a core to the loops (a saturated core is what makes `/up` slow
/// while bcrypt runs, not blocking). `CAMPFIRE_WORKERS` overrides (1–8).
pub fn worker_threads() -> usize {
    if let Some(n) = std::env::var("CAMPFIRE_WORKERS").ok().and_then(|v| v.parse::<usize>().ok()) {
        return n.clamp(1, 8);
    }
    if crate::sys::process::usable_cpus() > 2 {
        2
    } else {
        1
    }
}

/// One per loop thread: that loop's read-only connection and handles on the shared pieces.
pub struct Ctx {
    /// This loop's read-only connection (its prepared statements are cached per loop).
    pub db: Conn,
    pub config: Arc<Config>,
    pub env: Arc<Env>,
    pub keys: Arc<Keys>,
    pub writer: Writer,
    /// This loop's writes, sent to the writer when the loop's turn ends (`db::writer::Outbox`).
    /// Everything the loop thread writes goes through here; other threads use `writer`.
    pub outbox: Outbox,
    pub worker: Worker,
    pub sign_in_limiter: Arc<RateLimiter>,
    pub password_checks: Arc<worker::Permits>,
    /// Whether the request being answered is HTTPS (`Req::https`): set by the pipeline, and again
    /// when a parked request resumes, so that its cookies get `Secure` and its headers HSTS.
    pub https: bool,
    /// Reused parameter buffers (taken out while a request uses them).
    params: Params,
    /// Reused buffers for verifying cookies.
    pub scratch: crate::crypto::Scratch,
    /// This loop's whole-response cache.
    pub cache: Cache,
    /// This loop's verified session cookies.
    pub session_memo: session_memo::SessionMemo,
    /// This loop's browser-gate verdicts by User-Agent.
    pub browsers: browser::Verdicts,
    gzip: crate::gzip::Gzip,
    /// Reused buffer the gzip body is written into (it then holds the previous body).
    gzip_scratch: Vec<u8>,
}

impl Ctx {
    /// Builds loop state: opens a read-only connection on the database.
    pub fn new(shared: &Shared) -> db::Result<Ctx> {
        let path = shared.config.database_path.to_string_lossy().into_owned();
        Ok(Ctx {
            db: Conn::open(&path, db::Mode::ReadOnly)?,
            config: Arc::clone(&shared.config),
            env: Arc::clone(&shared.env),
            keys: Arc::clone(&shared.keys),
            writer: shared.writer.clone(),
            outbox: Outbox::new(shared.writer.clone()),
            worker: shared.worker.clone(),
            sign_in_limiter: Arc::clone(&shared.sign_in_limiter),
            password_checks: Arc::clone(&shared.password_checks),
            https: false,
            params: Params::default(),
            scratch: crate::crypto::Scratch::default(),
            cache: Cache::new(Cache::budget_from_env(shared.config.loops)),
            session_memo: session_memo::SessionMemo::new(),
            browsers: browser::Verdicts::new(),
            gzip: crate::gzip::Gzip::new(crate::gzip::LEVEL),
            gzip_scratch: Vec::new(),
        })
    }
}

impl Handler for Ctx {
    type Socket = crate::app::cable::Connection;
    fn handle(&mut self, req: &Request, res: &mut Response, call: &mut Call<Self>) -> Flow {
        if matches!(req.method, Method::Get | Method::Head) {
            if req.path == b"/up" {
                controllers::health::show(res);
                return Flow::Done;
            }
            if let Some(asset) = crate::assets::lookup(req.path) {
                crate::assets::serve(req, res, asset);
                return Flow::Done;
            }
        }
        if req.path == b"/cable" {
            return crate::app::cable::connect(self, req, res, call);
        }
        if self.config.test_routes {
            if let Some(flow) = test_routes::handle(self, req, res, call) {
                return flow;
            }
        }
        let mut params = std::mem::take(&mut self.params);
        params.clear();
        let gzip = crate::gzip::accepts(req);
        self.cache.begin_request();
        crate::gzip::begin_response();
        // One read transaction for all of the request's queries: SQLite takes and drops its
        // WAL read lock (fcntl calls) once per transaction, not once per statement, and the
        // request sees one consistent snapshot. It opens with the first statement, so a
        // request that needs none (a cache hit with a remembered session) costs SQLite nothing.
        self.db.begin_lazily();
        // The data version, as the transaction's first read when it needs SQLite at all: it
        // names the very snapshot that authentication and rendering read (cache.rs).
        let stamp = if matches!(req.method, Method::Get | Method::Head) { self.cache.stamp(&self.db) } else { None };
        let flow = pipeline(self, req, res, call, &mut params, stamp, gzip);
        if let Err(e) = self.db.end_lazy() {
            eprintln!("app: ending the read transaction failed: {e}");
        }
        self.params = params;
        if matches!(flow, Flow::Done) && !self.cache.served() {
            crate::gzip::finish(res, gzip, &mut self.gzip, &mut self.gzip_scratch);
            if let (Some(before), Method::Get) = (stamp, req.method) {
                let after = self.cache.stamp(&self.db);
                self.cache.admit(before, after, res);
            }
        }
        flow
    }

    fn ws_open(&mut self, ws: &mut crate::server::Ws<Self>) {
        crate::app::cable::opened(ws);
    }

    fn ws_text(&mut self, ws: &mut crate::server::Ws<Self>, text: &[u8]) {
        crate::app::cable::received(self, ws, text);
    }

    fn ws_closed(&mut self, state: crate::app::cable::Connection) {
        crate::app::cable::closed(self, state);
    }

    fn ws_heartbeat(&mut self, payload: &mut Vec<u8>) {
        crate::app::cable::heartbeat(payload);
    }

    fn holds_work(&self) -> bool {
        self.outbox.holds_jobs()
    }

    fn turn_end(&mut self) {
        self.outbox.send();
    }
}

/// Steps 2–6 of the module comment. Nothing is written to `res` before the action has run:
/// a parked request's response is filled later, and bytes left in `res` at that point would
/// belong to whatever the loop answers next.
fn pipeline(
    cx: &mut Ctx,
    req: &Request,
    res: &mut Response,
    call: &mut Call<Ctx>,
    params: &mut Params,
    stamp: Option<Stamp>,
    gzip: bool,
) -> Flow {
    let proxied = cx.config.trusted_proxies.contains(req.peer);
    cx.https = request::is_https(req, proxied, cx.env.ssl_disabled);
    params.add_urlencoded(req.query);
    if req.is_form() {
        params.add_urlencoded(req.body);
    } else if let Some(boundary) = req.header(b"content-type").and_then(params::multipart_boundary) {
        let parsed = match req.spooled {
            Some(body) => params.add_multipart_spooled(body, boundary),
            None => params.add_multipart(req.body, boundary),
        };
        if parsed.is_err() {
            return answer(cx, res, Err(AppError::BadRequest("malformed multipart body")), "-", false, false);
        }
    }
    let method = method_override(req, params);
    let Some(route) = router::recognize(method, req.path) else {
        return answer(cx, res, Err(AppError::NotFound), "-", false, false);
    };
    // A peer that is not a trusted proxy is the client; its forwarding headers are not read.
    let forwarding = if proxied {
        client_ip::Forwarding {
            forwarded: req.header(b"forwarded"),
            x_forwarded_for: req.header(b"x-forwarded-for"),
            client_ip: req.header(b"client-ip"),
        }
    } else {
        client_ip::Forwarding::default()
    };
    let ip = match client_ip::client_ip(req.peer, forwarding, &cx.config.trusted_proxies) {
        Ok(ip) => ip,
        Err(client_ip::Spoofed) => {
            let refused = Err(AppError::BadRequest("IP spoofing: Client-Ip not in X-Forwarded-For"));
            return answer(cx, res, refused, route.name, false, false);
        }
    };
    let params: &Params = params;
    let mut rq = Req::new(req, method, route, params, ip, stamp, call);
    rq.proxied = proxied;
    rq.https = cx.https;
    let result = match gates::run(cx, &mut rq, res) {
        Ok(gates::Gate::Pass) => {
            if let (Some(stamp), Some(user_id)) = (stamp, cacheable(&rq)) {
                if cx.cache.lookup(stamp, user_id, req, cache_variant(gzip, &rq), res) {
                    return Flow::Done;
                }
            }
            (route.action)(cx, &mut rq, res)
        }
        Ok(gates::Gate::Answered) => Ok(Flow::Done),
        Err(e) => Err(e),
    };
    if let Ok(Flow::Parked) = result {
        return Flow::Parked;
    }
    let ok = result.is_ok();
    let done = answer(cx, res, result, route.name, rq.wants_json(), rq.chain_passed);
    if ok {
        rq.finish(cx, res);
        if !rq.own_cache_control {
            gates::cache_headers(res);
        }
    }
    done
}

/// The one way a request leaves the pipeline once it is answered here: the default headers,
/// the version headers when the Rails chain ran, and an error rendered as its page or JSON
/// (`errors::render`, which also logs it).
fn answer(cx: &Ctx, res: &mut Response, result: Result<Flow, AppError>, route: &str, json: bool, chain_passed: bool) -> Flow {
    gates::default_headers(cx, res);
    if chain_passed {
        gates::version_headers(cx, res);
    }
    if let Err(e) = result {
        errors::render(&e, route, json, res);
    }
    Flow::Done
}

/// The signed-in user whose GET of a cacheable page this is (the route's `Access::cached`).
/// Bot-key requests are not cached.
fn cacheable(rq: &Req) -> Option<i64> {
    if rq.by_bot_key || !matches!(rq.method, Method::Get | Method::Head) || !rq.route.access.cached {
        return None;
    }
    rq.user().map(|u| u.id)
}

/// The parts of a cached page's key beyond the request's bytes: gzip or not, and the scheme and
/// proxy trust the page's absolute URLs and host were rendered under.
fn cache_variant(gzip: bool, rq: &Req) -> u8 {
    gzip as u8 | (rq.https as u8) << 1 | (rq.proxied as u8) << 2
}

/// Rack::MethodOverride: a POST may say it is a PATCH, PUT or DELETE through the `_method`
/// form field (or the `X-HTTP-Method-Override` header).
fn method_override(req: &Request, params: &Params) -> Method {
    if req.method != Method::Post {
        return req.method;
    }
    let wanted = params.get("_method").or_else(|| req.header(b"x-http-method-override"));
    match wanted {
        Some(m) if m.eq_ignore_ascii_case(b"patch") => Method::Patch,
        Some(m) if m.eq_ignore_ascii_case(b"put") => Method::Put,
        Some(m) if m.eq_ignore_ascii_case(b"delete") => Method::Delete,
        _ => Method::Post,
    }
}
