//! CRC-32 (IEEE 802.3, the zlib/gzip polynomial). Used for Rails fixture ids and gzip trailers.

const fn table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static TABLE: [u32; 256] = table();

/// Continues a CRC-32 over `data` from a previous value (0 to start).
pub fn update(crc: u32, data: &[u8]) -> u32 {
    let mut c = !crc;
    for &b in data {
        c = TABLE[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// CRC-32 of `data`.
pub fn crc32(data: &[u8]) -> u32 {
    update(0, data)
}

/// The id Rails gives a fixture row: CRC32(label) mod (2^30 - 1).
pub fn fixture_id(label: &str) -> i64 {
    (crc32(label.as_bytes()) % 0x3FFF_FFFF) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(update(update(0, b"1234"), b"56789"), 0xCBF4_3926);
    }

    #[test]
    fn fixture_ids_match_the_published_ones() {
        assert_eq!(fixture_id("watercooler"), 486777696);
        assert_eq!(fixture_id("hq"), 201306877);
        assert_eq!(fixture_id("david"), 127326141);
        assert_eq!(fixture_id("fourth"), 933434481);
        assert_eq!(fixture_id("signal"), 873240054);
    }
}
