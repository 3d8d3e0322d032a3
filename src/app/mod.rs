//! The application: routes a request to the controller function that answers it. For now only
//! the health check (Rails' `rails/health#show` at `/up`) and, with CAMPFIRE_TEST_ROUTES=1, two
//! routes the integration tests use. The controllers (one file per Rails controller) and the
//! per-loop context (read-only database connection, writer handle) are added here.

use crate::config::Config;
use crate::http::{Method, Request, Response};
use crate::server::{Call, Flow, Handler};

/// One per loop thread.
pub struct App {
    test_routes: bool,
}

impl App {
    /// Builds loop `_loop_index`'s application state.
    pub fn new(cfg: &Config, _loop_index: usize) -> App {
        App { test_routes: cfg.test_routes }
    }
}

const UP_PAGE: &[u8] = b"<!DOCTYPE html><html><head><title>campfire-room</title></head>\
<body style=\"background-color: green\"></body></html>\n";

impl Handler for App {
    fn handle(&mut self, req: &Request, res: &mut Response, cx: &mut Call<Self>) -> Flow {
        match (req.method, req.path) {
            (Method::Get | Method::Head, b"/up") => up(res),
            (Method::Post, b"/__echo") if self.test_routes => echo(req, res),
            (Method::Get, b"/__park") if self.test_routes => return park(req, res, cx),
            _ => not_found(res),
        }
        Flow::Done
    }
}

/// GET /up: 200 with a green page while the process serves requests.
fn up(res: &mut Response) {
    res.header("Content-Type", b"text/html; charset=utf-8");
    res.header("Cache-Control", b"no-store");
    res.set_static_body(UP_PAGE);
}

fn not_found(res: &mut Response) {
    res.status(404);
    res.header("Content-Type", b"text/plain; charset=utf-8");
    res.set_static_body(b"Not Found\n");
}

/// Test route: answers with the length of the (de-chunked) body and its first bytes.
fn echo(req: &Request, res: &mut Response) {
    res.header("Content-Type", b"text/plain");
    let b = res.body();
    crate::http::response::push_u64(b, req.body.len() as u64);
    b.push(b' ');
    b.extend_from_slice(&req.body[..req.body.len().min(64)]);
}

/// Test route: parks the connection and resumes it from another thread after `?ms=N`
/// milliseconds (default 10), proving the loop keeps serving others meanwhile.
fn park(req: &Request, res: &mut Response, cx: &mut Call<App>) -> Flow {
    let ms = std::str::from_utf8(req.query)
        .ok()
        .and_then(|q| q.strip_prefix("ms="))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(10)
        .min(10_000);
    let parker = cx.park();
    let spawned = std::thread::Builder::new().spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        parker.resume(move |_app, res| {
            res.header("Content-Type", b"text/plain");
            res.body().extend_from_slice(format!("parked {ms}ms\n").as_bytes());
        });
    });
    if spawned.is_err() {
        // The Parker was dropped with the closure: the loop answers 500.
        res.status(500);
    }
    Flow::Parked
}
