//! Cookie request header parsing (RFC 6265 §5.4 shape: `a=1; b=2`). Values stay as sent; the
//! crypto layer decodes signed and encrypted ones.

/// Iterates the `(name, value)` pairs of one Cookie header value. Pairs without '=' are skipped;
/// a value in double quotes is returned without them.
pub fn iter(header: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    header.split(|&b| b == b';').filter_map(|pair| {
        let pair = pair.trim_ascii();
        let eq = pair.iter().position(|&b| b == b'=')?;
        let name = pair[..eq].trim_ascii();
        let mut value = pair[eq + 1..].trim_ascii();
        if value.len() >= 2 && value[0] == b'"' && value[value.len() - 1] == b'"' {
            value = &value[1..value.len() - 1];
        }
        if name.is_empty() {
            None
        } else {
            Some((name, value))
        }
    })
}

/// The value of the first cookie called `name` (exact, case-sensitive) in one header value.
pub fn get<'a>(header: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    iter(header).find(|(n, _)| *n == name).map(|(_, v)| v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cookies() {
        let h = b"a=1; session_token=abc--def; b=\"q\";junk; =x";
        assert_eq!(get(h, b"session_token"), Some(&b"abc--def"[..]));
        assert_eq!(get(h, b"b"), Some(&b"q"[..]));
        assert_eq!(get(h, b"A"), None);
        assert_eq!(get(h, b"junk"), None);
        assert_eq!(iter(h).count(), 3);
    }
}
