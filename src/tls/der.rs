//! Just enough DER (X.690) for what TLS setup needs: reading a certificate's validity and
//! names, and writing the few structures we build (a CSR for ACME, PKCS#8 for P-256 keys).
//! Only definite lengths; anything else is `None`, never a panic.

pub const SEQUENCE: u8 = 0x30;
pub const SET: u8 = 0x31;
pub const INTEGER: u8 = 0x02;
pub const BIT_STRING: u8 = 0x03;
pub const OCTET_STRING: u8 = 0x04;
pub const OID: u8 = 0x06;
pub const UTF8_STRING: u8 = 0x0c;
pub const UTC_TIME: u8 = 0x17;
pub const GENERALIZED_TIME: u8 = 0x18;

/// A cursor over a run of DER elements.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(der: &'a [u8]) -> Reader<'a> {
        Reader { rest: der }
    }

    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next element's tag and contents.
    pub fn any(&mut self) -> Option<(u8, &'a [u8])> {
        let (&tag, after) = self.rest.split_first()?;
        let (&first, mut after) = after.split_first()?;
        let len = if first < 0x80 {
            first as usize
        } else {
            let n = (first & 0x7f) as usize;
            if n == 0 || n > 4 || after.len() < n {
                return None;
            }
            let len = after[..n].iter().fold(0usize, |a, &b| a << 8 | b as usize);
            after = &after[n..];
            len
        };
        if after.len() < len {
            return None;
        }
        let (body, rest) = after.split_at(len);
        self.rest = rest;
        Some((tag, body))
    }

    /// The next element's contents when its tag is `tag`.
    pub fn expect(&mut self, tag: u8) -> Option<&'a [u8]> {
        match self.any()? {
            (t, body) if t == tag => Some(body),
            _ => None,
        }
    }

    /// The next element if it has tag `tag` (then consumed), else None and nothing consumed.
    pub fn optional(&mut self, tag: u8) -> Option<&'a [u8]> {
        if self.rest.first() == Some(&tag) {
            self.expect(tag)
        } else {
            None
        }
    }
}

/// Appends one element with `tag` around `body`.
pub fn put(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    let len = body.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u32).to_be_bytes();
        let skip = bytes.iter().take_while(|&&b| b == 0).count();
        out.push(0x80 | (4 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
}

/// `body` wrapped with `tag`, as a new vector.
pub fn wrap(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 6);
    put(&mut out, tag, body);
    out
}

/// A non-negative big-endian integer as a DER INTEGER's contents (minimal, sign bit clear).
pub fn unsigned_integer(mut be: &[u8]) -> Vec<u8> {
    while be.len() > 1 && be[0] == 0 {
        be = &be[1..];
    }
    let mut body = Vec::with_capacity(be.len() + 1);
    if be.first().is_some_and(|b| b & 0x80 != 0) {
        body.push(0);
    }
    body.extend_from_slice(be);
    wrap(INTEGER, &body)
}

/// A UTCTime or GeneralizedTime (`Z` form, as RFC 5280 requires) as Unix seconds.
pub fn time(tag: u8, body: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(body).ok()?;
    let full = match tag {
        // RFC 5280 §4.1.2.5.1: two-digit years 50–99 are 19xx, 00–49 are 20xx.
        UTC_TIME if s.len() == 13 => format!("{}{s}", if s.as_bytes()[0] >= b'5' { "19" } else { "20" }),
        GENERALIZED_TIME if s.len() == 15 => s.to_string(),
        _ => return None,
    };
    let b = full.as_bytes();
    // Digits then `Z`: also what makes the slicing below land on character boundaries.
    if b[14] != b'Z' || !b[..14].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let iso = format!("{}-{}-{}T{}:{}:{}Z", &full[0..4], &full[4..6], &full[6..8], &full[8..10], &full[10..12], &full[12..14]);
    crate::crypto::time::parse_iso8601(iso.as_bytes()).map(|ms| ms / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_round_trip() {
        for len in [0usize, 1, 127, 128, 255, 256, 70_000] {
            let body = vec![7u8; len];
            let enc = wrap(OCTET_STRING, &body);
            let mut r = Reader::new(&enc);
            assert_eq!(r.expect(OCTET_STRING), Some(&body[..]));
            assert!(r.is_empty());
        }
    }

    #[test]
    fn truncated_or_odd_input_is_none() {
        for bad in [&[0x30u8][..], &[0x30, 0x05, 1], &[0x30, 0x80], &[0x30, 0x85, 1, 1, 1, 1, 1]] {
            assert!(Reader::new(bad).any().is_none(), "{bad:?}");
        }
    }

    #[test]
    fn integers_are_minimal_and_positive() {
        assert_eq!(unsigned_integer(&[0, 0, 5]), [2, 1, 5]);
        assert_eq!(unsigned_integer(&[0x80]), [2, 2, 0, 0x80]);
        assert_eq!(unsigned_integer(&[0]), [2, 1, 0]);
    }

    #[test]
    fn times() {
        assert_eq!(time(UTC_TIME, b"700101000000Z"), Some(0));
        assert_eq!(time(UTC_TIME, b"491231235959Z"), Some(2524607999));
        assert_eq!(time(GENERALIZED_TIME, b"20380119031408Z"), Some(2147483648));
        assert_eq!(time(UTC_TIME, b"700101000000+0100"), None);
        // 13 bytes with a two-byte character where a digit belongs: None, not a slicing panic.
        assert_eq!(time(UTC_TIME, "7\u{e9}010100000Z".as_bytes()), None);
    }
}
