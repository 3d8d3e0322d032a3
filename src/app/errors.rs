//! Errors as values, from any controller to the one place that turns them into a response.
//!
//! Rails' mapping (spec/02 §1.1): a missing required parameter is 400, a record not found 404,
//! an unknown format 406, a forgery failure or invalid record 422, anything unexpected 500.
//! Those answers carry the static error page of `public/<status>.html` when there is one (or
//! `{"status":…,"error":…}` for a JSON request). Controllers that answer `head :forbidden` in
//! Rails get `AppError::Head`: the status and an empty body. Every error is logged once here,
//! with the route and the reason; the access log has the rest.

use crate::http::Response;

#[derive(Debug)]
pub enum AppError {
    /// `head <status>`: just the status, empty body (403 for a non-admin, 429 for a banned
    /// address, ...).
    Head(u16),
    /// A required parameter is missing or blank: 400.
    BadRequest(&'static str),
    /// No such record (or not one the user may see): 404 with the error page.
    NotFound,
    /// The action cannot produce the requested format: 406.
    NotAcceptable,
    /// Forgery protection refused the request, or a record was invalid: 422 with the page.
    Unprocessable(&'static str),
    /// The database failed.
    Db(crate::db::Error),
    /// The disk is full (SQLITE_FULL, or ENOSPC writing a file): 507 with Retry-After; the
    /// same request may succeed once space returns, and nothing of it was kept.
    NoSpace(&'static str),
    /// The worker pool is saturated: 503 with Retry-After.
    Busy,
    /// Anything else that should not happen: 500 with the page.
    Internal(&'static str),
}

impl From<crate::db::Error> for AppError {
    fn from(e: crate::db::Error) -> AppError {
        AppError::Db(e)
    }
}

impl AppError {
    /// The answer to a file that could not be written: 507 when the disk (or a quota) is
    /// full, so the browser can say so, else 500. `why` is the log line's reason.
    pub fn file_not_stored(e: &std::io::Error, why: &'static str) -> AppError {
        match e.kind() {
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => AppError::NoSpace(why),
            _ => AppError::Internal(why),
        }
    }

    /// The HTTP status this error answers with.
    pub fn status(&self) -> u16 {
        match self {
            AppError::Head(s) => *s,
            AppError::BadRequest(_) => 400,
            AppError::NotFound => 404,
            AppError::NotAcceptable => 406,
            AppError::Unprocessable(_) => 422,
            AppError::Busy => 503,
            AppError::NoSpace(_) => 507,
            AppError::Db(e) if e.is_full() => 507,
            AppError::Db(_) | AppError::Internal(_) => 500,
        }
    }
}

/// Seconds a client is asked to wait after a 503.
const RETRY_AFTER: &[u8] = b"5";

/// Fills `res` for `err` (whatever it held before is replaced) and logs one line naming
/// `route`. `json` selects the JSON error body for requests that asked for JSON.
pub fn render(err: &AppError, route: &str, json: bool, res: &mut Response) {
    let status = err.status();
    match err {
        AppError::Db(e) => eprintln!("app: {route}: {status} database error: {e:?}"),
        AppError::BadRequest(why) | AppError::Unprocessable(why) | AppError::Internal(why) | AppError::NoSpace(why) => {
            eprintln!("app: {route}: {status} {why}")
        }
        AppError::Busy => eprintln!("app: {route}: 503 worker queue full"),
        AppError::Head(_) | AppError::NotFound | AppError::NotAcceptable => {}
    }
    res.status(status);
    res.body().clear();
    if status == 503 || status == 507 {
        res.header("Retry-After", RETRY_AFTER);
    }
    if matches!(err, AppError::Head(_)) {
        return;
    }
    if json {
        res.header("Content-Type", b"application/json; charset=utf-8");
        let body = res.body();
        body.extend_from_slice(b"{\"status\":");
        crate::http::response::push_u64(body, u64::from(status));
        body.extend_from_slice(b",\"error\":\"");
        body.extend_from_slice(crate::http::status::reason(status).as_bytes());
        body.extend_from_slice(b"\"}");
        return;
    }
    if let Some(page) = error_page(status) {
        res.header("Content-Type", b"text/html; charset=utf-8");
        res.set_static_body(page);
    }
}

/// The static page `public/<status>.html`, when the frontend ships one (404, 422, 500; Rails
/// answers other statuses with an empty body).
pub fn error_page(status: u16) -> Option<&'static [u8]> {
    let name = match status {
        400 => "400.html",
        404 => "404.html",
        406 => "406.html",
        422 => "422.html",
        500 => "500.html",
        503 => "503.html",
        _ => return None,
    };
    crate::assets::by_name(name).map(|a| a.body)
}
