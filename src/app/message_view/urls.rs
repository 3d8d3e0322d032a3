//! The URLs the partial links to that need escaping or signing.

use crate::crypto::{signed_id, Keys};
use crate::db;
use crate::crypto::memo::Memo;
use crate::hash::IdHash;
use crate::views::Out;
use std::cell::RefCell;

thread_local! {
    /// This thread's avatar URLs by user id and `updated_at` (about 130 bytes each): a sidebar
    /// or a page of messages shows the same few over and over, and making one signs a token.
    static URLS: RefCell<Memo<(i64, i64), IdHash>> = RefCell::new(Memo::new(1024));
}

/// `/users/<avatar token>/avatar?v=<updated_at as YYYYMMDDHHMMSS>` (Rails' `fresh_user_avatar_path`).
pub fn avatar_url(keys: &Keys, user_id: i64, updated_at: i64) -> String {
    URLS.with(|m| m.borrow_mut().get(keys, (user_id, updated_at), || make_avatar_url(keys, user_id, updated_at)).to_owned())
}

/// Writes `avatar_url` as an attribute value without building a `String`.
pub fn write_avatar_url(keys: &Keys, user_id: i64, updated_at: i64, o: &mut Out<'_>) {
    URLS.with(|m| o.built_url(m.borrow_mut().get(keys, (user_id, updated_at), || make_avatar_url(keys, user_id, updated_at))));
}

fn make_avatar_url(keys: &Keys, user_id: i64, updated_at: i64) -> String {
    let mut token = Vec::with_capacity(64);
    signed_id::avatar_token(keys, user_id, &mut token);
    let mut url = String::with_capacity(token.len() + 31);
    url.push_str("/users/");
    push_path_segment(&mut url, std::str::from_utf8(&token).unwrap_or(""));
    url.push_str("/avatar?v=");
    // `YYYY-MM-DD HH:MM:SS`: the digits are the first 19 bytes but the five separators.
    let stamp = db::time::format(updated_at);
    let stamp = stamp.as_str();
    for part in [0..4, 5..7, 8..10, 11..13, 14..16, 17..19] {
        url.push_str(stamp.get(part).unwrap_or(""));
    }
    url
}

/// Percent-encodes everything but RFC 3986 unreserved characters (file names in blob URLs).
pub(super) fn push_path_segment(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        }
    }
}
