//! The application layout around a page (spec/07 §1): a controller describes its page as a
//! `Page` (title, nav, main, footer, sidebar, ...) and `render` wraps it in
//! `templates/layouts/application.html`, or in the minimal `layouts/frame.html` when Turbo
//! asks for a frame (spec/07 §1.4: Turbo only extracts the matching `<turbo-frame>`).
//!
//! Pages are byte-stable (design §6): no CSRF token and nothing random in the markup. The
//! flash shown is the one that arrived in the Rails session (consumed here) or a "flash now"
//! the page carries itself.

use super::{respond, AppError, Ctx, Req};
use crate::http::Response;
use crate::views::{self, Out};

/// A page's parts. Only `main` is required; everything else defaults to empty.
pub trait Page {
    /// `<title>` text (escaped by the caller through `o.text`).
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Campfire");
    }
    /// Extra `<head>` tags (HTML).
    fn head_extra(&self, _o: &mut Out<'_>) {}
    /// The body's page class: `sidebar`, `sidebar searches`, `signup` or empty.
    fn body_class(&self) -> &'static str {
        ""
    }
    fn nav(&self, _o: &mut Out<'_>) {}
    fn main(&self, o: &mut Out<'_>);
    fn footer(&self, _o: &mut Out<'_>) {}
    fn sidebar(&self, _o: &mut Out<'_>) {}
    /// A flash shown on this render only (Rails `flash.now`): `("notice" | "alert", text)`.
    fn flash_now(&self) -> Option<(&'static str, &str)> {
        None
    }
}

/// What the layout needs from the request, captured up front so that a parked action can
/// still render a page when it resumes on the loop.
pub struct Chrome {
    /// A Turbo Frame request: render the frame layout.
    pub frame: bool,
    pub user: Option<crate::db::users::User>,
    /// The flash that arrived with the request (consumed from the Rails session).
    pub flash: Option<(&'static str, String)>,
}

impl Chrome {
    /// Captures the layout facts of `rq`, consuming the flash it carried.
    pub fn of(cx: &mut Ctx, rq: &mut Req<'_, '_>) -> Chrome {
        let arrived = rq.take_flash(cx);
        let pick = |kind: &'static str| arrived.iter().find(|(k, _)| k == kind).map(|(_, m)| (kind, m.clone()));
        let flash = pick("notice").or_else(|| pick("alert"));
        Chrome { frame: rq.turbo_frame(), user: rq.user().cloned(), flash }
    }
}

/// Renders `page` inside the layout into `res` with `status` (200 for pages, 401/429 for a
/// refused sign-in, ...).
pub fn page(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response, status: u16, page: &impl Page) -> Result<(), AppError> {
    let chrome = Chrome::of(cx, rq);
    render(cx, &chrome, res, status, page)
}

/// `page` with layout facts captured earlier (for parked actions).
pub fn render(cx: &Ctx, chrome: &Chrome, res: &mut Response, status: u16, page: &impl Page) -> Result<(), AppError> {
    res.status(status);
    respond::html(res);
    if chrome.frame {
        views::layouts::frame::render(&Frame { page }, &mut Out::new(res.body()));
        return Ok(());
    }
    let look = crate::db::layout::account_look(&cx.db)?;
    let flash = match page.flash_now() {
        Some((kind, text)) => Some((kind, text)),
        None => chrome.flash.as_ref().map(|(kind, text)| (*kind, text.as_str())),
    };
    let layout = Layout { cx, page, user: chrome.user.as_ref(), look: &look, flash };
    views::layouts::application::render(&layout, &mut Out::new(res.body()));
    Ok(())
}

/// `YYYYMMDDHHMMSS` of a time (µs since the epoch), the `v=` of avatar and logo URLs
/// (spec/02 §2 "fresh_account_logo").
pub fn version_stamp(us: i64, o: &mut Out<'_>) {
    let stamp = crate::db::time::format(us);
    let digits = stamp.as_str().bytes().filter(u8::is_ascii_digit).take(14);
    let mut buf = [0u8; 14];
    let mut n = 0;
    for (slot, d) in buf.iter_mut().zip(digits) {
        *slot = d;
        n += 1;
    }
    o.text(std::str::from_utf8(&buf[..n]).unwrap_or(""));
}

struct Layout<'a, P: Page> {
    cx: &'a Ctx,
    page: &'a P,
    user: Option<&'a crate::db::users::User>,
    look: &'a crate::db::layout::AccountLook,
    flash: Option<(&'a str, &'a str)>,
}

impl<P: Page> views::layouts::application::View for Layout<'_, P> {
    fn title(&self, o: &mut Out<'_>) {
        self.page.title(o);
    }
    fn head_extra(&self, o: &mut Out<'_>) {
        self.page.head_extra(o);
    }
    fn csrf_token(&self, _o: &mut Out<'_>) {}
    fn current_user(&self, o: &mut Out<'_>) {
        if let Some(user) = self.user {
            views::layouts::current_user::render(&CurrentUser(user), o);
        }
    }
    fn vapid_public_key(&self, o: &mut Out<'_>) {
        o.attr(&self.cx.env.vapid_public_key);
    }
    fn logo_url(&self, o: &mut Out<'_>) {
        o.static_bytes(b"/account/logo");
        if let Some(v) = self.look.updated_at {
            o.static_bytes(b"?v=");
            version_stamp(v, o);
        }
    }
    fn custom_styles(&self, o: &mut Out<'_>) {
        if let Some(css) = &self.look.custom_styles {
            // Administrators' CSS goes in verbatim, as in Rails; only a closing tag could
            // break out of the element, so that one sequence is neutralised.
            o.static_bytes(b"<style data-turbo-track=\"reload\">");
            let safe = css.replace("</", "<\\/");
            o.0.extend_from_slice(safe.as_bytes());
            o.static_bytes(b"</style>");
        }
    }
    fn body_class(&self, o: &mut Out<'_>) {
        o.attr(self.page.body_class());
        if self.user.is_some_and(|u| u.is_administrator()) {
            o.static_bytes(b" admin");
        }
        if self.look.has_logo {
            o.static_bytes(b" account-has-logo");
        }
    }
    fn nav(&self, o: &mut Out<'_>) {
        self.page.nav(o);
    }
    fn flash(&self, o: &mut Out<'_>) {
        if let Some((kind, message)) = &self.flash {
            views::layouts::flash::render(&Flash { kind, message }, o);
        }
    }
    fn main(&self, o: &mut Out<'_>) {
        self.page.main(o);
    }
    fn footer(&self, o: &mut Out<'_>) {
        self.page.footer(o);
    }
    fn sidebar(&self, o: &mut Out<'_>) {
        self.page.sidebar(o);
    }
}

struct Frame<'a, P: Page> {
    page: &'a P,
}

impl<P: Page> views::layouts::frame::View for Frame<'_, P> {
    fn csrf_token(&self, _o: &mut Out<'_>) {}
    fn head_extra(&self, o: &mut Out<'_>) {
        self.page.head_extra(o);
    }
    fn main(&self, o: &mut Out<'_>) {
        self.page.main(o);
    }
}

struct CurrentUser<'a>(&'a crate::db::users::User);

impl views::layouts::current_user::View for CurrentUser<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.0.id);
    }
    fn user_name(&self, o: &mut Out<'_>) {
        o.attr(&self.0.name);
    }
}

struct Flash<'a> {
    kind: &'a str,
    message: &'a str,
}

impl views::layouts::flash::View for Flash<'_> {
    fn kind(&self, o: &mut Out<'_>) {
        o.attr(self.kind);
    }
    fn message(&self, o: &mut Out<'_>) {
        o.text(self.message);
    }
}
