//! Small helpers for filling a response the way Rails controllers do.

use crate::http::Response;

/// `redirect_to`: 302 with `Location`. Locations are paths (`/rooms/1`): browsers resolve them
/// against the URL they asked for, so the scheme and host seen by the client (often through a
/// TLS proxy) are kept without us guessing them, where Rails writes an absolute URL.
pub fn redirect(res: &mut Response, location: &str) {
    res.status(302);
    res.header("Location", location.as_bytes());
}

/// Marks the body as HTML.
pub fn html(res: &mut Response) {
    res.header("Content-Type", b"text/html; charset=utf-8");
}
