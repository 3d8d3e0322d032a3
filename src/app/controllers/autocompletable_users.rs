//! Autocompletable::UsersController (spec/02 §4.19): `GET /autocompletable/users(.json)
//! ?query=&room_id=&page=` — active people for mentions and pings, 20 a page, as JSON with
//! Rails' pagination headers.

use crate::app::params::parse_id;
use crate::app::message_view::avatar_url;
use crate::app::{AppError, Ctx, Flow, Req};
use crate::crypto::{json, sgid};
use crate::db;
use crate::http::Response;

/// People per page.
pub const PER_PAGE: i64 = 20;

/// `GET /autocompletable/users`.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let room_id = match rq.params.get("room_id").filter(|r| !r.is_empty()) {
        Some(raw) => {
            let id = parse_id(raw).ok_or(AppError::NotFound)?;
            if !db::memberships::exists(&cx.db, id, user.id)? {
                return Err(AppError::NotFound);
            }
            Some(id)
        }
        None => None,
    };
    let query = rq.params.get_str("query").unwrap_or("").trim();
    let page = rq.params.get_str("page").and_then(|p| p.parse::<i64>().ok()).filter(|p| *p >= 1).unwrap_or(1).min(1_000_000);
    let origin = rq.origin();
    let mut ids: Vec<(i64, String, i64)> = Vec::new();
    let total = db::users::autocomplete(&cx.db, room_id, query, PER_PAGE, (page - 1) * PER_PAGE, |u| {
        ids.push((u.id, u.name.to_owned(), 0));
        Ok(())
    })?;
    for entry in ids.iter_mut() {
        entry.2 = db::users::find(&cx.db, entry.0)?.map_or(0, |u| u.updated_at);
    }
    let body = res.body();
    body.push(b'[');
    for (k, (id, name, updated_at)) in ids.iter().enumerate() {
        if k > 0 {
            body.push(b',');
        }
        body.extend_from_slice(b"{\"name\":");
        json::write_string(html_escape(name).as_bytes(), body);
        body.extend_from_slice(b",\"value\":");
        body.extend_from_slice(id.to_string().as_bytes());
        body.extend_from_slice(b",\"avatar_url\":");
        json::write_string(format!("{origin}{}", avatar_url(&cx.keys, *id, *updated_at)).as_bytes(), body);
        body.extend_from_slice(b",\"sgid\":");
        let mut s = Vec::with_capacity(128);
        sgid::user_sgid(&cx.keys, *id, &mut s);
        json::write_string(&s, body);
        body.push(b'}');
    }
    body.push(b']');
    res.status(200);
    res.header("Content-Type", b"application/json; charset=utf-8");
    res.header("X-Total-Count", total.to_string().as_bytes());
    if page * PER_PAGE < total {
        let link = format!("<{origin}{}>; rel=\"next\"", next_page_path(rq.http.path, rq.http.query, page + 1));
        res.header("Link", link.as_bytes());
    }
    Ok(Flow::Done)
}

/// The same path and query with `page` set to `next`.
fn next_page_path(path: &[u8], query: &[u8], next: i64) -> String {
    let mut out = String::from_utf8_lossy(path).into_owned();
    out.push('?');
    for pair in query.split(|b| *b == b'&').filter(|p| !p.is_empty() && !p.starts_with(b"page=")) {
        out.push_str(&String::from_utf8_lossy(pair));
        out.push('&');
    }
    out.push_str(&format!("page={next}"));
    out
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_page_keeps_the_other_parameters() {
        assert_eq!(next_page_path(b"/autocompletable/users", b"query=a&page=1", 2), "/autocompletable/users?query=a&page=2");
        assert_eq!(next_page_path(b"/autocompletable/users.json", b"", 2), "/autocompletable/users.json?page=2");
        assert_eq!(html_escape("David <script>"), "David &lt;script&gt;");
    }
}
