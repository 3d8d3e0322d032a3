//! A new message's pushes (Rails' `Room::PushMessageJob` → `Room::MessagePusher`, spec/04
//! §3.2–3.3): on the loop, after COMMIT, pick the recipients and build each one's payload
//! (a few indexed reads on the loop's connection); then hand every delivery to the outbound
//! job threads, where the encryption, the signature and the network wait happen.

use std::cell::RefCell;
use std::sync::Arc;

use super::deliver::{self, Outcome};
use super::payload::Notice;
use super::vapid::Vapid;
use crate::app::message_view::Renderer;
use crate::app::Ctx;
use crate::crypto::{Keys, Scratch};
use crate::db::Conn;
use crate::db::messages::Message;
use crate::db::push_subscriptions::{self, Subscription};
use crate::db::rooms::{Kind, Room};
use crate::db::{self, Writer};
use crate::richtext::{self, Mention};

/// Pushes `m`, just committed in `room`, to every subscription that should hear of it.
/// Does nothing when Web Push is not configured. Never fails the caller: a read error is
/// logged and the pushes are skipped, as a failed job would be in Rails.
pub fn message_posted(cx: &mut Ctx, room: &Room, m: &Message) {
    let Some(vapid) = cx.env.vapid.clone() else { return };
    let mut scratch = std::mem::take(&mut cx.scratch);
    let from = From { db: &cx.db, keys: &cx.keys, writer: &cx.writer, vapid: &vapid };
    if let Err(e) = push_message(&from, &mut scratch, room.kind, room.name.as_deref(), m) {
        eprintln!("push: message {}: skipped: {e}", m.id);
    }
    cx.scratch = scratch;
}

/// What a push is made from, on a loop or off it: a connection to read with, the keys that
/// verify mentions, the writer that forgets dead subscriptions, and the VAPID key pair.
pub struct From<'a> {
    pub db: &'a Conn,
    pub keys: &'a Keys,
    pub writer: &'a Writer,
    pub vapid: &'a Arc<Vapid>,
}

/// `message_posted` for a message written off the loops (a bot's webhook reply), with that
/// thread's own connection.
pub fn message_posted_from(from: &From<'_>, kind: Kind, room_name: Option<&str>, m: &Message) {
    let mut scratch = Scratch::default();
    if let Err(e) = push_message(from, &mut scratch, kind, room_name, m) {
        eprintln!("push: message {}: skipped: {e}", m.id);
    }
}

fn push_message(from: &From<'_>, scratch: &mut Scratch, kind: Kind, room_name: Option<&str>, m: &Message) -> db::Result<()> {
    let now = db::time::now_us();
    let candidates = push_subscriptions::candidates(from.db, m.room_id, m.creator_id, now)?;
    if candidates.is_empty() {
        return Ok(());
    }
    let (plain, mentionees) = plain_text_and_mentionees(from, scratch, m, now / 1000)?;
    let mut recipients = candidates.into_iter().filter(|c| c.wants(&mentionees)).map(|c| c.subscription).peekable();
    if recipients.peek().is_none() {
        return Ok(());
    }
    let creator = db::users::find(from.db, m.creator_id)?.map(|u| u.name).unwrap_or_default();
    let path = format!("/rooms/{}", m.room_id);
    let notice = match kind {
        Kind::Direct => Notice { title: creator, body: plain, path },
        _ => Notice { title: room_name.unwrap_or_default().to_owned(), body: format!("{creator}: {plain}"), path },
    };
    let mut badges: Vec<(i64, i64)> = Vec::new();
    for sub in recipients {
        let badge = match badges.iter().find(|(u, _)| *u == sub.user_id) {
            Some(&(_, n)) => n,
            None => {
                let n = push_subscriptions::unread_count(from.db, sub.user_id)?;
                badges.push((sub.user_id, n));
                n
            }
        };
        let payload = notice.json(badge);
        let (vapid, writer) = (Arc::clone(from.vapid), from.writer.clone());
        let id = sub.id;
        if !crate::outbound::spawn(Box::new(move || deliver_and_settle(&vapid, &writer, &sub, &payload))) {
            // Rails' pool drops what does not fit its queue, silently; we say so once per push.
            eprintln!("push: subscription {id}: outbound queue full, push dropped");
        }
    }
    Ok(())
}

/// The message as plain text (Rails' `plain_text_body`: the rich text, else the attachment's
/// file name) and the users it mentions with a valid signed id (Rails' `mentionees`; the
/// recipients query keeps only the room's members).
fn plain_text_and_mentionees(from: &From<'_>, scratch: &mut Scratch, m: &Message, now_ms: i64) -> db::Result<(String, Vec<i64>)> {
    let body = db::messages::body(from.db, m.id)?.unwrap_or_default();
    let mentioned = RefCell::new(Vec::new());
    let scratch = RefCell::new(scratch);
    let plain = {
        let r = Renderer::new(from.db, from.keys);
        let keys = from.keys;
        richtext::plain_text(&body, &|sgid: &str| {
            if let Some(id) = crate::crypto::sgid::verify_user(keys, sgid.as_bytes(), now_ms, &mut scratch.borrow_mut()) {
                mentioned.borrow_mut().push(id);
            }
            let id = richtext::sgid::unverified_user_id(sgid)?;
            let p = r.person(id).ok()?;
            (!p.name.is_empty()).then(|| Mention { id, name: p.name, bio: String::new(), avatar_url: p.avatar_url })
        })
    };
    let mut ids = mentioned.into_inner();
    ids.sort_unstable();
    ids.dedup();
    if plain.trim().is_empty() {
        let name = db::messages::attachment(from.db, m.id)?.map(|a| a.filename).unwrap_or_default();
        return Ok((name, ids));
    }
    Ok((plain, ids))
}

/// Delivers on an outbound thread; forgets the subscription when the push service says it is
/// gone or its keys are unusable (see `deliver`), and logs anything but success.
fn deliver_and_settle(vapid: &Vapid, writer: &Writer, sub: &Subscription, payload: &[u8]) {
    let outcome = deliver::deliver(vapid, sub, payload, crate::crypto::time::now_ms() / 1000);
    if matches!(outcome, Outcome::Delivered) {
        return;
    }
    eprintln!("push: subscription {} (user {}): {}", sub.id, sub.user_id, outcome.describe());
    if outcome.forget() {
        forget(writer, sub);
    }
}

/// Deletes the row that was pushed to (still at the same endpoint), logged as Rails logs it.
pub fn forget(writer: &Writer, sub: &Subscription) {
    let (id, endpoint) = (sub.id, sub.endpoint.clone());
    writer.submit(db::Job::new(
        move |c| push_subscriptions::delete_gone(c, id, &endpoint),
        move |r| match r {
            Ok(1) => eprintln!("push: Destroying push subscription: {id}"),
            Ok(_) => {}
            Err(e) => eprintln!("push: deleting subscription {id} failed: {e}"),
        },
    ));
}
