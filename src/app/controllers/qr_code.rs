//! QrCodeController (spec/02 §4.25): `GET /qr_code/:id`, where `:id` is the URL-safe Base64
//! (padding optional) of a link — a session transfer or join link — answered with that
//! link's QR code as SVG, cacheable for a year (the same id always gives the same image).

use crate::app::{AppError, Ctx, Flow, Req};
use crate::crypto::base64;
use crate::http::Response;

/// The QR code SVG of the decoded id; 400 when the id is not URL-safe Base64 (Rails fails
/// with 500) or the link is longer than the encoder's largest symbol (382 bytes).
pub fn show(_cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let mut link = Vec::with_capacity(rq.route.params.id.len() * 3 / 4 + 2);
    if base64::decode(base64::Alphabet::UrlSafe, rq.route.params.id, &mut link).is_err() {
        return Err(AppError::BadRequest("qr_code id is not URL-safe Base64"));
    }
    let code = crate::qr::encode(&link).ok_or(AppError::BadRequest("qr_code link too long"))?;
    code.svg(res.body());
    res.header("Content-Type", b"image/svg+xml");
    rq.cache_control(res, b"max-age=31536000, public");
    Ok(Flow::Done)
}
