//! Rooms::RefreshesController (spec/02 §4.28, spec/07 §7.3): `GET /rooms/:room_id/refresh
//! ?since=<epoch ms>` — the messages a reconnecting page missed, as Turbo Streams: one append
//! of the new ones, one replace per message changed since.

use crate::app::room_scope;
use crate::app::room_streams::param_key as room_key;
use super::rooms_involvements::Stream;
use crate::app::message_view;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;
use crate::views::{self, Out};

/// `since` as Rails' `Integer(params[:since])` would take it after `to_i`: leading digits
/// (optionally signed), anything else 0.
pub fn parse_since_ms(raw: Option<&str>) -> i64 {
    let s = raw.unwrap_or("").trim();
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    let n = digits.get(..end.min(15)).and_then(|d| d.parse::<i64>().ok()).unwrap_or(0);
    if neg {
        -n
    } else {
        n
    }
}

/// `GET /rooms/:room_id/refresh`.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.room_id, room_scope::Scope::Any)? else {
        return Err(AppError::NotFound);
    };
    let since_us = parse_since_ms(rq.params.get_str("since")).saturating_mul(1000);
    let created = message_view::collect(|f| db::messages::page_created_since(&cx.db, room.id, since_us, f))?;
    let mut updated = message_view::collect(|f| db::messages::page_updated_since(&cx.db, room.id, since_us, f))?;
    updated.retain(|m| !created.iter().any(|n| n.id == m.id));
    res.status(200);
    res.header("Content-Type", b"text/vnd.turbo-stream.html; charset=utf-8");
    let mut body = std::mem::take(res.body());
    if !created.is_empty() {
        let mut content = Vec::with_capacity(created.len() * 4096);
        message_view::render_messages(&cx.db, &cx.keys, &created, &mut content)?;
        let target = format!("messages_{}_{}", room_key(room.kind), room.id);
        views::streams::append::render(&Stream { target: &target, content: &content }, &mut Out::new(&mut body));
    }
    for m in &updated {
        let mut content = Vec::with_capacity(4096);
        message_view::render_messages(&cx.db, &cx.keys, std::slice::from_ref(m), &mut content)?;
        let target = format!("message_{}", m.client_message_id);
        views::streams::replace::render(&Stream { target: &target, content: &content }, &mut Out::new(&mut body));
    }
    *res.body() = body;
    Ok(Flow::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_read_like_rails_to_i() {
        assert_eq!(parse_since_ms(Some("1700000000000")), 1_700_000_000_000);
        assert_eq!(parse_since_ms(Some("12abc")), 12);
        assert_eq!(parse_since_ms(Some("abc")), 0);
        assert_eq!(parse_since_ms(None), 0);
        assert_eq!(parse_since_ms(Some("-5")), -5);
        assert_eq!(parse_since_ms(Some("99999999999999999999999")), 999_999_999_999_999);
    }
}
