//! The message and user JSON of the bot API and of message answers to `Accept: application/json`
//! (spec/02 §5.3).

use super::Renderer;
use crate::crypto::Keys;
use crate::db::messages::{self, Message};
use crate::db::{self, users, Conn};
use crate::richtext;

/// Appends the message JSON of spec/02 §5.3 (`messages/_message.json.jbuilder`): id,
/// `created_at` (ISO 8601 with milliseconds), the body's plain text and rendered HTML, the
/// creator, the room id and the message URL. `origin` is `scheme://host` for the absolute URLs.
pub fn message_json(db: &Conn, keys: &Keys, m: &Message, origin: &str, out: &mut Vec<u8>) -> db::Result<()> {
    use crate::crypto::json::write_string;
    let r = Renderer::new(db, keys);
    let stored = messages::body(db, m.id)?.unwrap_or_default();
    let resolve = |sgid: &str| r.mention(sgid);
    let mut plain = richtext::plain_text(&stored, &resolve);
    if plain.is_empty() {
        if let Some(a) = messages::attachment(db, m.id)? {
            plain = a.filename;
        }
    }
    let html = richtext::render_body(&stored, &resolve);
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(m.id.to_string().as_bytes());
    out.extend_from_slice(b",\"created_at\":\"");
    crate::crypto::time::write_iso8601(m.created_at.div_euclid(1000), out);
    out.extend_from_slice(b"\",\"body\":{\"plain_text\":");
    write_string(plain.as_bytes(), out);
    out.extend_from_slice(b",\"html\":");
    write_string(html.as_bytes(), out);
    out.extend_from_slice(b"},\"creator\":");
    user_json(&r, m.creator_id, origin, out)?;
    out.extend_from_slice(format!(",\"room\":{{\"id\":{}}},\"url\":", m.room_id).as_bytes());
    write_string(format!("{origin}/rooms/{}/messages/{}", m.room_id, m.id).as_bytes(), out);
    out.push(b'}');
    Ok(())
}

/// Appends the user JSON of spec/02 §5.3 (`users/_user.json.jbuilder`): id, name, role
/// (`bot`, `administrator` or `member`) and the absolute avatar URL.
pub fn user_json(r: &Renderer<'_>, user_id: i64, origin: &str, out: &mut Vec<u8>) -> db::Result<()> {
    use crate::crypto::json::write_string;
    let person = r.person(user_id)?;
    let role = match users::find(r.db, user_id)? {
        Some(u) if u.is_bot() => "bot",
        Some(u) if u.is_administrator() => "administrator",
        _ => "member",
    };
    out.extend_from_slice(b"{\"id\":");
    out.extend_from_slice(person.id.to_string().as_bytes());
    out.extend_from_slice(b",\"name\":");
    write_string(person.name.as_bytes(), out);
    out.extend_from_slice(b",\"role\":\"");
    out.extend_from_slice(role.as_bytes());
    out.extend_from_slice(b"\",\"avatar_url\":");
    write_string(format!("{origin}{}", person.avatar_url).as_bytes(), out);
    out.push(b'}');
    Ok(())
}
