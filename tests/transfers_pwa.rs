//! Session transfer links, their QR codes and the PWA files against the real binary
//! (spec/02 §4.4, §4.25, §4.31; spec/05 transfers_controller_test, qr_code_controller_test).

mod auth_support;
use auth_support::*;

/// The transfer path (`/session/transfers/<id>`) and QR path an administrator sees for user 1.
fn transfer_links(srv: &Server, admin: &mut Jar) -> (String, String) {
    let page = admin.send(srv, Request::get("/users/1"));
    assert_eq!(page.status, 200, "{page:?}");
    let link = |marker: &str| {
        let at = page.body.find(marker).unwrap_or_else(|| panic!("no {marker} in {}", page.body));
        page.body[at..].split('"').next().unwrap().replace("&amp;", "&")
    };
    (link("/session/transfers/"), link("/qr_code/"))
}

fn put(path: &str) -> Request {
    Request::post_form(path, &[("_method", "put")])
}

#[test]
fn show_renders_the_self_submitting_form_for_any_id() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let r = srv.send(&Request::get("/session/transfers/some-token"));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains(r#"<form action="/session/transfers/some-token" method="post""#), "{}", r.body);
    assert!(r.body.contains(r#"data-controller="auto-submit""#));
    assert!(r.body.contains(r#"<input type="hidden" name="_method" value="put">"#));
    assert_eq!(srv.send(&Request::get("/session/transfers/x.json")).status, 406);
}

#[test]
fn a_valid_transfer_signs_in_on_another_device() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let (path, _) = transfer_links(&srv, &mut admin);
    assert_eq!(srv.query_int("SELECT count(*) FROM sessions"), 1);

    let mut phone = Jar::default();
    assert_eq!(phone.send(&srv, Request::get("/")).location(), Some("/session/new"));
    let r = phone.send(&srv, put(&path).header("User-Agent", "Phone/1.0"));
    assert_eq!(r.status, 302, "{r:?}\n{}", srv.stderr());
    assert_eq!(r.location(), Some("/"));
    assert!(phone.get("session_token").is_some(), "signed cookie set");
    assert_eq!(srv.query_int("SELECT count(*) FROM sessions WHERE user_id = 1"), 2);
    assert_eq!(srv.query_text("SELECT user_agent FROM sessions ORDER BY id DESC LIMIT 1"), "Phone/1.0");
    let home = phone.send(&srv, Request::get("/"));
    assert_ne!(home.location(), Some("/session/new"), "signed in: {home:?}");

    // PATCH works as PUT, and the same link can be used again within its 4 hours.
    let mut tablet = Jar::default();
    let r = tablet.send(&srv, Request::post_form(&path, &[("_method", "patch")]));
    assert_eq!((r.status, r.location()), (302, Some("/")));
}

#[test]
fn transfer_returns_to_where_the_visitor_was_going() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let (path, _) = transfer_links(&srv, &mut admin);
    let mut phone = Jar::default();
    assert_eq!(phone.send(&srv, Request::get("/account/edit")).location(), Some("/session/new"));
    let r = phone.send(&srv, put(&path));
    assert_eq!(r.location(), Some("/account/edit"), "{r:?}");
}

#[test]
fn bad_tampered_or_inactive_transfers_are_400() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let (path, _) = transfer_links(&srv, &mut admin);
    let mut jar = Jar::default();
    for bad in ["/session/transfers/some-token".to_string(), format!("{path}x"), path.replacen("--", "--0", 1)] {
        let r = jar.send(&srv, put(&bad));
        assert_eq!((r.status, r.body.as_str()), (400, ""), "{bad}");
    }
    assert!(jar.get("session_token").is_none());

    // Cross-site submissions are refused by forgery protection.
    let r = jar.send(&srv, put(&path).header("Sec-Fetch-Site", "cross-site"));
    assert_eq!(r.status, 422);

    srv.sql("UPDATE users SET status = 1 WHERE id = 1");
    let r = jar.send(&srv, put(&path));
    assert_eq!(r.status, 400, "a deactivated user cannot be signed in");
    assert_eq!(srv.query_int("SELECT count(*) FROM sessions"), 1);
}

#[test]
fn qr_code_is_a_cacheable_svg() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    // base64url("http://example.com"), without and with padding.
    for id in ["aHR0cDovL2V4YW1wbGUuY29t", "aHR0cDovL2V4YW1wbGUuY29tLw=="] {
        let r = srv.send(&Request::get(&format!("/qr_code/{id}")));
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.header("Content-Type"), Some("image/svg+xml"));
        let cache = r.header("Cache-Control").unwrap_or("");
        assert!(cache.contains("max-age=31536000") && cache.contains("public"), "{cache}");
        assert!(r.body.starts_with("<?xml") && r.body.contains("<svg") && r.body.contains("viewBox=\"0 0 37 37\""));
    }
    let (_, qr) = transfer_links(&srv, &mut admin);
    let r = srv.send(&Request::get(&qr));
    assert_eq!(r.status, 200, "{qr}");
    assert!(r.body.contains("<path fill=\"#000\" d=\"M4 4h7v1h-7z"));

    assert_eq!(srv.send(&Request::get("/qr_code/not*base64")).status, 400);
    let long = "QUFB".repeat(200); // 600 bytes: more than the largest symbol holds
    assert_eq!(srv.send(&Request::get(&format!("/qr_code/{long}"))).status, 400);
}

#[test]
fn webmanifest_and_service_worker() {
    let srv = Server::start(&[]);
    let r = srv.send(&Request::get("/webmanifest.json"));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.starts_with(r#"{"name":"Campfire","icons":[{"src":"/account/logo?size=small","#), "{}", r.body);

    first_run(&srv);
    srv.sql("UPDATE accounts SET name = 'Hut \"8\" <b>'");
    let r = srv.send(&Request::get("/webmanifest.json"));
    assert_eq!(r.header("Content-Type"), Some("application/json; charset=utf-8"));
    let b = &r.body;
    assert!(b.starts_with(r#"{"name":"Hut \"8\" \u003cb\u003e","icons":[{"src":"/account/logo?v="#), "{b}");
    assert!(b.contains(r#"\u0026size=small","type":"image/png","sizes":"192x192"}"#));
    assert!(b.contains(r#","type":"image/png","sizes":"512x512","purpose":"maskable"}]"#));
    for field in [
        r#""start_url":"/""#,
        r#""display":"standalone""#,
        r#""scope":"/""#,
        r#""description":"A chat app from the makers of Basecamp and HEY.""#,
        r#""categories":["social","business","productivity"]"#,
        r##""theme_color":"#ffffff","background_color":"#ffffff""##,
        r#""url":"rooms/opens/new","icons":[{"src":"http://127.0.0.1:"#,
        r#""url":"/users/me/profile""#,
    ] {
        assert!(b.contains(field), "{field} in {b}");
    }
    assert_eq!(srv.send(&Request::get("/webmanifest")).status, 406);

    let sw = srv.send(&Request::get("/service-worker.js"));
    assert_eq!(sw.status, 200);
    assert_eq!(sw.header("Content-Type"), Some("text/javascript; charset=utf-8"));
    assert!(sw.body.contains("addEventListener(\"push\"") && sw.body.contains("notificationclick"));
    assert_eq!(srv.send(&Request::get("/service-worker")).status, 406);
}
