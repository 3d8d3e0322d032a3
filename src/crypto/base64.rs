//! Base64 (RFC 4648), the two alphabets Rails uses, with strict decoding.
//!
//! Rails writes cookies and most signatures in the standard alphabet with `=` padding
//! (Ruby's `strict_encode64`), and sgids, signed ids and CSRF tokens in the URL-safe one,
//! with or without padding. Decoding is strict: a wrong character, a misplaced or wrong
//! amount of padding, or non-zero leftover bits is an error, never a guess. Nothing here
//! allocates except by growing the caller's `Vec`.

/// Which 64-character alphabet: `+/` or `-_` for the last two symbols.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Alphabet {
    Standard,
    UrlSafe,
}

/// The input was not base64 in the requested form.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Invalid;

const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Length of the encoding of `n` bytes.
pub const fn encoded_len(n: usize, pad: bool) -> usize {
    if pad {
        n.div_ceil(3) * 4
    } else {
        (n * 4).div_ceil(3)
    }
}

/// Appends the base64 of `src` to `out`, with `=` padding when `pad`.
pub fn encode(alphabet: Alphabet, pad: bool, src: &[u8], out: &mut Vec<u8>) {
    let table = match alphabet {
        Alphabet::Standard => STD,
        Alphabet::UrlSafe => URL,
    };
    out.reserve(encoded_len(src.len(), pad));
    let mut chunks = src.chunks_exact(3);
    for c in &mut chunks {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        out.extend_from_slice(&[
            table[(n >> 18) as usize & 63],
            table[(n >> 12) as usize & 63],
            table[(n >> 6) as usize & 63],
            table[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = (a as u32) << 16;
            out.extend_from_slice(&[
                table[(n >> 18) as usize & 63],
                table[(n >> 12) as usize & 63],
            ]);
            if pad {
                out.extend_from_slice(b"==");
            }
        }
        [a, b] => {
            let n = (a as u32) << 16 | (b as u32) << 8;
            out.extend_from_slice(&[
                table[(n >> 18) as usize & 63],
                table[(n >> 12) as usize & 63],
                table[(n >> 6) as usize & 63],
            ]);
            if pad {
                out.push(b'=');
            }
        }
        _ => {}
    }
}

fn value(alphabet: Alphabet, c: u8) -> Option<u32> {
    let v = match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' if alphabet == Alphabet::Standard => 62,
        b'/' if alphabet == Alphabet::Standard => 63,
        b'-' if alphabet == Alphabet::UrlSafe => 62,
        b'_' if alphabet == Alphabet::UrlSafe => 63,
        _ => return None,
    };
    Some(v as u32)
}

/// Appends the decoding of `src` to `out`.
///
/// `Standard` requires padding (Ruby's `strict_decode64`); `UrlSafe` accepts it present
/// or absent (Ruby's `urlsafe_decode64`), but when present it must be exact. On error,
/// `out` is left as it was.
pub fn decode(alphabet: Alphabet, src: &[u8], out: &mut Vec<u8>) -> Result<(), Invalid> {
    let start = out.len();
    out.reserve(src.len() / 4 * 3 + 2);
    let r = decode_with(alphabet, src, |b| {
        out.extend_from_slice(b);
        Ok(())
    });
    if r.is_err() {
        out.truncate(start);
    }
    r
}

/// Decodes into `dst` without allocating and returns the decoded length; `dst` too
/// short is an error.
pub fn decode_to_slice(alphabet: Alphabet, src: &[u8], dst: &mut [u8]) -> Result<usize, Invalid> {
    let mut n = 0;
    decode_with(alphabet, src, |b| {
        let end = n + b.len();
        dst.get_mut(n..end).ok_or(Invalid)?.copy_from_slice(b);
        n = end;
        Ok(())
    })?;
    Ok(n)
}

fn decode_with(
    alphabet: Alphabet,
    src: &[u8],
    mut emit: impl FnMut(&[u8]) -> Result<(), Invalid>,
) -> Result<(), Invalid> {
    let body = match src {
        [rest @ .., b'=', b'='] => rest,
        [rest @ .., b'='] => rest,
        _ => src,
    };
    let padded = body.len() != src.len();
    if padded && !src.len().is_multiple_of(4) {
        return Err(Invalid);
    }
    if !padded && alphabet == Alphabet::Standard && !src.len().is_multiple_of(4) {
        return Err(Invalid);
    }
    if body.len() % 4 == 1 {
        return Err(Invalid);
    }
    let mut chunks = body.chunks_exact(4);
    for c in &mut chunks {
        let mut n = 0u32;
        for &b in c {
            n = n << 6 | value(alphabet, b).ok_or(Invalid)?;
        }
        emit(&[(n >> 16) as u8, (n >> 8) as u8, n as u8])?;
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut n = 0u32;
        for &b in rem {
            n = n << 6 | value(alphabet, b).ok_or(Invalid)?;
        }
        if rem.len() == 2 {
            if n & 0xf != 0 {
                return Err(Invalid);
            }
            emit(&[(n >> 4) as u8])?;
        } else {
            if n & 0x3 != 0 {
                return Err(Invalid);
            }
            emit(&[(n >> 10) as u8, (n >> 2) as u8])?;
        }
    }
    Ok(())
}

/// Decodes with `first`, then with the other alphabet, as Rails' verifiers do on reading.
pub fn decode_either(first: Alphabet, src: &[u8], out: &mut Vec<u8>) -> Result<(), Invalid> {
    let second = match first {
        Alphabet::Standard => Alphabet::UrlSafe,
        Alphabet::UrlSafe => Alphabet::Standard,
    };
    decode(first, src, out).or_else(|_| decode(second, src, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(a: Alphabet, pad: bool, s: &[u8]) -> String {
        let mut v = Vec::new();
        encode(a, pad, s, &mut v);
        assert_eq!(v.len(), encoded_len(s.len(), pad));
        String::from_utf8(v).unwrap()
    }

    fn dec(a: Alphabet, s: &str) -> Result<Vec<u8>, Invalid> {
        let mut v = b"keep".to_vec();
        let r = decode(a, s.as_bytes(), &mut v);
        if r.is_err() {
            assert_eq!(v, b"keep");
        }
        r.map(|_| v[4..].to_vec())
    }

    #[test]
    fn rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, b64) in cases {
            assert_eq!(enc(Alphabet::Standard, true, plain.as_bytes()), b64);
            assert_eq!(dec(Alphabet::Standard, b64).unwrap(), plain.as_bytes());
            assert_eq!(dec(Alphabet::UrlSafe, b64).unwrap(), plain.as_bytes());
            assert_eq!(
                dec(Alphabet::UrlSafe, b64.trim_end_matches('=')).unwrap(),
                plain.as_bytes()
            );
        }
    }

    #[test]
    fn alphabets_differ_in_two_symbols() {
        let bytes = [0xfb, 0xff, 0xbf];
        assert_eq!(enc(Alphabet::Standard, true, &bytes), "+/+/");
        assert_eq!(enc(Alphabet::UrlSafe, false, &bytes), "-_-_");
        assert_eq!(enc(Alphabet::UrlSafe, false, &[0xff]), "_w");
        assert_eq!(enc(Alphabet::UrlSafe, true, &[0xff]), "_w==");
        assert!(dec(Alphabet::Standard, "-_-_").is_err());
        assert!(dec(Alphabet::UrlSafe, "+/+/").is_err());
        let mut v = Vec::new();
        decode_either(Alphabet::Standard, b"-_-_", &mut v).unwrap();
        assert_eq!(v, bytes);
    }

    #[test]
    fn strictness() {
        for bad in [
            "Zg", "Zg=", "Zg===", "Z===", "Zm9v=", "Z", "Zh==", "Zm9=", "Zm 9v", "Zm9v\n", "=Zm9",
            "Zm=v", "é",
        ] {
            assert!(dec(Alphabet::Standard, bad).is_err(), "{bad:?}");
        }
        assert!(
            dec(Alphabet::UrlSafe, "Zh").is_err(),
            "non-zero trailing bits"
        );
        assert!(dec(Alphabet::UrlSafe, "Z").is_err());
        assert!(dec(Alphabet::UrlSafe, "Zg=").is_err());
    }

    #[test]
    fn decodes_into_slices() {
        let mut buf = [0u8; 6];
        assert_eq!(
            decode_to_slice(Alphabet::Standard, b"Zm9vYmFy", &mut buf),
            Ok(6)
        );
        assert_eq!(&buf, b"foobar");
        assert_eq!(
            decode_to_slice(Alphabet::Standard, b"Zm9vYmFyYg==", &mut buf),
            Err(Invalid)
        );
        assert_eq!(decode_to_slice(Alphabet::UrlSafe, b"Zm8", &mut buf), Ok(2));
    }

    #[test]
    fn round_trips_every_length() {
        let data: Vec<u8> = (0..=255u8).collect();
        for n in 0..data.len() {
            for (a, pad) in [
                (Alphabet::Standard, true),
                (Alphabet::UrlSafe, false),
                (Alphabet::UrlSafe, true),
            ] {
                let e = enc(a, pad, &data[..n]);
                assert_eq!(dec(a, &e).unwrap(), &data[..n]);
            }
        }
    }
}
