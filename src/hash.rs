//! A fast word-at-a-time hash for in-process tables and content keys (the response cache's keys,
//! `gzip`'s recurring parts): eight bytes per multiply-rotate step from a caller's seed. Not a
//! keyed PRF like SipHash; its users say why collisions cannot be lined up against them.

/// The hasher; its state is the seed to start from.
pub struct WordHasher(pub u64);

impl std::hash::Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut h = self.0;
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            h = (h ^ u64::from_le_bytes(b)).wrapping_mul(K).rotate_left(29);
        }
        let tail = words.remainder();
        let mut b = [0u8; 8];
        b[..tail.len()].copy_from_slice(tail);
        // The length keeps "ab" and "ab\0" apart.
        h = (h ^ u64::from_le_bytes(b) ^ ((tail.len() as u64) << 59)).wrapping_mul(K).rotate_left(29);
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        // hashbrown takes its control bits from the top: mix the low bits up into them.
        let h = self.0;
        (h ^ (h >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (h >> 17)
    }
}

/// A hasher for tables keyed by a database id (an `i64` the database hands out, not a value a
/// client picks): one multiply, where the default SipHash costs ~150 instructions a lookup
/// (the fragment cache does 40 lookups a room page).
#[derive(Default)]
pub struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_i64(&mut self, n: i64) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        // hashbrown takes its control bits from the top seven and its bucket from the low bits.
        self.0 ^ (self.0 >> 32)
    }
}

/// Builds `IdHasher`s for a `HashMap`.
pub type IdHash = std::hash::BuildHasherDefault<IdHasher>;
