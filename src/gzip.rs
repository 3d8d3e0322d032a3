//! gzip (RFC 1952) for rendered responses: one reusable deflate state per loop thread, the
//! rules for when a response is compressed (design §6), and spliced bodies: a page made of
//! cached parts (rendered messages) is compressed by stitching together deflate pieces made
//! once per part (`splice`), not by deflating the whole page again; `recurring` finds such
//! parts by their bytes for lists that have no cache of their own (`crc32` has the CRC and
//! its combination).
//!
//! The compressor state (hash chains and window, ~300 KB) is made once per loop on first use
//! and reset between responses, so compressing a page allocates nothing but output growth.

mod crc32;
mod recurring;
mod splice;

pub use crc32::{combine as crc32_combine, crc32};
pub use recurring::Runs;
pub use splice::{begin_response, mark, marks, moved, Part};

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

/// The deflate level of cached pieces (parts and glue, see `splice`): each is compressed once
/// and sent many times, so it is worth the slower, tighter level.
pub const PIECE_LEVEL: u8 = 6;

/// The gzip member header: magic, CM=deflate, no flags, no mtime (byte-stable output), XFL=0,
/// OS=unknown.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

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
        // Level 1 shrinks markup about sixfold; reserving a quarter avoids regrowth in practice.
        out.reserve(input.len() / 4 + 64);
        out.extend_from_slice(&HEADER);
        let level = self.level;
        let state = self.fresh(level);
        deflate_into(state, input, TDEFLFlush::Finish, out);
        out.extend_from_slice(&crc32(0, input).to_le_bytes());
        out.extend_from_slice(&(input.len() as u32).to_le_bytes());
    }

    /// Appends raw deflate blocks for `input`, ended by a sync flush (byte aligned, not final),
    /// at `level`. When `dictionary` is not empty, matches may reach back into its last
    /// 32 KiB: the piece is then valid only right after output that ends with those bytes.
    pub fn piece(&mut self, level: u8, dictionary: &[u8], input: &[u8], out: &mut Vec<u8>) {
        let state = self.fresh(level);
        if !dictionary.is_empty() {
            // Priming: the dictionary goes through the compressor into its window and the
            // blocks it produced are dropped; after the sync flush nothing of them is pending.
            let tail = dictionary.get(dictionary.len().saturating_sub(WINDOW)..).unwrap_or(dictionary);
            let mut dropped = Vec::new();
            deflate_into(state, tail, TDEFLFlush::Sync, &mut dropped);
        }
        deflate_into(state, input, TDEFLFlush::Sync, out);
    }

    /// The compressor, reset and set to `level`.
    fn fresh(&mut self, level: u8) -> &mut CompressorOxide {
        let state = self
            .state
            .get_or_insert_with(|| Box::new(CompressorOxide::with_params(DataFormat::Raw, level, CompressionStrategy::Default, 15)));
        state.reset();
        state.set_format_and_level(DataFormat::Raw, level);
        state
    }
}

/// Deflate's window: how far back a match may reach.
const WINDOW: usize = 32 * 1024;

/// Runs all of `input` through `state` with `flush` at the end, appending the output to `out`.
fn deflate_into(state: &mut CompressorOxide, input: &[u8], flush: TDEFLFlush, out: &mut Vec<u8>) {
    let mut rest = input;
    loop {
        let (status, used) = compress_to_output(state, rest, flush, |chunk| {
            out.extend_from_slice(chunk);
            true
        });
        rest = rest.get(used..).unwrap_or_default();
        // Okay means call again while input is left, and for Finish until it says Done; the
        // output callback never refuses, so a sync flush completes in the call that took the
        // last input.
        if status != TDEFLStatus::Okay || (rest.is_empty() && flush != TDEFLFlush::Finish) {
            break;
        }
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
/// body is long enough, the body replaced by its gzip form with `Content-Encoding: gzip`:
/// spliced from the pieces of the parts `mark`ed while rendering it, else compressed whole.
/// The marks are forgotten either way.
/// `scratch` is a reusable buffer (it ends up holding the old body). Returns whether the body
/// was compressed.
pub fn finish(res: &mut Response, gzip: bool, encoder: &mut Gzip, scratch: &mut Vec<u8>) -> bool {
    splice::with_marks(|marks| finish_with(res, gzip, marks, encoder, scratch))
}

fn finish_with(res: &mut Response, gzip: bool, marks: &[(usize, std::rc::Rc<Part>)], encoder: &mut Gzip, scratch: &mut Vec<u8>) -> bool {
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
    if !splice::splice(res.body_bytes(), marks, encoder, scratch) {
        encoder.encode(res.body_bytes(), scratch);
    }
    std::mem::swap(res.body(), scratch);
    res.header("Content-Encoding", b"gzip");
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::inflate::decompress_to_vec;

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
