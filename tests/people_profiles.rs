//! users#show and users/profiles#show/update against the real binary (spec/02 §4.12, §4.16;
//! spec/05 users_controller_test, profiles_controller_test; spec/07 §10.1–10.3).

mod support;
use support::*;

/// A same-origin multipart PATCH (through `_method`, as the profile forms send it).
fn multipart(path: &str, fields: &[(&str, &str)], file: Option<(&str, &str, &str, &[u8])>) -> Request {
    let fields: Vec<(&str, &str)> = std::iter::once(("_method", "patch")).chain(fields.iter().copied()).collect();
    Request::multipart(path, &fields, file)
}

#[test]
fn user_page_for_members_and_admins() {
    let s = start();
    let r = s.get(KEVIN, &format!("/users/{JZ}"));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("<title>JZ"), "title is the name");
    assert!(r.body.contains("<h1>JZ</h1>"));
    assert!(r.body.contains(r#"<p class="bio">Designer</p>"#));
    assert!(r.body.contains(&format!("action=\"/rooms/directs?user_ids[]={JZ}\"")), "ping button");
    assert!(!r.body.contains("mailto:jz@"), "members do not see e-mail addresses");
    assert!(!r.body.contains("/ban\""), "nor ban buttons");
    assert!(!r.body.contains("session_transfer_url"));

    let a = s.get(DAVID, &format!("/users/{JZ}"));
    assert!(a.body.contains("href=\"mailto:jz@37signals.com\""));
    assert!(a.body.contains(&format!("action=\"/users/{JZ}/ban\"")) && a.body.contains("Ban</button>"));
    assert!(a.body.contains("Share to get them back into their account"));
    assert!(a.body.contains("/session/transfers/") && a.body.contains("/qr_code/"));

    s.srv.sql(&format!("UPDATE users SET status = 2 WHERE id = {JZ}"));
    let banned = s.get(DAVID, &format!("/users/{JZ}"));
    assert!(banned.body.contains("panel txt-align-center banned"));
    assert!(banned.body.contains("Remove ban"));

    s.srv.sql(&format!("UPDATE users SET status = 1 WHERE id = {KEVIN}"));
    let gone = s.get(DAVID, &format!("/users/{KEVIN}"));
    assert_eq!(gone.status, 200);
    assert!(gone.body.contains("Kevin is no longer on this account"));
    assert!(!gone.body.contains("user_ids[]"), "no ping for deactivated people");

    let own = s.get(DAVID, &format!("/users/{DAVID}"));
    assert!(own.body.contains("href=\"/users/me/profile\""), "edit link on my own page");
    assert!(own.body.contains("Sign in on another device"));
    assert!(!own.body.contains(&format!("/users/{DAVID}/ban")), "no banning yourself");

    let bot = s.get(DAVID, &format!("/users/{BENDER}"));
    assert!(bot.body.contains(&format!("user_ids[]={BENDER}")) && !bot.body.contains("Ban</button>"));

    assert_eq!(s.get(DAVID, "/users/424242").status, 404);
    assert_eq!(s.get(DAVID, "/users/abc").status, 404);
}

#[test]
fn profile_page_lists_my_rooms() {
    let s = start();
    let r = s.get(KEVIN, "/users/me/profile");
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("value=\"Kevin\"") && r.body.contains("value=\"kevin@37signals.com\""));
    assert!(r.body.contains(">Programmer</textarea>"));
    assert!(r.body.contains(&format!("view-transition-name: avatar-{KEVIN}")));
    assert!(!r.body.contains("Delete avatar"), "no uploaded avatar yet");
    let (designers, hq) = (r.body.find(&format!("/rooms/{DESIGNERS}\"")).unwrap(), r.body.find(&format!("/rooms/{HQ}\"")).unwrap());
    let ping = r.body.find(&format!("/rooms/{BENDER_AND_KEVIN}\"")).expect("pings are listed");
    assert!(designers < hq && hq < ping, "shared rooms by name, then pings");
    assert!(r.body.contains(&format!("id=\"involvement_rooms_direct_{BENDER_AND_KEVIN}\"")));
    assert!(r.body.contains(&format!("/rooms/{HQ}/involvement?involvement=nothing")), "HQ: everything → nothing");
    assert!(r.body.contains("Sign in on another device"));
    assert!(r.body.contains("action=\"/session\""), "log out in the nav");
}

#[test]
fn profile_update_changes_only_me() {
    let s = start();
    let mut jar = s.jar(KEVIN);
    let before = s.query_text(&format!("SELECT password_digest FROM users WHERE id = {KEVIN}"));
    let r = jar.send(
        &s.srv,
        Request::post_form(
            &format!("/users/{JZ}/profile"),
            &[("_method", "patch"), ("user[name]", "Kevin M"), ("user[bio]", "Ops"), ("user[password]", "")],
        ),
    );
    assert_eq!(r.status, 302, "{r:?}");
    assert_eq!(r.location(), Some("/users/me/profile"));
    assert_eq!(s.query_text(&format!("SELECT name || '|' || bio FROM users WHERE id = {KEVIN}")), "Kevin M|Ops");
    assert_eq!(s.query_text(&format!("SELECT name FROM users WHERE id = {JZ}")), "JZ", "the path's user is ignored");
    assert_eq!(s.query_text(&format!("SELECT password_digest FROM users WHERE id = {KEVIN}")), before, "empty password ignored");
    let page = jar.send(&s.srv, Request::get("/users/me/profile"));
    assert!(page.body.contains("✓"), "the notice shows once");

    let r = jar.send(&s.srv, Request::post_form("/users/me/profile", &[("_method", "patch"), ("user[password]", "new-secret-99")]));
    assert_eq!(r.status, 302);
    let digest = s.query_text(&format!("SELECT password_digest FROM users WHERE id = {KEVIN}"));
    assert!(digest.starts_with("$2a$12$") && digest != before);

    let none = jar.send(&s.srv, Request::post_form("/users/me/profile", &[("_method", "patch")]));
    assert_eq!(none.status, 400, "no user[...] at all");
}

#[test]
fn avatar_upload_is_stored_like_active_storage() {
    let s = start();
    let mut jar = s.jar(KEVIN);
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 0, 40, 0, 0, 0, 30, 8, 2, 0, 0, 0]);
    png.extend_from_slice(b"rest-of-image");
    let r = jar.send(&s.srv, multipart("/users/me/profile", &[], Some(("user[avatar]", "me.png", "image/png", &png))));
    assert_eq!(r.status, 302, "{r:?}\n{}", s.srv.stderr());
    let row = s.query_text(&format!(
        "SELECT b.filename || '|' || b.content_type || '|' || b.byte_size || '|' || b.service_name || '|' || b.metadata || '|' || length(b.key) || '|' || length(b.checksum) \
         FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id \
         WHERE a.record_type = 'User' AND a.name = 'avatar' AND a.record_id = {KEVIN}"
    ));
    assert_eq!(
        row,
        format!("me.png|image/png|{}|local|{{\"identified\":true,\"width\":40,\"height\":30,\"analyzed\":true}}|28|24", png.len())
    );
    let key = s.query_text("SELECT key FROM active_storage_blobs");
    let path = s.srv.dir.join("storage/files").join(&key[0..2]).join(&key[2..4]).join(&key);
    assert_eq!(std::fs::read(&path).unwrap(), png, "the file in the Rails disk layout");

    let page = jar.send(&s.srv, Request::get("/users/me/profile"));
    assert!(page.body.contains("It may take up to 30 minutes to change everywhere."));
    assert!(page.body.contains(&format!("action=\"/users/{KEVIN}/avatar\"")), "delete button once uploaded");

    // A second upload replaces the first: one attachment, the old blob and file gone.
    let r = jar.send(&s.srv, multipart("/users/me/profile", &[("user[name]", "Kev")], Some(("user[avatar]", "b.gif", "image/gif", b"GIF89a\x02\x00\x02\x00"))));
    assert_eq!(r.status, 302);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs"), 1);
    assert_eq!(s.query_text("SELECT filename FROM active_storage_blobs"), "b.gif");
    assert!(!path.exists(), "the replaced file is deleted");
    assert_eq!(s.query_text(&format!("SELECT name FROM users WHERE id = {KEVIN}")), "Kev");
}
