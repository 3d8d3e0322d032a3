//! Users::BansController (spec/02 §4.14, spec/01 §4.5): administrators ban a user — every
//! public address the user signed in from is banned, their sessions end, their messages are
//! removed — or lift the ban.

use crate::app::params::parse_id;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;

/// `POST /users/:user_id/ban`: the user is banned with every public address they signed in
/// from. Addresses on a private network (or unreadable) are left unbanned, as Rails' validation
/// requires, and the next page says which (Rails answers 422 and bans no one, issue 17 §3.6).
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let user_id = banned_user(cx, rq)?;
    let open: Vec<String> =
        db::bans::session_addresses(&cx.db, user_id)?.into_iter().filter(|ip| db::bans::check_address(ip).is_err()).collect();
    if !open.is_empty() {
        let notice = format!("Banned. Sign-ins from {} stay possible: a private or internal address cannot be banned.", open.join(", "));
        rq.flash_notice(cx, &notice);
    }
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| {
            db::bans::ban(c, user_id, now)?;
            // Rails removes the banned user's messages in a background job; here they go in
            // the same transaction, their attachment files after it commits.
            let mut files = Vec::new();
            for id in db::bans::message_ids(c, user_id)? {
                files.extend(db::messages::destroy(c, id, now)?.unwrap_or_default());
            }
            Ok(files)
        },
        move |cx, res, files| {
            crate::app::storage::delete(&cx.config.storage_path, &files?);
            // After the commit: the banned user's sockets close and do not come back.
            crate::app::cable::disconnect_user(user_id);
            respond::redirect(res, &format!("/users/{user_id}"));
            Ok(())
        },
    )
}

/// `DELETE /users/:user_id/ban`: the user is active again (their sessions are not restored).
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let user_id = banned_user(cx, rq)?;
    let now = db::time::now_us();
    cx.write(rq, move |c| db::bans::unban(c, user_id, now), move |_, res, done| {
        done?;
        respond::redirect(res, &format!("/users/{user_id}"));
        Ok(())
    })
}

/// Administrators only (403); the user must exist (404).
fn banned_user(cx: &Ctx, rq: &Req<'_, '_>) -> Result<i64, AppError> {
    if !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    let id = parse_id(rq.route.params.user_id).ok_or(AppError::NotFound)?;
    db::users::find(&cx.db, id)?.map(|u| u.id).ok_or(AppError::NotFound)
}

