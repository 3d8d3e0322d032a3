//! `POST /unfurl_link` against the real binary (spec/05 unfurl_links_controller_test and the
//! opengraph model tests, spec/02 §4.30), with a loopback page server. Loopback is private,
//! so these servers run with `CAMPFIRE_UNFURL_ALLOW_PRIVATE=127.0.0.1`, which exempts that one
//! address: the page server also listens on 127.0.0.2, which stays blocked.

mod support;
use std::io::{Read, Write};
use std::net::TcpListener;
use support::*;

const ALLOW: (&str, &str) = ("CAMPFIRE_UNFURL_ALLOW_PRIVATE", "127.0.0.1");

/// Serves the pages below on 127.0.0.1 and 127.0.0.2 (same port); returns the port.
fn page_server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let other = TcpListener::bind(("127.0.0.2", port)).unwrap();
    serve(l, port);
    serve(other, port);
    port
}

fn serve(l: TcpListener, port: u16) {
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { return };
            std::thread::spawn(move || {
                let mut got = Vec::new();
                let mut b = [0u8; 1];
                while !got.ends_with(b"\r\n\r\n") && c.read(&mut b).unwrap_or(0) == 1 {
                    got.push(b[0]);
                }
                let head = String::from_utf8_lossy(&got).into_owned();
                let mut words = head.split(' ');
                let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
                let _ = c.write_all(&answer(port, method, path));
            });
        }
    });
}

fn html(body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

fn redirect(to: &str) -> Vec<u8> {
    format!("HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n").into_bytes()
}

fn answer(port: u16, method: &str, path: &str) -> Vec<u8> {
    let base = format!("http://127.0.0.1:{port}");
    let og = |image: &str| {
        format!(
            r#"<html><head><meta property="og:url" content="{base}/canonical"><meta property="og:title" content="Hey!">
               <meta property="og:description" content="desc.."><meta property="og:image" content="{base}{image}"></head></html>"#
        )
    };
    match (method, path) {
        ("GET", "/page") => html(&og("/image.png")),
        ("GET", "/svg") => html(&og("/image.svg")),
        ("GET", "/no-og") => html("<html><head><title>Plain</title></head></html>"),
        ("GET", "/no-url") => html(r#"<meta property="og:title" content="T"><meta property="og:description" content="D">"#),
        ("GET", "/text") => b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi".to_vec(),
        ("GET", "/forbidden") => b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/html\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ("GET", "/huge") => b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1073741824\r\n\r\n<html>".to_vec(),
        ("GET", "/redirect") => redirect(&format!("{base}/page")),
        ("GET", "/to-private") => redirect(&format!("http://127.0.0.2:{port}/page")),
        ("GET", "/relative") => redirect("/page"),
        ("GET", "/loop") => redirect(&format!("{base}/loop")),
        ("HEAD", "/image.png") => b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 10\r\n\r\n".to_vec(),
        ("HEAD", "/image.svg") => b"HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml\r\nContent-Length: 10\r\n\r\n".to_vec(),
        _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
    }
}

fn unfurl(s: &Seeded, url: &str) -> Response {
    let mut body = Vec::new();
    campfire::crypto::json::write_string(url.as_bytes(), &mut body);
    let body = format!("{{\"url\":{}}}", String::from_utf8(body).unwrap());
    s.srv.send(
        &Request { method: "POST", path: "/unfurl_link".into(), headers: vec![("Content-Type".into(), "application/json".into())], body: body.into_bytes() }
            .cookies(&s.jar(DAVID))
            .header("X-Requested-With", "XMLHttpRequest"),
    )
}

#[test]
fn a_page_with_opengraph_tags_unfurls() {
    let s = start_with(&[ALLOW]);
    let port = page_server();
    let r = unfurl(&s, &format!("http://127.0.0.1:{port}/page"));
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("content-type").is_some_and(|t| t.starts_with("application/json")));
    assert_eq!(
        r.body,
        format!(r#"{{"title":"Hey!","url":"http://127.0.0.1:{port}/canonical","image":"http://127.0.0.1:{port}/image.png","description":"desc.."}}"#)
    );
    // Redirects to absolute URLs are followed; the answer is the same page's.
    let r = unfurl(&s, &format!("http://127.0.0.1:{port}/redirect"));
    assert_eq!((r.status, r.body.contains(r#""title":"Hey!""#)), (200, true), "{}", r.body);
    // No og:url (or one that is not a valid public URL): the URL sent is the URL answered.
    let sent = format!("http://127.0.0.1:{port}/no-url");
    let r = unfurl(&s, &sent);
    assert_eq!(r.body, format!(r#"{{"title":"T","url":"{sent}","image":null,"description":"D"}}"#));
    // An SVG image is not shown.
    let r = unfurl(&s, &format!("http://127.0.0.1:{port}/svg"));
    assert!(r.body.contains(r#""image":null"#), "{}", r.body);
    // A form field works as well as JSON.
    let r = s.post(DAVID, "/unfurl_link", &[("url", &format!("http://127.0.0.1:{port}/page"))]);
    assert_eq!(r.status, 200);
}

#[test]
fn no_preview_is_204() {
    let s = start_with(&[ALLOW]);
    let port = page_server();
    for path in ["/no-og", "/text", "/forbidden", "/huge", "/relative", "/loop", "/missing", "/video.mp4"] {
        let r = unfurl(&s, &format!("http://127.0.0.1:{port}{path}"));
        assert_eq!((r.status, r.body.as_str()), (204, ""), "{path}");
    }
    // The redirect target is resolved and checked again: 127.0.0.2 is not exempt.
    assert_eq!(unfurl(&s, &format!("http://127.0.0.2:{port}/page")).status, 204, "blocked directly");
    assert_eq!(unfurl(&s, &format!("http://127.0.0.1:{port}/to-private")).status, 204, "blocked after a redirect");
    assert_eq!(unfurl(&s, &format!("http://localhost:{port}/to-private")).status, 204);
    for bad in ["ftp://example.com/", "httpfake", "~/etc/password"] {
        assert_eq!(unfurl(&s, bad).status, 204, "{bad}");
    }
}

#[test]
fn private_addresses_are_never_fetched_without_the_override() {
    let s = start();
    let port = page_server();
    assert_eq!(unfurl(&s, &format!("http://127.0.0.1:{port}/page")).status, 204);
    assert_eq!(unfurl(&s, &format!("http://localhost:{port}/page")).status, 204, "a name resolving to loopback");
    assert_eq!(unfurl(&s, &format!("http://[::ffff:127.0.0.1]:{port}/page")).status, 204);
}

#[test]
fn a_missing_or_blank_url_is_400() {
    let s = start();
    assert_eq!(s.post(DAVID, "/unfurl_link", &[]).status, 400);
    assert_eq!(s.post(DAVID, "/unfurl_link", &[("url", "  ")]).status, 400);
    assert_eq!(unfurl(&s, "").status, 400);
    assert_eq!(s.srv.send(&Request::post_form("/unfurl_link", &[("url", "http://example.com")])).status, 302, "signed out");
}
