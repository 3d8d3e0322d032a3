//! Users::SidebarsController (spec/02 §4.17, spec/07 §8): `GET /users/me/sidebar`, the
//! viewer's rooms and ping placeholders, as a full page or as the `user_sidebar` frame.
//! Also the room links the room controllers broadcast into other people's sidebars.

use crate::app::room_streams;
use crate::app::room_streams::param_key as room_key;
use super::rooms_involvements::Stream;
use crate::app::layout::{self, Page};
use crate::app::message_view::{self, write_avatar_url};
use crate::app::{AppError, Ctx, Flow, Req};
use crate::crypto::Keys;
use crate::db::memberships::SidebarRoom;
use crate::db::rooms::{Kind, Member};
use crate::db::{self, users::User, Conn};
use crate::gzip;
use crate::http::Response;
use crate::views::{self, Out};

/// How many ping buttons (rooms plus placeholders) the sidebar aims for.
pub const DIRECT_PLACEHOLDERS: i64 = 20;

/// `GET /users/me/sidebar`.
pub fn show(cx: &mut Ctx, rq: &mut Req<'_, '_>, res: &mut Response) -> Result<Flow, AppError> {
    rq.html_only()?;
    let Some(user) = rq.user().cloned() else { return Err(AppError::Head(401)) };
    let mut direct: Vec<(i64, i64, bool)> = Vec::new();
    let mut shared: Vec<(Kind, i64, String, bool)> = Vec::new();
    db::memberships::sidebar(&cx.db, user.id, |r: &SidebarRoom<'_>| {
        if r.kind == Kind::Direct {
            direct.push((r.room_id, r.room_updated_at, r.unread));
        } else {
            shared.push((r.kind, r.room_id, r.name.unwrap_or("").to_owned(), r.unread));
        }
        Ok(())
    })?;
    // Newest activity first; the sort is stable, so equal times keep name order as in Rails.
    direct.sort_by_key(|d| std::cmp::Reverse(d.1));
    let of = db::rooms::directs_of(&cx.db, user.id)?;
    let mut directs = Vec::with_capacity(direct.len());
    for (room_id, updated_at, unread) in direct {
        let from = of.members.partition_point(|(r, _, _)| *r < room_id);
        let all = of.members.get(from..).unwrap_or_default().iter().take_while(|(r, _, _)| *r == room_id).map(|(_, _, m)| m);
        directs.push(DirectLink { room_id, updated_at, unread, shown: shown_of(all, &user) });
    }
    let limit = DIRECT_PLACEHOLDERS - (of.partners.len() as i64 + 1);
    let people = db::users::placeholders(&cx.db, user.id, &of.partners, limit)?;
    let restrict = db::accounts::restricts_room_creation(&cx.db)?;
    let chrome = layout::Chrome::of(cx, rq);
    let page = Sidebar { cx, can_create: user.is_administrator() || !restrict, user, directs, shared, people };
    layout::render(cx, &chrome, res, 200, &page)?;
    Ok(Flow::Done)
}

/// The members a direct link shows for `viewer`: everyone else, or the viewer alone.
pub fn shown_members(c: &Conn, room_id: i64, viewer: &User) -> Result<Vec<Member>, AppError> {
    Ok(shown_of(db::rooms::members(c, room_id)?.iter(), viewer))
}

/// `shown_members` of a room whose members (in membership order) are `all`.
fn shown_of<'a>(all: impl Iterator<Item = &'a Member>, viewer: &User) -> Vec<Member> {
    let others: Vec<Member> = all.filter(|m| m.id != viewer.id).cloned().collect();
    if others.is_empty() {
        return vec![Member { id: viewer.id, name: viewer.name.clone(), updated_at: viewer.updated_at }];
    }
    others
}

/// A direct room's link as one member sees it.
pub struct DirectLink {
    pub room_id: i64,
    pub updated_at: i64,
    pub unread: bool,
    pub shown: Vec<Member>,
}

struct Sidebar<'a> {
    cx: &'a Ctx,
    user: User,
    directs: Vec<DirectLink>,
    shared: Vec<(Kind, i64, String, bool)>,
    people: Vec<Member>,
    can_create: bool,
}

impl Page for Sidebar<'_> {
    fn main(&self, o: &mut Out<'_>) {
        views::sidebar::show::render(self, o);
    }
}

impl views::sidebar::show::View for Sidebar<'_> {
    fn rooms_stream(&self, o: &mut Out<'_>) {
        room_streams::signed_stream(self.cx, "rooms", o);
    }
    fn user_rooms_stream(&self, o: &mut Out<'_>) {
        room_streams::signed_stream(self.cx, &room_streams::user_rooms_stream(self.user.id), o);
    }
    // The links recur from one sidebar to the next: cut into runs whose deflate pieces are
    // kept (gzip::Runs), a response compresses only what changed.
    fn direct_rooms(&self, o: &mut Out<'_>) {
        let mut runs = gzip::Runs::new(o.0);
        for d in &self.directs {
            render_direct(&self.cx.keys, d, o);
            runs.item(o.0, d.room_id);
        }
        runs.end(o.0);
    }
    fn placeholders(&self, o: &mut Out<'_>) {
        for u in &self.people {
            views::sidebar::placeholder::render(&Placeholder(&self.cx.keys, u), o);
        }
    }
    fn shared_rooms(&self, o: &mut Out<'_>) {
        let mut runs = gzip::Runs::new(o.0);
        for (kind, id, name, unread) in &self.shared {
            render_shared(*kind, *id, name, *unread, o);
            runs.item(o.0, *id);
        }
        runs.end(o.0);
    }
    fn new_room(&self, o: &mut Out<'_>) {
        if self.can_create {
            views::sidebar::new_room::render(&NoHoles, o);
        }
    }
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.user.id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        write_avatar_url(&self.cx.keys, self.user.id, self.user.updated_at, o);
    }
}

struct NoHoles;
impl views::sidebar::new_room::View for NoHoles {}

struct Placeholder<'a>(&'a Keys, &'a Member);

impl views::sidebar::placeholder::View for Placeholder<'_> {
    fn user_id(&self, o: &mut Out<'_>) {
        o.int(self.1.id);
    }
    fn avatar_url(&self, o: &mut Out<'_>) {
        write_avatar_url(self.0, self.1.id, self.1.updated_at, o);
    }
    fn first_name(&self, o: &mut Out<'_>) {
        o.text(first_name(&self.1.name));
    }
}

/// The first word of a name.
pub fn first_name(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or(name)
}

/// Up to three initials, capitalised: "Jason Fried" → "JF".
pub fn initials(name: &str) -> String {
    name.split_whitespace().take(3).filter_map(|w| w.chars().next()).flat_map(char::to_uppercase).collect()
}

/// A shared (open or closed) room link (`sidebar/shared.html`).
pub fn render_shared(kind: Kind, id: i64, name: &str, unread: bool, o: &mut Out<'_>) {
    views::sidebar::shared::render(&Shared { kind, id, name, unread }, o);
}

struct Shared<'a> {
    kind: Kind,
    id: i64,
    name: &'a str,
    unread: bool,
}

impl views::sidebar::shared::View for Shared<'_> {
    fn room_key(&self, o: &mut Out<'_>) {
        o.attr(room_key(self.kind));
    }
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.id);
    }
    fn unread_class(&self, o: &mut Out<'_>) {
        if self.unread {
            o.static_bytes(b" unread");
        }
    }
    fn room_name(&self, o: &mut Out<'_>) {
        o.text(self.name);
    }
}

/// A direct room link (`sidebar/direct.html`).
pub fn render_direct(keys: &Keys, d: &DirectLink, o: &mut Out<'_>) {
    views::sidebar::direct::render(&Direct(keys, d), o);
}

struct Direct<'a>(&'a Keys, &'a DirectLink);

impl views::sidebar::direct::View for Direct<'_> {
    fn room_id(&self, o: &mut Out<'_>) {
        o.int(self.1.room_id);
    }
    fn unread_class(&self, o: &mut Out<'_>) {
        if self.1.unread {
            o.static_bytes(b" unread");
        }
    }
    fn updated_ms(&self, o: &mut Out<'_>) {
        o.int(self.1.updated_at / 1000);
    }
    fn avatars(&self, o: &mut Out<'_>) {
        let shown = &self.1.shown;
        if shown.len() > 1 {
            views::sidebar::avatar_group::render(self, o);
        } else if let Some(m) = shown.first() {
            views::users::avatar_image::render(&AvatarImage(self.0, m, 48), o);
        }
    }
    fn label(&self, o: &mut Out<'_>) {
        match self.1.shown.as_slice() {
            [one] => o.text(first_name(&one.name)),
            [a, b] => o.text(&format!("{}+{}", initials(&a.name), initials(&b.name))),
            many => o.text(&message_view::to_sentence(&many.iter().map(|m| initials(&m.name)).collect::<Vec<_>>())),
        }
    }
}

impl views::sidebar::avatar_group::View for Direct<'_> {
    fn avatars(&self, o: &mut Out<'_>) {
        for m in self.1.shown.iter().take(4) {
            views::users::avatar_image::render(&AvatarImage(self.0, m, 20), o);
        }
    }
}

struct AvatarImage<'a>(&'a Keys, &'a Member, i64);

impl views::users::avatar_image::View for AvatarImage<'_> {
    fn avatar_url(&self, o: &mut Out<'_>) {
        write_avatar_url(self.0, self.1.id, self.1.updated_at, o);
    }
    fn size(&self, o: &mut Out<'_>) {
        o.int(self.2);
    }
}

/// Where a shared room link goes in a sidebar broadcast.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Place {
    /// S1, S3, S8: a new link at the top of `shared_rooms`.
    Prepend,
    /// S2, S4: the room's existing link, `list_<key>_<id>`.
    Replace,
}

/// The Turbo Stream of a shared room link (rendered without `unread`, as broadcasts are).
pub fn shared_stream(place: Place, kind: Kind, id: i64, name: &str) -> Vec<u8> {
    let mut link = Vec::with_capacity(400);
    render_shared(kind, id, name, false, &mut Out::new(&mut link));
    let mut html = Vec::with_capacity(link.len() + 128);
    match place {
        Place::Prepend => views::streams::prepend::render(&Stream { target: "shared_rooms", content: &link }, &mut Out::new(&mut html)),
        Place::Replace => {
            let target = format!("list_{}_{id}", room_key(kind));
            views::streams::replace::render(&Stream { target: &target, content: &link }, &mut Out::new(&mut html));
        }
    }
    html
}

/// The Turbo Stream removing a room's link (S5, S7).
pub fn remove_stream(kind: Kind, id: i64) -> Vec<u8> {
    let mut html = Vec::with_capacity(96);
    let target = format!("list_{}_{id}", room_key(kind));
    views::streams::remove::render(&room_streams::Target(&target), &mut Out::new(&mut html));
    html
}

/// The Turbo Streams removing the "Start a ping with …" placeholders of `user_ids`: once a ping
/// with them exists, its link takes their place (S6 sends these after the prepend).
pub fn remove_placeholders_stream(user_ids: &[i64]) -> Vec<u8> {
    let mut html = Vec::with_capacity(80 * user_ids.len());
    for id in user_ids {
        let target = format!("ping_placeholder_{id}");
        views::streams::remove::render(&room_streams::Target(&target), &mut Out::new(&mut html));
    }
    html
}

/// The Turbo Stream prepending a direct room link into `direct_rooms` (S6).
pub fn direct_stream(keys: &Keys, link: &DirectLink) -> Vec<u8> {
    let mut content = Vec::with_capacity(512);
    render_direct(keys, link, &mut Out::new(&mut content));
    let mut html = Vec::with_capacity(content.len() + 96);
    views::streams::prepend::render(&Stream { target: "direct_rooms", content: &content }, &mut Out::new(&mut html));
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Vec<u8>) -> String {
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn sidebar_streams_follow_spec_06_11_5() {
        let s = text(shared_stream(Place::Prepend, Kind::Open, 7, "Tea & <cake>"));
        assert!(s.starts_with("<turbo-stream action=\"prepend\" target=\"shared_rooms\"><template><a id=\"list_rooms_open_7\" class=\"room btn\" href=\"/rooms/7\""), "{s}");
        assert!(s.contains("data-sorted-list-name=\"Tea &amp; &lt;cake&gt;\""));
        assert!(s.ends_with("</template></turbo-stream>"));
        let s = text(shared_stream(Place::Replace, Kind::Closed, 8, "x"));
        assert!(s.starts_with("<turbo-stream action=\"replace\" target=\"list_rooms_closed_8\">"), "{s}");
        assert_eq!(text(remove_stream(Kind::Direct, 9)), "<turbo-stream action=\"remove\" target=\"list_rooms_direct_9\"></turbo-stream>");
        let keys = Keys::derive(b"test");
        let link = DirectLink {
            room_id: 3,
            updated_at: 1_700_000_000_123_456,
            unread: true,
            shown: vec![Member { id: 1, name: "Jason Fried".into(), updated_at: 0 }, Member { id: 2, name: "Kevin".into(), updated_at: 0 }],
        };
        let s = text(direct_stream(&keys, &link));
        assert!(s.starts_with("<turbo-stream action=\"prepend\" target=\"direct_rooms\"><template><a id=\"list_rooms_direct_3\" class=\"direct unread\""), "{s}");
        assert!(s.contains("data-sorted-list-number=\"1700000000123\""));
        assert!(s.contains("<div class=\"avatar__group\">"));
        assert!(s.contains("JF+K</span>"), "{s}");
        assert_eq!(
            text(remove_placeholders_stream(&[4, 5])),
            "<turbo-stream action=\"remove\" target=\"ping_placeholder_4\"></turbo-stream><turbo-stream action=\"remove\" target=\"ping_placeholder_5\"></turbo-stream>"
        );
    }

    #[test]
    fn initials_and_first_names() {
        assert_eq!(initials("Jason Fried"), "JF");
        assert_eq!(initials("david heinemeier hansson extra"), "DHH");
        assert_eq!(initials("JZ"), "J");
        assert_eq!(first_name("Bender Bot"), "Bender");
        assert_eq!(first_name(""), "");
    }
}
