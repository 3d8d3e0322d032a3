//! Rails-compatible cryptography: the keys, cookies, signed ids and passwords that let a
//! Rails Campfire install switch to campfire-room without logging anyone out.
//!
//! `Keys::derive` runs once at start (PBKDF2 from SECRET_KEY_BASE); everything else is
//! cheap enough to run on the loops, except `bcrypt`, which belongs on the worker thread.
//! Formats and test vectors: spec/03-auth-and-crypto.md.

pub mod base64;
pub mod bcrypt;
pub mod cookies;
pub mod csrf;
pub mod encryptor;
pub mod gcm;
pub mod json;
pub mod memo;
pub mod pbkdf2;
pub mod sgid;
pub mod signed_id;
pub mod time;
pub mod token;
pub mod turbo;
pub mod variation;
pub mod verifier;
#[cfg(test)]
mod vectors;

pub use pbkdf2::Keys;
pub use token::ct_eq;

/// Buffers reused from request to request by whoever verifies cookies and tokens (one
/// per loop thread): once warm, verifying allocates nothing.
#[derive(Default)]
pub struct Scratch {
    pub(crate) a: Vec<u8>,
    pub(crate) b: Vec<u8>,
}

/// Parses a non-negative decimal id with no sign, spaces or leading `+`.
pub(crate) fn parse_id(digits: &[u8]) -> Option<i64> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    digits.iter().try_fold(0i64, |n, &d| {
        n.checked_mul(10)?.checked_add((d - b'0') as i64)
    })
}

/// Appends the decimal form of `n`.
pub(crate) fn write_int(n: i64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut v = n.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}
