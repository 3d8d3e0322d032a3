//! Percent-decoding and path splitting.

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Appends `src` percent-decoded to `out`. With `plus_is_space` (form encoding), '+' becomes a
/// space. A '%' not followed by two hex digits is kept as is, as browsers and Rack do.
pub fn percent_decode_into(src: &[u8], plus_is_space: bool, out: &mut Vec<u8>) {
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        if b == b'%' && i + 2 < src.len() {
            if let (Some(h), Some(l)) = (hex(src[i + 1]), hex(src[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(if b == b'+' && plus_is_space { b' ' } else { b });
        i += 1;
    }
}

/// The non-empty segments of a path, still percent-encoded: `/rooms/12/messages` gives
/// `rooms`, `12`, `messages`.
pub fn segments(path: &[u8]) -> impl Iterator<Item = &[u8]> {
    path.split(|&b| b == b'/').filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &[u8], plus: bool) -> Vec<u8> {
        let mut v = Vec::new();
        percent_decode_into(s, plus, &mut v);
        v
    }

    #[test]
    fn decodes() {
        assert_eq!(dec(b"a%20b+c", false), b"a b+c");
        assert_eq!(dec(b"a%20b+c", true), b"a b c");
        assert_eq!(dec(b"%e2%9C%93", true), "✓".as_bytes());
        assert_eq!(dec(b"100%", true), b"100%");
        assert_eq!(dec(b"%4", true), b"%4");
        assert_eq!(dec(b"%zz%41", true), b"%zzA");
    }

    #[test]
    fn splits() {
        let s: Vec<&[u8]> = segments(b"/rooms//12/messages/").collect();
        assert_eq!(s, vec![&b"rooms"[..], b"12", b"messages"]);
    }
}
