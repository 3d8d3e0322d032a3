//! The URLs the partial links to that need escaping or signing.

use crate::crypto::{signed_id, Keys};
use crate::db;
use crate::crypto::memo::Memo;
use crate::hash::IdHash;
use std::cell::RefCell;

thread_local! {
    /// This thread's avatar tokens, path-escaped, by user id (about 100 bytes each).
    static TOKENS: RefCell<Memo<i64, IdHash>> = RefCell::new(Memo::new(1024));
}

/// `/users/<avatar token>/avatar?v=<updated_at as YYYYMMDDHHMMSS>` (Rails' `fresh_user_avatar_path`).
pub fn avatar_url(keys: &Keys, user_id: i64, updated_at: i64) -> String {
    TOKENS.with(|t| {
        let mut memo = t.borrow_mut();
        let token = memo.get(keys, user_id, || {
            let mut token = Vec::with_capacity(64);
            signed_id::avatar_token(keys, user_id, &mut token);
            let mut escaped = String::with_capacity(token.len() + 8);
            push_path_segment(&mut escaped, std::str::from_utf8(&token).unwrap_or(""));
            escaped
        });
        let mut url = String::with_capacity(token.len() + 31);
        url.push_str("/users/");
        url.push_str(token);
        url.push_str("/avatar?v=");
        // `YYYY-MM-DD HH:MM:SS`: the digits are the first 19 bytes but the five separators.
        let stamp = db::time::format(updated_at);
        let stamp = stamp.as_str();
        for part in [0..4, 5..7, 8..10, 11..13, 14..16, 17..19] {
            url.push_str(stamp.get(part).unwrap_or(""));
        }
        url
    })
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
