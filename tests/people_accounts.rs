//! accounts#edit/update, accounts/users#index/update/destroy, accounts/custom_styles and
//! accounts/logos#destroy against the real binary (spec/02 §4.5, §4.6, §4.9, §4.10; spec/05
//! accounts_controller_test, accounts/users_controller_test, custom_styles_controller_test).

mod support;
use support::*;

fn send(s: &Seeded, user: i64, method: &'static str, path: &str, fields: &[(&str, &str)]) -> Response {
    let mut all = vec![("_method", method)];
    all.extend_from_slice(fields);
    s.post(user, path, &all)
}

#[test]
fn settings_page_for_admins_and_members() {
    let s = start();
    let a = s.get(DAVID, "/account/edit");
    assert_eq!(a.status, 200, "{a:?}");
    assert!(a.body.contains("<title>Account settings"));
    assert!(a.body.contains("name=\"account[name]\"") && a.body.contains("value=\"37signals\""));
    assert!(a.body.contains("restrict_room_creation_to_administrators]\" value=\"true\""), "not restricted: posting flips it on");
    assert!(a.body.contains("href=\"/account/bots\"") && a.body.contains("href=\"/account/custom_styles/edit\""));
    assert!(a.body.contains(&format!("/join/{JOIN_CODE}\"")) && a.body.contains("action=\"/account/join_code\""));
    // Administrators first (David, Jason), a rule, then members (JZ, Kevin); no bots.
    let pos = |n: &str| a.body.find(&format!("person__name\">{n}<")).unwrap_or_else(|| panic!("{n} listed"));
    let rule = a.body.find("<hr>").unwrap();
    assert!(pos("David") < pos("Jason") && pos("Jason") < rule && rule < pos("JZ") && pos("JZ") < pos("Kevin"));
    assert!(!a.body.contains("Bender Bot"));
    assert!(a.body.contains(&format!("id=\"role_user_{KEVIN}\"")), "role toggle for others");
    assert!(!a.body.contains(&format!("id=\"role_user_{DAVID}\"")), "not for myself");
    assert!(a.body.contains("href=\"/users/me/profile\""), "my own row");
    assert!(!a.body.contains("next_page_container"), "one page");

    let m = s.get(KEVIN, "/account/edit");
    assert_eq!(m.status, 200);
    assert!(!m.body.contains("account[name]") && m.body.contains("<h1 class=\"txt-align-center\">37signals</h1>"));
    assert!(!m.body.contains("/account/bots") && !m.body.contains("action=\"/account/join_code\""));
    assert!(!m.body.contains("role_user_"));

    // Banned people: administrators see them (marked), members do not.
    s.srv.sql(&format!("UPDATE users SET status = 2 WHERE id = {JZ}"));
    assert!(s.get(DAVID, "/account/edit").body.contains("account-user banned"));
    assert!(!s.get(KEVIN, "/account/edit").body.contains("person__name\">JZ<"));
}

#[test]
fn update_account_name_and_setting() {
    let s = start();
    assert_eq!(send(&s, KEVIN, "patch", "/account", &[("account[name]", "Mine")]).status, 403);
    let r = send(&s, DAVID, "patch", "/account", &[("account[name]", "Basecamp")]);
    assert_eq!(r.status, 302, "{r:?}");
    assert_eq!(r.location(), Some("/account/edit"));
    assert_eq!(s.query_text("SELECT name FROM accounts"), "Basecamp");
    let r = send(&s, DAVID, "put", "/account", &[("account[settings][restrict_room_creation_to_administrators]", "true")]);
    assert_eq!(r.status, 302);
    assert_eq!(s.query_text("SELECT settings FROM accounts"), "{\"restrict_room_creation_to_administrators\":true}");
    assert!(s.get(DAVID, "/account/edit").body.contains("type=\"checkbox\" checked"));
    assert_eq!(send(&s, DAVID, "patch", "/account", &[]).status, 400, "no account[...]");
}

#[test]
fn roles_and_removal() {
    let s = start();
    let path = format!("/account/users/{KEVIN}");
    assert_eq!(send(&s, JZ, "patch", &path, &[("user[role]", "administrator")]).status, 403);
    let r = send(&s, DAVID, "patch", &path, &[("user[role]", "administrator")]);
    assert_eq!((r.status, r.location()), (302, Some("/account/edit")));
    assert_eq!(s.query_int(&format!("SELECT role FROM users WHERE id = {KEVIN}")), 1);
    send(&s, DAVID, "patch", &path, &[("user[role]", "owner")]);
    assert_eq!(s.query_int(&format!("SELECT role FROM users WHERE id = {KEVIN}")), 0, "anything else is member");

    let r = send(&s, DAVID, "delete", &path, &[]);
    assert_eq!(r.status, 302);
    assert_eq!(s.query_int(&format!("SELECT status FROM users WHERE id = {KEVIN}")), 1, "deactivated");
    assert!(s.query_text(&format!("SELECT email_address FROM users WHERE id = {KEVIN}")).starts_with("kevin-deactivated-"));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM sessions WHERE user_id = {KEVIN}")), 0);
    assert_eq!(send(&s, DAVID, "patch", &path, &[("user[role]", "member")]).status, 404, "no longer active");
    assert_eq!(send(&s, DAVID, "delete", "/account/users/999", &[]).status, 404);
}

#[test]
fn people_pages_as_turbo_streams() {
    let s = start();
    let r = s.get(DAVID, "/account/users.turbo_stream?page=1");
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.header("Content-Type").unwrap().starts_with("text/vnd.turbo-stream.html"));
    assert!(r.body.starts_with("<turbo-stream action=\"replace\" target=\"next_page_container\">"));
    assert!(r.body.contains("person__name\">Kevin<") && !r.body.contains("Bender"));
    assert!(!r.body.contains("action=\"append\""), "last page");
    let past = s.get(DAVID, "/account/users.turbo_stream?page=9");
    assert!(!past.body.contains("person__name"));
}

#[test]
fn custom_styles_for_admins() {
    let s = start();
    assert_eq!(s.get(KEVIN, "/account/custom_styles/edit").status, 403);
    let r = send(&s, DAVID, "patch", "/account/custom_styles", &[("account[custom_styles]", "body { color: red } </style>")]);
    assert_eq!((r.status, r.location()), (302, Some("/account/custom_styles/edit")));
    assert_eq!(s.query_text("SELECT custom_styles FROM accounts"), "body { color: red } </style>");
    let page = s.get(DAVID, "/account/custom_styles/edit");
    assert_eq!(page.status, 200);
    assert!(page.body.contains(">body { color: red } &lt;/style&gt;</textarea>"));
    assert_eq!(send(&s, KEVIN, "patch", "/account/custom_styles", &[("account[custom_styles]", "x")]).status, 403);
}

#[test]
fn logo_delete() {
    let s = start();
    let key = "logokey000000000000000000001";
    let dir = s.srv.dir.join("storage/files/lo/go");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(key), b"\x89PNG\r\n\x1a\nlogo").unwrap();
    s.srv.sql(&format!(
        "INSERT INTO active_storage_blobs (key, filename, content_type, service_name, byte_size, created_at) VALUES ('{key}', 'l.png', 'image/png', 'local', 12, '2025-01-01 00:00:00');
         INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) SELECT 'logo', 'Account', (SELECT id FROM accounts), id, '2025-01-01 00:00:00' FROM active_storage_blobs;"
    ));
    let logo = s.srv.send(&Request::get("/account/logo"));
    assert_eq!(logo.status, 200);
    assert!(logo.body.ends_with("logo"), "an uploaded PNG is served");
    assert!(s.get(DAVID, "/account/edit").body.contains("action=\"/account/logo\""), "delete button");
    assert_eq!(send(&s, KEVIN, "delete", "/account/logo", &[]).status, 403);
    let r = send(&s, DAVID, "delete", "/account/logo", &[]);
    assert_eq!((r.status, r.location()), (302, Some("/account/edit")));
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_attachments"), 0);
    assert!(!dir.join(key).exists());
    assert!(!s.srv.send(&Request::get("/account/logo")).body.ends_with("logo"), "back to the stock icon");
}

#[test]
fn logo_upload_through_the_settings_form() {
    let s = start();
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\0\0\0\x10uploaded-logo";
    let req = Request::multipart("/account", &[("_method", "patch")], Some(("account[logo]", "logo.png", "image/png", png)));
    let r = s.srv.send(&req.cookies(&s.jar(DAVID)));
    assert_eq!((r.status, r.location()), (302, Some("/account/edit")), "{r:?}");
    assert_eq!(
        s.query_text("SELECT b.filename || '|' || b.content_type || '|' || b.metadata FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id WHERE a.record_type = 'Account' AND a.name = 'logo'"),
        "logo.png|image/png|{\"identified\":true,\"width\":16,\"height\":16,\"analyzed\":true}"
    );
    assert!(s.srv.send(&Request::get("/account/logo?size=small")).body.ends_with("uploaded-logo"));
    assert_eq!(s.query_text("SELECT name FROM accounts"), "37signals", "the name is untouched");
}
