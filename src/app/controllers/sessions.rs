//! SessionsController: sign in and out (spec/02 §4.3, spec/03 §5–§6), and the
//! unsupported-browser page the browser gate shows (spec/07 §12.5).
//!
//! Signing in checks the password with bcrypt, which takes about a quarter of a second by
//! design: it runs on the worker pool, never on a loop. A successful check hands the new
//! session row to the writer from the worker thread, and the response is finished back on the
//! loop once that row is committed.

use crate::app::translations::{self, Phrase};
use crate::app::layout::{self, Chrome, Page};
use crate::app::{cookies, respond, AppError, Ctx, Flow, Req, Ticket};
use crate::crypto::cookies::Session;
use crate::db::{self, Job};
use crate::http::Response;
use crate::views::{self, Out};

/// The alert of a refused or rate-limited sign-in.
const REFUSED: &str = "Too many requests or unauthorized.";

/// `GET /session/new`: the sign-in form, or first run while nobody has signed up.
pub fn new(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    if !db::auth::any_user(&cx.db)? {
        respond::redirect(res, "/first_run");
        return Ok(Flow::Done);
    }
    let email = rq.params.get_str("email_address").unwrap_or("").to_owned();
    let page = SignIn::load(cx, email, false)?;
    layout::page(cx, rq, res, 200, &page)?;
    Ok(Flow::Done)
}

/// `POST /session`: counts the attempt against the address's limit, then verifies the
/// password on the worker; success starts a session and returns to where the visitor was
/// going, failure re-renders the form with 401 (429 when over the limit).
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let email = rq.params.get_str("email_address").unwrap_or("").to_owned();
    if cx.sign_in_limiter.hit(rq.ip, crate::sys::clock::now_ms()) {
        let page = SignIn::load(cx, email, true)?;
        layout::page(cx, rq, res, 429, &page)?;
        return Ok(Flow::Done);
    }
    let password = rq.params.get("password").unwrap_or(b"").to_vec();
    let digest = match db::users::find_by_email(&cx.db, &email)? {
        Some(u) if u.is_active() => u.password_digest.filter(|d| !d.is_empty()).map(|d| (u.id, d)),
        _ => None,
    };
    if password.is_empty() {
        return refuse(cx, rq, res, email);
    }
    let Some(permit) = cx.password_checks.try_take() else {
        eprintln!("app: sessions#create: {} password checks in flight, answering 503", cx.password_checks.in_use());
        return Err(AppError::Busy);
    };
    let chrome = Chrome::of(cx, rq);
    let start = SessionStart::of(cx, rq);
    let writer = cx.writer.clone();
    let ticket = rq.ticket();
    let queued = cx.worker.submit(move || {
        let user_id = match &digest {
            Some((id, d)) => crate::crypto::bcrypt::verify(&password, d.as_bytes()).then_some(*id),
            None => {
                // Hash anyway, so an unknown address takes as long as a wrong password.
                let _ = crate::crypto::bcrypt::hash(&password);
                None
            }
        };
        drop(permit);
        let Some(user_id) = user_id else {
            ticket.finish(move |cx, res| {
                let page = SignIn::load(cx, email, true)?;
                layout::render(cx, &chrome, res, 401, &page)
            });
            return;
        };
        start.start(|job| writer.submit(job), user_id, ticket);
    });
    if !queued {
        eprintln!("app: sessions#create: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
}

/// What starting a login session needs from the request, taken on the loop before it parks:
/// the Rails session (for `return_to`), the client's address and browser.
pub struct SessionStart {
    session: Session,
    ip: String,
    user_agent: Option<String>,
}

impl SessionStart {
    /// Takes the Rails session out of `rq` (it is written back by `start` when it held a
    /// `return_to`) and notes the address and `User-Agent`.
    pub fn of(cx: &mut Ctx, rq: &mut Req<'_, '_>) -> SessionStart {
        let session = rq.take_session(cx);
        let user_agent = rq.header(b"user-agent").map(|v| String::from_utf8_lossy(v).into_owned());
        SessionStart { session, ip: rq.ip.to_string(), user_agent }
    }

    /// Rails' `start_new_session_for` + `redirect_to post_authenticating_url`: inserts a session
    /// row for `user_id` through the writer, then answers through `ticket` with the new
    /// `session_token` cookie and a 302 to the stored `return_to` (or `/`). Callable from any
    /// thread: `submit` is the loop's outbox or, on the worker after a password check, the writer.
    pub fn start(self, submit: impl FnOnce(Job), user_id: i64, ticket: Ticket) {
        let SessionStart { mut session, ip, user_agent } = self;
        let token = new_session_token();
        let job_token = token.clone();
        let now = db::time::now_us();
        submit(Job::new(
            move |c| db::sessions::create(c, user_id, &job_token, Some(ip.as_str()), user_agent.as_deref(), now),
            move |created| {
                ticket.finish(move |cx, res| {
                    created?;
                    cookies::set_session_token(cx, res, &token);
                    let to = session.return_to.take();
                    if to.is_some() {
                        cookies::write_session(cx, res, &mut session);
                    }
                    respond::redirect(res, to.as_deref().unwrap_or("/"));
                    Ok(())
                })
            },
        ));
    }
}

/// A refused sign-in that needs no bcrypt (no password given).
fn refuse(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response, email: String) -> Result<Flow, AppError> {
    let page = SignIn::load(cx, email, true)?;
    layout::page(cx, rq, res, 401, &page)?;
    Ok(Flow::Done)
}

/// `DELETE /session`: ends this login session (and forgets the push subscription of this
/// browser when its endpoint is given), resets the Rails session, goes to `/`.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let Some(current) = rq.current.as_ref() else { return Err(AppError::Head(401)) };
    let (user_id, session_id) = (current.user.id, current.session_id);
    let endpoint = rq.params.get_str("push_subscription_endpoint").map(str::to_owned);
    cx.write(
        rq,
        move |c| {
            if let Some(endpoint) = &endpoint {
                db::auth::delete_push_subscriptions(c, user_id, endpoint)?;
            }
            if let Some(id) = session_id {
                db::sessions::destroy(c, id)?;
            }
            Ok(())
        },
        |cx, res, done| {
            done?;
            cookies::delete_session_token(res);
            cookies::write_session(cx, res, &mut Session::default());
            respond::redirect(res, "/");
            Ok(())
        },
    )
}

/// A fresh 24-character base58 session token.
fn new_session_token() -> String {
    String::from_utf8_lossy(&crate::crypto::token::session_token()).into_owned()
}

/// The unsupported-browser page (status 200, as Rails answers it).
pub fn incompatible_browser(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<(), AppError> {
    let preview = crate::app::browser::is_link_preview(rq.header(b"user-agent"));
    layout::page(cx, rq, res, 200, &Incompatible { preview })
}

struct Incompatible {
    preview: bool,
}

impl Page for Incompatible {
    fn title(&self, o: &mut Out<'_>) {
        o.text(if self.preview { "Campfire" } else { "Unsupported browser" });
    }
    fn main(&self, o: &mut Out<'_>) {
        views::sessions::incompatible_browser::render(&NoHoles, o);
    }
}

struct NoHoles;
impl views::sessions::incompatible_browser::View for NoHoles {}

/// The sign-in page.
pub(crate) struct SignIn {
    email: String,
    failed: bool,
    logo_url: String,
    contact: Option<(String, Option<String>)>,
    version: String,
}

impl SignIn {
    /// The page with `email` pre-filled; `failed` adds the alert (and the shake).
    pub(crate) fn load(cx: &Ctx, email: String, failed: bool) -> Result<SignIn, AppError> {
        Ok(SignIn {
            email,
            failed,
            logo_url: logo_url(cx)?,
            contact: db::auth::first_administrator(&cx.db)?,
            version: cx.env.version.clone(),
        })
    }
}

/// `/account/logo?v=<YYYYMMDDHHMMSS>` (without `v` before first run).
pub(crate) fn logo_url(cx: &Ctx) -> Result<String, AppError> {
    let mut url = Vec::with_capacity(40);
    url.extend_from_slice(b"/account/logo");
    if let Some(account) = db::accounts::get(&cx.db)? {
        url.extend_from_slice(b"?v=");
        layout::version_stamp(account.updated_at, &mut Out::new(&mut url));
    }
    Ok(String::from_utf8_lossy(&url).into_owned())
}

impl Page for SignIn {
    fn title(&self, o: &mut Out<'_>) {
        o.text("Sign in");
    }
    fn head_extra(&self, o: &mut Out<'_>) {
        // `turbo-visit-control: reload` makes Turbo reload a page instead of rendering it. A
        // refused sign-in is answered to Turbo's form submission, and a reload would replace
        // the alert with a blank form, so only the plain page carries it.
        if !self.failed {
            views::sessions::head::render(&HeadNoHoles, o);
        }
    }
    fn main(&self, o: &mut Out<'_>) {
        views::sessions::new::render(self, o);
    }
}

struct HeadNoHoles;
impl views::sessions::head::View for HeadNoHoles {}

impl views::sessions::new::View for SignIn {
    fn panel_class(&self, o: &mut Out<'_>) {
        if self.failed {
            o.static_bytes(b" shake");
        }
    }
    fn logo_url(&self, o: &mut Out<'_>) {
        o.attr(&self.logo_url);
    }
    fn alert(&self, o: &mut Out<'_>) {
        if self.failed {
            views::sessions::alert::render(&Alert(REFUSED), o);
        }
    }
    fn email_address(&self, o: &mut Out<'_>) {
        o.attr(&self.email);
    }
    fn help_contact(&self, o: &mut Out<'_>) {
        if let Some((name, email)) = &self.contact {
            views::users::help_contact::render(&HelpContact { name, email: email.as_deref(), version: &self.version }, o);
        }
    }
    fn translate_email(&self, o: &mut Out<'_>) {
        translations::button(Phrase::EmailAddress, o);
    }
    fn translate_password(&self, o: &mut Out<'_>) {
        translations::button(Phrase::Password, o);
    }
}

pub(crate) struct Alert(pub(crate) &'static str);

impl views::sessions::alert::View for Alert {
    fn message(&self, o: &mut Out<'_>) {
        o.text(self.0);
    }
}

/// "Trouble signing in? Ask <first administrator>" (spec/07 §11.3).
pub(crate) struct HelpContact<'a> {
    pub(crate) name: &'a str,
    pub(crate) email: Option<&'a str>,
    pub(crate) version: &'a str,
}

impl views::users::help_contact::View for HelpContact<'_> {
    fn mailto(&self, o: &mut Out<'_>) {
        // mailto:"Name" <email>, percent-encoded as a URL.
        let mut addr = String::with_capacity(self.name.len() + 32);
        addr.push('"');
        addr.push_str(self.name);
        addr.push_str("\" <");
        addr.push_str(self.email.unwrap_or(""));
        addr.push('>');
        let mut url = Vec::with_capacity(addr.len() * 3 + 7);
        url.extend_from_slice(b"mailto:");
        percent_encode(addr.as_bytes(), &mut url);
        o.attr(&String::from_utf8_lossy(&url));
    }
    fn name(&self, o: &mut Out<'_>) {
        o.text(self.name);
    }
    fn version(&self, o: &mut Out<'_>) {
        o.text(self.version);
    }
}

/// URL percent-encoding keeping RFC 3986 unreserved characters and `@`.
fn percent_encode(src: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in src {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'@' => out.push(b),
            _ => out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
        }
    }
}
