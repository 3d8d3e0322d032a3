//! Accounts::LogosController, `GET /account/logo` (spec/02 §4.9): the account's icon for the
//! sign-in page, the favicon and the web app manifest. Anyone may fetch it. `DELETE
//! /account/logo` removes an uploaded logo (administrators).
//!
//! Served here: the logo's PNG variant (`small` ≤192 px or `large` ≤512 px), made on upload
//! from a JPEG or PNG (`form_file::LOGO`, the same rows and digests Rails writes, so Rails-made
//! variants are read alike); else an uploaded logo that is itself a PNG, as uploaded;
//! otherwise the stock Campfire icon (512 px, or 192 px for `size=small`): a GIF or WebP logo,
//! which we cannot decode, shows as the stock icon. An ETag that changes with the account
//! revalidates.

use crate::app::{respond, storage, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;

/// Rails' `variation_digest`s of the logo variants (spec/01 §12.4).
const LARGE_DIGEST: &str = "ksXvpLsa7BuCVyHOwmQOKedbIbM=";
const SMALL_DIGEST: &str = "EXATZfM7OVVC86CDh85TOsa8ZSw=";

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
    match look.has_logo.then(|| uploaded(cx, small)).transpose()?.flatten() {
        Some(bytes) => *res.body() = bytes,
        None => res.set_static_body(icon.body),
    }
    Ok(Flow::Done)
}

/// The PNG bytes of the uploaded logo to serve, if there is one.
fn uploaded(cx: &Ctx, small: bool) -> Result<Option<Vec<u8>>, AppError> {
    let Some(account) = db::accounts::get(&cx.db)? else { return Ok(None) };
    let Some(blob) = db::blobs::attached(&cx.db, "Account", account.id, "logo")? else { return Ok(None) };
    let digest = if small { SMALL_DIGEST } else { LARGE_DIGEST };
    let pick = match db::blobs::variant(&cx.db, blob.id, digest)? {
        Some(v) => v,
        None if blob.content_type.as_deref() == Some("image/png") => blob,
        None => return Ok(None),
    };
    match storage::read(&cx.config.storage_path, &pick.key) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) => {
            eprintln!("logo: blob {} unreadable: {e}", pick.key);
            Ok(None)
        }
    }
}

/// `DELETE /account/logo` (administrators only, else 403): the logo's rows go in the writer,
/// its files after COMMIT; the account's `updated_at` moves so every logo URL changes. 302
/// `/account/edit`.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    if !rq.is_admin() {
        return Err(AppError::Head(403));
    }
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| {
            let Some(account) = db::accounts::get(c)? else { return Ok(Vec::new()) };
            let keys = db::blobs::detach(c, "Account", account.id, "logo")?;
            db::accounts::update(c, &db::accounts::Changes::default(), now)?;
            Ok(keys)
        },
        |cx, res, keys| {
            storage::delete(&cx.config.storage_path, &keys?);
            respond::redirect(res, "/account/edit");
            Ok(())
        },
    )
}
