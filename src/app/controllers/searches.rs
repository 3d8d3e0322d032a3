//! SearchesController (spec/02 §4.29, spec/07 §4): the search page (read only), recording a
//! search in the user's history, and clearing that history.

use crate::app::layout::{self, Page};
use crate::app::message_view;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::{self, searches};
use crate::http::Response;
use crate::views::{self, Out};
use crate::app::params::parse_id;

/// `GET /searches[?q=<text>]`: the newest 100 matches in the user's rooms (any membership),
/// oldest first, the recent searches and a way back to the last room. Records nothing.
pub fn index(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    let query = rq.params.get("q").map(String::from_utf8_lossy).and_then(|q| searches::sanitize(&q));
    let list = match &query {
        Some(q) => searches::messages(&cx.db, user_id, q)?,
        None => Vec::new(),
    };
    let mut results = Vec::with_capacity(list.len() * 2048);
    let first_mark = crate::gzip::marks();
    let mut renderer = message_view::Renderer::new(&cx.db, &cx.keys);
    for f in &list {
        renderer.know_stamp(f.message.creator_id, f.creator_updated_at);
        if let Some(name) = &f.room_name {
            renderer.know_room_name(f.message.room_id, name);
        }
        renderer.message(&f.message, &mut results)?;
    }
    drop(renderer);
    let mut recent = Vec::new();
    searches::recent(&cx.db, user_id, |q| {
        recent.push(q.to_owned());
        Ok(())
    })?;
    let last_room = match rq.cookie(b"last_room").and_then(parse_id) {
        Some(id) if db::memberships::exists(&cx.db, id, user_id)? => Some(id),
        _ => db::rooms::last_for_user(&cx.db, user_id)?,
    };
    let page = SearchPage { query, count: list.len(), results, first_mark, recent, last_room };
    // The page is the results and some 20 KB of layout: reserved once, not regrown by doubling
    // (a ×100 search's 200 KB of results cost 0.23M instructions of realloc copies).
    res.body().reserve(page.results.len() + PAGE_CHROME_BYTES);
    layout::page(cx, rq, res, 200, &page)?;
    Ok(Flow::Done)
}

/// What the search page holds besides its results (layout, sidebar, history), rounded up.
const PAGE_CHROME_BYTES: usize = 32 * 1024;

/// `POST /searches`: records the cleaned query (moving a repeat to the top, keeping the last
/// ten) and redirects to its results. A missing `q` is 400 (Rails fails with 500); a query
/// with no word characters is not recorded.
pub fn create(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    let raw = rq.params.get("q").ok_or(AppError::BadRequest("param is missing: q"))?;
    let Some(query) = searches::sanitize(&String::from_utf8_lossy(raw)) else {
        respond::redirect(res, "/searches");
        return Ok(Flow::Done);
    };
    let now = db::time::now_us();
    let location = format!("/searches?q={}", form_encode(&query));
    cx.write(rq, move |c| searches::record(c, user_id, &query, now), move |_, res, done| {
        done?;
        respond::redirect(res, &location);
        Ok(())
    })
}

/// `DELETE /searches/clear`: forgets the user's recent searches.
pub fn clear(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let user_id = rq.user().map(|u| u.id).ok_or(AppError::NotFound)?;
    cx.write(rq, move |c| searches::clear(c, user_id), |_, res, done| {
        done?;
        respond::redirect(res, "/searches");
        Ok(())
    })
}

/// `application/x-www-form-urlencoded` as Rails' `to_query` writes it (space as `+`).
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(b as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

struct SearchPage {
    query: Option<String>,
    count: usize,
    results: Vec<u8>,
    /// `gzip::marks()` before the results were rendered.
    first_mark: usize,
    recent: Vec<String>,
    last_room: Option<i64>,
}

impl SearchPage {
    fn recent(&self, o: &mut Out<'_>) {
        for q in &self.recent {
            views::searches::recent::render(&Recent(q), o);
        }
    }
    fn clear(&self, o: &mut Out<'_>) {
        if !self.recent.is_empty() {
            views::searches::clear::render(&NoHoles, o);
        }
    }
}

impl Page for SearchPage {
    fn title(&self, o: &mut Out<'_>) {
        o.static_bytes(b"Search");
    }
    fn body_class(&self) -> &'static str {
        "sidebar searches"
    }
    fn nav(&self, o: &mut Out<'_>) {
        views::searches::nav::render(self, o);
    }
    fn main(&self, o: &mut Out<'_>) {
        views::searches::show::render(self, o);
    }
    fn footer(&self, o: &mut Out<'_>) {
        views::searches::footer::render(self, o);
    }
    fn sidebar(&self, o: &mut Out<'_>) {
        views::searches::sidebar::render(self, o);
    }
}

impl views::searches::nav::View for SearchPage {
    fn query_pill(&self, o: &mut Out<'_>) {
        if let Some(q) = &self.query {
            views::searches::pill::render(&Pill(q, self.count), o);
        }
    }
    fn recent(&self, o: &mut Out<'_>) {
        SearchPage::recent(self, o);
    }
    fn clear(&self, o: &mut Out<'_>) {
        SearchPage::clear(self, o);
    }
}

impl views::searches::show::View for SearchPage {
    fn actions_menu(&self, o: &mut Out<'_>) {
        views::messages::actions::render(&NoHoles, o);
    }
    fn results(&self, o: &mut Out<'_>) {
        // Message partials rendered by message_view (templates and the sanitizer); their
        // gzip marks move with them, so a gzip answer splices their pieces.
        crate::gzip::moved(self.first_mark, o.0.len());
        o.0.extend_from_slice(&self.results);
    }
}

impl views::searches::footer::View for SearchPage {
    fn back_path(&self, o: &mut Out<'_>) {
        match self.last_room {
            Some(id) => {
                o.static_bytes(b"/rooms/");
                o.int(id);
            }
            None => o.static_bytes(b"/"),
        }
    }
    fn query(&self, o: &mut Out<'_>) {
        if let Some(q) = &self.query {
            o.attr(q);
        }
    }
}

impl views::searches::sidebar::View for SearchPage {
    fn recent(&self, o: &mut Out<'_>) {
        SearchPage::recent(self, o);
    }
    fn clear(&self, o: &mut Out<'_>) {
        SearchPage::clear(self, o);
    }
}

struct Pill<'a>(&'a str, usize);

impl views::searches::pill::View for Pill<'_> {
    fn query(&self, o: &mut Out<'_>) {
        o.text(self.0);
    }
    fn count(&self, o: &mut Out<'_>) {
        o.int(self.1 as i64);
    }
}

struct Recent<'a>(&'a str);

impl views::searches::recent::View for Recent<'_> {
    fn query_param(&self, o: &mut Out<'_>) {
        o.attr(&form_encode(self.0));
    }
    fn query(&self, o: &mut Out<'_>) {
        o.text(self.0);
    }
}

struct NoHoles;
impl views::searches::clear::View for NoHoles {}
impl views::messages::actions::View for NoHoles {}
