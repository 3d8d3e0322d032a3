//! FirstRunsController (spec/02 §4.2, spec/01 §3): the very first visit creates the account,
//! its first room and the administrator, and signs the administrator in. Once an account
//! exists both actions send everyone to `/`.

use super::users::{Nametag, NametagForm};
use crate::app::layout::{self, Page};
use crate::app::{cookies, respond, AppError, Ctx, Flow, Req};
use crate::db::{self, Job};
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

/// `POST /first_run`: hashes the password on the worker, then creates everything in one
/// writer job (a concurrent first run loses on the account's singleton index and is sent to
/// `/` with nothing created), then signs in.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    if db::accounts::exists(&cx.db)? {
        respond::redirect(res, "/");
        return Ok(Flow::Done);
    }
    let form = NametagForm::from_params(rq)?;
    let user_agent = rq.header(b"user-agent").map(|v| String::from_utf8_lossy(v).into_owned());
    let ip = rq.ip.to_string();
    let writer = cx.writer.clone();
    let ticket = rq.ticket();
    let queued = cx.worker.submit(move || {
        let digest = form.digest();
        let token = String::from_utf8_lossy(&crate::crypto::token::session_token()).into_owned();
        let join_code = String::from_utf8_lossy(&crate::crypto::token::join_code()).into_owned();
        let now = db::time::now_us();
        let job_token = token.clone();
        writer.submit(Job::new(
            move |c| {
                let first = db::accounts::FirstRun {
                    name: &form.name,
                    email_address: &form.email_address,
                    password_digest: digest.as_deref().unwrap_or(""),
                    join_code: &join_code,
                };
                let (user_id, _room_id) = db::accounts::first_run(c, &first, now)?;
                db::sessions::create(c, user_id, &job_token, Some(ip.as_str()), user_agent.as_deref(), now)
            },
            move |created| {
                ticket.finish(move |cx, res| {
                    match created {
                        Ok(_) => cookies::set_session_token(cx, res, &token),
                        // Someone else's first run won the race: nothing was created.
                        Err(e) if e.is_constraint() => {}
                        Err(e) => return Err(e.into()),
                    }
                    respond::redirect(res, "/");
                    Ok(())
                })
            },
        ));
    });
    if !queued {
        eprintln!("app: first_runs#create: worker queue full, answering 503");
    }
    Ok(Flow::Parked)
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
