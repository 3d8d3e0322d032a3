//! Accounts::UsersController (spec/02 §4.6): the lazily loaded further pages of people on
//! the account settings page, and administrators changing a person's role or removing
//! (deactivating) them.

use super::accounts::{render_person, NextPage, PAGE_SIZE};
use crate::app::params::parse_id;
use super::rooms_involvements::Stream;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /account/users[.turbo_stream]?page=n`: a Turbo Stream that replaces
/// `next_page_container` with page `n` of the active people and, unless it is the last page,
/// appends the loader of page `n + 1` to `account_users`.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let viewer = rq.user().cloned().ok_or(AppError::Head(401))?;
    let page = rq.params.get("page").and_then(parse_id).filter(|&n| n >= 1).unwrap_or(1);
    let offset = (page - 1).saturating_mul(PAGE_SIZE);
    let mut people = db::users::account_people(&cx.db, false, PAGE_SIZE + 1, offset)?;
    let more = people.len() as i64 > PAGE_SIZE;
    people.truncate(PAGE_SIZE as usize);
    let mut rows = Vec::with_capacity(people.len() * 400);
    for p in &people {
        render_person(&cx.keys, &viewer, p, &mut Out::new(&mut rows));
    }
    res.status(200);
    res.header("Content-Type", b"text/vnd.turbo-stream.html; charset=utf-8");
    let body = res.body();
    views::streams::replace::render(&Stream { target: "next_page_container", content: &rows }, &mut Out::new(body));
    if more {
        let mut loader = Vec::with_capacity(200);
        views::accounts::next_page::render(&NextPage(page + 1), &mut Out::new(&mut loader));
        views::streams::append::render(&Stream { target: "account_users", content: &loader }, &mut Out::new(body));
    }
    Ok(Flow::Done)
}

/// `PATCH/PUT /account/users/:id` (administrators only, 403; the person must be active, 404):
/// `user[role]` = `administrator` makes an administrator, anything else a member. 302
/// `/account/edit`.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let id = active_person(cx, rq)?;
    let role = if rq.params.get("user[role]") == Some(b"administrator") {
        db::users::ROLE_ADMINISTRATOR
    } else {
        db::users::ROLE_MEMBER
    };
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| db::users::update(c, id, &db::users::Changes { role: Some(role), ..Default::default() }, now),
        |_, res, done| {
            done?;
            respond::redirect(res, "/account/edit");
            Ok(())
        },
    )
}

/// `DELETE /account/users/:id` (administrators only; the person must be active): deactivates
/// them (spec/01 §4.4) — an administrator may remove themselves. 302 `/account/edit`.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let id = active_person(cx, rq)?;
    let uuid = String::from_utf8_lossy(&crate::crypto::token::uuid_v4()).into_owned();
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| db::users::deactivate(c, id, &uuid, now),
        move |_, res, done| {
            done?;
            // Their sessions are gone with the commit; their open sockets go too (spec/06 §5.3).
            crate::app::cable::disconnect_user(id);
            respond::redirect(res, "/account/edit");
            Ok(())
        },
    )
}

/// Administrators only (403); the path's user must exist and be active (404).
fn active_person(cx: &Ctx, rq: &Req<'_, '_>) -> Result<i64, AppError> {
    if !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    let id = parse_id(rq.route.params.id).ok_or(AppError::NotFound)?;
    match db::users::find(&cx.db, id)? {
        Some(u) if u.is_active() => Ok(u.id),
        _ => Err(AppError::NotFound),
    }
}
