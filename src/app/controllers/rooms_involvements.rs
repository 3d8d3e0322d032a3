//! Rooms::InvolvementsController (spec/02 §4.24, spec/07 §9.6): the notification bell of a
//! room, `GET /rooms/:room_id/involvement` (the toggle frame) and `PUT` (set the level, then
//! back to the GET). Becoming invisible takes the room out of the viewer's sidebar; leaving
//! invisible puts it back (broadcasts S7/S8 on `<me>:rooms`).

use crate::app::{room_scope, room_streams};
use crate::app::room_streams::param_key as room_key;
use super::sidebars;
use crate::app::{respond, AppError, Ctx, Flow, Req};
use crate::db::memberships::Involvement;
use crate::db::rooms::{Kind, Room};
use crate::db::{self, Conn};
use crate::http::Response;
use crate::views::{self, Out};

/// The next level when the bell is pressed: shared rooms cycle through all four, direct
/// rooms between everything and nothing.
pub fn next(kind: Kind, current: Involvement) -> Involvement {
    match (kind, current) {
        (Kind::Direct, Involvement::Everything) => Involvement::Nothing,
        (Kind::Direct, _) => Involvement::Everything,
        (_, Involvement::Mentions) => Involvement::Everything,
        (_, Involvement::Everything) => Involvement::Nothing,
        (_, Involvement::Nothing) => Involvement::Invisible,
        (_, Involvement::Invisible) => Involvement::Mentions,
    }
}

/// The screen-reader label of a level.
pub fn label(i: Involvement) -> &'static str {
    match i {
        Involvement::Mentions => "Notifying about @ mentions",
        Involvement::Everything => "Notifying about all messages",
        Involvement::Nothing => "Notifications are off",
        Involvement::Invisible => "Notifications are off and room invisible in sidebar",
    }
}

/// The viewer's room and membership level, or 404 (this controller answers 404, not the
/// rooms' redirect).
fn membership(cx: &Ctx, rq: &Req<'_, '_>) -> Result<(Room, Involvement), AppError> {
    let Some(user) = rq.user() else { return Err(AppError::Head(401)) };
    let Some(room) = room_scope::find(cx, user.id, rq.route.params.room_id, room_scope::Scope::Any)? else {
        return Err(AppError::NotFound);
    };
    let m = db::memberships::find(&cx.db, room.id, user.id)?.ok_or(AppError::NotFound)?;
    // A NULL level (old data) shows as Rails' default.
    Ok((room, m.involvement.unwrap_or(Involvement::Mentions)))
}

/// `GET /rooms/:room_id/involvement`.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let (room, current) = membership(cx, rq)?;
    res.status(200);
    respond::html(res);
    views::rooms::involvement::render(&Toggle { room: &room, current }, &mut Out::new(res.body()));
    Ok(Flow::Done)
}

/// `PUT /rooms/:room_id/involvement?involvement=<level>`.
pub fn update(cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let (room, _) = membership(cx, rq)?;
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let wanted = rq.params.get_str("involvement").and_then(Involvement::parse);
    // Rails raises on an unknown level (500); a clear 422 says the same without a crash log.
    let Some(wanted) = wanted else { return Err(AppError::Unprocessable("unknown involvement")) };
    let (room_id, kind, name, user_id) = (room.id, room.kind, room.name.clone().unwrap_or_default(), user.id);
    cx.write(
        rq,
        move |c: &Conn| db::memberships::set_involvement(c, room_id, user_id, wanted, db::time::now_us()),
        move |_cx, res, result| {
            let previous = result?.ok_or(AppError::NotFound)?;
            if kind != Kind::Direct {
                let stream = room_streams::user_rooms_stream(user_id);
                if wanted == Involvement::Invisible {
                    room_streams::broadcast_html(&stream, &sidebars::remove_stream(kind, room_id));
                } else if previous == Some(Involvement::Invisible) {
                    room_streams::broadcast_html(&stream, &sidebars::shared_stream(sidebars::Place::Prepend, kind, room_id, &name));
                }
            }
            respond::redirect(res, &format!("/rooms/{room_id}/involvement"));
            Ok(())
        },
    )
}

/// A stream element with a target and template content (already HTML).
pub struct Stream<'a> {
    pub target: &'a str,
    pub content: &'a [u8],
}

impl views::streams::prepend::View for Stream<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.target);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.content);
    }
}

impl views::streams::replace::View for Stream<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.target);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.content);
    }
}

impl views::streams::append::View for Stream<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.target);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.content);
    }
}

struct Toggle<'a> {
    room: &'a Room,
    current: Involvement,
}

impl views::rooms::involvement::View for Toggle<'_> {
    fn room_key(&self, o: &mut Out<'_>) {
        o.attr(room_key(self.room.kind));
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.room.id);
    }
    fn next(&self, o: &mut Out<'_>) {
        o.attr(next(self.room.kind, self.current).as_str());
    }
    fn current(&self, o: &mut Out<'_>) {
        o.attr(self.current.as_str());
    }
    fn label(&self, o: &mut Out<'_>) {
        o.text(label(self.current));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_rooms_cycle_four_levels_and_direct_rooms_two() {
        let mut i = Involvement::Mentions;
        let mut seen = Vec::new();
        for _ in 0..4 {
            i = next(Kind::Open, i);
            seen.push(i);
        }
        assert_eq!(seen, [Involvement::Everything, Involvement::Nothing, Involvement::Invisible, Involvement::Mentions]);
        assert_eq!(next(Kind::Direct, Involvement::Everything), Involvement::Nothing);
        assert_eq!(next(Kind::Direct, Involvement::Nothing), Involvement::Everything);
        assert_eq!(next(Kind::Direct, Involvement::Mentions), Involvement::Everything);
    }
}
