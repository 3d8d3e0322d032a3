//! Users::AvatarsController (spec/02 §4.13): a user's avatar image by avatar token, and
//! removing your own avatar.
//!
//! The picture served for an uploaded avatar is its `square` variant: Rails' WebP one when the
//! database holds it (a database that came from Rails), else ours (JPEG, or PNG with alpha,
//! made once on upload: `form_file::AVATAR`); otherwise (an image we cannot decode) the
//! original upload when it is an image browsers show. Users without one get an SVG of their
//! initials; bots the stock bot. A URL whose `v` is the user's current stamp names one
//! picture for good, so it is cached for a year; other URLs revalidate after 30 minutes.
//! Avatar files are small and immutable under their blob key, so each loop keeps recent ones
//! in memory (`FILE_CACHE_BYTES`) and answers with shared bytes, no copy.

use crate::app::{respond, storage, AppError, Ctx, Flow, Req};
use crate::crypto::{signed_id, time};
use crate::db;
use crate::http::Response;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// Rails' `variation_digest` of the avatar `square` variant (spec/01 §12.4).
const SQUARE_DIGEST: &str = "6gwfjNKv9eUy9jNUtEZvQFLU0hQ=";

/// The digests of a `square` variant: Rails' WebP, then ours as JPEG and as PNG.
fn square_digests() -> &'static [String; 3] {
    static D: std::sync::OnceLock<[String; 3]> = std::sync::OnceLock::new();
    D.get_or_init(|| {
        let ours = &crate::app::form_file::AVATAR[0];
        [SQUARE_DIGEST.to_string(), ours.digest("image/jpeg"), ours.digest("image/png")]
    })
}

/// The background colours of generated avatars, picked by CRC-32 of the decimal user id.
const COLORS: [&str; 18] = [
    "#AF2E1B", "#CC6324", "#3B4B59", "#BFA07A", "#ED8008", "#ED3F1C", "#BF1B1B", "#736B1E", "#D07B53", "#736356",
    "#AD1D1D", "#BF7C2A", "#C09C6F", "#698F9C", "#7C956B", "#5D618F", "#3B3633", "#67695E",
];

/// `GET /users/:avatar_token/avatar`: 404 for a bad token or an unknown user (any status);
/// 304 when the client's ETag (which changes with the user's `updated_at`) is current.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let token = rq.route.params.user_id;
    let id = signed_id::verify(&cx.keys, token, signed_id::AVATAR, time::now_ms(), &mut cx.scratch)
        .ok_or(AppError::NotFound)?;
    let [a, b, c] = square_digests();
    let user = db::blobs::avatar_owner(&cx.db, id, [a, b, c])?.ok_or(AppError::NotFound)?;
    let etag = format!("W/\"avatar-{}-{}\"", user.id, user.updated_at);
    res.header("ETag", etag.as_bytes());
    if current_stamp(rq, user.updated_at) {
        rq.cache_control(res, b"max-age=31536000, public, immutable");
    } else {
        rq.cache_control(res, b"max-age=1800, public, stale-while-revalidate=604800");
    }
    if fresh(rq, &etag) {
        res.status(304);
        return Ok(Flow::Done);
    }
    res.header("Content-Disposition", b"inline");
    if let Some((content_type, bytes)) = uploaded(cx, &user) {
        res.header("Content-Type", content_type.as_bytes());
        res.set_shared_body(bytes);
        return Ok(Flow::Done);
    }
    res.header("Content-Type", b"image/svg+xml");
    if user.role == db::users::ROLE_BOT {
        let bot = crate::assets::by_name("default-bot.svg").ok_or(AppError::Internal("stock bot avatar missing"))?;
        res.set_static_body(bot.body);
    } else {
        initials_svg(user.id, &user.name, res.body());
    }
    Ok(Flow::Done)
}

/// `DELETE /users/:x/avatar`: removes the signed-in user's avatar whatever `:x` says, then
/// 302 `/users/me/profile`. The files go after COMMIT.
pub fn destroy(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let user_id = rq.user().ok_or(AppError::Head(401))?.id;
    let now = db::time::now_us();
    cx.write(
        rq,
        move |c| {
            let keys = db::blobs::detach(c, "User", user_id, "avatar")?;
            // The avatar URL and ETag carry `updated_at`: touch it so caches let go.
            db::users::update(c, user_id, &db::users::Changes::default(), now)?;
            Ok(keys)
        },
        move |cx, res, keys| {
            storage::delete(&cx.config.storage_path, &keys?);
            respond::redirect(res, "/users/me/profile");
            Ok(())
        },
    )
}

/// Most bytes of avatar files each loop keeps in memory. A blob's bytes never change under
/// its key, so a cached copy never goes stale; when full the cache is emptied and refills.
pub const FILE_CACHE_BYTES: usize = 512 * 1024;
/// Files bigger than this are read from disk every time rather than cached.
const FILE_CACHE_ITEM_MAX: usize = 128 * 1024;

/// This loop's avatar files by blob key, and their total size.
#[derive(Default)]
struct FileCache {
    used: usize,
    files: HashMap<String, Arc<[u8]>>,
}

thread_local! {
    static FILES: RefCell<FileCache> = RefCell::new(FileCache::default());
}

/// The bytes of blob `key`, from this loop's cache or the disk.
fn file_bytes(cx: &Ctx, key: &str) -> std::io::Result<Arc<[u8]>> {
    if let Some(hit) = FILES.with(|f| f.borrow().files.get(key).cloned()) {
        return Ok(hit);
    }
    let bytes: Arc<[u8]> = storage::read(&cx.config.storage_path, key)?.into();
    if bytes.len() <= FILE_CACHE_ITEM_MAX {
        FILES.with(|f| {
            let c = &mut *f.borrow_mut();
            if c.used + bytes.len() > FILE_CACHE_BYTES {
                c.files.clear();
                c.used = 0;
            }
            c.used += bytes.len();
            c.files.insert(key.to_owned(), bytes.clone());
        });
    }
    Ok(bytes)
}

/// Whether the request's `v` is the stamp of `updated_at` that avatar URLs carry.
fn current_stamp(rq: &Req<'_, '_>, updated_at: i64) -> bool {
    let stamp = db::time::format(updated_at);
    let digits = stamp.as_str().bytes().filter(u8::is_ascii_digit).take(14);
    rq.params.get("v").is_some_and(|v| v.len() == 14 && v.iter().copied().eq(digits))
}

/// The bytes and content type to serve for `user`'s uploaded avatar, if there is one a
/// browser can show. A file missing from disk is logged and treated as no avatar.
fn uploaded(cx: &Ctx, user: &db::blobs::AvatarOwner) -> Option<(&'static str, Arc<[u8]>)> {
    let shown = |ct: &Option<String>| match ct.as_deref() {
        Some("image/png") => Some("image/png"),
        Some("image/jpeg") => Some("image/jpeg"),
        Some("image/gif") => Some("image/gif"),
        Some("image/webp") => Some("image/webp"),
        _ => None,
    };
    let (key, content_type) = match (&user.variant, &user.blob) {
        // Rails' variants are WebP whatever their row says (Rails writes `image/webp`).
        (Some((v, ct)), _) => (v, shown(ct).unwrap_or("image/webp")),
        (None, Some((key, ct))) => (key, shown(ct)?),
        (None, None) => return None,
    };
    match file_bytes(cx, key) {
        Ok(bytes) => Some((content_type, bytes)),
        Err(e) => {
            eprintln!("avatar: blob {key} of user {} unreadable: {e}", user.id);
            None
        }
    }
}

/// Whether `If-None-Match` names `etag` (or `*`).
pub(crate) fn fresh(rq: &Req<'_, '_>, etag: &str) -> bool {
    rq.header(b"if-none-match")
        .is_some_and(|v| v.split(|&b| b == b',').any(|t| t.trim_ascii() == etag.as_bytes() || t.trim_ascii() == b"*"))
}

/// Appends the generated avatar of a user without a picture: a rounded square in the user's
/// colour with their initials in white, squeezed when there are three or more.
pub fn initials_svg(user_id: i64, name: &str, out: &mut Vec<u8>) {
    let color = COLORS.get((crc32(user_id.to_string().as_bytes()) % 18) as usize).copied().unwrap_or(COLORS[0]);
    let initials = initials(name);
    let squeeze = if initials.chars().count() >= 3 { r#" textLength="85%" lengthAdjust="spacingAndGlyphs""# } else { "" };
    out.extend_from_slice(
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 512 512\" class=\"avatar\" aria-hidden=\"true\">\
<rect width=\"100%\" height=\"100%\" rx=\"50\" fill=\"{color}\"/>\
<text x=\"50%\" y=\"50%\" dy=\"0.35em\" text-anchor=\"middle\" fill=\"#FFFFFF\" font-size=\"230\" font-weight=\"800\" letter-spacing=\"-5\" \
font-family=\"-apple-system, BlinkMacSystemFont, Segoe UI, Roboto, Helvetica, Arial, sans-serif\"{squeeze}>{initials}</text></svg>"
        )
        .as_bytes(),
    );
}

/// spec/01 §4.2: the first character of every word, where a word starts with an ASCII
/// letter, digit or underscore after a character that is not a (Unicode) word character.
/// Case is kept: "jean-luc o'neil" → "jlon". Only ASCII comes out, so no escaping is needed.
pub fn initials(name: &str) -> String {
    let mut out = String::new();
    let mut prev_word = false;
    for ch in name.chars() {
        let word = ch.is_alphanumeric() || ch == '_';
        if word && !prev_word && (ch.is_ascii_alphanumeric() || ch == '_') {
            out.push(ch);
        }
        prev_word = word;
    }
    out
}

/// CRC-32 (IEEE, as zlib and Ruby's `Zlib.crc32`).
fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0xEDB8_8320 } else { c >> 1 };
        }
    }
    !c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initials_like_rails() {
        assert_eq!(initials("Bender Bot"), "BB");
        assert_eq!(initials("jean-luc o'neil"), "jlon");
        assert_eq!(initials("Émile Zola"), "Z");
        assert_eq!(initials("李 小龍"), "");
        assert_eq!(initials("  David  H Hansson "), "DHH");
    }

    #[test]
    fn crc_and_colour() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let mut svg = Vec::new();
        initials_svg(1, "Ann Lee", &mut svg);
        let svg = String::from_utf8(svg).unwrap();
        let expect = COLORS[(crc32(b"1") % 18) as usize];
        assert!(svg.contains(&format!("fill=\"{expect}\"")), "{svg}");
        assert!(svg.contains(">AL</text>") && !svg.contains("textLength"));
        let mut three = Vec::new();
        initials_svg(2, "A B C", &mut three);
        assert!(String::from_utf8(three).unwrap().contains("textLength=\"85%\""));
    }
}
