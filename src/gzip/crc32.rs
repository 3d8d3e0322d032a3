//! CRC-32 as gzip uses it (IEEE 802.3 polynomial, reflected): a slice-by-16 table walk for
//! bytes, and combination of two CRCs without the bytes, so a body assembled from parts whose
//! CRCs are known costs one multiplication per part instead of a pass over the whole body.
//!
//! Combining is arithmetic in GF(2)[x] modulo the CRC polynomial: appending `len` bytes after
//! a message multiplies the first CRC by x^(8·len) (mod P); zlib's original
//! `crc32_combine` did this with 32×32 bit-matrix squaring, which is the same operator
//! written as a matrix. Here the powers x^(2^k) are a compile-time table and the operator for
//! a length is a single 32-bit polynomial (`shift`), which a part can compute once and keep.

/// The reflected polynomial 0x04c11db7.
const POLY: u32 = 0xedb8_8320;

/// CRC-32 of `data`, continuing from `crc` (0 to start).
pub fn crc32(crc: u32, data: &[u8]) -> u32 {
    let t = &TABLES;
    let mut c = !crc;
    let mut chunks = data.chunks_exact(16);
    for b in &mut chunks {
        let lo = c ^ u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        c = t[15][(lo & 0xff) as usize]
            ^ t[14][((lo >> 8) & 0xff) as usize]
            ^ t[13][((lo >> 16) & 0xff) as usize]
            ^ t[12][(lo >> 24) as usize]
            ^ t[11][b[4] as usize]
            ^ t[10][b[5] as usize]
            ^ t[9][b[6] as usize]
            ^ t[8][b[7] as usize]
            ^ t[7][b[8] as usize]
            ^ t[6][b[9] as usize]
            ^ t[5][b[10] as usize]
            ^ t[4][b[11] as usize]
            ^ t[3][b[12] as usize]
            ^ t[2][b[13] as usize]
            ^ t[1][b[14] as usize]
            ^ t[0][b[15] as usize];
    }
    for &b in chunks.remainder() {
        c = t[0][((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// The operator that moves a CRC past `len` bytes: x^(8·len) mod P. Keep it with a part whose
/// length is fixed, then `combine_shifted` costs one multiplication.
pub fn shift(len: u64) -> u32 {
    // x^0, in reflected order the top bit.
    let mut p = 1u32 << 31;
    let mut n = len;
    // x^(8·len) = product of x^(2^(k+3)) over the set bits k of len.
    let mut k = 3;
    while n != 0 {
        if n & 1 != 0 {
            p = multiply(X2N[k & 31], p);
        }
        n >>= 1;
        k += 1;
    }
    p
}

/// The CRC of A followed by B, from `crc_a`, `crc_b` and B's length: zlib's `crc32_combine`.
pub fn combine(crc_a: u32, crc_b: u32, len_b: u64) -> u32 {
    combine_shifted(crc_a, crc_b, shift(len_b))
}

/// `combine` with B's length already turned into its operator by `shift`.
pub fn combine_shifted(crc_a: u32, crc_b: u32, shift_b: u32) -> u32 {
    multiply(shift_b, crc_a) ^ crc_b
}

/// a·b mod P, both reflected (bit 31 is x^0).
const fn multiply(a: u32, mut b: u32) -> u32 {
    let mut m = 1u32 << 31;
    let mut p = 0u32;
    loop {
        if a & m != 0 {
            p ^= b;
            if a & (m - 1) == 0 {
                break;
            }
        }
        m >>= 1;
        // b·x: a right shift in reflected order, reduced by P when x^31 overflows.
        b = if b & 1 != 0 { (b >> 1) ^ POLY } else { b >> 1 };
        if m == 0 {
            break;
        }
    }
    p
}

/// `X2N[k]` = x^(2^k) mod P.
static X2N: [u32; 32] = x2n_table();

const fn x2n_table() -> [u32; 32] {
    let mut t = [0u32; 32];
    // x^1
    let mut p = 1u32 << 30;
    t[0] = p;
    let mut n = 1;
    while n < 32 {
        p = multiply(p, p);
        t[n] = p;
        n += 1;
    }
    t
}

/// Slice-by-16 tables: `[0]` is the classic byte table, `[k]` advances a byte k more zero bytes.
static TABLES: [[u32; 256]; 16] = tables();

const fn tables() -> [[u32; 256]; 16] {
    let mut t = [[0u32; 256]; 16];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 16 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            k += 1;
        }
        i += 1;
    }
    t
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The byte-at-a-time definition, to check the table walk against.
    fn bitwise(data: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in data {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { POLY ^ (c >> 1) } else { c >> 1 };
            }
        }
        !c
    }

    /// Deterministic pseudo-random bytes (xorshift32), shared with the splice tests.
    pub(in crate::gzip) fn noise(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    #[test]
    fn known_vectors() {
        assert_eq!(crc32(0, b""), 0);
        assert_eq!(crc32(0, b"a"), 0xe8b7_be43);
        assert_eq!(crc32(0, b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(0, b"The quick brown fox jumps over the lazy dog"), 0x414f_a339);
        assert_eq!(crc32(0, &[0u8; 32]), 0x190a_55ad);
        assert_eq!(crc32(0, &[0xffu8; 32]), 0xff6c_ab0b);
    }

    #[test]
    fn table_walk_matches_the_definition_at_every_length() {
        let data = noise(300, 7);
        for n in 0..data.len() {
            assert_eq!(crc32(0, &data[..n]), bitwise(&data[..n]), "length {n}");
        }
        // continuing across a split gives the same as one pass
        assert_eq!(crc32(crc32(0, &data[..133]), &data[133..]), crc32(0, &data));
    }

    #[test]
    fn combine_equals_the_crc_of_the_whole() {
        let data = noise(70_000, 99);
        let whole = crc32(0, &data);
        for cut in [0, 1, 7, 16, 255, 4096, 32_768, 69_999, 70_000] {
            let (a, b) = data.split_at(cut);
            assert_eq!(combine(crc32(0, a), crc32(0, b), b.len() as u64), whole, "cut at {cut}");
            assert_eq!(combine_shifted(crc32(0, a), crc32(0, b), shift(b.len() as u64)), whole);
        }
        // many parts folded left to right
        let mut crc = 0;
        let mut at = 0;
        for (i, len) in [0usize, 3, 100, 1, 5000, 17, 64_879].iter().enumerate() {
            let part = &data[at..at + len];
            crc = combine(crc, crc32(0, part), part.len() as u64);
            at += len;
            assert_eq!(crc, crc32(0, &data[..at]), "after part {i}");
        }
        assert_eq!(at, data.len());
    }

    #[test]
    fn shift_by_nothing_is_identity() {
        assert_eq!(shift(0), 1 << 31);
        assert_eq!(combine(0x1234_5678, 0, 0), 0x1234_5678);
    }
}
