//! Strict gzip decoding for response validation (workloads.md §4.1 rule 3): one member, a valid
//! header, a complete deflate stream, matching CRC-32 and length, no trailing bytes, and a cap on
//! the decoded size.

use crate::crc32;
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

/// The largest decoded body accepted (8 MiB).
pub const MAX_DECODED: usize = 8 << 20;

/// Decodes a gzip body, rejecting anything that is not exactly one well-formed member.
pub fn decode(wire: &[u8]) -> Result<Vec<u8>, String> {
    let start = header_len(wire)?;
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut out = Vec::with_capacity(wire.len() * 4);
    let mut buf = vec![0u8; 64 * 1024];
    let mut pos = start;
    loop {
        let r = inflate(&mut state, &wire[pos..], &mut buf, MZFlush::None);
        pos += r.bytes_consumed;
        out.extend_from_slice(&buf[..r.bytes_written]);
        if out.len() > MAX_DECODED {
            return Err(format!("gzip: decoded size over {MAX_DECODED} bytes"));
        }
        match r.status {
            Ok(MZStatus::StreamEnd) => break,
            Ok(_) => {
                if r.bytes_consumed == 0 && r.bytes_written == 0 {
                    return Err("gzip: truncated deflate stream".into());
                }
            }
            Err(MZError::Buf) => return Err("gzip: truncated deflate stream".into()),
            Err(e) => return Err(format!("gzip: corrupt deflate stream ({e:?})")),
        }
    }
    let trailer = wire.get(pos..pos + 8).ok_or("gzip: truncated trailer")?;
    let crc = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
    let isize = u32::from_le_bytes([trailer[4], trailer[5], trailer[6], trailer[7]]);
    if crc != crc32::crc32(&out) {
        return Err("gzip: CRC mismatch".into());
    }
    if isize != out.len() as u32 {
        return Err("gzip: length mismatch".into());
    }
    if wire.len() != pos + 8 {
        return Err(format!("gzip: {} trailing bytes", wire.len() - pos - 8));
    }
    Ok(out)
}

// Length of the gzip header (RFC 1952 §2.3), validating its fixed fields.
fn header_len(b: &[u8]) -> Result<usize, String> {
    if b.len() < 18 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 {
        return Err("gzip: bad header".into());
    }
    let flg = b[3];
    if flg & 0xe0 != 0 {
        return Err("gzip: reserved flags set".into());
    }
    let mut i = 10;
    if flg & 4 != 0 {
        let x = b.get(i..i + 2).ok_or("gzip: bad FEXTRA")?;
        i += 2 + u16::from_le_bytes([x[0], x[1]]) as usize;
    }
    for bit in [8u8, 16] {
        if flg & bit != 0 {
            let nul = b.get(i..).and_then(|r| r.iter().position(|c| *c == 0)).ok_or("gzip: unterminated name")?;
            i += nul + 1;
        }
    }
    if flg & 2 != 0 {
        i += 2;
    }
    if i >= b.len() {
        return Err("gzip: bad header".into());
    }
    Ok(i)
}

/// Compresses `data` as one gzip member (mtime 0), level 6 (test bodies).
#[cfg(test)]
pub fn encode(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    out.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(data, 6));
    out.extend_from_slice(&crc32::crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_strictness() {
        let body = b"<!doctype html><html>hello hello hello</html>".repeat(50);
        let gz = encode(&body);
        assert_eq!(decode(&gz).unwrap(), body);
        let mut trailing = gz.clone();
        trailing.push(0);
        assert!(decode(&trailing).unwrap_err().contains("trailing"));
        assert!(decode(&gz[..gz.len() - 1]).is_err());
        assert!(decode(&gz[..gz.len() / 2]).is_err());
        let mut bad_crc = gz.clone();
        let n = bad_crc.len();
        bad_crc[n - 8] ^= 1;
        assert!(decode(&bad_crc).unwrap_err().contains("CRC"));
        assert!(decode(b"plain text, not gzip at all").is_err());
    }
}
