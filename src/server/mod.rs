//! The server: N event-loop threads, each with its own epoll, its own SO_REUSEPORT listener on
//! the shared port, its own connection slab and its own handler value (so handlers keep
//! per-loop state such as a read-only database connection without locks).
//!
//! A handler runs to completion on the loop. When it must wait for another thread (the database
//! writer, the bcrypt worker) it parks the connection with `Call::park` and returns
//! `Flow::Parked`; the `Parker` travels to that thread, whose `resume` queues a closure back to
//! the loop (a mutex-protected Vec and an eventfd). The loop runs the closure on its own thread to
//! fill the response, writes it, and goes on with any pipelined requests behind it.

mod access_log;
mod completion;
mod conn;
mod event_loop;
mod redirect;
mod tls_records;
mod transport;
pub mod websocket;

pub use completion::Parker;
pub use websocket::{Address, Mail, Mailbox, Ws};

use crate::arena::Arena;
use crate::config::Config;
use crate::http::{Request, Response};
use crate::sys;
use redirect::Redirect;
use crate::tls::Tls;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What the handler did with the request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The response is complete; the loop sends it now.
    Done,
    /// The handler called `Call::park`; the response is filled later by `Parker::resume`.
    Parked,
}

/// An application: one value per loop thread, built on that thread by `run`'s `make`.
pub trait Handler: Sized + 'static {
    /// What the handler keeps per WebSocket (`()` for handlers that never upgrade).
    type Socket: 'static;

    /// Answers `req` by filling `res` (status 200 and an empty body unless set). `cx` gives the
    /// per-request arena and the means to park or to upgrade to a WebSocket.
    fn handle(&mut self, req: &Request, res: &mut Response, cx: &mut Call<Self>) -> Flow;

    /// A socket accepted by `Call::upgrade` is open (its 101 is queued). Frames sent here go
    /// out right after the 101.
    fn ws_open(&mut self, _ws: &mut Ws<Self>) {}

    /// One complete text (or binary) message arrived on a socket.
    fn ws_text(&mut self, _ws: &mut Ws<Self>, _text: &[u8]) {}

    /// The socket is gone (either side closed, or it was dropped); last look at its state.
    fn ws_closed(&mut self, _state: Self::Socket) {}

    /// Every `websocket::PING_MS` on each loop with sockets: fill `payload` (empty on entry)
    /// with the text of a frame to send to every open socket, or leave it empty to send none.
    fn ws_heartbeat(&mut self, _payload: &mut Vec<u8>) {}

    /// Whether the handler holds work gathered in earlier turns (jobs for a writer thread, say)
    /// that `turn_end` would send.
    fn holds_work(&self) -> bool {
        false
    }

    /// The loop is about to wait for events and none is ready at once (or it will not hold the
    /// work longer): what the handler gathered can leave now.
    fn turn_end(&mut self) {}
}

/// The loop's side of one handler call.
pub struct Call<'l, H: Handler> {
    /// Scratch memory for this request, reset after its response.
    pub arena: &'l mut Arena,
    queue: &'l Arc<completion::Queue<H>>,
    token: u64,
    parked: bool,
    /// The socket state from `upgrade`, and whether permessage-deflate was accepted.
    upgrade: Option<(H::Socket, bool)>,
}

impl<H: Handler> Call<'_, H> {
    /// Parks the connection: no response is sent when the handler returns; instead the returned
    /// `Parker` (Send, 'static) must be resumed, from any thread. Dropping it unresumed answers
    /// 500 so the client is never left hanging. Call at most once per request.
    pub fn park(&mut self) -> Parker<H> {
        self.parked = true;
        Parker::new(self.queue.clone(), self.token)
    }

    /// Accepts `req` as a WebSocket handshake: fills `res` with the 101 (selecting `protocol`
    /// when given) and, once that is sent, the connection becomes a socket whose state is
    /// `socket` and whose messages go to `Handler::ws_text`. permessage-deflate is accepted
    /// (without context takeover) when offered. Refused (nothing changed) when `req` is not a
    /// valid version-13 upgrade; answer it some other way then.
    pub fn upgrade(
        &mut self,
        req: &Request,
        res: &mut Response,
        protocol: Option<&[u8]>,
        socket: H::Socket,
    ) -> Result<(), crate::http::websocket::NotWebSocket> {
        let accept = crate::http::websocket::handshake(req)?;
        res.status(101);
        res.header("Upgrade", b"websocket");
        res.header("Connection", b"Upgrade");
        res.header("Sec-WebSocket-Accept", &accept);
        if let Some(p) = protocol {
            res.header("Sec-WebSocket-Protocol", p);
        }
        let deflate = crate::http::websocket::deflate_offered(req);
        if deflate {
            res.header("Sec-WebSocket-Extensions", crate::http::websocket::DEFLATE_RESPONSE);
        }
        self.upgrade = Some((socket, deflate));
        Ok(())
    }

    /// Which loop (0-based) runs this call.
    pub fn loop_index(&self) -> usize {
        self.queue.loop_index
    }
}

/// Stops every loop: they stop accepting, finish in-flight requests (up to the drain timeout),
/// close idle connections and return.
pub struct Stop {
    flag: AtomicBool,
    bells: std::sync::Mutex<Vec<Arc<sys::eventfd::EventFd>>>,
}

impl Stop {
    fn new() -> Stop {
        Stop { flag: AtomicBool::new(false), bells: std::sync::Mutex::new(Vec::new()) }
    }

    fn requested(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// Asks all loops to drain and exit; returns at once.
    pub fn trigger(&self) {
        self.flag.store(true, Ordering::Release);
        if let Ok(bells) = self.bells.lock() {
            bells.iter().for_each(|b| b.ring());
        }
    }
}

/// Runs the server until SIGTERM or SIGINT, then drains and returns Ok. `make(i)` builds loop
/// `i`'s handler on that loop's thread. Must be called before any other thread is started
/// (the stop signals are blocked here and the mask is inherited). With `tls`, SIGHUP reloads
/// the operator's certificate.
pub fn run<H: Handler>(cfg: &Config, tls: Option<&Arc<Tls>>, make: impl Fn(usize) -> H + Sync) -> std::io::Result<()> {
    sys::signal::block_stop_signals()?;
    serve(cfg, tls, make, |_port, stop| loop {
        let sig = sys::signal::wait_stop_signal();
        if sig == libc::SIGHUP {
            match tls.map(|t| t.reload()) {
                Some(Ok(what)) => eprintln!("campfire-room: SIGHUP: {what}"),
                Some(Err(e)) => eprintln!("campfire-room: SIGHUP: {e}; still serving the previous certificate"),
                None => eprintln!("campfire-room: SIGHUP: no TLS certificate to reload"),
            }
            continue;
        }
        eprintln!("campfire-room: signal {sig}, draining");
        stop.trigger();
        return;
    })
}

/// Runs the loops, calls `until(port, stop)` on the calling thread (it returns once it has
/// triggered `stop`, or right away if it arranged for someone else to), then waits for the loops
/// to finish. `port` is the bound port (useful when `cfg.port` is 0). Used by `run` and tests.
///
/// With `tls`, the loops listen on HTTPS_PORT and speak TLS, and one more loop serves the plain
/// HTTP_PORT: ACME challenges and redirects (`redirect`).
pub fn serve<H: Handler>(
    cfg: &Config,
    tls: Option<&Arc<Tls>>,
    make: impl Fn(usize) -> H + Sync,
    until: impl FnOnce(u16, &Arc<Stop>),
) -> std::io::Result<()> {
    sys::signal::ignore_sigpipe();
    let backlog = sys::net::somaxconn();
    let port = tls.map_or(cfg.port, |t| t.settings.https_port);
    let first = sys::net::listen(port, backlog)?;
    let port = sys::net::local_port(&first)?;
    let mut listeners = vec![first];
    for _ in 1..cfg.loops.max(1) {
        listeners.push(sys::net::listen(port, backlog)?);
    }
    let stop = Arc::new(Stop::new());
    let mut loops = Vec::new();
    let server_config = tls.map(|t| t.config.clone());
    // Every loop counts the output its blocked connections hold here (CAMPFIRE_OUT_BUDGET).
    let held = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for (i, listener) in listeners.into_iter().enumerate() {
        let lp = event_loop::Setup::new(i, listener, cfg, server_config.clone(), held.clone())?;
        if let Ok(mut bells) = stop.bells.lock() {
            bells.push(lp.bell());
        }
        loops.push(lp);
    }
    let redirect = match tls {
        Some(t) => {
            let listener = sys::net::listen(t.settings.http_port, backlog)?;
            let lp = event_loop::Setup::<Redirect>::new(loops.len(), listener, cfg, None, held.clone())?;
            if let Ok(mut bells) = stop.bells.lock() {
                bells.push(lp.bell());
            }
            if matches!(t.settings.source, crate::tls::settings::Source::Acme { .. }) {
                // Now that HTTP_PORT is listening, the ACME server can reach its challenges.
                crate::acme::start(t.clone())?;
            }
            Some((lp, t.clone()))
        }
        None => None,
    };
    let make = &make;
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        if let Some((lp, t)) = redirect {
            let st = stop.clone();
            // Its own thread and handler: the application never sees a plain request.
            let spawned = std::thread::Builder::new().name("loop-http".into()).spawn_scoped(s, move || {
                if let Err(e) = lp.run(Redirect { tls: t }, &st) {
                    eprintln!("campfire-room: HTTP_PORT loop failed: {e}");
                    std::process::exit(1);
                }
            });
            if let Err(e) = spawned {
                stop.trigger();
                return Err(e);
            }
        }
        for lp in loops {
            let st = stop.clone();
            let name = format!("loop-{}", lp.index());
            let h = std::thread::Builder::new().name(name).spawn_scoped(s, move || {
                let index = lp.index();
                let handler = make(index);
                let result = lp.run(handler, &st);
                if let Err(e) = &result {
                    // Only epoll itself failing gets here; a process serving on fewer loops
                    // than configured, silently, would be worse than a restart.
                    eprintln!("campfire-room: loop {index} failed: {e}");
                    std::process::exit(1);
                }
                result
            });
            match h {
                Ok(h) => handles.push(h),
                Err(e) => {
                    stop.trigger();
                    return Err(e);
                }
            }
        }
        until(port, &stop);
        let mut result = Ok(());
        for h in handles {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = Err(e),
                Err(_) => result = Err(std::io::Error::other("loop thread panicked")),
            }
        }
        result
    })
}

#[cfg(test)]
mod tests;
