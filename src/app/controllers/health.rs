//! `GET /up` (Rails' health check, spec/02 §4.32): outside the application chain — no
//! authentication, no browser gate, not logged by Rails.

use crate::http::Response;
use crate::views::{self, Out};

struct Up;
impl views::health::up::View for Up {}

/// 200 with the small green page.
pub fn show(res: &mut Response) {
    res.header("Content-Type", b"text/html; charset=utf-8");
    views::health::up::render(&Up, &mut Out::new(res.body()));
}
