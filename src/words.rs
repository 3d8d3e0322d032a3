//! Eight bytes at a time: whether a word of text holds some byte, so escapers copy plain runs
//! whole and look at single bytes only in the words that may need it. Each test leaves the top
//! bit set in at least one byte of its result exactly when some byte matches (the classic
//! zero-byte test: a result of 0 means "none", which is all the callers ask).

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes of `w` (exactly 8 long) as a little-endian word.
#[inline]
pub fn load(w: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(w);
    u64::from_le_bytes(b)
}

/// Non-zero iff some byte of `x` is below `n` (`n` ≤ 0x80).
#[inline]
pub fn below(x: u64, n: u8) -> u64 {
    x.wrapping_sub(ONES * u64::from(n)) & !x & HIGH
}

/// Non-zero iff some byte of `x` equals `c`.
#[inline]
pub fn eq(x: u64, c: u8) -> u64 {
    below(x ^ (ONES * u64::from(c)), 1)
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_a_byte_loop() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Bytes from a small alphabet, so matches and near misses are common.
            let w: Vec<u8> = (0..8).map(|k| [0x00, 0x1f, 0x20, b'"', b'<', b'=', 0x7f, 0x80, 0xe2][(seed >> (k * 4)) as usize % 9]).collect();
            let x = load(&w);
            assert_eq!(below(x, 0x20) != 0, w.iter().any(|&b| b < 0x20), "{w:?}");
            assert_eq!(eq(x, b'<') != 0, w.contains(&b'<'), "{w:?}");
            assert_eq!(eq(x, b'"') | eq(x, 0x80) != 0, w.iter().any(|&b| b == b'"' || b == 0x80), "{w:?}");
        }
    }
}
