//! Rails-issued cookies sign people in (issue 3 acceptance 2): with SECRET_KEY_BASE=dummy, the
//! spec/03 §4.2 `session_token` cookie for token `AxJs94fteQ5Autv2VrKsH68c` names that user's
//! session; a tampered one does not; the cookies we issue work the same way back.

mod auth_support;
use auth_support::*;

fn seed_vector_user(srv: &Server) {
    srv.sql(concat!(
        "INSERT INTO accounts (id, name, join_code, created_at, updated_at) VALUES (1, 'Campfire', 'AbCd-EfGh-IjKl', '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
        "INSERT INTO users (id, name, role, status, email_address, created_at, updated_at) VALUES (1, 'David', 1, 0, 'david@example.com', '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
        "INSERT INTO sessions (id, user_id, token, last_active_at, created_at, updated_at) VALUES (1, 1, 'AxJs94fteQ5Autv2VrKsH68c', '2025-01-01 00:00:00', '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
        "INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES (5, 'Watercooler', 'Rooms::Open', 1, '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
        "INSERT INTO memberships (room_id, user_id, created_at, updated_at) VALUES (5, 1, '2025-01-01 00:00:00', '2025-01-01 00:00:00');",
    ));
}

#[test]
fn the_spec_vector_cookie_signs_that_user_in() {
    let srv = Server::start(&[]);
    seed_vector_user(&srv);
    let signed_in = srv.send(&Request::get("/").header("Cookie", &format!("session_token={VECTOR_COOKIE}")));
    assert_eq!(signed_in.status, 302);
    assert_eq!(signed_in.location(), Some("/rooms/5"), "{signed_in:?}");
    // We do not re-issue the cookie on every request (byte-stable responses).
    assert!(signed_in.set_cookies().is_empty(), "{signed_in:?}");
    // The session was more than an hour old: it is resumed (user agent, IP, time) in the
    // background.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(srv.query_text("SELECT ip_address FROM sessions WHERE id = 1"), "127.0.0.1");
    assert!(srv.query_text("SELECT last_active_at FROM sessions WHERE id = 1").as_str() > "2025-01-02");

    let anonymous = srv.send(&Request::get("/"));
    assert_eq!((anonymous.status, anonymous.location()), (302, Some("/session/new")));

    let mut tampered = VECTOR_COOKIE.to_string();
    tampered.replace_range(tampered.len() - 1.., "0");
    let refused = srv.send(&Request::get("/").header("Cookie", &format!("session_token={tampered}")));
    assert_eq!(refused.location(), Some("/session/new"));
}

#[test]
fn same_cookie_under_another_secret_is_refused() {
    let srv = Server::start(&[("SECRET_KEY_BASE", "not-dummy")]);
    seed_vector_user(&srv);
    let r = srv.send(&Request::get("/").header("Cookie", &format!("session_token={VECTOR_COOKIE}")));
    assert_eq!(r.location(), Some("/session/new"));
}

#[test]
fn issued_cookies_have_rails_attributes_and_sign_in() {
    let srv = Server::start(&[("DISABLE_SSL", "")]);
    let mut jar = Jar::default();
    let r = jar.send(
        &srv,
        Request::post_form(
            "/first_run",
            &[("user[name]", "Ada"), ("user[email_address]", "ada@example.com"), ("user[password]", "secret123456")],
        )
        // A TLS-terminating proxy on loopback (trusted by default) says the browser used HTTPS.
        .header("X-Forwarded-Proto", "https"),
    );
    assert_eq!(r.status, 302, "{r:?}");
    let cookie = r.set_cookies().into_iter().find(|c| c.starts_with("session_token=")).unwrap().to_string();
    // Rack's attribute order; Secure because DISABLE_SSL is blank and the request was HTTPS.
    assert!(cookie.contains("; path=/; expires="), "{cookie}");
    assert!(cookie.ends_with("; secure; httponly; samesite=lax"), "{cookie}");
    // The value is form-encoded base64 `DATA--DIGEST` (HMAC-SHA1: 40 hex).
    let value = jar.get("session_token").unwrap();
    let digest = value.rsplit("--").next().unwrap();
    assert_eq!(digest.len(), 40);
    assert!(!value.contains('+') && !value.contains('/') && !value.contains('='));
    assert_eq!(r.header("Strict-Transport-Security"), Some("max-age=63072000; includeSubDomains"));
    let home = jar.send(&srv, Request::get("/"));
    assert_eq!((home.status, home.location()), (302, Some("/rooms/1")));
}

#[test]
fn return_to_survives_sign_in_through_the_encrypted_session() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let mut jar = Jar::default();
    let r = jar.send(&srv, Request::get("/account/edit?tab=users"));
    assert_eq!(r.location(), Some("/session/new"));
    assert!(jar.get("_campfire_session").is_some(), "{r:?}");
    let r = jar.send(
        &srv,
        Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "secret123456")]),
    );
    assert_eq!((r.status, r.location()), (302, Some("/account/edit?tab=users")), "{r:?}");
    // Consumed: the next sign-in goes home.
    let r = jar.send(
        &srv,
        Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "secret123456")]),
    );
    assert_eq!(r.location(), Some("/"));
}

/// The spec/03 §4.3 `_campfire_session` vector (SECRET_KEY_BASE=dummy, expiring 2045).
const SESSION_VECTOR: &str = "C48PY3oFz4AemAzmyI73v3BklYVQyB/zaHrz7KXPIKNd3U4QInJ0P9e4gEYGTg2bBTH1f8vQuhkRSYlnVSv1N65BOUATQTOqIbyy9rM1bXcYk85G5IpQjMYQLCNK4OWMcvBAIQ+v9zSZHwsotwGpVYYEvqdelGv51Z+iv3yubignSc3mEcM6cS++fH+n9X8VvN5jnypb+I9CcWnXPxa1aaY+NWlKadv3lNDq6UiA7iQ5aexSqbzPiQWDDsUvDNucMhMNfHl1eURUcgxYy9FsPd2d5hTZNg0MfQiPJmO3VvflJw6NFIYRNSwmEEqAmtljP/is6d7M6Zy2jdPcDOoyIFCAyjYsmhcGd3crgNMFqGYm3VbBrDzB--cfUJfr/L6siLfik5--XyOQmuO1VaWD71WdcIjqIg==";

#[test]
fn a_rails_session_cookie_is_read_and_its_keys_carried_over() {
    let srv = Server::start(&[]);
    // Rails writes the value form-encoded in Set-Cookie; send it the way a browser returns it.
    let mut sent = Vec::new();
    campfire::crypto::cookies::form_escape(SESSION_VECTOR.as_bytes(), &mut sent);
    let sent = String::from_utf8(sent).unwrap();
    // An anonymous visit to a protected page stores the return-to URL in that session.
    let r = srv.send(&Request::get("/account/edit").header("Cookie", &format!("_campfire_session={sent}")));
    assert_eq!(r.location(), Some("/session/new"));
    let mut jar = Jar::default();
    jar.update(&r);
    let value = jar.get("_campfire_session").expect("session rewritten");

    // Decrypt what we wrote with the same key Rails uses: the Rails keys survive, ours is added.
    let keys = campfire::crypto::Keys::derive(b"dummy");
    let mut scratch = campfire::crypto::Scratch::default();
    let now = campfire::crypto::time::now_ms();
    let session = campfire::crypto::cookies::read_session(&keys, value.as_bytes(), now, &mut scratch);
    assert_eq!(session.session_id.as_deref(), Some("5b1c6f0f0c0ad4f8b6b1e3f4a7d9c2e18f3a6b5c4d2e1f0a9b8c7d6e5f4a3b2c"));
    assert_eq!(session.csrf_token.as_deref(), Some("kY7s3Qe0x9bVt2LmN4pR6uW8zA1cE3gI5kM7oQ9sU0w"));
    assert_eq!(session.return_to.as_deref(), Some("/account/edit"));
}
