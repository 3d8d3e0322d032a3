//! Cookie request header parsing (RFC 6265 §5.4 shape: `a=1; b=2`). Values stay as sent; the
//! crypto layer decodes signed and encrypted ones.

/// Iterates the `(name, value)` pairs of one Cookie header value. Pairs without '=' are skipped;
/// a value in double quotes is returned without them.
pub fn iter(header: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    header.split(|&b| b == b';').filter_map(pair)
}

/// The value of the first cookie called `name` (exact, case-sensitive) in one header value.
/// Same reading as `iter`, with the pair boundaries found eight bytes at a time: this runs on
/// every request, over a session cookie of a few hundred bytes.
pub fn get<'a>(header: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let mut rest = header;
    loop {
        let end = super::scan::find_byte(rest, b';');
        let this = rest.get(..end.unwrap_or(rest.len()))?;
        if let Some((n, v)) = pair(this) {
            if n == name {
                return Some(v);
            }
        }
        rest = rest.get(end? + 1..)?;
    }
}

/// One `name=value` pair, trimmed, quotes removed; `None` without '=' or without a name.
fn pair(pair: &[u8]) -> Option<(&[u8], &[u8])> {
    let pair = pair.trim_ascii();
    let eq = pair.iter().position(|&b| b == b'=')?;
    let name = pair.get(..eq)?.trim_ascii();
    let mut value = pair.get(eq + 1..)?.trim_ascii();
    if let [b'"', inner @ .., b'"'] = value {
        value = inner;
    }
    if name.is_empty() {
        None
    } else {
        Some((name, value))
    }
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
        assert_eq!(get(b"x=1;session_token=", b"session_token"), Some(&b""[..]));
        assert_eq!(get(b"a=1;;  ; b = 2 ;", b"b"), Some(&b"2"[..]));
        assert_eq!(get(b"a=1; a=2", b"a"), Some(&b"1"[..]), "the first one");
        assert_eq!(get(b"", b"a"), None);
        assert_eq!(get(b"q=\"\"", b"q"), Some(&b""[..]));
        assert_eq!(get(b"q=\"", b"q"), Some(&b"\""[..]), "a lone quote stays");
    }

    #[test]
    fn get_agrees_with_iter() {
        let long = format!("session_token={}--{}; last_room=486777696; _campfire_session=abc%3D", "x".repeat(200), "f".repeat(64));
        let headers: [&[u8]; 5] = [long.as_bytes(), b"a=1; session_token=abc--def; b=\"q\";junk; =x", b";;;", b"a", b" a = 1 ; b=2"];
        for h in headers {
            for name in [&b"session_token"[..], b"last_room", b"_campfire_session", b"a", b"b", b"junk", b""] {
                let want = iter(h).find(|(n, _)| *n == name).map(|(_, v)| v);
                assert_eq!(get(h, name), want, "{:?} in {:?}", String::from_utf8_lossy(name), String::from_utf8_lossy(h));
            }
        }
    }
}
