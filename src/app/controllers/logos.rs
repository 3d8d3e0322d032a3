//! Accounts::LogosController, `GET /account/logo` (spec/02 §4.9): the account's icon for the
//! sign-in page, the favicon and the web app manifest. Anyone may fetch it.
//!
//! Served here: the stock Campfire icon (512 px, or 192 px for `size=small`), revalidated by an
//! ETag that changes with the account. An uploaded logo needs the image pipeline of the files
//! work (resizing to PNG variants); until that exists the stock icon is served for it too.

use crate::app::{AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;

/// `GET /account/logo[?size=small]`: 304 when the client's copy is current.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let small = rq.params.get("size") == Some(b"small");
    let name = if small { "campfire-192.png" } else { "campfire-512.png" };
    let icon = crate::assets::by_name(name).ok_or(AppError::Internal("stock account icon missing"))?;
    let look = db::layout::account_look(&cx.db)?;
    let etag = format!("W/\"account-{}-{}\"", look.updated_at.unwrap_or(0), if small { "small" } else { "large" });
    rq.cache_control(res, b"max-age=300, public, stale-while-revalidate=604800");
    res.header("ETag", etag.as_bytes());
    let fresh = rq
        .header(b"if-none-match")
        .is_some_and(|v| v.split(|&b| b == b',').any(|t| t.trim_ascii() == etag.as_bytes() || t.trim_ascii() == b"*"));
    if fresh {
        res.status(304);
        return Ok(Flow::Done);
    }
    res.header("Content-Type", b"image/png");
    res.header("Content-Disposition", b"inline");
    res.set_static_body(icon.body);
    Ok(Flow::Done)
}
