//! FirstRunsController (spec/02 §4.2, spec/01 §3): the very first visit creates the account,
//! its first room and the administrator, and signs the administrator in. Once an account
//! exists both actions send everyone to `/`.

use super::users::{sign_up, Nametag, NametagForm};
use crate::app::layout::{self, Page};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;
use crate::views::Out;

/// `GET /first_run`: the administrator's sign-up card.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    if db::accounts::exists(&cx.db)? {
        respond::redirect(res, "/");
        return Ok(Flow::Done);
    }
    layout::page(cx, rq, res, 200, &FirstRunPage)?;
    Ok(Flow::Done)
}

/// `POST /first_run`: hashes the password and stores the avatar on the worker, then creates
/// everything in one writer job (a concurrent first run loses on the account's singleton index
/// and is sent to `/` with nothing created), then signs in.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    if db::accounts::exists(&cx.db)? {
        respond::redirect(res, "/");
        return Ok(Flow::Done);
    }
    let form = NametagForm::from_params(rq)?;
    let join_code = String::from_utf8_lossy(&crate::crypto::token::join_code()).into_owned();
    sign_up(cx, rq, "first_runs#create", form, |_| "/".to_owned(), move |c, person, now| {
        let first = db::accounts::FirstRun {
            name: person.name,
            email_address: person.email_address,
            password_digest: person.password_digest.unwrap_or(""),
            join_code: &join_code,
        };
        Ok(db::accounts::first_run(c, &first, now)?.0)
    })
}

struct FirstRunPage;

impl Page for FirstRunPage {
    fn title(&self, o: &mut Out<'_>) {
        o.text("Set up Campfire");
    }
    fn body_class(&self) -> &'static str {
        "signup"
    }
    fn main(&self, o: &mut Out<'_>) {
        Nametag { action: "/first_run", heading: "Set up Campfire", logo_url: None, submit_label: "Create account" }
            .render(o);
    }
}
