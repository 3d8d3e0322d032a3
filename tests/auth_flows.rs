//! The account and identity flows end to end against the real binary (spec/02 §4.1–4.3,
//! §4.8, §4.11, §4.14; spec/05's controller tests for them).

mod auth_support;
use auth_support::*;

#[test]
fn first_run_creates_account_room_and_admin_once() {
    let srv = Server::start(&[]);
    assert_eq!(srv.send(&Request::get("/session/new")).location(), Some("/first_run"));
    let page = srv.send(&Request::get("/first_run"));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("<title>Set up Campfire</title>"));
    assert!(page.body.contains("name=\"user[email_address]\""));

    // Five simultaneous first runs: exactly one account and one administrator.
    let port = srv.port;
    let racers: Vec<_> = (0..5)
        .map(|i| {
            let req = Request::post_form(
                "/first_run",
                &[
                    ("user[name]", &format!("Admin {i}")),
                    ("user[email_address]", &format!("admin{i}@example.com")),
                    ("user[password]", "secret123456"),
                ],
            );
            std::thread::spawn(move || raw_status(port, &req))
        })
        .collect();
    for r in racers {
        assert_eq!(r.join().unwrap(), 302);
    }
    assert_eq!(srv.query_int("SELECT count(*) FROM accounts"), 1);
    assert_eq!(srv.query_int("SELECT count(*) FROM users WHERE role = 1"), 1);
    assert_eq!(srv.query_text("SELECT name || '/' || type FROM rooms"), "All Talk/Rooms::Open");
    assert_eq!(srv.query_int("SELECT count(*) FROM memberships"), 1);
    assert!(srv.query_text("SELECT password_digest FROM users").starts_with("$2a$12$"));
    assert_eq!(srv.send(&Request::get("/first_run")).location(), Some("/"));
    assert_eq!(srv.send(&Request::post_form("/first_run", &[("user[name]", "x")])).location(), Some("/"));
}

fn raw_status(port: u16, req: &Request) -> u16 {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut head = format!("POST {} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n", req.path);
    for (k, v) in &req.headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", req.body.len()));
    s.write_all(head.as_bytes()).unwrap();
    s.write_all(&req.body).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[test]
fn first_run_needs_the_user_fields() {
    let srv = Server::start(&[]);
    let r = srv.send(&Request::post_form("/first_run", &[("account[name]", "x")]));
    assert_eq!(r.status, 400);
    assert_eq!(srv.query_int("SELECT count(*) FROM accounts"), 0);
}

#[test]
fn first_run_accepts_the_multipart_form_browsers_send() {
    let srv = Server::start(&[]);
    let fields = [("user[name]", "Ada"), ("user[email_address]", "ada@example.com"), ("user[password]", "secret123456")];
    // A file input left empty: an empty part with an empty filename.
    let req = Request::multipart("/first_run", &fields, Some(("user[avatar]", "", "application/octet-stream", b"")));
    let r = srv.send(&req);
    assert_eq!(r.status, 302, "{r:?}");
    assert_eq!(srv.query_text("SELECT name FROM users"), "Ada");
}

#[test]
fn sign_in_page_and_sign_out() {
    let srv = Server::start(&[]);
    let mut jar = first_run(&srv);
    let page = srv.send(&Request::get("/session/new?email_address=someone%40example.com"));
    assert_eq!(page.status, 200);
    assert!(page.body.contains("value=\"someone@example.com\""));
    assert!(page.body.contains("turbo-visit-control"));
    assert!(page.body.contains("Ada Admin"), "help contact names the first administrator");
    // Signed-in users may still see the form (Rails does not redirect them).
    assert_eq!(jar.send(&srv, Request::get("/session/new")).status, 200);

    let out = jar.send(&srv, Request::post_form("/session", &[("_method", "delete")]));
    assert_eq!((out.status, out.location()), (302, Some("/")));
    assert!(out.set_cookies().iter().any(|c| c.starts_with("session_token=; path=/; max-age=0")));
    assert_eq!(srv.query_int("SELECT count(*) FROM sessions"), 0);
    assert_eq!(jar.send(&srv, Request::get("/")).location(), Some("/session/new"));
}

#[test]
fn join_link_creates_a_member_in_every_open_room() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let code = srv.query_text("SELECT join_code FROM accounts");
    srv.sql("INSERT INTO rooms (name, type, creator_id, created_at, updated_at) VALUES ('Closed', 'Rooms::Closed', 1, '2025-01-01 00:00:00', '2025-01-01 00:00:00'), ('Second open', 'Rooms::Open', 1, '2025-01-01 00:00:00', '2025-01-01 00:00:00')");

    assert_eq!(srv.send(&Request::get("/join/nope-nope-nope")).status, 404);
    // The error page, like every other 404 (issue 17 §3.5), not an empty body.
    assert!(srv.send(&Request::get("/join/nope-nope-nope")).body.contains("</html>"));
    let page = srv.send(&Request::get(&format!("/join/{code}")));
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.body.contains(&format!("action=\"/join/{code}\"")));
    assert!(page.body.contains("<title>Sign up</title>"));
    // Signed-in users are sent home.
    assert_eq!(admin.send(&srv, Request::get(&format!("/join/{code}"))).location(), Some("/"));

    let mut kevin = Jar::default();
    let r = kevin.send(
        &srv,
        Request::post_form(
            &format!("/join/{code}"),
            &[("user[name]", "Kevin"), ("user[email_address]", "kevin@example.com"), ("user[password]", "secret123456")],
        ),
    );
    assert_eq!((r.status, r.location()), (302, Some("/")), "{r:?}");
    assert!(kevin.get("session_token").is_some());
    assert_eq!(srv.query_int("SELECT role FROM users WHERE name = 'Kevin'"), 0);
    assert_eq!(
        srv.query_text("SELECT group_concat(r.name, ',') FROM memberships m JOIN rooms r ON r.id = m.room_id JOIN users u ON u.id = m.user_id WHERE u.name = 'Kevin' ORDER BY r.id"),
        "All Talk,Second open"
    );
    // Home is the earliest-created of Kevin's rooms: "Second open" was seeded as older.
    assert_eq!(kevin.send(&srv, Request::get("/")).location(), Some("/rooms/3"));

    // The same e-mail again: nothing created, sent to sign in with the address filled in.
    let again = srv.send(&Request::post_form(
        &format!("/join/{code}"),
        &[("user[name]", "Kevin 2"), ("user[email_address]", "kevin@example.com"), ("user[password]", "x")],
    ));
    assert_eq!(again.location(), Some("/session/new?email_address=kevin%40example.com"));
    assert_eq!(srv.query_int("SELECT count(*) FROM users"), 2);
}

#[test]
fn join_code_regeneration_is_for_administrators() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let code = srv.query_text("SELECT join_code FROM accounts");
    let mut member = join(&srv, &code, "Kevin", "kevin@example.com");

    let r = member.send(&srv, Request::post_form("/account/join_code", &[]));
    assert_eq!(r.status, 403);
    assert_eq!(srv.query_text("SELECT join_code FROM accounts"), code);

    let r = admin.send(&srv, Request::post_form("/account/join_code", &[]));
    assert_eq!((r.status, r.location()), (302, Some("/account/edit")));
    let new_code = srv.query_text("SELECT join_code FROM accounts");
    assert_ne!(new_code, code);
    assert_eq!(new_code.len(), 14);
    assert_eq!(srv.send(&Request::get(&format!("/join/{code}"))).status, 404);
    assert_eq!(srv.send(&Request::get(&format!("/join/{new_code}"))).status, 200);
}

fn join(srv: &Server, code: &str, name: &str, email: &str) -> Jar {
    let mut jar = Jar::default();
    let r = jar.send(
        srv,
        Request::post_form(
            &format!("/join/{code}"),
            &[("user[name]", name), ("user[email_address]", email), ("user[password]", "secret123456")],
        )
        .header("X-Forwarded-For", "203.0.113.1"),
    );
    assert_eq!(r.status, 302, "{r:?}");
    jar
}

#[test]
fn bans_block_the_users_addresses_for_writes() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let code = srv.query_text("SELECT join_code FROM accounts");
    let mut kevin = join(&srv, &code, "Kevin", "kevin@example.com");
    let kevin_id = srv.query_int("SELECT id FROM users WHERE name = 'Kevin'");

    // Members cannot ban.
    assert_eq!(kevin.send(&srv, Request::post_form("/users/1/ban", &[])).status, 403);
    assert_eq!(admin.send(&srv, Request::post_form("/users/999/ban", &[])).status, 404);

    let r = admin.send(&srv, Request::post_form(&format!("/users/{kevin_id}/ban"), &[]));
    assert_eq!((r.status, r.location()), (302, Some(format!("/users/{kevin_id}").as_str())), "{r:?}");
    assert_eq!(srv.query_text("SELECT group_concat(ip_address) FROM bans"), "203.0.113.1");
    assert_eq!(srv.query_int(&format!("SELECT status FROM users WHERE id = {kevin_id}")), 2);
    assert_eq!(srv.query_int(&format!("SELECT count(*) FROM sessions WHERE user_id = {kevin_id}")), 0);
    // Signed out for good, and the banned address may not post anything.
    assert_eq!(kevin.send(&srv, Request::get("/")).location(), Some("/session/new"));
    let banned = srv.send(
        &Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "secret123456")])
            .header("X-Forwarded-For", "203.0.113.1"),
    );
    assert_eq!((banned.status, banned.body.as_str()), (429, ""));
    let other = srv.send(
        &Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "secret123456")])
            .header("X-Forwarded-For", "203.0.113.99"),
    );
    assert_eq!(other.status, 302);
    assert_eq!(srv.send(&Request::get("/session/new").header("X-Forwarded-For", "203.0.113.1")).status, 200);

    let r = admin.send(&srv, Request::post_form(&format!("/users/{kevin_id}/ban"), &[("_method", "delete")]));
    assert_eq!(r.status, 302);
    assert_eq!(srv.query_int("SELECT count(*) FROM bans"), 0);
    assert_eq!(srv.query_int(&format!("SELECT status FROM users WHERE id = {kevin_id}")), 0);
}

#[test]
fn banning_a_user_with_a_private_address_session_bans_the_user_not_the_address() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    let code = srv.query_text("SELECT join_code FROM accounts");
    let mut jar = Jar::default();
    let r = jar.send(
        &srv,
        Request::post_form(
            &format!("/join/{code}"),
            &[("user[name]", "Local"), ("user[email_address]", "l@example.com"), ("user[password]", "pw")],
        ),
    );
    assert_eq!(r.status, 302);
    let id = srv.query_int("SELECT id FROM users WHERE name = 'Local'");
    // The test client comes from 127.0.0.1: Rails answers 422 and bans no one (issue 17 §3.6).
    let r = admin.send(&srv, Request::post_form(&format!("/users/{id}/ban"), &[]));
    assert_eq!((r.status, r.location()), (302, Some(format!("/users/{id}").as_str())));
    assert_eq!(srv.query_int("SELECT count(*) FROM bans"), 0, "a loopback address is never banned");
    assert_eq!(srv.query_int(&format!("SELECT status FROM users WHERE id = {id}")), 2, "banned");
    assert_eq!(srv.query_int(&format!("SELECT count(*) FROM sessions WHERE user_id = {id}")), 0);
    let page = admin.send(&srv, Request::get(&format!("/users/{id}")));
    assert!(page.body.contains("Sign-ins from 127.0.0.1 stay possible"), "{}", page.body);
}

#[test]
fn welcome_goes_to_the_last_room_still_joined() {
    let srv = Server::start(&[]);
    let mut admin = first_run(&srv);
    srv.sql("INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES (7, 'Later', 'Rooms::Open', 1, '2030-01-01 00:00:00', '2030-01-01 00:00:00'), (8, 'Not mine', 'Rooms::Closed', 1, '2030-01-01 00:00:00', '2030-01-01 00:00:00');
             INSERT INTO memberships (room_id, user_id, created_at, updated_at) VALUES (7, 1, '2030-01-01 00:00:00', '2030-01-01 00:00:00')");
    assert_eq!(admin.send(&srv, Request::get("/")).location(), Some("/rooms/1"));
    admin.0.push(("last_room".into(), "7".into()));
    assert_eq!(admin.send(&srv, Request::get("/")).location(), Some("/rooms/7"));
    admin.0.retain(|(n, _)| n != "last_room");
    admin.0.push(("last_room".into(), "8".into()));
    assert_eq!(admin.send(&srv, Request::get("/")).location(), Some("/rooms/1"));

    srv.sql("DELETE FROM memberships");
    let r = admin.send(&srv, Request::get("/"));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("No rooms yet"));
    assert!(r.body.contains("<meta name=\"current-user-name\" content=\"Ada Admin\">"));
}

#[test]
fn browser_gate_and_bots() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let old = "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/114.0";
    let r = srv.send(&Request::get("/session/new").header("User-Agent", old));
    assert_eq!(r.status, 200);
    assert!(r.body.contains("Upgrade to a supported web browser"));
    let ok = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15";
    let r = srv.send(&Request::get("/session/new").header("User-Agent", ok));
    assert!(!r.body.contains("Upgrade to a supported web browser"));
    // Health check and assets are outside the gate.
    assert_eq!(srv.send(&Request::get("/up").header("User-Agent", old)).status, 200);

    // A valid bot key outside the bot API: 403.
    srv.sql("INSERT INTO users (id, name, role, status, bot_token, created_at, updated_at) VALUES (50, 'Bender', 2, 0, 'AbCdEf123456', '2025-01-01 00:00:00', '2025-01-01 00:00:00')");
    let r = srv.send(&Request::get("/?bot_key=50-AbCdEf123456"));
    assert_eq!((r.status, r.body.as_str()), (403, ""));
    let r = srv.send(&Request::get("/?bot_key=50-wrong"));
    assert_eq!(r.location(), Some("/session/new"));
}

#[test]
fn default_headers_and_errors() {
    let srv = Server::start(&[("APP_VERSION", "1.2.3"), ("GIT_REVISION", "abc123")]);
    let r = srv.send(&Request::get("/first_run"));
    for (k, v) in [
        ("X-Frame-Options", "SAMEORIGIN"),
        ("X-XSS-Protection", "0"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Permitted-Cross-Domain-Policies", "none"),
        ("Referrer-Policy", "strict-origin-when-cross-origin"),
        ("X-Version", "1.2.3"),
        ("X-Rev", "abc123"),
        ("Cache-Control", "max-age=0, private, must-revalidate"),
    ] {
        assert_eq!(r.header(k), Some(v), "{k}");
    }
    assert_eq!(r.header("Strict-Transport-Security"), None, "DISABLE_SSL is set");
    let missing = srv.send(&Request::get("/no/such/page"));
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("<html"));
    let json = srv.send(&Request::get("/rooms/1/settings.json"));
    assert_eq!(json.status, 404);
    let bad = srv.send(&Request {
        method: "POST",
        path: "/first_run".into(),
        headers: vec![("Content-Type".into(), "multipart/form-data; boundary=x".into())],
        body: b"garbage".to_vec(),
    });
    assert_eq!(bad.status, 400);
}

#[test]
fn html_pages_refuse_other_formats() {
    let srv = Server::start(&[]);
    let json = srv.send(&Request::get("/first_run.json"));
    assert_eq!(json.status, 406);
    assert_eq!(json.body, r#"{"status":406,"error":"Not Acceptable"}"#);
    assert_eq!(srv.send(&Request::get("/first_run.html")).status, 200);
}

#[test]
fn turbo_frame_requests_get_the_frame_layout() {
    let srv = Server::start(&[]);
    let full = srv.send(&Request::get("/first_run"));
    assert!(full.body.contains("<nav id=\"nav\">"));
    let frame = srv.send(&Request::get("/first_run").header("Turbo-Frame", "main"));
    assert_eq!(frame.status, 200);
    assert!(!frame.body.contains("<nav id=\"nav\">"), "{}", frame.body);
    assert!(frame.body.contains("action=\"/first_run\""));
}

#[test]
fn account_logo_is_the_stock_icon_with_revalidation() {
    let srv = Server::start(&[]);
    let r = srv.send(&Request::get("/account/logo"));
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Content-Type"), Some("image/png"));
    assert_eq!(r.header("Cache-Control"), Some("max-age=300, public, stale-while-revalidate=604800"));
    assert!(r.body.starts_with("\u{fffd}PNG"), "a PNG");
    let etag = r.header("ETag").unwrap().to_string();
    let again = srv.send(&Request::get("/account/logo").header("If-None-Match", &etag));
    assert_eq!(again.status, 304);
    let small = srv.send(&Request::get("/account/logo?size=small").header("If-None-Match", &etag));
    assert_eq!(small.status, 200, "another representation, another tag");
    // First run changes the account: the old tag is stale.
    first_run(&srv);
    assert_eq!(srv.send(&Request::get("/account/logo").header("If-None-Match", &etag)).status, 200);
}
