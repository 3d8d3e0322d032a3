//! users/avatars#show/destroy and Active Storage blob serving against the real binary
//! (spec/02 §4.13, §4.15; spec/05 avatars_controller_test).

mod support;
use std::sync::OnceLock;
use support::*;

fn keys() -> &'static campfire::crypto::Keys {
    static KEYS: OnceLock<campfire::crypto::Keys> = OnceLock::new();
    KEYS.get_or_init(|| campfire::crypto::Keys::derive(b"dummy"))
}

fn avatar_path(user_id: i64) -> String {
    let mut t = Vec::new();
    campfire::crypto::signed_id::avatar_token(keys(), user_id, &mut t);
    format!("/users/{}/avatar", String::from_utf8(t).unwrap())
}

fn blob_path(blob_id: i64, filename: &str) -> String {
    let mut t = Vec::new();
    campfire::crypto::signed_id::blob_signed_id(keys(), blob_id, &mut t);
    format!("/rails/active_storage/blobs/redirect/{}/{filename}", String::from_utf8(t).unwrap())
}

/// Puts `data` on disk under `key` the way Active Storage does and records a blob row;
/// returns the blob id.
fn store(s: &Seeded, key: &str, filename: &str, content_type: &str, data: &[u8]) -> i64 {
    let dir = s.srv.dir.join("storage/files").join(&key[0..2]).join(&key[2..4]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(key), data).unwrap();
    s.srv.sql(&format!(
        "INSERT INTO active_storage_blobs (key, filename, content_type, service_name, byte_size, created_at) \
         VALUES ('{key}', '{filename}', '{content_type}', 'local', {}, '2025-01-01 00:00:00')",
        data.len()
    ));
    s.query_int(&format!("SELECT id FROM active_storage_blobs WHERE key = '{key}'"))
}

#[test]
fn initials_svg_with_etag_and_caching() {
    let s = start();
    let r = s.get(DAVID, &avatar_path(JZ));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("Content-Type"), Some("image/svg+xml"));
    assert_eq!(r.header("Cache-Control"), Some("max-age=1800, public, stale-while-revalidate=604800"));
    assert!(r.body.starts_with("<svg") && r.body.contains(">J</text>"), "{}", r.body);
    assert!(r.body.contains("viewBox=\"0 0 512 512\"") && r.body.contains("rx=\"50\""));
    let etag = r.header("ETag").expect("an ETag").to_string();

    let again = s.srv.send(&Request::get(&avatar_path(JZ)).cookies(&s.jar(DAVID)).header("If-None-Match", &etag));
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());

    // Renaming touches updated_at: the ETag moves on.
    s.srv.sql(&format!("UPDATE users SET name = 'Jay Zed Q', updated_at = '2030-01-01 00:00:00' WHERE id = {JZ}"));
    let renamed = s.srv.send(&Request::get(&avatar_path(JZ)).cookies(&s.jar(DAVID)).header("If-None-Match", &etag));
    assert_eq!(renamed.status, 200);
    assert!(renamed.body.contains(">JZQ</text>") && renamed.body.contains("textLength=\"85%\""));
}

#[test]
fn bots_get_the_bot_picture_and_bad_tokens_404() {
    let s = start();
    let bot = s.get(DAVID, &avatar_path(BENDER));
    assert_eq!(bot.status, 200);
    assert_eq!(bot.header("Content-Type"), Some("image/svg+xml"));
    assert!(!bot.body.contains("</text>"), "the stock bot, not initials");
    assert_eq!(s.get(DAVID, &format!("/users/{JZ}/avatar")).status, 404, "a bare id is not a token");
    assert_eq!(s.get(DAVID, &avatar_path(424242)).status, 404, "no such user");
    let mut tampered = avatar_path(JZ);
    tampered.insert(10, 'x');
    assert_eq!(s.get(DAVID, &tampered).status, 404);
    // Deactivated users keep their avatar.
    s.srv.sql(&format!("UPDATE users SET status = 1 WHERE id = {KEVIN}"));
    assert_eq!(s.get(DAVID, &avatar_path(KEVIN)).status, 200);
    let anonymous = s.srv.send(&Request::get(&avatar_path(JZ)));
    assert_eq!(anonymous.status, 302, "avatars need a session");
}

#[test]
fn uploaded_avatar_is_served_and_destroyed() {
    let s = start();
    let gif = b"GIF89a\x01\x00\x01\x00 tiny gif body";
    let blob = store(&s, "avatarkey0000000000000000001", "me.gif", "image/gif", gif);
    s.srv.sql(&format!(
        "INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) \
         VALUES ('avatar', 'User', {KEVIN}, {blob}, '2025-01-01 00:00:00')"
    ));
    let r = s.get(DAVID, &avatar_path(KEVIN));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("image/gif"));
    assert_eq!(r.body.as_bytes(), gif);

    // Rails' `square` WebP variant is preferred when the database has one.
    let webp = b"RIFF\x10\x00\x00\x00WEBPVP8 square";
    let variant_blob = store(&s, "variantkey000000000000000001", "me.webp", "image/webp", webp);
    s.srv.sql(&format!(
        "INSERT INTO active_storage_variant_records (id, blob_id, variation_digest) VALUES (77, {blob}, '6gwfjNKv9eUy9jNUtEZvQFLU0hQ=');
         INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) VALUES ('image', 'ActiveStorage::VariantRecord', 77, {variant_blob}, '2025-01-01 00:00:00');
         UPDATE users SET updated_at = '2031-01-01 00:00:00' WHERE id = {KEVIN};"
    ));
    let v = s.get(DAVID, &avatar_path(KEVIN));
    assert_eq!(v.header("Content-Type"), Some("image/webp"));
    assert!(v.body.ends_with("VP8 square"));

    // Kevin removes his own avatar; the path's user is ignored.
    let del = s.srv.send(&Request { method: "DELETE", ..Request::post_form(&format!("/users/{JZ}/avatar"), &[]) }.cookies(&s.jar(KEVIN)));
    assert_eq!(del.status, 302, "{del:?}");
    assert_eq!(del.location(), Some("/users/me/profile"));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM active_storage_attachments WHERE record_id = {KEVIN}")), 0);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs"), 0, "the unattached blob and its variant are purged");
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_variant_records"), 0);
    assert!(!s.srv.dir.join("storage/files/av/at/avatarkey0000000000000000001").exists(), "and its file");
    let after = s.get(DAVID, &avatar_path(KEVIN));
    assert!(after.body.contains(">K</text>"), "back to initials");
}

#[test]
fn blobs_by_signed_id_with_ranges_and_safe_types() {
    let s = start();
    let text = b"0123456789abcdefghij";
    let id = store(&s, "blobkey00000000000000000001", "notes.v2.txt", "text/plain", text);
    // No session: the signed id is the capability.
    let r = s.srv.send(&Request::get(&blob_path(id, "notes.v2.txt")));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.body, "0123456789abcdefghij");
    assert_eq!(r.header("Content-Type"), Some("text/plain"));
    assert_eq!(
        r.header("Content-Disposition"),
        Some("attachment; filename=\"notes.v2.txt\"; filename*=UTF-8''notes.v2.txt"),
        "text is not an inline type"
    );
    assert_eq!(r.header("Cache-Control"), Some("max-age=3600, public"));
    assert_eq!(r.header("X-Version"), None, "not an application controller");
    let old_browser = "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/114.0";
    let old = s.srv.send(&Request::get(&blob_path(id, "notes.v2.txt")).header("User-Agent", old_browser));
    assert_eq!(old.body, "0123456789abcdefghij", "no browser gate for files");

    let part = s.srv.send(&Request::get(&blob_path(id, "notes.v2.txt")).header("Range", "bytes=5-9"));
    assert_eq!(part.status, 206);
    assert_eq!(part.body, "56789");
    assert_eq!(part.header("Content-Range"), Some("bytes 5-9/20"));
    let tail = s.srv.send(&Request::get(&blob_path(id, "x")).header("Range", "bytes=-3"));
    assert_eq!(tail.body, "hij");
    let beyond = s.srv.send(&Request::get(&blob_path(id, "x")).header("Range", "bytes=50-"));
    assert_eq!(beyond.status, 416);
    assert_eq!(beyond.header("Content-Range"), Some("bytes */20"));

    let png = store(&s, "blobkey00000000000000000002", "p.png", "image/png", b"\x89PNG fake");
    let inline = s.srv.send(&Request::get(&blob_path(png, "p.png")));
    assert!(inline.header("Content-Disposition").unwrap().starts_with("inline; "));
    let download = s.srv.send(&Request::get(&format!("{}?disposition=attachment", blob_path(png, "p.png"))));
    assert!(download.header("Content-Disposition").unwrap().starts_with("attachment; "));

    let mut signed = Vec::new();
    campfire::crypto::signed_id::blob_signed_id(keys(), png, &mut signed);
    let signed = String::from_utf8(signed).unwrap();
    let mut variation = Vec::new();
    campfire::crypto::variation::Variation { format: "png".into(), max_width: 1200, max_height: 800 }.sign(keys(), &mut variation);
    let representation = format!("/rails/active_storage/representations/redirect/{signed}/{}/p.png", String::from_utf8(variation).unwrap());
    let rep = s.srv.send(&Request::get(&representation));
    assert_eq!((rep.status, rep.header("Content-Type")), (200, Some("image/png")), "the original stands in for a missing variant");
    let forged = format!("/rails/active_storage/representations/redirect/{signed}/eyJfcmFpbHMiOnt9fQ--x/p.png");
    assert_eq!(s.srv.send(&Request::get(&forged)).status, 404, "an invalid variation key");

    let svg = store(&s, "blobkey00000000000000000003", "x.svg", "image/svg+xml", b"<svg onload=alert(1)>");
    let svg = s.srv.send(&Request::get(&blob_path(svg, "x.svg")));
    assert_eq!(svg.header("Content-Type"), Some("application/octet-stream"), "never served as SVG");
    assert!(svg.header("Content-Disposition").unwrap().starts_with("attachment; "));

    assert_eq!(s.srv.send(&Request::get(&blob_path(999, "x"))).status, 404, "unknown blob");
    assert_eq!(s.srv.send(&Request::get("/rails/active_storage/blobs/redirect/forged--abc/x.txt")).status, 404);
    s.srv.sql("UPDATE active_storage_blobs SET key = 'missingkey000000000000000000' WHERE id = 1");
    assert_eq!(s.srv.send(&Request::get(&blob_path(id, "x"))).status, 404, "file gone from disk");
}

#[test]
fn an_avatar_browsers_cannot_show_falls_back_to_initials() {
    let s = start();
    let blob = store(&s, "bmpkey0000000000000000000001", "me.bmp", "image/bmp", b"BM not shown");
    s.srv.sql(&format!(
        "INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) \
         VALUES ('avatar', 'User', {KEVIN}, {blob}, '2025-01-01 00:00:00')"
    ));
    let r = s.get(DAVID, &avatar_path(KEVIN));
    assert_eq!(r.header("Content-Type"), Some("image/svg+xml"));
    assert!(r.body.contains(">K</text>"));
}
