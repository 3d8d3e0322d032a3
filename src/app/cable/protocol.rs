//! The Action Cable wire format (spec/06 §2–§3): the JSON of the frames we send and the
//! parsing of the commands the client sends.
//!
//! Identifiers are kept exactly as they appear inside the command's JSON string (escapes and
//! all) and written back the same way, so the client sees byte for byte the string it sent
//! without us ever re-serialising its JSON.

use crate::crypto::json::{self, Reader};
use crate::http::websocket::{write_head, OP_TEXT};

pub const WELCOME: &[u8] = br#"{"type":"welcome"}"#;
pub const UNAUTHORIZED: &[u8] = br#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#;
pub const REMOTE_RECONNECT: &[u8] = br#"{"type":"disconnect","reason":"remote","reconnect":true}"#;
pub const REMOTE_FINAL: &[u8] = br#"{"type":"disconnect","reason":"remote","reconnect":false}"#;

/// `{"type":"ping","message":<unix seconds>}`.
pub fn ping(unix_secs: u64, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"type":"ping","message":"#);
    crate::http::response::push_u64(out, unix_secs);
    out.push(b'}');
}

/// `{"identifier":"<ident>","type":"confirm_subscription"}` (or reject).
pub fn subscription_reply(ident: &[u8], confirm: bool, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"identifier":""#);
    out.extend_from_slice(ident);
    out.extend_from_slice(if confirm { br#"","type":"confirm_subscription"}"# } else { br#"","type":"reject_subscription"}"# });
}

/// `{"identifier":"<ident>","message":<message_json>}` as the payload of a message frame.
pub fn data(ident: &[u8], message_json: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"identifier":""#);
    out.extend_from_slice(ident);
    out.extend_from_slice(br#"","message":"#);
    out.extend_from_slice(message_json);
    out.push(b'}');
}

/// A complete WebSocket text frame carrying `data(ident, message_json)`.
pub fn data_frame(ident: &[u8], message_json: &[u8]) -> Vec<u8> {
    let len = ident.len() + message_json.len() + 28;
    let mut f = Vec::with_capacity(len + 10);
    write_head(OP_TEXT, len, &mut f);
    data(ident, message_json, &mut f);
    f
}

/// The same as `data_frame`, compressed (permessage-deflate, no context takeover).
pub fn deflated_data_frame(ident: &[u8], message_json: &[u8]) -> Vec<u8> {
    let mut payload = Vec::with_capacity(ident.len() + message_json.len() + 28);
    data(ident, message_json, &mut payload);
    let mut f = Vec::with_capacity(payload.len() / 3 + 16);
    crate::http::websocket::write_deflated_text(&payload, &mut f);
    f
}

/// A complete WebSocket text frame holding `payload`.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + 10);
    write_head(OP_TEXT, payload.len(), &mut f);
    f.extend_from_slice(payload);
    f
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Subscribe,
    Unsubscribe,
    Message,
}

/// One client command; slices borrow the received text.
#[derive(Debug, PartialEq, Eq)]
pub struct Command<'a> {
    pub verb: Verb,
    /// The identifier as sent, still escaped (what we echo and key subscriptions by).
    pub ident: &'a [u8],
    /// The `data` string as sent, still escaped (empty when absent).
    pub data: &'a [u8],
}

/// Longer than every member name we look for.
const KEY_MAX: usize = 24;

/// A member name as JSON means it, escapes undone (`"\u0063hannel"` is `channel`, as Rails'
/// parser reads it). A name too long to be one we look for comes back as sent.
fn key_name<'k>(raw: &'k [u8], buf: &'k mut [u8; KEY_MAX]) -> &'k [u8] {
    if !raw.contains(&b'\\') {
        return raw;
    }
    match json::unescape_to_slice(raw, buf) {
        Ok(n) => buf.get(..n).unwrap_or(raw),
        Err(_) => raw,
    }
}

/// Parses `{"command":…,"identifier":"…","data":"…"}`. None for anything else.
pub fn command(text: &[u8]) -> Option<Command<'_>> {
    let mut r = Reader::new(text);
    r.begin_object().ok()?;
    let (mut verb, mut ident, mut data) = (None, None, &b""[..]);
    let mut kb = [0u8; KEY_MAX];
    while let Some(raw) = r.next_key().ok()? {
        match key_name(raw, &mut kb) {
            b"command" => {
                verb = Some(match r.string().ok()? {
                    b"subscribe" => Verb::Subscribe,
                    b"unsubscribe" => Verb::Unsubscribe,
                    b"message" => Verb::Message,
                    _ => return None,
                })
            }
            b"identifier" => ident = Some(r.string().ok()?),
            b"data" => data = r.string().ok()?,
            _ => {
                r.value().ok()?;
            }
        }
    }
    r.end().ok()?;
    Some(Command { verb: verb?, ident: ident?, data })
}

/// The parameters Campfire's identifiers carry.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Params {
    pub channel: Vec<u8>,
    /// `room_id` as a number or a numeric string; None when absent or not an integer.
    pub room_id: Option<i64>,
    pub signed_stream_name: Option<Vec<u8>>,
}

/// Decodes an identifier (the escaped contents of its JSON string) into its parameters.
pub fn params(ident: &[u8]) -> Option<Params> {
    let mut text = Vec::with_capacity(ident.len());
    json::unescape(ident, &mut text).ok()?;
    let mut r = Reader::new(&text);
    r.begin_object().ok()?;
    let mut p = Params::default();
    let mut kb = [0u8; KEY_MAX];
    while let Some(raw) = r.next_key().ok()? {
        match key_name(raw, &mut kb) {
            b"channel" => json::unescape(r.string().ok()?, &mut p.channel).ok()?,
            b"room_id" => {
                p.room_id = match r.peek()? {
                    b'"' => std::str::from_utf8(r.string().ok()?).ok()?.parse().ok(),
                    _ => r.integer().ok(),
                }
            }
            b"signed_stream_name" => {
                let mut v = Vec::new();
                json::unescape(r.string().ok()?, &mut v).ok()?;
                p.signed_stream_name = Some(v);
            }
            _ => {
                r.value().ok()?;
            }
        }
    }
    r.end().ok()?;
    Some(p)
}

/// The `action` named by a `message` command's data (`{"action":"present"}`), unescaped.
pub fn action(data: &[u8]) -> Option<Vec<u8>> {
    let mut text = Vec::with_capacity(data.len());
    json::unescape(data, &mut text).ok()?;
    let mut r = Reader::new(&text);
    r.begin_object().ok()?;
    let mut action = None;
    let mut kb = [0u8; KEY_MAX];
    while let Some(raw) = r.next_key().ok()? {
        if key_name(raw, &mut kb) == b"action" {
            let mut a = Vec::new();
            json::unescape(r.string().ok()?, &mut a).ok()?;
            action = Some(a);
        } else {
            r.value().ok()?;
        }
    }
    action
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_keep_the_identifier_as_sent() {
        let t = br#"{"command":"subscribe","identifier":"{\"channel\":\"PresenceChannel\",\"room_id\":12}"}"#;
        let c = command(t).unwrap();
        assert_eq!(c.verb, Verb::Subscribe);
        assert_eq!(c.ident, br#"{\"channel\":\"PresenceChannel\",\"room_id\":12}"#);
        let p = params(c.ident).unwrap();
        assert_eq!(p.channel, b"PresenceChannel");
        assert_eq!(p.room_id, Some(12));
        let mut reply = Vec::new();
        subscription_reply(c.ident, true, &mut reply);
        assert_eq!(reply, br#"{"identifier":"{\"channel\":\"PresenceChannel\",\"room_id\":12}","type":"confirm_subscription"}"#);
    }

    #[test]
    fn message_commands_and_actions() {
        let t = br#"{"command":"message","identifier":"{\"channel\":\"TypingNotificationsChannel\",\"room_id\":\"3\"}","data":"{\"action\":\"start\"}"}"#;
        let c = command(t).unwrap();
        assert_eq!(c.verb, Verb::Message);
        assert_eq!(params(c.ident).unwrap().room_id, Some(3));
        assert_eq!(action(c.data).unwrap(), b"start");
        assert_eq!(action(br#"{\"x\":1}"#), None);
        // Escaped member names mean what they spell (found by tests/cable_fuzz.rs).
        let t = br#"{"\u0063ommand":"subscribe","identifier":"{\"ch\\u0061nnel\":\"RoomChannel\",\"room\\u005fid\":7}"}"#;
        let c = command(t).unwrap();
        assert_eq!(params(c.ident).unwrap(), Params { channel: b"RoomChannel".to_vec(), room_id: Some(7), signed_stream_name: None });
        assert_eq!(action(br#"{\"\\u0061ction\":\"away\"}"#).unwrap(), b"away");
    }

    #[test]
    fn garbage_is_refused() {
        for t in [&b""[..], b"{}", b"[]", br#"{"command":"dance","identifier":"{}"}"#, br#"{"command":"subscribe"}"#, b"{\"command\":\"subscribe\",\"identifier\":\"x\"", b"\xff\xfe"] {
            assert_eq!(command(t), None, "{:?}", String::from_utf8_lossy(t));
        }
        assert_eq!(params(b"not json"), None);
        assert_eq!(params(br#"{\"room_id\":1.5}"#).unwrap().room_id, None);
    }

    #[test]
    fn json_strings_escape_only_what_json_requires() {
        use crate::crypto::json::write_plain_string as json_string;
        let mut out = Vec::new();
        json_string("<p class=\"a\">x &amp; y\\\n\u{1}\u{2028}é</p>".as_bytes(), &mut out);
        assert_eq!(out, "\"<p class=\\\"a\\\">x &amp; y\\\\\\n\\u0001\\u2028é</p>\"".as_bytes());
        let mut back = Vec::new();
        crate::crypto::json::unescape(&out[1..out.len() - 1], &mut back).unwrap();
        assert_eq!(back, "<p class=\"a\">x &amp; y\\\n\u{1}\u{2028}é</p>".as_bytes());
        out.clear();
        json_string(b"", &mut out);
        assert_eq!(out, b"\"\"");
    }

    #[test]
    fn data_frames_are_one_websocket_frame() {
        let f = data_frame(br#"{\"channel\":\"UnreadRoomsChannel\"}"#, br#"{"roomId":1}"#);
        assert_eq!(f[0], 0x81);
        assert_eq!(f[1] as usize, f.len() - 2);
        assert_eq!(&f[2..], br#"{"identifier":"{\"channel\":\"UnreadRoomsChannel\"}","message":{"roomId":1}}"#);
        let mut p = Vec::new();
        ping(1_735_732_800, &mut p);
        assert_eq!(p, br#"{"type":"ping","message":1735732800}"#);
    }
}
