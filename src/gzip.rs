//! gzip (RFC 1952) for rendered responses: one reusable deflate state per loop thread, a
//! slice-by-8 CRC-32, and the rules for when a response is compressed (design §6).
//!
//! The compressor state (hash chains and window, ~300 KB) is made once per loop on first use
//! and reset between responses, so compressing a page allocates nothing but output growth.

use crate::http::{Request, Response};
use miniz_oxide::deflate::core::{compress_to_output, CompressionStrategy, CompressorOxide, TDEFLFlush, TDEFLStatus};
use miniz_oxide::DataFormat;

/// The deflate level. Measured on a 110 KB page of message markup (release build): level 1
/// took 189 µs for 7.0 KB, level 2 350 µs for 6.3 KB, level 6 562 µs for 6.3 KB (CRC-32 is
/// 57 µs of each). Responses that are cached are compressed once, so the level matters for
/// misses, where CPU is what we are short of.
pub const LEVEL: u8 = 1;

/// Bodies shorter than this are sent as they are: the 18 bytes of gzip framing and the
/// compressor's fixed cost outweigh what a tiny body could save.
pub const MIN_BYTES: usize = 256;

/// A reusable gzip encoder.
pub struct Gzip {
    state: Option<Box<CompressorOxide>>,
    level: u8,
}

impl Gzip {
    /// An encoder at `level` (0–10); the deflate state is made on first use.
    pub fn new(level: u8) -> Gzip {
        Gzip { state: None, level }
    }

    /// Appends the complete gzip member of `input` (header, deflate stream, CRC-32, length)
    /// to `out`.
    pub fn encode(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let level = self.level;
        let state = self
            .state
            .get_or_insert_with(|| Box::new(CompressorOxide::with_params(DataFormat::Raw, level, CompressionStrategy::Default, 15)));
        state.reset();
        // Level 1 shrinks markup about sixfold; reserving a quarter avoids regrowth in practice.
        out.reserve(input.len() / 4 + 64);
        // magic, CM=deflate, no flags, no mtime (byte-stable output), XFL=0, OS=unknown
        out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        let mut rest = input;
        loop {
            let (status, used) = compress_to_output(state, rest, TDEFLFlush::Finish, |chunk| {
                out.extend_from_slice(chunk);
                true
            });
            rest = rest.get(used..).unwrap_or_default();
            // Okay means more output is pending (Finish keeps going); anything else is the end.
            if status != TDEFLStatus::Okay {
                break;
            }
        }
        out.extend_from_slice(&crc32(0, input).to_le_bytes());
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
    }
}

/// Whether the request's `Accept-Encoding` admits gzip: a `gzip` (or `x-gzip`) or `*` coding
/// whose q-value is not zero.
pub fn accepts(req: &Request) -> bool {
    req.headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case(b"accept-encoding"))
        .any(|h| accepts_value(h.value))
}

fn accepts_value(value: &[u8]) -> bool {
    let mut star = None;
    for item in value.split(|&b| b == b',') {
        let mut parts = item.split(|&b| b == b';');
        let coding = parts.next().unwrap_or_default().trim_ascii();
        let q_zero = parts.any(|p| {
            let p = p.trim_ascii();
            p.len() >= 2
                && p[..2].eq_ignore_ascii_case(b"q=")
                && p[2..].trim_ascii().iter().all(|&b| b == b'0' || b == b'.')
        });
        if coding.eq_ignore_ascii_case(b"gzip") || coding.eq_ignore_ascii_case(b"x-gzip") {
            return !q_zero;
        }
        if coding == b"*" {
            star = Some(!q_zero);
        }
    }
    star.unwrap_or(false)
}

/// Whether a response of this `Content-Type` is worth compressing: HTML, Turbo Streams, JSON,
/// plain text, CSS and JavaScript. Images and media are compressed already.
pub fn compressible(content_type: &[u8]) -> bool {
    let essence = content_type.split(|&b| b == b';').next().unwrap_or_default().trim_ascii();
    const TYPES: [&[u8]; 7] = [
        b"text/html",
        b"text/vnd.turbo-stream.html",
        b"application/json",
        b"text/plain",
        b"text/css",
        b"text/javascript",
        b"application/javascript",
    ];
    TYPES.iter().any(|t| essence.eq_ignore_ascii_case(t))
}

/// Compresses a finished response in place when it is compressible and not encoded yet:
/// `Vary: Accept-Encoding` on every compressible response, and when `gzip` is true and the
/// body is long enough, the body replaced by its gzip form with `Content-Encoding: gzip`.
/// `scratch` is a reusable buffer (it ends up holding the old body). Returns whether the body
/// was compressed.
pub fn finish(res: &mut Response, gzip: bool, encoder: &mut Gzip, scratch: &mut Vec<u8>) -> bool {
    if res.code() != 200 && res.code() != 201 && !(400..600).contains(&res.code()) {
        return false;
    }
    if !res.header_value("content-type").is_some_and(compressible) || res.header_value("content-encoding").is_some() {
        return false;
    }
    res.header("Vary", b"Accept-Encoding");
    if !gzip || res.body_bytes().len() < MIN_BYTES {
        return false;
    }
    scratch.clear();
    encoder.encode(res.body_bytes(), scratch);
    std::mem::swap(res.body(), scratch);
    res.header("Content-Encoding", b"gzip");
    true
}

/// CRC-32 (IEEE 802.3, reflected, as gzip uses) of `data`, continuing from `crc` (0 to start).
pub fn crc32(crc: u32, data: &[u8]) -> u32 {
    let t = &CRC_TABLES;
    let mut c = !crc;
    let mut chunks = data.chunks_exact(8);
    for b in &mut chunks {
        let lo = c ^ u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        c = t[7][(lo & 0xff) as usize]
            ^ t[6][((lo >> 8) & 0xff) as usize]
            ^ t[5][((lo >> 16) & 0xff) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][b[4] as usize]
            ^ t[2][b[5] as usize]
            ^ t[1][b[6] as usize]
            ^ t[0][b[7] as usize];
    }
    for &b in chunks.remainder() {
        c = t[0][((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Slice-by-8 tables: `[0]` is the classic byte table, `[k]` advances a byte k more zero bytes.
static CRC_TABLES: [[u32; 256]; 8] = crc_tables();

const fn crc_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut k = 1;
        while k < 8 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            k += 1;
        }
        i += 1;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::inflate::decompress_to_vec;

    #[test]
    fn crc_matches_known_values() {
        assert_eq!(crc32(0, b""), 0);
        assert_eq!(crc32(0, b"123456789"), 0xcbf4_3926);
        let long: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        // continuing across a split gives the same as one pass
        assert_eq!(crc32(crc32(0, &long[..333]), &long[333..]), crc32(0, &long));
    }

    #[test]
    fn encodes_a_complete_member() {
        let page: Vec<u8> = b"<div class=\"message\">hello &amp; welcome</div>\n".repeat(500);
        let mut g = Gzip::new(LEVEL);
        for _ in 0..2 {
            let mut out = Vec::new();
            g.encode(&page, &mut out);
            assert_eq!(&out[..3], &[0x1f, 0x8b, 8]);
            let n = out.len();
            let body = decompress_to_vec(&out[10..n - 8]).unwrap();
            assert_eq!(body, page);
            assert_eq!(&out[n - 8..n - 4], &crc32(0, &page).to_le_bytes());
            assert_eq!(&out[n - 4..], &(page.len() as u32).to_le_bytes());
            assert!(n < page.len() / 10);
        }
    }

    #[test]
    fn accept_encoding() {
        assert!(accepts_value(b"gzip"));
        assert!(accepts_value(b"gzip, deflate, br"));
        assert!(accepts_value(b"br;q=1.0, GZIP;q=0.5"));
        assert!(accepts_value(b"*"));
        assert!(!accepts_value(b"gzip;q=0"));
        assert!(!accepts_value(b"gzip; q=0.000"));
        assert!(!accepts_value(b"identity"));
        assert!(!accepts_value(b"*;q=0"));
        assert!(!accepts_value(b""));
        assert!(!accepts_value(b"gzipx"));
    }

    #[test]
    fn compresses_pages_only() {
        let mut g = Gzip::new(LEVEL);
        let mut scratch = Vec::new();
        let mut res = Response::new();
        res.header("Content-Type", b"text/html; charset=utf-8");
        res.body().extend_from_slice(&b"<p>x</p>".repeat(100));
        assert!(finish(&mut res, true, &mut g, &mut scratch));
        assert_eq!(res.header_value("content-encoding"), Some(&b"gzip"[..]));
        assert_eq!(res.header_value("vary"), Some(&b"Accept-Encoding"[..]));
        let b = res.body_bytes();
        assert_eq!(decompress_to_vec(&b[10..b.len() - 8]).unwrap(), b"<p>x</p>".repeat(100));

        let mut img = Response::new();
        img.header("Content-Type", b"image/jpeg");
        img.body().extend_from_slice(&[0u8; 1000]);
        assert!(!finish(&mut img, true, &mut g, &mut scratch));
        assert_eq!(img.header_value("vary"), None);

        let mut plain = Response::new();
        plain.header("Content-Type", b"application/json");
        plain.body().extend_from_slice(&[b' '; 1000]);
        assert!(!finish(&mut plain, false, &mut g, &mut scratch));
        assert_eq!(plain.body_bytes().len(), 1000);
        assert_eq!(plain.header_value("vary"), Some(&b"Accept-Encoding"[..]));
    }
}
