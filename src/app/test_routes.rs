//! Routes only the integration tests use, enabled by `CAMPFIRE_TEST_ROUTES=1`
//! (`Config::test_routes`): `POST /__echo` answers the body's length and first bytes (framing
//! tests), `GET /__park?ms=N` parks the connection and resumes it from another thread after N ms
//! (park/resume and drain tests), `POST /__cable/broadcast?stream=S[&count=N]` broadcasts the
//! body as the message JSON on stream S (N times, `{i}` in the body replaced by 0..N-1), `POST /__cable/remove_membership?user_id=U&room_id=R` deletes that
//! membership through the writer and then calls `cable::membership_removed` (cable tests, until
//! the rooms controllers do it), `GET /__cache` answers this loop's response-cache counters as
//! `hits=H misses=M entries=E bytes=B` (so a cache test can tell a hit from a fresh render).
//! Outside the application chain, like `/up`.

use super::{Ctx, Flow};
use crate::http::{Method, Request, Response};
use crate::server::Call;

/// Answers `req` if it is a test route.
pub fn handle(cx: &mut Ctx, req: &Request, res: &mut Response, call: &mut Call<Ctx>) -> Option<Flow> {
    match (req.method, req.path) {
        (Method::Post, b"/__echo") => {
            echo(req, res);
            Some(Flow::Done)
        }
        (Method::Get, b"/__park") => Some(park(req, res, call)),
        (Method::Post, b"/__cable/broadcast") => {
            let stream = query_value(req.query, "stream").unwrap_or_default();
            match query_value(req.query, "count").and_then(|n| n.parse::<usize>().ok()) {
                None => crate::app::cable::broadcast(&stream, req.body),
                Some(n) => {
                    let body = String::from_utf8_lossy(req.body);
                    for i in 0..n.min(10_000) {
                        crate::app::cable::broadcast(&stream, body.replace("{i}", &i.to_string()).as_bytes());
                    }
                }
            }
            Some(Flow::Done)
        }
        (Method::Post, b"/__cable/remove_membership") => Some(remove_membership(cx, req, res, call)),
        (Method::Get, b"/__cache") => {
            let (hits, misses, entries, bytes) = cx.cache.stats();
            res.header("Content-Type", b"text/plain");
            res.body().extend_from_slice(format!("hits={hits} misses={misses} entries={entries} bytes={bytes}").as_bytes());
            Some(Flow::Done)
        }
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

/// The decoded value of `name` in a query string.
fn query_value(query: &[u8], name: &str) -> Option<String> {
    query.split(|&b| b == b'&').find_map(|pair| {
        let (k, v) = pair.split_at(pair.iter().position(|&b| b == b'=')?);
        if k != name.as_bytes() {
            return None;
        }
        let mut out = Vec::new();
        crate::http::url::percent_decode_into(&v[1..], true, &mut out);
        String::from_utf8(out).ok()
    })
}

fn remove_membership(cx: &mut Ctx, req: &Request, res: &mut Response, call: &mut Call<Ctx>) -> Flow {
    let id = |n| query_value(req.query, n).and_then(|v| v.parse::<i64>().ok());
    let (Some(user_id), Some(room_id)) = (id("user_id"), id("room_id")) else {
        res.status(400);
        return Flow::Done;
    };
    let parker = call.park();
    cx.outbox.submit(crate::db::writer::Job::new(
        move |c| crate::db::memberships::revoke(c, room_id, &[user_id]),
        move |r| {
            if r.is_ok() {
                crate::app::cable::membership_removed(user_id, room_id);
            }
            parker.resume(move |_cx, res| res.status(if r.is_ok() { 204 } else { 500 }));
        },
    ));
    Flow::Parked
}
