//! Posting a message, the parts every path shares: the browser's composer and the bot API
//! (`controllers::messages::post`) and a webhook's reply (`webhooks`) all write a new message
//! with `insert` on the writer and tell the room with `announce` after the commit, through the
//! Turbo Stream views here.

use crate::app::message_view::{self, Written};
use crate::app::room_streams;
use crate::crypto::Keys;
use crate::db::messages::{self, Message, NewMessage};
use crate::db::{self, memberships, rooms};
use crate::views::{self, Out};

/// The writer's part of a new text message (on the writer's connection): the message with
/// its body, search row, room touch and unread marks; returns its id and the room's member
/// ids for the unread fan-out (remembered between posts while memberships stay as they are).
pub fn insert(
    c: &db::Conn,
    room_id: i64,
    creator_id: i64,
    cmid: &str,
    body: Option<&str>,
    plain: &str,
    now: i64,
) -> db::Result<(i64, std::sync::Arc<[i64]>)> {
    let nm = NewMessage { room_id, creator_id, client_message_id: cmid, body, plain_text: plain };
    let id = messages::create(c, &nm, now)?;
    Ok((id, memberships::user_ids_cached(c, room_id)?))
}

/// The broadcasts of a new message after its COMMIT, from any thread with a read connection
/// that sees it: renders the partial once, sends the `append` (M1) to the room's stream and
/// the unread pings (U1) to `members`; returns the stream bytes for an HTTP answer.
/// `written`: what the post holds of a message without attachment (then nothing is read back).
pub fn announce(db: &db::Conn, keys: &Keys, kind: rooms::Kind, m: &Message, members: &[i64], written: Option<&Written<'_>>) -> db::Result<Vec<u8>> {
    let mut partial = Vec::with_capacity(4096);
    match written {
        Some(w) => message_view::render_new_message(db, keys, m, w, &mut partial)?,
        None => message_view::render_messages(db, keys, std::slice::from_ref(m), &mut partial)?,
    }
    let target = room_streams::messages_target(kind, m.room_id);
    let mut stream = Vec::with_capacity(partial.len() + 128);
    views::streams::append::render(&StreamView { target: &target, content: &partial }, &mut Out::new(&mut stream));
    room_streams::broadcast_html(&room_streams::messages_stream(kind, m.room_id), &stream);
    room_streams::broadcast_unreads(m.room_id, members);
    Ok(stream)
}

/// A Turbo Stream `append`/`replace` action's target and the HTML it carries.
pub struct StreamView<'a> {
    pub target: &'a str,
    pub content: &'a [u8],
}

impl views::streams::append::View for StreamView<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.target);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.content);
    }
}

impl views::streams::append_maintain_scroll::View for StreamView<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.target);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.content);
    }
}

impl views::streams::replace_maintain_scroll::View for StreamView<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.target);
    }
    fn content(&self, o: &mut Out<'_>) {
        o.0.extend_from_slice(self.content);
    }
}

/// A Turbo Stream `remove` action's target.
pub struct RemoveView<'a>(pub &'a str);

impl views::streams::remove::View for RemoveView<'_> {
    fn target(&self, o: &mut Out<'_>) {
        o.attr(self.0);
    }
}
