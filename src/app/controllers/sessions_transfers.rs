//! Sessions::TransfersController (spec/02 §4.4, spec/07 §12.4): "sign in on another device"
//! links. `GET` shows a form that submits itself; `PUT`/`PATCH` verifies the signed transfer
//! id (purpose `transfer`, 4 hours) and starts a login session for that active user exactly
//! as a password sign-in does (`sessions::SessionStart`).

use super::sessions::SessionStart;
use crate::app::layout::{self, Page};
use crate::app::{AppError, Ctx, Flow, Req};
use crate::crypto::{signed_id, time};
use crate::db;
use crate::http::url::percent_decode_into;
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /session/transfers/:id`: the self-submitting form, for any id (checked on submit).
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let action = format!("/session/transfers/{}", String::from_utf8_lossy(rq.route.params.id));
    layout::page(cx, rq, res, 200, &TransferPage { action })?;
    Ok(Flow::Done)
}

/// `PUT/PATCH /session/transfers/:id`: a valid, unexpired id naming an active user starts a
/// session for them and redirects like sign-in; anything else is 400 with an empty body.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    // Some clients percent-encode the id's '=' padding.
    let mut raw = Vec::with_capacity(rq.route.params.id.len());
    percent_decode_into(rq.route.params.id, false, &mut raw);
    let id = signed_id::verify(&cx.keys, &raw, signed_id::TRANSFER, time::now_ms(), &mut cx.scratch);
    let user = match id {
        Some(id) => db::users::find(&cx.db, id)?,
        None => None,
    };
    let Some(user) = user.filter(|u| u.is_active()) else {
        eprintln!("app: sessions/transfers#update: invalid, expired or inactive transfer id");
        return Err(AppError::Head(400));
    };
    let start = SessionStart::of(cx, rq);
    let ticket = rq.ticket();
    start.start(|job| cx.outbox.submit(job), user.id, ticket);
    Ok(Flow::Parked)
}

struct TransferPage {
    action: String,
}

impl Page for TransferPage {
    fn main(&self, o: &mut Out<'_>) {
        views::sessions::transfer::render(self, o);
    }
}

impl views::sessions::transfer::View for TransferPage {
    fn action(&self, o: &mut Out<'_>) {
        o.attr(&self.action);
    }
}
