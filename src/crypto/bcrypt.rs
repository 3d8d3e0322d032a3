//! bcrypt password hashes as Rails' `has_secure_password` (bcrypt-ruby) writes them:
//! `$2a$12$<22-char salt><31-char hash>`.
//!
//! The Blowfish primitive comes from the `blowfish` crate (its `bcrypt` feature exposes
//! the salted key schedule); the algorithm around it is here: EksBlowfishSetup with
//! 2^cost rounds, 64 encryptions of "OrpheanBeholderScryDoubt", and bcrypt's own base64.
//! The key is the password up to its first NUL byte, plus a terminating NUL, truncated
//! to 72 bytes (as crypt_blowfish, which bcrypt-ruby wraps, reads a C string). `$2a$`,
//! `$2b$` and `$2y$` hash identically under those rules.
//!
//! Slow by design (cost 12 is ~250 ms): run it on the worker thread, never on a loop.

use blowfish::Blowfish;

use super::token::ct_eq;
use crate::sys::random;

/// Cost of new hashes (bcrypt-ruby's default in production).
pub const COST: u32 = 12;
const MIN_COST: u32 = 4;
const MAX_COST: u32 = 31;

const ALPHABET: &[u8; 64] = b"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Appends bcrypt's base64 (its own alphabet, no padding) of `src`.
fn encode(src: &[u8], out: &mut Vec<u8>) {
    for chunk in src.chunks(3) {
        let mut n = 0u32;
        for (i, &b) in chunk.iter().enumerate() {
            n |= (b as u32) << (16 - 8 * i);
        }
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]);
        }
    }
}

/// Decodes exactly `dst.len()` bytes from bcrypt base64; leftover low bits are ignored, as
/// crypt_blowfish does for the salt's last character.
fn decode(src: &[u8], dst: &mut [u8]) -> Option<()> {
    let mut acc = 0u32;
    let mut bits = 0;
    let mut chars = src.iter();
    for d in dst.iter_mut() {
        while bits < 8 {
            let c = *chars.next()?;
            let v = ALPHABET.iter().position(|&a| a == c)? as u32;
            acc = (acc << 6) | v;
            bits += 6;
        }
        bits -= 8;
        *d = (acc >> bits) as u8;
        acc &= (1 << bits) - 1;
    }
    Some(())
}

/// The 23 bytes of bcrypt output for `password`, `salt` and `cost` (2^cost rounds).
fn raw_hash(password: &[u8], salt: &[u8; 16], cost: u32) -> [u8; 23] {
    let mut key = [0u8; 72];
    let pw = match password.iter().position(|&c| c == 0) {
        Some(nul) => &password[..nul],
        None => password,
    };
    // The password's bytes and its NUL, cut at 72: from 72 bytes on the NUL falls off.
    let n = pw.len().min(72);
    key[..n].copy_from_slice(&pw[..n]);
    let key_len = (n + 1).min(72);
    let key = &key[..key_len];

    let mut state = Blowfish::bc_init_state();
    state.salted_expand_key(salt, key);
    for _ in 0..(1u64 << cost) {
        state.bc_expand_key(key);
        state.bc_expand_key(salt);
    }
    let magic = b"OrpheanBeholderScryDoubt";
    let mut out = [0u8; 24];
    for (block, chunk) in out.chunks_mut(8).zip(magic.chunks(8)) {
        let mut lr = [
            u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]),
            u32::from_be_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]),
        ];
        for _ in 0..64 {
            lr = state.bc_encrypt(lr);
        }
        block[..4].copy_from_slice(&lr[0].to_be_bytes());
        block[4..].copy_from_slice(&lr[1].to_be_bytes());
    }
    let mut h = [0u8; 23];
    h.copy_from_slice(&out[..23]);
    h
}

/// The full 60-character hash of `password` with a given salt and cost, `$2a$` prefix.
/// `cost` is clamped to bcrypt's range 4..=31.
pub fn hash_with_salt(password: &[u8], salt: &[u8; 16], cost: u32) -> String {
    let cost = cost.clamp(MIN_COST, MAX_COST);
    let mut out = Vec::with_capacity(60);
    out.extend_from_slice(b"$2a$");
    out.push(b'0' + (cost / 10) as u8);
    out.push(b'0' + (cost % 10) as u8);
    out.push(b'$');
    encode(salt, &mut out);
    encode(&raw_hash(password, salt, cost), &mut out);
    // Only ASCII from ALPHABET and the prefix was written.
    String::from_utf8(out).unwrap_or_default()
}

/// A new `$2a$12$` hash of `password` under a fresh random salt, for `password_digest`.
pub fn hash(password: &[u8]) -> String {
    hash_with_salt(password, &random::bytes(), COST)
}

/// Whether `password` matches `digest` (`$2a$`, `$2b$` or `$2y$`, any cost 04..31). A
/// malformed or empty digest never matches. The final comparison is constant-time.
pub fn verify(password: &[u8], digest: &[u8]) -> bool {
    let Some(parts) = parse(digest) else {
        return false;
    };
    let (cost, salt, expected) = parts;
    let mut got = Vec::with_capacity(31);
    encode(&raw_hash(password, &salt, cost), &mut got);
    ct_eq(&got, expected)
}

fn parse(digest: &[u8]) -> Option<(u32, [u8; 16], &[u8])> {
    if digest.len() != 60 {
        return None;
    }
    let (prefix, rest) = digest.split_at(7);
    if !matches!(&prefix[..4], b"$2a$" | b"$2b$" | b"$2y$") || prefix[6] != b'$' {
        return None;
    }
    let (tens, ones) = (prefix[4], prefix[5]);
    if !tens.is_ascii_digit() || !ones.is_ascii_digit() {
        return None;
    }
    let cost = ((tens - b'0') * 10 + (ones - b'0')) as u32;
    if !(MIN_COST..=MAX_COST).contains(&cost) {
        return None;
    }
    let (salt_text, hash_text) = rest.split_at(22);
    let mut salt = [0u8; 16];
    decode(salt_text, &mut salt)?;
    let mut check = [0u8; 23];
    decode(hash_text, &mut check)?;
    Some((cost, salt, hash_text))
}

#[cfg(test)]
mod tests {
    use super::*;

    // crypt_blowfish's (Openwall) published test vectors, cross-checked with pyca/bcrypt.
    const VECTORS: &[(&[u8], &str)] = &[
        (b"U*U", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW"),
        (b"U*U*", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK"),
        (b"U*U*U", "$2a$05$XXXXXXXXXXXXXXXXXXXXXOAcXxm9kjPGEMsLznoKqmqw7tc8WCx4a"),
        (b"", "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy"),
        (b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789chars after 72 are ignored",
            "$2a$05$abcdefghijklmnopqrstuu5s2v8.iXieOjg/.AySBTTZIIVFJeBui"),
        (b"\xff\xff\xa3", "$2b$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e"),
        (b"\xff\xff\xa3", "$2y$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e"),
        ("✓ päss".as_bytes(), "$2b$04$abcdefghijklmnopqrstuuxy5xw1rLoBSPIxY4h69rrcdgZSzfsbG"),
    ];

    #[test]
    fn published_vectors_verify() {
        for (pw, digest) in VECTORS {
            assert!(verify(pw, digest.as_bytes()), "{digest}");
            let mut wrong = pw.to_vec();
            wrong.insert(0, b'!');
            assert!(!verify(&wrong, digest.as_bytes()), "{digest}");
        }
    }

    #[test]
    fn hashing_reproduces_a_2a_vector() {
        let mut salt = [0u8; 16];
        decode(b"CCCCCCCCCCCCCCCCCCCCC.", &mut salt).unwrap();
        assert_eq!(hash_with_salt(b"U*U", &salt, 5), VECTORS[0].1);
    }

    /// The Rails test fixtures' password at production cost 12 (hash made by pyca/bcrypt).
    #[test]
    fn cost_12_as_rails_writes_it() {
        let digest = b"$2a$12$R9h/cIPz0gi.URNNX3kh2Oeh1g/Vh6Cd8nhLW7Vw4OS2.1vhevWmK";
        assert!(verify(b"secret123456", digest));
        assert!(!verify(b"secret12345", digest));
    }

    #[test]
    fn new_hashes_round_trip_with_random_salts() {
        let mut salt = [7u8; 16];
        random::fill(&mut salt);
        let a = hash_with_salt(b"correct horse", &salt, 4);
        assert!(a.starts_with("$2a$04$") && a.len() == 60);
        assert!(verify(b"correct horse", a.as_bytes()));
        assert!(!verify(b"correct horsf", a.as_bytes()));
        assert_eq!(&a[7..29].len(), &22);
    }

    #[test]
    fn nul_and_72_byte_rules() {
        let d = VECTORS[0].1.as_bytes();
        assert!(verify(b"U*U\0anything", d), "stops at NUL like a C string");
        let long = VECTORS[4].0;
        assert!(verify(&long[..72], VECTORS[4].1.as_bytes()));
        assert!(!verify(&long[..71], VECTORS[4].1.as_bytes()));
    }

    #[test]
    fn malformed_digests_never_match() {
        let good = VECTORS[3].1;
        for bad in [
            "",
            "$2a$05$",
            "plain",
            "$2x$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy",
            "$2a$03$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy",
            "$2a$32$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy",
            "$2a$0a$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy",
            "$2a$05$CCCCCCCCCCCCCCCCCCCCC.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWN",
            "$2a$05$CCCCCCCCCCCCCCCCCCCC!.7uG0VCzI2bS7j6ymqJi9CdcdxiRTWNy",
        ] {
            assert!(!verify(b"", bad.as_bytes()), "{bad}");
        }
        assert!(verify(b"", good.as_bytes()));
    }
}
