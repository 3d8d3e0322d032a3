//! Routes only the integration tests use, enabled by `CAMPFIRE_TEST_ROUTES=1`
//! (`Config::test_routes`): `POST /__echo` answers the body's length and first bytes (framing
//! tests), `GET /__park?ms=N` parks the connection and resumes it from another thread after N ms
//! (park/resume and drain tests). Outside the application chain, like `/up`.

use super::{Ctx, Flow};
use crate::http::{Method, Request, Response};
use crate::server::Call;

/// Answers `req` if it is a test route.
pub fn handle(req: &Request, res: &mut Response, call: &mut Call<Ctx>) -> Option<Flow> {
    match (req.method, req.path) {
        (Method::Post, b"/__echo") => {
            echo(req, res);
            Some(Flow::Done)
        }
        (Method::Get, b"/__park") => Some(park(req, res, call)),
        _ => None,
    }
}

fn echo(req: &Request, res: &mut Response) {
    res.header("Content-Type", b"text/plain");
    let b = res.body();
    crate::http::response::push_u64(b, req.body.len() as u64);
    b.push(b' ');
    b.extend_from_slice(&req.body[..req.body.len().min(64)]);
}

fn park(req: &Request, res: &mut Response, call: &mut Call<Ctx>) -> Flow {
    let ms = std::str::from_utf8(req.query)
        .ok()
        .and_then(|q| q.strip_prefix("ms="))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(10)
        .min(10_000);
    let parker = call.park();
    let spawned = std::thread::Builder::new().spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(ms));
        parker.resume(move |_cx, res| {
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
