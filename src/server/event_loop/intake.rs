//! HTTP intake: the request at the front of a connection's buffer is parsed, its body awaited
//! (or spooled to disk), the handler run, and the response framed and queued.

use super::*;

impl<H: Handler> Loop<H> {
    /// Parses the request at the front of the buffer and, when it is complete, runs it.
    pub(super) fn next_request(&mut self, idx: usize) -> Next {
        let tok = match self.slots.get(idx) {
            Some(s) => token(idx, s.gen),
            None => return Next::NeedMore,
        };
        let draining = self.draining;
        let now = self.now;
        let Loop { slots, handler, res, arena, queue, limits, log, spool_dir, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        if !c.has_input() {
            return Next::NeedMore;
        }
        if let Mode::Spooling(sp) = &mut c.mode {
            // An upload being spooled: the buffer holds more of its body.
            let fed = sp.feed(&c.buf[c.start..c.end]);
            let n = match fed {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("server: an upload's spool write failed: {e}");
                    c.mode = Mode::Requests;
                    return self.refuse(idx, spool_refusal(&e, "upload spool write failed"));
                }
            };
            c.start += n;
            if sp.progress >= spool::PROGRESS_BYTES {
                // Enough progress to deserve another request-timeout window.
                sp.progress = 0;
                c.partial_since = now;
            }
            if !sp.complete() {
                return Next::NeedMore;
            }
            let Some((head_bytes, body)) = c.take_spool().map(|sp| sp.finish()) else {
                return self.refuse(idx, ParseError::Unavailable("upload spool lost"));
            };
            let mut headers = [Header::EMPTY; HEADER_SLOTS];
            let ran = match parse_head(&head_bytes, limits, &mut headers) {
                // The body stays on disk: the handler reads it from `spooled` in pieces.
                Ok(Some(head)) => dispatch(&head, b"", Some(&body), (c.peer, c.tls), handler, res, arena, queue, tok, log),
                _ => return self.refuse(idx, ParseError::Bad("spooled head changed")),
            };
            return self.after_dispatch(idx, ran, draining);
        }
        // Clearing the full header array costs more than parsing a typical head: parse into
        // a small one first, and only a head with more fields than that uses the full one.
        let mut few = [Header::EMPTY; FEW_HEADERS];
        let mut many;
        let data = &c.buf[c.start..c.end];
        let parsed = match parse_head(data, limits, &mut few) {
            Err(ParseError::HeadersTooLarge) if limits.max_headers > FEW_HEADERS => {
                many = [Header::EMPTY; HEADER_SLOTS];
                parse_head(data, limits, &mut many)
            }
            other => other,
        };
        let (ran, consumed) = match parsed {
            Ok(None) => return Next::NeedMore,
            Err(e) => return self.refuse(idx, e),
            Ok(Some(head)) => match head.framing {
                Framing::None => {
                    let ran = dispatch(&head, b"", None, (c.peer, c.tls), handler, res, arena, queue, tok, log);
                    (ran, head.len)
                }
                Framing::Length(n) => {
                    let Some(body) = data.get(head.len..head.len + n) else {
                        let expect = head.expect_continue;
                        if n >= spool::SPOOL_MIN && is_multipart(&head) {
                            // Too big to buffer: the rest goes to disk as it arrives.
                            let head_len = head.len;
                            let started = Spool::create(spool_dir, &data[..head_len], n).and_then(|mut sp| {
                                let got = sp.feed(&data[head_len..])?;
                                Ok((sp, got))
                            });
                            match started {
                                Ok((sp, got)) => {
                                    c.start += head_len + got;
                                    c.mode = Mode::Spooling(Box::new(sp));
                                }
                                Err(e) => {
                                    eprintln!("server: cannot spool an upload to {}: {e}", spool_dir.display());
                                    return self.refuse(idx, spool_refusal(&e, "upload spool unavailable"));
                                }
                            }
                        }
                        return self.await_body(idx, expect);
                    };
                    let ran = dispatch(&head, body, None, (c.peer, c.tls), handler, res, arena, queue, tok, log);
                    (ran, head.len + n)
                }
                Framing::Chunked => {
                    let (hl, expect) = (head.len, head.expect_continue);
                    match chunked::scan(&data[hl..], limits) {
                        Err(e) => return self.refuse(idx, e),
                        Ok(None) => return self.await_body(idx, expect),
                        Ok(Some((raw, _))) => {
                            let start = c.start;
                            let blen = chunked::dechunk_in_place(&mut c.buf[start + hl..start + hl + raw]);
                            match dispatch_dechunked(c, hl, blen, limits, handler, res, arena, queue, tok, log) {
                                Some(ran) => (ran, hl + raw),
                                None => return self.refuse(idx, ParseError::Bad("chunked head changed")),
                            }
                        }
                    }
                }
            },
        };
        c.start += consumed;
        self.after_dispatch(idx, ran, draining)
    }

    /// After a request ran: park the connection or queue the response, then reset the
    /// per-request state (and start a WebSocket when the handler upgraded).
    pub(super) fn after_dispatch(&mut self, idx: usize, ran: Ran<H::Socket>, draining: bool) -> Next {
        let Loop { slots, res, arena, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        c.partial_since = if c.has_input() { self.now } else { 0 };
        c.continue_sent = false;
        let mut upgraded = None;
        match ran.parked {
            // Whatever the handler wrote before parking is dropped: `resume` fills a fresh one.
            Some(p) => c.mode = Mode::Parked(p),
            None => {
                let keep = ran.keep_alive && !draining && !res.wants_close();
                if ran.upgrade.is_some() && !keep {
                    // Draining (or a handler asking to close): no socket can start now.
                    res.reset();
                    res.status(503);
                    res.header("Retry-After", b"1");
                }
                respond(c, res, &mut self.head, ran.method == Method::Head, ran.http10, keep, self.now);
                if keep {
                    upgraded = ran.upgrade;
                }
            }
        }
        res.reset();
        arena.reset();
        debug_assert!(res.body_bytes().is_empty() && res.code() == 200, "the next request starts from a fresh response");
        if let Some((state, deflate)) = upgraded {
            self.ws_start(idx, state, deflate);
        }
        Next::Served
    }

    /// The head is complete but the body is not: say `100 Continue` once if asked, and wait.
    pub(super) fn await_body(&mut self, idx: usize, expect: bool) -> Next {
        let now = self.now;
        if let Some(c) = self.conn_mut(idx) {
            if expect && !c.continue_sent {
                c.continue_sent = true;
                queue_out(c, CONTINUE, b"", None, now);
            }
        }
        Next::NeedMore
    }

    /// Answers a request we will not serve with `e`'s status, then closes the connection: after
    /// a framing error the next request's boundary is unknown.
    pub(super) fn refuse(&mut self, idx: usize, e: ParseError) -> Next {
        let now = self.now;
        self.log.refused(e.status(), e.why());
        let Loop { slots, res, head, .. } = self;
        let Some(c) = slots.get_mut(idx).and_then(|s| s.conn.as_mut()) else { return Next::NeedMore };
        res.reset();
        res.status(e.status());
        res.header("Content-Type", b"text/plain; charset=utf-8");
        res.body().extend_from_slice(crate::http::status::reason(e.status()).as_bytes());
        res.body().push(b'\n');
        respond(c, res, head, false, false, false, now);
        res.reset();
        c.start = c.end;
        Next::Served
    }
}

/// Runs the handler for one complete request (or answers 501 for methods we do not know).
#[allow(clippy::too_many_arguments)]
pub(super) fn dispatch<H: Handler>(
    head: &Head,
    body: &[u8],
    spooled: Option<&Arc<SpooledBody>>,
    peer: (std::net::IpAddr, bool),
    handler: &mut H,
    res: &mut Response,
    arena: &mut Arena,
    queue: &Arc<Queue<H>>,
    tok: u64,
    log: &mut AccessLog,
) -> Ran<H::Socket> {
    let started = if log.enabled { now_us() } else { 0 };
    let req = Request { body, spooled, peer: peer.0, tls: peer.1, ..head.request };
    let mut parked = None;
    let mut upgrade = None;
    if req.method == Method::Other {
        res.status(501);
        res.body().extend_from_slice(b"Not Implemented\n");
    } else {
        let mut cx = Call { arena, queue, token: tok, parked: false, upgrade: None };
        let flow = handler.handle(&req, res, &mut cx);
        upgrade = cx.upgrade.take();
        if cx.parked {
            parked = Some(Parked {
                method: req.method,
                http10: req.http10,
                keep_alive: head.keep_alive,
                started_us: if started == 0 { now_us() } else { started },
                path: req.path[..req.path.len().min(512)].to_vec(),
            });
        } else if flow == Flow::Parked {
            // A handler bug: it claims to wait for a Parker it never took.
            res.reset();
            res.status(500);
            log.refused(500, "handler returned Parked without parking");
        }
    }
    if parked.is_none() && log.enabled {
        log.request(req.method.as_str(), req.path, res.code(), now_us().saturating_sub(started));
    }
    if upgrade.is_some() && (parked.is_some() || res.code() != 101) {
        // A handler bug: it upgraded and then parked or changed the status.
        upgrade = None;
    }
    Ran { method: req.method, http10: req.http10, keep_alive: head.keep_alive, parked, upgrade }
}

/// After de-chunking in place, parses the head again (its bytes are unchanged) and dispatches
/// with the now contiguous body. None only if the head no longer parses, which cannot happen.
#[allow(clippy::too_many_arguments)]
pub(super) fn dispatch_dechunked<H: Handler>(
    c: &Conn,
    head_len: usize,
    body_len: usize,
    limits: &Limits,
    handler: &mut H,
    res: &mut Response,
    arena: &mut Arena,
    queue: &Arc<Queue<H>>,
    tok: u64,
    log: &mut AccessLog,
) -> Option<Ran<H::Socket>> {
    let mut headers = [Header::EMPTY; HEADER_SLOTS];
    let data = &c.buf[c.start..];
    let head = parse_head(&data[..head_len], limits, &mut headers).ok()??;
    let body = data.get(head_len..head_len + body_len)?;
    Some(dispatch(&head, body, None, (c.peer, c.tls), handler, res, arena, queue, tok, log))
}

/// Frames `res` and sends it (or queues it behind earlier output). A file body moves to the
/// connection, which sends it after the head as the socket drains (`io::flush`).
pub(super) fn respond(c: &mut Conn, res: &mut Response, head: &mut Vec<u8>, head_only: bool, http10: bool, keep_alive: bool, now: u64) {
    head.clear();
    res.write_head(head, http10, keep_alive);
    let no_body = head_only || bodiless(res.code());
    let (body, of) = if no_body { (&b""[..], None) } else { (res.body_bytes(), Some(&*res)) };
    queue_out(c, head, body, of, now);
    if let Some(f) = res.take_file_body().filter(|f| !no_body && f.len > 0) {
        debug_assert!(c.file.is_none(), "a second file body while one is still being sent");
        c.file = Some(Box::new(f));
        if !c.dead && c.writable && c.out_pos == c.out.len() && c.tail.is_none() {
            flush(c, now);
        }
    }
    if !keep_alive {
        c.close_after = true;
    }
}

/// An upload the spool could not take: 507 when its disk is full, else 503 (both close the
/// connection, whose unread body would otherwise be taken for the next request).
fn spool_refusal(e: &std::io::Error, why: &'static str) -> ParseError {
    match e.kind() {
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => ParseError::NoSpace(why),
        _ => ParseError::Unavailable(why),
    }
}

/// Whether the request's body is `multipart/form-data` (an upload, which may be spooled).
pub(super) fn is_multipart(head: &Head) -> bool {
    head.request.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case(b"content-type") && h.value.get(..19).is_some_and(|v| v.eq_ignore_ascii_case(b"multipart/form-data"))
    })
}
