//! WelcomeController (spec/02 §4.1): `/` takes a signed-in user to the room they were in
//! last (`last_room` cookie, if they still belong to it), else to their original room, else
//! shows the "no rooms yet" page.

use crate::app::layout::{self, Page};
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db;
use crate::http::Response;
use crate::views::{self, Out};

/// `GET /`.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let user_id = user.id;
    let last = rq.cookie(b"last_room").and_then(crate::crypto::cookies::read_last_room);
    let room = match last {
        Some(id) if db::memberships::exists(&cx.db, id, user_id)? => Some(id),
        _ => db::auth::original_room(&cx.db, user_id)?,
    };
    if let Some(id) = room {
        respond::redirect(res, &format!("/rooms/{id}"));
        return Ok(Flow::Done);
    }
    let page = Welcome { user_name: user.name.clone() };
    layout::page(cx, rq, res, 200, &page)?;
    Ok(Flow::Done)
}

struct Welcome {
    user_name: String,
}

impl Page for Welcome {
    fn title(&self, o: &mut Out<'_>) {
        o.text("No rooms yet");
    }
    fn body_class(&self) -> &'static str {
        "sidebar"
    }
    fn main(&self, o: &mut Out<'_>) {
        views::welcome::show::render(self, o);
    }
    fn sidebar(&self, o: &mut Out<'_>) {
        views::sidebar::frame::render(&SidebarFrame, o);
    }
}

impl views::welcome::show::View for Welcome {
    fn user_name(&self, o: &mut Out<'_>) {
        o.text(&self.user_name);
    }
}

struct SidebarFrame;
impl views::sidebar::frame::View for SidebarFrame {}
