//! Just enough JSON: string escaping for the files we write, and a reader for flat objects of
//! string keys to numbers or strings (labels.json).

/// `s` as a JSON string literal, quotes included.
pub fn str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A scalar value of a flat JSON object.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar {
    Num(i64),
    Str(String),
    Null,
}

/// Parses `{"k": 1, "k2": "v", ...}`; nested values are an error. Keys keep file order.
pub fn parse_flat(text: &str) -> Result<Vec<(String, Scalar)>, String> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Err("expected {".into());
    }
    i = skip_ws(b, i + 1);
    let mut out = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Ok(out);
    }
    loop {
        let (k, j) = parse_string(b, i)?;
        i = skip_ws(b, j);
        if b.get(i) != Some(&b':') {
            return Err(format!("expected : at {i}"));
        }
        i = skip_ws(b, i + 1);
        let v = match b.get(i) {
            Some(b'"') => {
                let (s, j) = parse_string(b, i)?;
                i = j;
                Scalar::Str(s)
            }
            Some(b'n') if b[i..].starts_with(b"null") => {
                i += 4;
                Scalar::Null
            }
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                let start = i;
                i += 1;
                while b.get(i).is_some_and(|c| c.is_ascii_digit()) {
                    i += 1;
                }
                let n = text[start..i].parse().map_err(|_| format!("bad number at {start}"))?;
                Scalar::Num(n)
            }
            _ => return Err(format!("unsupported value at {i}")),
        };
        out.push((k, v));
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => return Ok(out),
            _ => return Err(format!("expected , or }} at {i}")),
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

fn parse_string(b: &[u8], i: usize) -> Result<(String, usize), String> {
    if b.get(i) != Some(&b'"') {
        return Err(format!("expected string at {i}"));
    }
    let mut out = Vec::new();
    let mut j = i + 1;
    loop {
        match b.get(j) {
            None => return Err("unterminated string".into()),
            Some(b'"') => break,
            Some(b'\\') => {
                let c = b.get(j + 1).ok_or("bad escape")?;
                match c {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'u' => {
                        let hex = b.get(j + 2..j + 6).ok_or("bad \\u")?;
                        let cp = u32::from_str_radix(std::str::from_utf8(hex).map_err(|_| "bad \\u")?, 16)
                            .map_err(|_| "bad \\u")?;
                        let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                        out.extend_from_slice(ch.to_string().as_bytes());
                        j += 4;
                    }
                    c => out.push(*c),
                }
                j += 2;
            }
            Some(c) => {
                out.push(*c);
                j += 1;
            }
        }
    }
    Ok((String::from_utf8(out).map_err(|_| "string is not UTF-8")?, j + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let text = format!("{{\n  \"a.b\": 12,\n  \"c\": {},\n  \"d\": null\n}}\n", str("x\"y\n"));
        let v = parse_flat(&text).unwrap();
        assert_eq!(v[0], ("a.b".to_string(), Scalar::Num(12)));
        assert_eq!(v[1], ("c".to_string(), Scalar::Str("x\"y\n".into())));
        assert_eq!(v[2], ("d".to_string(), Scalar::Null));
        assert!(parse_flat("{\"a\": {}}").is_err());
    }
}
