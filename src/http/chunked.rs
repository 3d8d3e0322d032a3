//! Chunked request bodies (RFC 9112 §7.1): validation while bytes arrive, then de-chunking in
//! place so the handler sees one contiguous body without a copy to another buffer.
//!
//! chunk-size is 1–16 hex digits; chunk extensions are allowed and ignored; chunk data must be
//! followed by exactly CRLF; trailer fields are validated like header fields and dropped.
//! Possible optimisation: `scan` restarts from the first chunk on every read; a body that arrives
//! in many small reads is rescanned each time (bounded by the raw size limit).

use super::limits::Limits;
use super::parse::ParseError;

enum Step {
    /// A data chunk at `data..data+len`; the next chunk-size line starts at `next`.
    Data { data: usize, len: usize, next: usize },
    /// The last chunk and trailers end at `end`.
    Last { end: usize },
    Incomplete,
}

/// Reads the chunk starting at `pos`.
fn step(buf: &[u8], pos: usize, max_body: usize) -> Result<Step, ParseError> {
    let n = buf.len();
    let mut i = pos;
    let mut size: u64 = 0;
    while i < n && buf[i].is_ascii_hexdigit() {
        if i - pos >= 16 {
            return Err(ParseError::Bad("chunk size too long"));
        }
        size = size << 4 | (buf[i] as char).to_digit(16).unwrap_or(0) as u64;
        i += 1;
    }
    if size > max_body as u64 {
        return Err(ParseError::BodyTooLarge);
    }
    if i == n {
        return Ok(Step::Incomplete);
    }
    if i == pos {
        return Err(ParseError::Bad("bad chunk size"));
    }
    // Optional extensions: BWS ';' ... up to CRLF.
    let mut j = i;
    while j < n && (buf[j] == b' ' || buf[j] == b'\t') {
        j += 1;
    }
    if j < n && buf[j] == b';' {
        while j < n && (buf[j] == b'\t' || (buf[j] >= 0x20 && buf[j] != 0x7f)) {
            j += 1;
        }
    } else if j != i && j < n {
        return Err(ParseError::Bad("bad chunk size"));
    }
    i = j;
    match (buf.get(i), buf.get(i + 1)) {
        (None, _) | (Some(b'\r'), None) => return Ok(Step::Incomplete),
        (Some(b'\r'), Some(b'\n')) => i += 2,
        _ => return Err(ParseError::Bad("bad chunk line ending")),
    }
    if size == 0 {
        return trailers(buf, i);
    }
    let len = usize::try_from(size).map_err(|_| ParseError::BodyTooLarge)?;
    let data = i;
    let after = data.checked_add(len).ok_or(ParseError::BodyTooLarge)?;
    if n < after.saturating_add(2) {
        return Ok(Step::Incomplete);
    }
    if &buf[after..after + 2] != b"\r\n" {
        return Err(ParseError::Bad("chunk data not followed by CRLF"));
    }
    Ok(Step::Data { data, len, next: after + 2 })
}

/// Trailer fields after the last chunk, then the final CRLF.
fn trailers(buf: &[u8], mut i: usize) -> Result<Step, ParseError> {
    let n = buf.len();
    loop {
        match (buf.get(i), buf.get(i + 1)) {
            (None, _) | (Some(b'\r'), None) => return Ok(Step::Incomplete),
            (Some(b'\r'), Some(b'\n')) => return Ok(Step::Last { end: i + 2 }),
            _ => {}
        }
        let nstart = i;
        while i < n && buf[i].is_ascii_graphic() && buf[i] != b':' && !b"\"(),/;<=>?@[\\]{}".contains(&buf[i]) {
            i += 1;
        }
        if i == n {
            return Ok(Step::Incomplete);
        }
        if buf[i] != b':' || i == nstart {
            return Err(ParseError::Bad("invalid trailer field"));
        }
        while i < n && (buf[i] == b'\t' || (buf[i] >= 0x20 && buf[i] != 0x7f)) {
            i += 1;
        }
        match (buf.get(i), buf.get(i + 1)) {
            (None, _) | (Some(b'\r'), None) => return Ok(Step::Incomplete),
            (Some(b'\r'), Some(b'\n')) => i += 2,
            _ => return Err(ParseError::Bad("bad trailer line ending")),
        }
    }
}

/// Checks the chunked body at the start of `buf`. `Ok(Some((raw_len, body_len)))` once the
/// last chunk and trailers are complete; `Ok(None)` when more bytes are needed; an error for a
/// malformed body or one over the limits.
pub fn scan(buf: &[u8], limits: &Limits) -> Result<Option<(usize, usize)>, ParseError> {
    let mut pos = 0;
    let mut total = 0usize;
    loop {
        // Each chunk may use what the earlier ones left of the body limit.
        match step(buf, pos, limits.max_body - total)? {
            Step::Data { len, next, .. } => {
                total += len;
                pos = next;
            }
            Step::Last { end } => return Ok(Some((end, total))),
            Step::Incomplete => {
                if buf.len() > limits.max_chunked_raw() {
                    return Err(ParseError::BodyTooLarge);
                }
                return Ok(None);
            }
        }
    }
}

/// Rewrites a body that `scan` accepted so its decoded bytes sit at the start of `buf`; returns
/// their length. Chunk data only moves towards the front, over framing already consumed.
pub fn dechunk_in_place(buf: &mut [u8]) -> usize {
    let mut pos = 0;
    let mut out = 0;
    while let Ok(Step::Data { data, len, next }) = step(buf, pos, usize::MAX) {
        buf.copy_within(data..data + len, out);
        out += len;
        pos = next;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lim() -> Limits {
        Limits { max_body: 100, ..Limits::DEFAULT }
    }

    #[test]
    fn scans_and_dechunks() {
        let mut b = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-T: 1\r\n\r\nNEXT".to_vec();
        let (raw, len) = scan(&b, &lim()).unwrap().unwrap();
        assert_eq!(len, 11);
        assert_eq!(&b[raw..], b"NEXT");
        let n = dechunk_in_place(&mut b[..raw]);
        assert_eq!(&b[..n], b"hello world");
    }

    #[test]
    fn incomplete_then_complete() {
        let full = b"a\r\n0123456789\r\n0\r\n\r\n";
        for cut in 0..full.len() {
            assert_eq!(scan(&full[..cut], &lim()), Ok(None), "cut {cut}");
        }
        assert_eq!(scan(full, &lim()), Ok(Some((full.len(), 10))));
    }

    #[test]
    fn rejects_bad_shapes() {
        for bad in [
            &b"x\r\n"[..],
            b"5\nhello\r\n0\r\n\r\n",
            b"5\r\nhelloXX0\r\n\r\n",
            b"-5\r\n",
            b"5 5\r\n",
            b"11111111111111111\r\n",
            b"0\r\nbad header\r\n\r\n",
            b"0\r\n\n",
        ] {
            assert!(matches!(scan(bad, &lim()), Err(ParseError::Bad(_))), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(scan(b"64\r\n", &lim()), Ok(None));
        assert_eq!(scan(b"65\r\n", &lim()), Err(ParseError::BodyTooLarge));
        let big = b"ffff\r\n";
        assert_eq!(scan(&[&big[..], &[b'a'; 0xffff][..], b"\r\n"].concat(), &lim()), Err(ParseError::BodyTooLarge));
    }
}
