//! Accounts::JoinCodesController (spec/02 §4.8): an administrator replaces the join code,
//! which invalidates every join link handed out so far.

use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;

/// `POST /account/join_code` (administrators only, else 403): a new code, back to the
/// account settings.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    if !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    let code = String::from_utf8_lossy(&crate::crypto::token::join_code()).into_owned();
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| db::accounts::update(c, &db::accounts::Changes { join_code: Some(&code), ..Default::default() }, now),
        |_, res, updated| {
            updated?;
            respond::redirect(res, "/account/edit");
            Ok(())
        },
    )
}
