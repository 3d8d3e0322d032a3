//! Turbo signed stream names (spec/03 §11.3): what `turbo_stream_from` puts in the page
//! and the Turbo Streams channel verifies on subscribe.
//!
//! The payload is only the JSON string of the stream name, signed HMAC-SHA256 with strict
//! base64 and no envelope. A record's part of a stream name is the URL-safe unpadded
//! base64 of its global id; parts are joined with `:`.

use super::base64::{self, Alphabet};
use super::json::{self, Reader};
use super::pbkdf2::Keys;
use super::verifier::{self, Bare, Opened};
use super::Scratch;

/// Appends the signed form of `stream_name` (e.g. `rooms`).
pub fn sign_stream_name(keys: &Keys, stream_name: &[u8], out: &mut Vec<u8>) {
    let mut payload = Vec::with_capacity(stream_name.len() + 8);
    json::write_string(stream_name, &mut payload);
    keys.turbo_stream.sign(&payload, out);
}

/// Verifies a signed stream name and appends the stream name to `out`. Returns false
/// (and leaves `out` untouched) when it is not valid.
pub fn verify_stream_name(
    keys: &Keys,
    signed: &[u8],
    now_ms: i64,
    s: &mut Scratch,
    out: &mut Vec<u8>,
) -> bool {
    s.a.clear();
    s.b.clear();
    if keys.turbo_stream.verify(signed, &mut s.a).is_err() {
        return false;
    }
    let Ok(Opened::Data(d)) = verifier::open(&s.a, "", now_ms, Bare::Refuse, &mut s.b) else {
        return false;
    };
    let mut r = Reader::new(d);
    let Ok(raw) = r.string() else { return false };
    if r.end().is_err() {
        return false;
    }
    json::unescape(raw, out).is_ok()
}

/// Appends the stream-name part for a record with global id `gid`
/// (`gid://campfire/Rooms::Open/1` → `Z2lkOi8vY2FtcGZpcmUvUm9vbXM6Ok9wZW4vMQ`).
pub fn gid_param(gid: &[u8], out: &mut Vec<u8>) {
    base64::encode(Alphabet::UrlSafe, false, gid, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_767_225_600_000;
    const ROOMS: &str =
        "InJvb21zIg==--54acd827f0a7db144c75316a9fc488c0a949f9635b1e47956ce1bd9d1cf2c41d";
    const OPEN_ROOM_1: &str = "IloybGtPaTh2WTJGdGNHWnBjbVV2VW05dmJYTTZPazl3Wlc0dk1ROm1lc3NhZ2VzIg==--7a0d7d7bda1dbd57278ab84a8a19005f4aa320d557c57f73032cdf3d8c785656";

    #[test]
    fn spec03_stream_name_vectors() {
        let keys = Keys::derive(b"dummy");
        let mut name = Vec::new();
        gid_param(b"gid://campfire/Rooms::Open/1", &mut name);
        assert_eq!(name, b"Z2lkOi8vY2FtcGZpcmUvUm9vbXM6Ok9wZW4vMQ");
        name.extend_from_slice(b":messages");
        for (stream, signed) in [(&b"rooms"[..], ROOMS), (&name[..], OPEN_ROOM_1)] {
            let mut v = Vec::new();
            sign_stream_name(&keys, stream, &mut v);
            assert_eq!(String::from_utf8(v).unwrap(), signed);
            let mut out = Vec::new();
            assert!(verify_stream_name(
                &keys,
                signed.as_bytes(),
                NOW,
                &mut Scratch::default(),
                &mut out
            ));
            assert_eq!(out, stream);
        }
        let mut out = Vec::new();
        assert!(!verify_stream_name(
            &keys,
            &ROOMS.as_bytes()[1..],
            NOW,
            &mut Scratch::default(),
            &mut out
        ));
        assert!(!verify_stream_name(
            &Keys::derive(b"x"),
            ROOMS.as_bytes(),
            NOW,
            &mut Scratch::default(),
            &mut out
        ));
        assert!(out.is_empty());
    }
}
