//! What the unit tests of spec/03's test vectors share: the keys derived from
//! `SECRET_KEY_BASE=dummy` (derived once per test binary: PBKDF2 is slow in debug builds) and
//! the clock they are checked at.

use super::Keys;

/// 2026-01-01T00:00:00Z, before every expiry in the vectors.
pub const NOW: i64 = 1_767_225_600_000;

/// The keys of `SECRET_KEY_BASE=dummy`.
pub fn keys() -> &'static Keys {
    static K: std::sync::OnceLock<Keys> = std::sync::OnceLock::new();
    K.get_or_init(|| Keys::derive(b"dummy"))
}
