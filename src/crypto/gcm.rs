//! AES-GCM (NIST SP 800-38D) on the `aes` block cipher, with GHASH written here.
//!
//! Rails encrypts the `_campfire_session` cookie with AES-256-GCM, 12-byte IVs and a
//! 16-byte tag; Web Push (RFC 8291) encrypts with AES-128-GCM, hence both key sizes. GHASH is a constant-time carry-less multiply in the style of BearSSL's
//! "ctmul64": integer multiplications on operands with 3-bit holes between the bits that
//! matter, so no table lookups depend on secret data. Known limit: about a hundred 64-bit
//! multiplications per 16-byte block; a PCLMULQDQ path would be ~10× faster, but cookies
//! are a few hundred bytes and are decrypted only when a handler needs the session.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use aes::{Aes128, Aes256, Block};

use super::token::ct_eq;

/// The ciphertext or its tag did not authenticate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Invalid;

/// An AES-GCM key, expanded once (round keys and the hash key H).
#[derive(Clone)]
pub struct Gcm {
    aes: Cipher,
    h: HashKey,
}

/// The block cipher under the mode: the key size is fixed when the key is expanded.
#[derive(Clone)]
enum Cipher {
    Aes128(Aes128),
    Aes256(Aes256),
}

impl Cipher {
    fn encrypt_block(&self, b: &mut Block) {
        match self {
            Cipher::Aes128(a) => a.encrypt_block(b),
            Cipher::Aes256(a) => a.encrypt_block(b),
        }
    }

    fn encrypt_blocks(&self, b: &mut [Block]) {
        match self {
            Cipher::Aes128(a) => a.encrypt_blocks(b),
            Cipher::Aes256(a) => a.encrypt_blocks(b),
        }
    }
}

/// H split for Karatsuba (low, high, low^high halves), each also bit-reversed, so the
/// per-block multiply only reverses the data side.
#[derive(Clone, Copy)]
struct HashKey {
    halves: [u64; 3],
    reversed: [u64; 3],
}

impl HashKey {
    fn new(h: u128) -> HashKey {
        let (h1, h0) = ((h >> 64) as u64, h as u64);
        let halves = [h0, h1, h0 ^ h1];
        HashKey {
            halves,
            reversed: halves.map(u64::reverse_bits),
        }
    }
}

/// Low 64 bits of the carry-less product of `x` and `y`. Each of the four masked parts
/// keeps one bit in four, so a column sums at most 15 ones below bit 64 and the carries
/// never reach the next kept bit.
fn bmul64_lo(x: u64, y: u64) -> u64 {
    const M0: u64 = 0x1111_1111_1111_1111;
    const M1: u64 = M0 << 1;
    const M2: u64 = M0 << 2;
    const M3: u64 = M0 << 3;
    let (x0, x1, x2, x3) = (x & M0, x & M1, x & M2, x & M3);
    let (y0, y1, y2, y3) = (y & M0, y & M1, y & M2, y & M3);
    let m = u64::wrapping_mul;
    let z0 = m(x0, y0) ^ m(x1, y3) ^ m(x2, y2) ^ m(x3, y1);
    let z1 = m(x0, y1) ^ m(x1, y0) ^ m(x2, y3) ^ m(x3, y2);
    let z2 = m(x0, y2) ^ m(x1, y1) ^ m(x2, y0) ^ m(x3, y3);
    let z3 = m(x0, y3) ^ m(x1, y2) ^ m(x2, y1) ^ m(x3, y0);
    (z0 & M0) | (z1 & M1) | (z2 & M2) | (z3 & M3)
}

/// Full 127-bit carry-less product of `x` and `y` (`y_rev` = `y` bit-reversed); the high
/// half is the low half of the bit-reversed operands' product, reversed back.
fn clmul64(x: u64, y: u64, y_rev: u64) -> u128 {
    let lo = bmul64_lo(x, y);
    let hi = bmul64_lo(x.reverse_bits(), y_rev).reverse_bits() >> 1;
    (hi as u128) << 64 | lo as u128
}

/// Multiplies two field elements in GCM's bit-reflected representation (a block read
/// big-endian: the top bit of the integer is the coefficient of x^0), reducing modulo
/// x^128 + x^7 + x^2 + x + 1.
#[cfg(test)]
fn gf_mul(a: u128, b: u128) -> u128 {
    gf_mul_key(a, &HashKey::new(b))
}

fn gf_mul_key(a: u128, k: &HashKey) -> u128 {
    let (a1, a0) = ((a >> 64) as u64, a as u64);
    let p0 = clmul64(a0, k.halves[0], k.reversed[0]);
    let p2 = clmul64(a1, k.halves[1], k.reversed[1]);
    let mid = clmul64(a0 ^ a1, k.halves[2], k.reversed[2]) ^ p0 ^ p2;
    let lo = p0 ^ (mid << 64);
    let hi = p2 ^ (mid >> 64);
    // The reflected 255-bit product shifted left by one: `hi` now holds the coefficients
    // of x^0..x^127 and `lo` those of x^128..x^254, both reflected.
    let hi = (hi << 1) | (lo >> 127);
    let lo = lo << 1;
    // x^(128+t) = x^t (x^7 + x^2 + x + 1); terms that pass x^127 again fold once more.
    let spill = (lo << 127) ^ (lo << 126) ^ (lo << 121);
    hi ^ lo ^ (lo >> 1) ^ (lo >> 2) ^ (lo >> 7) ^ spill ^ (spill >> 1) ^ (spill >> 2) ^ (spill >> 7)
}

fn block_u128(b: &[u8]) -> u128 {
    let mut full = [0u8; 16];
    full[..b.len()].copy_from_slice(b);
    u128::from_be_bytes(full)
}

impl Gcm {
    /// Expands a 256-bit key (AES-256-GCM).
    pub fn new(key: &[u8; 32]) -> Gcm {
        Gcm::with(Cipher::Aes256(Aes256::new(&(*key).into())))
    }

    /// Expands a 128-bit key (AES-128-GCM).
    pub fn new128(key: &[u8; 16]) -> Gcm {
        Gcm::with(Cipher::Aes128(Aes128::new(&(*key).into())))
    }

    fn with(aes: Cipher) -> Gcm {
        let mut h = Block::default();
        aes.encrypt_block(&mut h);
        Gcm {
            aes,
            h: HashKey::new(u128::from_be_bytes(h.into())),
        }
    }

    fn ghash(&self, aad: &[u8], ct: &[u8]) -> u128 {
        let mut y = 0u128;
        for data in [aad, ct] {
            for chunk in data.chunks(16) {
                y = gf_mul_key(y ^ block_u128(chunk), &self.h);
            }
        }
        let lens = ((aad.len() as u128 * 8) << 64) | (ct.len() as u128 * 8);
        gf_mul_key(y ^ lens, &self.h)
    }

    /// XORs `buf` with the keystream that starts at counter block J0 + 1.
    fn ctr(&self, iv: &[u8; 12], buf: &mut [u8]) {
        const PAR: usize = 8;
        let mut counter = 2u32;
        for chunk in buf.chunks_mut(16 * PAR) {
            let mut blocks = [Block::default(); PAR];
            let n = chunk.len().div_ceil(16);
            for b in blocks.iter_mut().take(n) {
                b[..12].copy_from_slice(iv);
                b[12..].copy_from_slice(&counter.to_be_bytes());
                counter = counter.wrapping_add(1);
            }
            self.aes.encrypt_blocks(&mut blocks[..n]);
            for (part, ks) in chunk.chunks_mut(16).zip(blocks.iter()) {
                for (p, k) in part.iter_mut().zip(ks.iter()) {
                    *p ^= k;
                }
            }
        }
    }

    fn tag(&self, iv: &[u8; 12], aad: &[u8], ct: &[u8]) -> [u8; 16] {
        let mut j0 = Block::default();
        j0[..12].copy_from_slice(iv);
        j0[15] = 1;
        self.aes.encrypt_block(&mut j0);
        (u128::from_be_bytes(j0.into()) ^ self.ghash(aad, ct)).to_be_bytes()
    }

    /// Encrypts `buf` in place and returns the 16-byte tag over `aad` and the ciphertext.
    /// The caller must never reuse an IV with the same key (use fresh random IVs).
    pub fn seal(&self, iv: &[u8; 12], aad: &[u8], buf: &mut [u8]) -> [u8; 16] {
        self.ctr(iv, buf);
        self.tag(iv, aad, buf)
    }

    /// Checks `tag` (in constant time) and only then decrypts `buf` in place. On failure
    /// `buf` still holds the untouched ciphertext.
    pub fn open(
        &self,
        iv: &[u8; 12],
        aad: &[u8],
        buf: &mut [u8],
        tag: &[u8],
    ) -> Result<(), Invalid> {
        if !ct_eq(&self.tag(iv, aad, buf), tag) {
            return Err(Invalid);
        }
        self.ctr(iv, buf);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Bit-by-bit multiplication straight from SP 800-38D Algorithm 1, as an oracle.
    fn gf_mul_reference(x: u128, y: u128) -> u128 {
        const R: u128 = 0xe1 << 120;
        let (mut z, mut v) = (0u128, y);
        for i in 0..128 {
            if (x >> (127 - i)) & 1 == 1 {
                z ^= v;
            }
            v = if v & 1 == 1 { (v >> 1) ^ R } else { v >> 1 };
        }
        z
    }

    #[test]
    fn field_multiply_matches_the_reference() {
        let mut s = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let specials = [
            0,
            1,
            u128::MAX,
            1 << 127,
            0xe1 << 120,
            u64::MAX as u128,
            (u64::MAX as u128) << 64,
        ];
        for &a in &specials {
            for &b in &specials {
                assert_eq!(gf_mul(a, b), gf_mul_reference(a, b));
            }
        }
        for _ in 0..2000 {
            // xorshift128-ish mixing is plenty for test inputs
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let t = s.rotate_left(61) ^ 0x9e37_79b9_7f4a_7c15;
            assert_eq!(gf_mul(s, t), gf_mul_reference(s, t));
        }
    }

    struct Case {
        key: &'static str,
        iv: &'static str,
        pt: &'static str,
        aad: &'static str,
        ct: &'static str,
        tag: &'static str,
    }

    // The AES-256 cases (13-16) of "The Galois/Counter Mode of Operation (GCM)",
    // McGrew & Viega, the test vectors NIST's GCM validation refers to.
    const CASES: &[Case] = &[
        Case { key: "0000000000000000000000000000000000000000000000000000000000000000",
            iv: "000000000000000000000000", pt: "", aad: "", ct: "",
            tag: "530f8afbc74536b9a963b4f1c4cb738b" },
        Case { key: "0000000000000000000000000000000000000000000000000000000000000000",
            iv: "000000000000000000000000", pt: "00000000000000000000000000000000", aad: "",
            ct: "cea7403d4d606b6e074ec5d3baf39d18", tag: "d0d1c8a799996bf0265b98b5d48ab919" },
        Case { key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            iv: "cafebabefacedbaddecaf888",
            pt: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
            aad: "",
            ct: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
            tag: "b094dac5d93471bdec1a502270e3cc6c" },
        Case { key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            iv: "cafebabefacedbaddecaf888",
            pt: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            ct: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            tag: "76fc6ece0f4e1768cddf8853bb2d551b" },
    ];

    #[test]
    fn mcgrew_viega_aes256_vectors() {
        for c in CASES {
            let key: [u8; 32] = hex(c.key).try_into().unwrap();
            let iv: [u8; 12] = hex(c.iv).try_into().unwrap();
            let gcm = Gcm::new(&key);
            let mut buf = hex(c.pt);
            let tag = gcm.seal(&iv, &hex(c.aad), &mut buf);
            assert_eq!(buf, hex(c.ct));
            assert_eq!(tag.to_vec(), hex(c.tag));
            gcm.open(&iv, &hex(c.aad), &mut buf, &tag).unwrap();
            assert_eq!(buf, hex(c.pt));
        }
    }

    // The AES-128 cases (2 and 4) of the same paper: Web Push uses AES-128-GCM.
    #[test]
    fn mcgrew_viega_aes128_vectors() {
        let cases = [
            ("00000000000000000000000000000000", "000000000000000000000000", "00000000000000000000000000000000", "",
             "0388dace60b6a392f328c2b971b2fe78", "ab6e47d42cec13bdf53a67b21257bddf"),
            ("feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
             "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
             "feedfacedeadbeeffeedfacedeadbeefabaddad2",
             "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
             "5bc94fbc3221a5db94fae95ae7121a47"),
        ];
        for (key, iv, pt, aad, ct, tag) in cases {
            let gcm = Gcm::new128(&hex(key).try_into().unwrap());
            let iv: [u8; 12] = hex(iv).try_into().unwrap();
            let mut buf = hex(pt);
            let t = gcm.seal(&iv, &hex(aad), &mut buf);
            assert_eq!(buf, hex(ct));
            assert_eq!(t.to_vec(), hex(tag));
            gcm.open(&iv, &hex(aad), &mut buf, &t).unwrap();
            assert_eq!(buf, hex(pt));
        }
    }

    #[test]
    fn tampering_is_refused_and_leaves_ciphertext() {
        let gcm = Gcm::new(&[7; 32]);
        let iv = [9; 12];
        let mut buf = b"hello, campfire, a message longer than one block".to_vec();
        let tag = gcm.seal(&iv, b"", &mut buf);
        let sealed = buf.clone();
        let mut flipped = buf.clone();
        flipped[3] ^= 1;
        assert_eq!(gcm.open(&iv, b"", &mut flipped, &tag), Err(Invalid));
        let mut bad_tag = tag;
        bad_tag[15] ^= 0x80;
        assert_eq!(gcm.open(&iv, b"", &mut buf, &bad_tag), Err(Invalid));
        assert_eq!(buf, sealed);
        assert_eq!(gcm.open(&[8; 12], b"", &mut buf, &tag), Err(Invalid));
        assert_eq!(gcm.open(&iv, b"", &mut buf, &tag[..15]), Err(Invalid));
        gcm.open(&iv, b"", &mut buf, &tag).unwrap();
        assert_eq!(buf, b"hello, campfire, a message longer than one block");
    }
}
