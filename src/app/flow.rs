//! Parking: how an action hands work to the writer or the worker and finishes its response
//! later, back on its loop (design §2, docs/architecture.md "The handler contract").
//!
//! `Req::ticket` parks the connection and returns a `Ticket`, which is `Send` and travels
//! with the work: to the writer (`Ctx::write`), to the worker (`Ctx::work`), or through both
//! (a sign-in verifies the password on the worker, then the worker submits the new session to
//! the writer). `Ticket::finish` queues the closure that fills the response on the loop, with
//! the default headers added and an `Err` rendered like any other error. A ticket dropped
//! without `finish` (a full worker queue, a task that bailed out) answers 503, so no client is
//! left hanging and overload reads as overload.

use super::{cookies, errors, gates, AppError, Ctx, Flow, Req};
use crate::crypto::cookies::Session;
use crate::db::{self, Conn, Job};
use crate::http::Response;
use crate::server::Parker;

/// A parked request's way back to its loop.
pub struct Ticket {
    parker: Option<Parker<Ctx>>,
    route: &'static str,
    json: bool,
    /// The Rails session, when the action changed it before parking.
    session: Option<Session>,
    /// The request was HTTPS (`Ctx::https` is set back to it when the response is filled).
    https: bool,
}

impl Ticket {
    pub(super) fn new(parker: Parker<Ctx>, route: &'static str, json: bool, session: Option<Session>, https: bool) -> Ticket {
        Ticket { parker: Some(parker), route, json, session, https }
    }

    /// Fills the parked response: `fill` runs on the connection's loop thread with that loop's
    /// `Ctx`. Callable from any thread.
    pub fn finish(mut self, fill: impl FnOnce(&mut Ctx, &mut Response) -> Result<(), AppError> + Send + 'static) {
        if let Some(parker) = self.parker.take() {
            let (route, json, https, mut session) = (self.route, self.json, self.https, self.session.take());
            parker.resume(move |cx: &mut Ctx, res: &mut Response| {
                resumed(cx, res, route, json, https, |cx, res| {
                    fill(cx, res)?;
                    if let Some(session) = session.as_mut() {
                        cookies::write_session(cx, res, session);
                    }
                    Ok(())
                })
            });
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(parker) = self.parker.take() {
            let (route, json, https) = (self.route, self.json, self.https);
            parker.resume(move |cx: &mut Ctx, res: &mut Response| {
                resumed(cx, res, route, json, https, |_, _| Err(AppError::Busy))
            });
        }
    }
}

/// The common end of every resumed response: default headers, the fill, errors.
fn resumed(
    cx: &mut Ctx,
    res: &mut Response,
    route: &'static str,
    json: bool,
    https: bool,
    fill: impl FnOnce(&mut Ctx, &mut Response) -> Result<(), AppError>,
) {
    cx.https = https;
    gates::default_headers(cx, res);
    gates::version_headers(cx, res);
    // One read transaction for the fill's queries, as `Ctx::handle` opens for a request's:
    // each statement on its own took and dropped the WAL read lock (two fcntl calls; a post's
    // fill made six pairs before it learned to read nothing, `message_view::Written`). None
    // opens if the fill runs no statement.
    cx.db.begin_lazily();
    let filled = fill(cx, res);
    if let Err(e) = cx.db.end_lazy() {
        eprintln!("app: ending the read transaction failed: {e}");
    }
    match filled {
        Ok(()) => gates::cache_headers(res),
        Err(e) => errors::render(&e, route, json, res),
    }
}

impl Ctx {
    /// Runs `work` on the writer thread (inside the group transaction, in its own savepoint)
    /// and parks the connection. When the transaction has committed (`Ok`) or the work failed
    /// (`Err`), `then` runs back on this loop to fill the response.
    pub fn write<T: Send + 'static>(
        &mut self,
        rq: &mut Req<'_, '_>,
        work: impl FnOnce(&Conn) -> db::Result<T> + Send + 'static,
        then: impl FnOnce(&mut Ctx, &mut Response, db::Result<T>) -> Result<(), AppError> + Send + 'static,
    ) -> Result<Flow, AppError> {
        let ticket = rq.ticket();
        self.outbox.submit(Job::new(work, move |result| ticket.finish(move |cx, res| then(cx, res, result))));
        Ok(Flow::Parked)
    }

    /// Runs `task` on the worker pool (bcrypt and other slow work) and parks the connection;
    /// `then` gets the task's result back on this loop. When the pool's queue is full the
    /// request is answered 503.
    pub fn work<T: Send + 'static>(
        &mut self,
        rq: &mut Req<'_, '_>,
        task: impl FnOnce() -> T + Send + 'static,
        then: impl FnOnce(&mut Ctx, &mut Response, T) -> Result<(), AppError> + Send + 'static,
    ) -> Result<Flow, AppError> {
        let ticket = rq.ticket();
        let route = rq.route.name;
        if !self.worker.submit(move || {
            let value = task();
            ticket.finish(move |cx, res| then(cx, res, value));
        }) {
            eprintln!("app: {route}: worker queue full, answering 503");
        }
        Ok(Flow::Parked)
    }
}
