//! Byte scanning eight bytes at a time (SWAR: one u64 holds eight bytes) for the two long runs
//! every request carries — header values (the session cookie alone is ~250 bytes) and the
//! cookie pairs inside them. A byte-at-a-time loop costs several instructions per byte; these
//! cost about one. Exactness: each word test below answers "does any of the eight bytes ..."
//! exactly (the classic `haszero`/`hasless` identities), and every caller finishes the last
//! partial word, or the word that tested positive, byte by byte.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `x` is zero.
#[inline]
const fn has_zero(x: u64) -> bool {
    x.wrapping_sub(ONES) & !x & HIGHS != 0
}

/// Whether any byte of `x` is below `n` (exact for n ≤ 128; bytes ≥ 0x80 never count).
#[inline]
const fn has_below(x: u64, n: u8) -> bool {
    x.wrapping_sub(ONES * n as u64) & !x & HIGHS != 0
}

/// The eight bytes at `i` as one word, if there are eight.
#[inline]
fn word(buf: &[u8], i: usize) -> Option<u64> {
    let chunk: [u8; 8] = buf.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// The index of the first `byte` in `hay`, if any.
pub fn find_byte(hay: &[u8], byte: u8) -> Option<usize> {
    let pattern = ONES * byte as u64;
    let mut i = 0;
    while let Some(x) = word(hay, i) {
        if has_zero(x ^ pattern) {
            break;
        }
        i += 8;
    }
    hay.get(i..)?.iter().position(|&b| b == byte).map(|p| p + i)
}

/// From `i` on, skips eight bytes at a time while they are all printable ASCII (0x20–0x7e) or
/// obs-text (≥ 0x80); returns where a byte-at-a-time check has to take over (at most
/// `buf.len()`). Never skips a control byte, DEL, CR or LF.
pub fn skip_plain_text(buf: &[u8], mut i: usize) -> usize {
    while let Some(x) = word(buf, i) {
        if has_below(x, 0x20) || has_zero(x ^ (ONES * 0x7f)) {
            break;
        }
        i += 8;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_agrees_with_position() {
        let text = b"session_token=abcdefghijklmnopqrstuvwxyz0123456789%3D%3D--0123456789abcdef; last_room=7; x";
        for start in 0..text.len() {
            let hay = &text[start..];
            for b in [b';', b'=', b'x', b'7', b'\0', 0xff] {
                assert_eq!(find_byte(hay, b), hay.iter().position(|&c| c == b), "{start} {b}");
            }
        }
    }

    #[test]
    fn skip_plain_text_stops_before_any_other_byte() {
        for bad in [0u8, b'\t', b'\r', b'\n', 0x1f, 0x7f] {
            for at in 0..40 {
                let mut v = vec![b'a'; 40];
                v[at] = bad;
                let stop = skip_plain_text(&v, 0);
                assert!(stop <= at, "byte {bad:#x} at {at} skipped (stopped at {stop})");
                assert!(at - stop < 8, "stopped a whole word early");
            }
        }
        let mut v = vec![0x80u8; 37];
        v.extend_from_slice(b" ~!");
        assert_eq!(skip_plain_text(&v, 0), 40, "obs-text and the printable edges pass");
        assert_eq!(skip_plain_text(&v, 35), 35, "fewer than eight left: the caller's loop");
    }
}
