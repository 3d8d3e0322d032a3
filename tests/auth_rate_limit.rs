//! The sign-in rate limit (spec/02 §4.3): 10 attempts per 3 minutes per client address,
//! counted whether they succeed or not; the 11th gets the sign-in page with 429 and the alert.
//! Addresses come from X-Forwarded-For behind a local proxy (spec/03 §9).

mod auth_support;
use auth_support::*;

#[test]
fn eleventh_attempt_from_one_address_is_429() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let attempt = |ip: &str, password: &str| {
        srv.send(
            &Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", password)])
                .header("X-Forwarded-For", ip),
        )
    };
    for i in 0..10 {
        let password = if i == 3 { "secret123456" } else { "wrong" };
        let r = attempt("203.0.113.7", password);
        assert_eq!(r.status, if i == 3 { 302 } else { 401 }, "attempt {i}: {r:?}");
    }
    let limited = attempt("203.0.113.7", "secret123456");
    assert_eq!(limited.status, 429, "{limited:?}");
    assert!(limited.body.contains("Too many requests or unauthorized."));
    assert!(limited.set_cookies().is_empty(), "no session for a limited attempt");
    // Another address has its own budget.
    assert_eq!(attempt("203.0.113.8", "secret123456").status, 302);
}

#[test]
fn wrong_password_is_401_with_the_alert_and_no_cookie() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let r = srv.send(&Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "nope")]));
    assert_eq!(r.status, 401);
    assert!(r.body.contains("Too many requests or unauthorized."), "{}", r.body);
    assert!(r.body.contains("value=\"ada@example.com\""), "e-mail kept in the form");
    assert!(r.set_cookies().iter().all(|c| !c.starts_with("session_token")));
    // E-mail is matched exactly (case-sensitive, as Rails).
    let r = srv.send(&Request::post_form("/session", &[("email_address", "Ada@example.com"), ("password", "secret123456")]));
    assert_eq!(r.status, 401);
    let r = srv.send(&Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "")]));
    assert_eq!(r.status, 401);
}
