//! Issue 14 §1 and §4: the scheme follows the connection, and only trusted proxies are believed
//! about the client. The binary starts without `DISABLE_SSL` (the quick start's setting) unless
//! a test says otherwise.

mod auth_support;
use auth_support::*;

/// The quick start: plain HTTP, no settings.
fn plain() -> Server {
    Server::start(&[("DISABLE_SSL", "")])
}

fn join_link(srv: &Server, jar: &Jar, extra: &[(&str, &str)]) -> String {
    let mut req = Request::get("/account/edit").cookies(jar);
    for (k, v) in extra {
        req = req.header(k, v);
    }
    let r = srv.send(&req);
    assert_eq!(r.status, 200, "{r:?}");
    let at = r.body.find("/join/").expect("the join link on the account page");
    let start = r.body[..at].rfind('"').unwrap() + 1;
    r.body[start..at + 6].to_string()
}

#[test]
fn plain_http_gets_http_urls_and_no_hsts() {
    let srv = plain();
    let jar = first_run(&srv);
    let home = srv.send(&Request::get("/").cookies(&jar));
    assert_eq!(home.header("Strict-Transport-Security"), None, "no HSTS over plain HTTP");
    let link = join_link(&srv, &jar, &[]);
    assert!(link.starts_with("http://127.0.0.1:"), "{link}");
    // Nothing the pages render points at https:// but links out (the logo's once.com).
    for path in ["/rooms/1", "/account/edit", "/account/bots", "/users/1"] {
        let page = srv.send(&Request::get(path).cookies(&jar));
        assert_eq!(page.status, 200, "{path}");
        assert!(only_outside_links(&page.body), "{path}: {}", page.body);
    }
}

fn only_outside_links(body: &str) -> bool {
    body.match_indices("https://").all(|(i, _)| body[i..].starts_with("https://once.com"))
}

#[test]
fn cookies_from_a_plain_first_run_are_not_secure() {
    let srv = plain();
    let mut jar = Jar::default();
    let r = jar.send(
        &srv,
        Request::post_form(
            "/first_run",
            &[("user[name]", "Ada"), ("user[email_address]", "ada@example.com"), ("user[password]", "secret123456")],
        ),
    );
    assert_eq!(r.status, 302, "{r:?}");
    let cookie = r.set_cookies().into_iter().find(|c| c.starts_with("session_token=")).unwrap().to_string();
    assert!(cookie.ends_with("; httponly; samesite=lax") && !cookie.contains("secure"), "{cookie}");
    assert_eq!(r.header("Strict-Transport-Security"), None);
}

#[test]
fn a_trusted_proxy_saying_https_gets_https_everything() {
    let srv = plain();
    let jar = first_run(&srv);
    let https = [("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "chat.example.com")];
    assert_eq!(join_link(&srv, &jar, &https), "https://chat.example.com/join/");
    let r = srv.send(&Request::get("/").cookies(&jar).header("X-Forwarded-Proto", "https"));
    assert_eq!(r.header("Strict-Transport-Security"), Some("max-age=63072000; includeSubDomains"));
    // The same page over plain HTTP is not served from the HTTPS page's cache entry.
    assert!(join_link(&srv, &jar, &[]).starts_with("http://"));
}

#[test]
fn disable_ssl_forces_plain_even_behind_an_https_proxy() {
    let srv = Server::start(&[("DISABLE_SSL", "1")]);
    let jar = first_run(&srv);
    let link = join_link(&srv, &jar, &[("X-Forwarded-Proto", "https")]);
    assert!(link.starts_with("http://"), "{link}");
}

#[test]
fn an_untrusted_peer_is_not_believed_about_scheme_or_host() {
    let srv = Server::start(&[("DISABLE_SSL", ""), ("CAMPFIRE_TRUSTED_PROXIES", "")]);
    let jar = first_run(&srv);
    let link = join_link(&srv, &jar, &[("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "evil.example")]);
    assert!(link.starts_with("http://127.0.0.1:"), "{link}");
    // The Origin check uses the real Host: a forged X-Forwarded-Host does not make a
    // cross-site form look same-origin.
    let forged = srv.send(
        &Request::post_form("/rooms/opens", &[("room[name]", "x")])
            .cookies(&jar)
            .without("Sec-Fetch-Site")
            .header("Origin", "http://evil.example")
            .header("X-Forwarded-Host", "evil.example"),
    );
    assert_eq!(forged.status, 422, "{forged:?}");
    // The trusted default believes it (a proxy on loopback).
    let srv = plain();
    let jar = first_run(&srv);
    let proxied = srv.send(
        &Request::post_form("/rooms/opens", &[("room[name]", "x")])
            .cookies(&jar)
            .without("Sec-Fetch-Site")
            .header("Origin", "http://chat.example.com")
            .header("X-Forwarded-Host", "chat.example.com"),
    );
    assert_eq!(proxied.status, 302, "{proxied:?}");
}

#[test]
fn rotating_x_forwarded_for_from_a_direct_peer_reaches_429_on_the_eleventh_attempt() {
    let srv = Server::start(&[("CAMPFIRE_TRUSTED_PROXIES", "")]);
    first_run(&srv);
    for i in 0..12 {
        let r = srv.send(
            &Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "wrong")])
                .header("X-Forwarded-For", &format!("203.0.113.{i}")),
        );
        assert_eq!(r.status, if i < 10 { 401 } else { 429 }, "attempt {}: {r:?}", i + 1);
    }
}

#[test]
fn a_forwarded_chain_does_not_escape_an_ip_ban_from_a_direct_peer() {
    let srv = Server::start(&[("CAMPFIRE_TRUSTED_PROXIES", "")]);
    let jar = first_run(&srv);
    srv.sql("INSERT INTO bans (user_id, ip_address, created_at, updated_at) VALUES (1, '127.0.0.1', '2026-01-01', '2026-01-01')");
    let post = |xff: &str| {
        srv.send(&Request::post_form("/rooms/opens", &[("room[name]", "x")]).cookies(&jar).header("X-Forwarded-For", xff)).status
    };
    assert_eq!(post("203.0.113.9, 198.51.100.1"), 429, "the ban holds for the socket's address");
    assert_eq!(post("203.0.113.10"), 429);
}

#[test]
fn a_spoofing_mismatch_is_400_with_a_log_line() {
    let srv = Server::start(&[]);
    first_run(&srv);
    for path in ["/session/new", "/rooms/1", "/no/such/page"] {
        let r = srv.send(&Request::get(path).header("X-Forwarded-For", "5.5.5.5").header("Client-Ip", "4.4.4.4"));
        assert_eq!(r.status, if path == "/no/such/page" { 404 } else { 400 }, "{path}: {r:?}");
    }
    assert!(srv.stderr().contains("IP spoofing"), "{}", srv.stderr());
    // From a peer that is not a proxy the headers are not read at all.
    let srv = Server::start(&[("CAMPFIRE_TRUSTED_PROXIES", "")]);
    let r = srv.send(&Request::get("/session/new").header("X-Forwarded-For", "5.5.5.5").header("Client-Ip", "4.4.4.4"));
    assert_ne!(r.status, 400, "{r:?}");
}

#[test]
fn a_flood_of_wrong_passwords_is_answered_503_beyond_the_bcrypt_bound() {
    // Every attempt from its own address (a trusted proxy forwards them), so the rate limit does
    // not stop them: the password-check bound must.
    let srv = Server::start(&[("CAMPFIRE_WORKERS", "1")]);
    first_run(&srv);
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..40)
            .map(|i| {
                let srv = &srv;
                s.spawn(move || {
                    srv.send(
                        &Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "wrong")])
                            .header("X-Forwarded-For", &format!("198.51.100.{i}")),
                    )
                    .status
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let busy = statuses.iter().filter(|&&s| s == 503).count();
    let refused = statuses.iter().filter(|&&s| s == 401).count();
    assert_eq!(busy + refused, 40, "{statuses:?}");
    assert!(busy > 0 && refused >= 4, "some checked, the rest refused at once: {statuses:?}");
    let r = srv.send(&Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "secret123456")]));
    assert_eq!(r.status, 302, "a real sign-in after the flood: {r:?}");
}
