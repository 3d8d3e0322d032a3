//! Forgery protection by Fetch Metadata (issue 3 acceptance 5, design §6): a cross-site form
//! POST is refused with 422 and changes nothing; the same request same-origin succeeds.
//! Without Fetch Metadata the Origin header decides; requests with neither pass.

mod auth_support;
use auth_support::*;

fn sign_in_request() -> Request {
    Request::post_form("/session", &[("email_address", "ada@example.com"), ("password", "secret123456")])
}

#[test]
fn cross_site_post_is_422_and_same_origin_succeeds() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let sessions = || srv.query_int("SELECT count(*) FROM sessions");
    let before = sessions();

    let cross = srv.send(&sign_in_request().header("Sec-Fetch-Site", "cross-site").header("Origin", "https://evil.example"));
    assert_eq!(cross.status, 422, "{cross:?}");
    assert!(cross.body.contains("<html"), "the static 422 page");
    assert!(cross.set_cookies().is_empty());
    assert_eq!(sessions(), before);

    let same = srv.send(&sign_in_request());
    assert_eq!((same.status, same.location()), (302, Some("/")), "{same:?}");
    assert_eq!(sessions(), before + 1);
}

#[test]
fn origin_decides_without_fetch_metadata() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let host = format!("http://127.0.0.1:{}", srv.port);
    let plain = sign_in_request().without("Sec-Fetch-Site");
    assert_eq!(srv.send(&plain.clone().header("Origin", "https://evil.example")).status, 422);
    assert_eq!(srv.send(&plain.clone().header("Origin", "null")).status, 422);
    assert_eq!(srv.send(&plain.clone().header("Origin", &host)).status, 302);
    // No Origin and no Fetch Metadata: not a browser riding someone's cookies.
    assert_eq!(srv.send(&plain).status, 302);
    // same-site (a sibling subdomain) needs a matching Origin.
    let sibling = sign_in_request().header("Sec-Fetch-Site", "same-site");
    assert_eq!(srv.send(&sibling.clone().header("Origin", "https://other.127.0.0.1")).status, 422);
    assert_eq!(srv.send(&sibling.header("Origin", &host)).status, 302);
}

#[test]
fn cross_site_delete_of_the_session_is_refused() {
    let srv = Server::start(&[]);
    let mut jar = first_run(&srv);
    let r = jar.send(&srv, Request::post_form("/session", &[("_method", "delete")]).header("Sec-Fetch-Site", "cross-site"));
    assert_eq!(r.status, 422);
    assert_eq!(srv.query_int("SELECT count(*) FROM sessions"), 1);
    let r = jar.send(&srv, Request::post_form("/session", &[("_method", "delete")]));
    assert_eq!((r.status, r.location()), (302, Some("/")));
    assert_eq!(srv.query_int("SELECT count(*) FROM sessions"), 0);
    assert!(jar.get("session_token").is_none());
}

#[test]
fn get_requests_are_never_checked() {
    let srv = Server::start(&[]);
    let r = srv.send(&Request::get("/session/new").header("Sec-Fetch-Site", "cross-site"));
    assert_eq!(r.location(), Some("/first_run"));
    // Its twin: the same cross-site header on a POST to the same server is refused, so the GET
    // above passed because GETs are exempt, not because nothing is checked.
    let post = srv.send(&Request::post_form("/first_run", &[]).header("Sec-Fetch-Site", "cross-site"));
    assert_eq!(post.status, 422, "{post:?}");
}
