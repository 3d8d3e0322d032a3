//! Random tokens in the formats Rails Campfire mints, and constant-time comparison.
//!
//! Formats follow spec/03 §11.4: has_secure_token's 24-character base58 session tokens,
//! `XXXX-XXXX-XXXX` join codes, 12-character bot tokens, 28-character Active Storage blob
//! keys, UUID v4 client message ids, the 64-hex Rails session id and the 32 raw bytes of a
//! CSRF token. Every character is drawn uniformly (rejection sampling, no modulo bias).

use crate::sys::random;

const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const ALPHANUMERIC: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const BASE36: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";

/// Compares two byte strings in time that depends only on their lengths.
pub fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    // Keep the optimiser from turning the loop into an early exit.
    std::hint::black_box(diff) == 0
}

/// Fills `out` with characters drawn uniformly from `alphabet` (at most 64 symbols).
fn fill_from(alphabet: &[u8], out: &mut [u8]) {
    let mut pool = [0u8; 64];
    let mut used = pool.len();
    for slot in out.iter_mut() {
        loop {
            if used == pool.len() {
                random::fill(&mut pool);
                used = 0;
            }
            let r = (pool[used] & 63) as usize;
            used += 1;
            if let Some(&c) = alphabet.get(r) {
                *slot = c;
                break;
            }
        }
    }
}

/// A login session token (`sessions.token`): 24 base58 characters, as has_secure_token.
pub fn session_token() -> [u8; 24] {
    let mut t = [0u8; 24];
    fill_from(BASE58, &mut t);
    t
}

/// An account join code: 12 alphanumeric characters as `XXXX-XXXX-XXXX`.
pub fn join_code() -> [u8; 14] {
    let mut c = [b'-'; 14];
    for group in c.chunks_mut(5) {
        fill_from(ALPHANUMERIC, &mut group[..4]);
    }
    c
}

/// A bot token: 12 alphanumeric characters (the bot key is `<user id>-<token>`).
pub fn bot_token() -> [u8; 12] {
    let mut t = [0u8; 12];
    fill_from(ALPHANUMERIC, &mut t);
    t
}

/// An Active Storage blob key: 28 characters of `[0-9a-z]`.
pub fn blob_key() -> [u8; 28] {
    let mut k = [0u8; 28];
    fill_from(BASE36, &mut k);
    k
}

/// A random UUID v4 in lowercase hyphenated form.
pub fn uuid_v4() -> [u8; 36] {
    let mut b: [u8; 16] = random::bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let mut out = [b'-'; 36];
    let mut pos = 0;
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            pos += 1;
        }
        out[pos..pos + 2].copy_from_slice(&hex_byte(*byte));
        pos += 2;
    }
    out
}

/// A Rails session id: 32 random bytes as 64 lowercase hex characters.
pub fn session_id() -> [u8; 64] {
    let b: [u8; 32] = random::bytes();
    let mut out = [0u8; 64];
    for (pair, byte) in out.chunks_mut(2).zip(b) {
        pair.copy_from_slice(&hex_byte(byte));
    }
    out
}

/// Lowercase hex digits of one byte.
pub fn hex_byte(b: u8) -> [u8; 2] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    [HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let t = session_token();
        assert!(t.iter().all(|c| BASE58.contains(c)));
        assert_ne!(t, session_token());

        let j = join_code();
        assert_eq!([j[4], j[9]], [b'-', b'-']);
        for (i, c) in j.iter().enumerate() {
            if i != 4 && i != 9 {
                assert!(c.is_ascii_alphanumeric());
            }
        }
        assert!(bot_token().iter().all(u8::is_ascii_alphanumeric));
        assert!(blob_key()
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()));

        let u = uuid_v4();
        let s = std::str::from_utf8(&u).unwrap();
        let parts: Vec<&str> = s.split('-').collect();
        assert_eq!(
            parts.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'));
        assert!(matches!(parts[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'));

        let id = session_id();
        assert!(id
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c)));
    }

    #[test]
    fn base58_draws_cover_the_alphabet() {
        let mut seen = [false; 256];
        for _ in 0..200 {
            for c in session_token() {
                seen[c as usize] = true;
            }
        }
        assert!(BASE58.iter().all(|&c| seen[c as usize]));
        assert!(
            !seen[b'0' as usize]
                && !seen[b'O' as usize]
                && !seen[b'I' as usize]
                && !seen[b'l' as usize]
        );
    }

    #[test]
    fn ct_eq_compares_contents_and_lengths() {
        assert!(ct_eq(b"", b""));
        assert!(ct_eq(b"abc", b"abc"));
        assert!(!ct_eq(b"abc", b"abd"));
        assert!(!ct_eq(b"abc", b"ab"));
    }

    #[test]
    fn hex() {
        assert_eq!(hex_byte(0x9f), *b"9f");
        assert_eq!(hex_byte(0), *b"00");
    }
}
