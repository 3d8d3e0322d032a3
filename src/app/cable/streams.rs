//! Stream (broadcasting) names, spec/06 §7: GlobalID params of rooms and users and the names
//! built from them. The writers of broadcasts (messages, rooms) and the channels both use these,
//! so the two sides cannot disagree on a name.

use crate::crypto::base64::{self, Alphabet};
use crate::db::rooms::Kind;

/// Appends a record's GlobalID param: URL-safe unpadded base64 of `gid://campfire/<class>/<id>`.
pub fn gid_param(class: &str, id: i64, out: &mut Vec<u8>) {
    let gid = format!("gid://campfire/{class}/{id}");
    base64::encode(Alphabet::UrlSafe, false, gid.as_bytes(), out);
}

/// A room's messages stream, `<room gid param>:messages` (RoomMessagesChannel).
pub fn room_messages(kind: Kind, room_id: i64) -> Vec<u8> {
    let mut s = Vec::with_capacity(56);
    gid_param(kind.as_str(), room_id, &mut s);
    s.extend_from_slice(b":messages");
    s
}

/// A room's typing stream, `typing_notifications:<room gid param>`.
pub fn typing(kind: Kind, room_id: i64) -> Vec<u8> {
    let mut s = b"typing_notifications:".to_vec();
    gid_param(kind.as_str(), room_id, &mut s);
    s
}

/// A user's sidebar stream, `<user gid param>:rooms` (Turbo::StreamsChannel).
pub fn user_rooms(user_id: i64) -> Vec<u8> {
    let mut s = Vec::with_capacity(40);
    gid_param("User", user_id, &mut s);
    s.extend_from_slice(b":rooms");
    s
}

/// `user_<id>_reads` (ReadRoomsChannel).
pub fn user_reads(user_id: i64) -> String {
    format!("user_{user_id}_reads")
}

/// `user_<id>_unreads` (UnreadRoomsChannel).
pub fn user_unreads(user_id: i64) -> String {
    format!("user_{user_id}_unreads")
}

/// `user_unreads` written into `buf` (a post's fan-out names one per member with a socket).
pub fn write_user_unreads(user_id: i64, buf: &mut Vec<u8>) {
    use std::io::Write;
    // Writing to a Vec cannot fail.
    let _ = write!(buf, "user_{user_id}_unreads");
}

/// The room a GlobalID param names: its STI kind and id. None unless it is exactly
/// `gid://campfire/Rooms::<Open|Closed|Direct>/<positive id>`.
pub fn parse_room_gid(param: &[u8]) -> Option<(Kind, i64)> {
    let mut gid = Vec::with_capacity(param.len());
    base64::decode(Alphabet::UrlSafe, param, &mut gid).ok()?;
    let rest = gid.strip_prefix(b"gid://campfire/")?;
    let slash = rest.iter().rposition(|&b| b == b'/')?;
    let kind = Kind::parse(std::str::from_utf8(&rest[..slash]).ok()?)?;
    let digits = &rest[slash + 1..];
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) || digits[0] == b'0' {
        return None;
    }
    let id = std::str::from_utf8(digits).ok()?.parse().ok()?;
    Some((kind, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_spec_examples() {
        assert_eq!(room_messages(Kind::Open, 1), b"Z2lkOi8vY2FtcGZpcmUvUm9vbXM6Ok9wZW4vMQ:messages");
        assert_eq!(user_rooms(1), b"Z2lkOi8vY2FtcGZpcmUvVXNlci8x:rooms");
        assert_eq!(typing(Kind::Open, 1), b"typing_notifications:Z2lkOi8vY2FtcGZpcmUvUm9vbXM6Ok9wZW4vMQ");
        assert_eq!(user_unreads(7), "user_7_unreads");
        let mut buf = Vec::new();
        write_user_unreads(7, &mut buf);
        assert_eq!(buf, user_unreads(7).as_bytes());
    }

    #[test]
    fn room_gids_parse_strictly() {
        assert_eq!(parse_room_gid(b"Z2lkOi8vY2FtcGZpcmUvUm9vbXM6Ok9wZW4vMQ"), Some((Kind::Open, 1)));
        let mut p = Vec::new();
        gid_param("Rooms::Direct", 9042, &mut p);
        assert_eq!(parse_room_gid(&p), Some((Kind::Direct, 9042)));
        for bad in ["User/1", "Rooms::Open/", "Rooms::Open/01", "Rooms::Open/x", "Rooms::Lobby/1"] {
            let mut p = Vec::new();
            base64::encode(Alphabet::UrlSafe, false, format!("gid://campfire/{bad}").as_bytes(), &mut p);
            assert_eq!(parse_room_gid(&p), None, "{bad}");
        }
        assert_eq!(parse_room_gid(b"!!"), None);
    }
}
