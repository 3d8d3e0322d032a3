//! Active Storage blob serving (spec/02 §4.15): `/rails/active_storage/blobs/redirect/
//! :signed_id/*filename` (and `blobs/proxy`, same shape). The URL is a capability: anyone
//! holding the signed blob id may fetch the file, no session needed. Representation URLs
//! (`/rails/active_storage/representations/{redirect,proxy}/:signed_blob_id/:variation_key/
//! *filename`) are answered with the blob's tracked variant for the signed variation (the
//! thumbnail made at upload, or one Rails made), else with the original blob.
//!
//! Rails answers with a redirect to a short-lived disk-service URL; spec/03 §11.2 lets us use
//! our own scheme, so the file is answered right here (one request instead of two), with the
//! Content-Type and Content-Disposition rules of spec/01 §12.6 and single byte ranges for
//! media players. The file is not read here: the response carries the open file and the
//! loop streams it in chunks as the client takes them, so memory stays at one chunk per
//! download whatever the file's size, whole or ranged. Blob keys are never reused for other
//! bytes, so the key is a strong ETag.

use crate::app::{storage, AppError, Ctx, Flow, Req};
use crate::crypto::variation::Variation;
use crate::crypto::{signed_id, time};
use crate::db;
use crate::http::Response;
use std::fs::File;

/// Types a browser may show inline; everything else is an attachment (spec/01 §12.6).
const INLINE: [&str; 10] = [
    "image/webp", "image/avif", "image/png", "image/gif", "image/jpeg", "image/tiff", "image/bmp",
    "image/vnd.adobe.photoshop", "image/vnd.microsoft.icon", "application/pdf",
];
/// Types never served as themselves: they could run script in our origin. Rails' list, plus
/// JavaScript: a download disposition does not stop a `<script src>` from running a file
/// served as `text/javascript`, and the upload table now names `.js` files so.
const BINARY: [&str; 11] = [
    "text/html", "image/svg+xml", "application/postscript", "application/x-shockwave-flash", "text/xml",
    "application/xml", "application/xhtml+xml", "application/mathml+xml", "text/cache-manifest", "text/javascript",
    "application/javascript",
];

/// `GET /rails/active_storage/blobs/{redirect,proxy}/:signed_id/*filename[?disposition=attachment]`:
/// 404 for an invalid signed id, an unknown blob or a missing file; 304 when `If-None-Match`
/// names its ETag; 416 for a range outside the file; 206 for a satisfiable `Range: bytes=…`;
/// else 200 with the file.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let id = signed_id::verify_blob_signed_id(&cx.keys, rq.route.params.id, time::now_ms(), &mut cx.scratch)
        .ok_or(AppError::NotFound)?;
    let blob = db::blobs::find(&cx.db, id)?.ok_or(AppError::NotFound)?;
    serve(cx, rq, res, &blob)
}

/// `GET /rails/active_storage/representations/{redirect,proxy}/:signed_blob_id/:variation_key/*filename`:
/// the blob's tracked variant for that variation (a message thumbnail, made at upload), served
/// like a blob; the original itself when no variant was made (an image we cannot shrink, or
/// one uploaded before). 404 for an invalid signed id or variation key, or an unknown blob.
pub fn representation(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let now = time::now_ms();
    let id = signed_id::verify_blob_signed_id(&cx.keys, rq.route.params.id, now, &mut cx.scratch).ok_or(AppError::NotFound)?;
    let variation = Variation::verify(&cx.keys, rq.route.params.variation, now, &mut cx.scratch).ok_or(AppError::NotFound)?;
    let blob = match db::blobs::variant(&cx.db, id, &variation.digest())? {
        Some(v) => v,
        None => db::blobs::find(&cx.db, id)?.ok_or(AppError::NotFound)?,
    };
    serve(cx, rq, res, &blob)
}

/// Answers with the file of `blob`: content type and disposition rules, ETag, ranges.
fn serve(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response, blob: &db::blobs::Blob) -> Result<Flow, AppError> {
    let path = storage::blob_path(&cx.config.storage_path, &blob.key).ok_or(AppError::NotFound)?;
    let file = File::open(&path).map_err(|e| {
        eprintln!("blob {}: {}: {e}", blob.id, path.display());
        AppError::NotFound
    })?;
    let size = file.metadata().map_err(|_| AppError::NotFound)?.len();

    let stored = blob.content_type.as_deref().unwrap_or("application/octet-stream");
    let content_type = if BINARY.contains(&stored) { "application/octet-stream" } else { stored };
    let attachment = rq.params.get("disposition") == Some(b"attachment") || !INLINE.contains(&content_type);
    let etag = format!("\"{}\"", blob.key);
    res.header("ETag", etag.as_bytes());
    rq.cache_control(res, b"max-age=3600, public");
    if super::avatars::fresh(rq, &etag) {
        res.status(304);
        return Ok(Flow::Done);
    }
    res.header("Content-Type", content_type.as_bytes());
    res.header("Content-Disposition", disposition(attachment, &blob.filename).as_bytes());
    res.header("Accept-Ranges", b"bytes");
    res.header("X-Content-Type-Options", b"nosniff");

    let (start, len) = match rq.header(b"range") {
        Some(r) => match parse_range(r, size) {
            Some((start, end)) => {
                res.status(206);
                res.header("Content-Range", format!("bytes {start}-{end}/{size}").as_bytes());
                (start, end - start + 1)
            }
            None => {
                res.status(416);
                res.header("Content-Range", format!("bytes */{size}").as_bytes());
                return Ok(Flow::Done);
            }
        },
        None => (0, size),
    };
    res.set_file_body(file, start, len);
    Ok(Flow::Done)
}

/// `inline|attachment; filename="…"; filename*=UTF-8''…` as Rails writes it: the quoted name
/// keeps ASCII only (others become `?`, quotes and backslashes escaped), the starred one is
/// percent-encoded UTF-8.
pub fn disposition(attachment: bool, filename: &str) -> String {
    let mut s = String::from(if attachment { "attachment" } else { "inline" });
    s.push_str("; filename=\"");
    for ch in filename.chars() {
        match ch {
            '"' | '\\' => {
                s.push('\\');
                s.push(ch);
            }
            ' '..='~' => s.push(ch),
            _ => s.push('?'),
        }
    }
    s.push_str("\"; filename*=UTF-8''");
    for &b in filename.as_bytes() {
        if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// One byte range of a file of `size` bytes: `bytes=a-b`, `bytes=a-`, `bytes=-n`, inclusive
/// bounds clipped to the file. `None` when unsatisfiable, malformed or a multi-range.
pub fn parse_range(h: &[u8], size: u64) -> Option<(u64, u64)> {
    let spec = h.trim_ascii().strip_prefix(b"bytes=")?;
    if spec.contains(&b',') || size == 0 {
        return None;
    }
    let dash = spec.iter().position(|&b| b == b'-')?;
    let num = |s: &[u8]| -> Option<u64> {
        if s.is_empty() || s.len() > 19 || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(s).ok()?.parse().ok()
    };
    let (a, b) = (spec.get(..dash)?.trim_ascii(), spec.get(dash + 1..)?.trim_ascii());
    if a.is_empty() {
        let n = num(b)?;
        if n == 0 {
            return None;
        }
        return Some((size.saturating_sub(n), size - 1));
    }
    let start = num(a)?;
    let end = if b.is_empty() { size - 1 } else { num(b)?.min(size - 1) };
    (start <= end && start < size).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range(b"bytes=0-9", 100), Some((0, 9)));
        assert_eq!(parse_range(b"bytes=90-", 100), Some((90, 99)));
        assert_eq!(parse_range(b"bytes=-10", 100), Some((90, 99)));
        assert_eq!(parse_range(b"bytes=-500", 100), Some((0, 99)));
        assert_eq!(parse_range(b"bytes=50-500", 100), Some((50, 99)));
        assert_eq!(parse_range(b"bytes=100-", 100), None);
        assert_eq!(parse_range(b"bytes=9-3", 100), None);
        assert_eq!(parse_range(b"bytes=0-1,4-5", 100), None);
        assert_eq!(parse_range(b"items=0-1", 100), None);
        assert_eq!(parse_range(b"bytes=-0", 100), None);
        assert_eq!(parse_range(b"bytes=99999999999999999999-", 100), None);
    }

    #[test]
    fn dispositions() {
        assert_eq!(disposition(false, "x.jpg"), "inline; filename=\"x.jpg\"; filename*=UTF-8''x.jpg");
        assert_eq!(
            disposition(true, "ça \"va\".pdf"),
            "attachment; filename=\"?a \\\"va\\\".pdf\"; filename*=UTF-8''%C3%A7a%20%22va%22.pdf"
        );
    }
}
