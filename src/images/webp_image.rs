//! WebP variants, decoded with `image-webp`. That decoder makes the whole picture at once and
//! its memory limit covers only metadata, so the budget is enforced before it runs: the RIFF
//! chunks are walked here, every image chunk's own header must give the canvas size, and the
//! decode's peak, estimated from that size and the kind of image, must fit `MAX_DECODE_BYTES`.
//! Animated WebPs and larger pictures get no variant (the original is shown).

use super::resize::{fit, Resizer};
use super::{encode_any, Target, Thumbnail, MAX_DECODE_BYTES};
use std::io::Cursor;

/// A WebP's variant; `Some(None)` when it already fits and stays a WebP (`Target::Same`).
pub(super) fn variant(data: &[u8], max_w: u32, max_h: u32, target: Target) -> Option<Option<Thumbnail>> {
    let info = probe(data)?;
    let (w, h) = (info.width, info.height);
    let (tw, th) = fit(w, h, max_w, max_h);
    if (tw, th) == (w, h) && target == Target::Same {
        return Some(None);
    }
    // Bytes per pixel at the decode's peak: the output (3 or 4) beside the lossy decoder's
    // YUV planes (1.5) and an alpha plane, itself losslessly coded (5); the lossless decoder
    // writes RGBA, copied out to RGB when there is no alpha.
    let per_pixel = match (info.lossy, info.alpha) {
        (true, false) => 5,
        (true, true) => 11,
        (false, true) => 5,
        (false, false) => 8,
    };
    if (w as u64 * h as u64).checked_mul(per_pixel)? > MAX_DECODE_BYTES as u64 {
        return None;
    }
    let mut d = image_webp::WebPDecoder::new(Cursor::new(data)).ok()?;
    if d.dimensions() != (w, h) || d.is_animated() {
        return None;
    }
    d.set_memory_limit(MAX_DECODE_BYTES);
    let channels = if d.has_alpha() { 4 } else { 3 };
    let mut px = vec![0u8; d.output_buffer_size()?];
    d.read_image(&mut px).ok()?;
    drop(d);
    let mut r = Resizer::new(w, h, tw, th, channels)?;
    for row in px.chunks(w as usize * channels) {
        r.push_row(row);
    }
    drop(px);
    let (dw, dh) = r.size();
    Some(Some(encode_any(r.finish(), dw, dh, channels, target)?))
}

/// What the chunks say about a still WebP.
struct Info {
    width: u32,
    height: u32,
    lossy: bool,
    alpha: bool,
}

/// Walks the RIFF chunks: the canvas (VP8X) or the single image chunk gives the size, each
/// `VP8 `/`VP8L` chunk must agree with it, and there must be exactly one. None for anything
/// else (animation, truncation, disagreement).
fn probe(d: &[u8]) -> Option<Info> {
    let le16 = |b: &[u8], i: usize| Some(u16::from_le_bytes([*b.get(i)?, *b.get(i + 1)?]) as u32);
    let le24 = |b: &[u8], i: usize| Some(u32::from_le_bytes([*b.get(i)?, *b.get(i + 1)?, *b.get(i + 2)?, 0]));
    if d.get(..4)? != b"RIFF" || d.get(8..12)? != b"WEBP" {
        return None;
    }
    let mut canvas = None;
    let mut image: Option<(u32, u32, bool)> = None;
    let mut alpha = false;
    let mut at = 12;
    while at + 8 <= d.len() {
        let fourcc = d.get(at..at + 4)?;
        let size = u32::from_le_bytes(d.get(at + 4..at + 8)?.try_into().ok()?) as usize;
        let body = d.get(at + 8..)?.get(..size.min(d.len() - at - 8))?;
        match fourcc {
            b"VP8X" => {
                if body.first()? & 0x02 != 0 {
                    return None; // animated
                }
                alpha = body.first()? & 0x10 != 0;
                canvas = Some((le24(body, 4)? + 1, le24(body, 7)? + 1));
            }
            b"ANIM" | b"ANMF" => return None,
            b"ALPH" => alpha = true,
            b"VP8 " if image.is_none() => {
                if body.get(3..6)? != [0x9d, 0x01, 0x2a] {
                    return None;
                }
                image = Some((le16(body, 6)? & 0x3fff, le16(body, 8)? & 0x3fff, true));
            }
            b"VP8L" if image.is_none() => {
                if *body.first()? != 0x2f {
                    return None;
                }
                let bits = u32::from_le_bytes(body.get(1..5)?.try_into().ok()?);
                alpha |= canvas.is_none() && (bits >> 28) & 1 != 0;
                image = Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1, false));
            }
            b"VP8 " | b"VP8L" => return None,
            _ => {}
        }
        at = at.checked_add(8)?.checked_add(size)?.checked_add(size & 1)?;
    }
    let (iw, ih, lossy) = image?;
    let (width, height) = canvas.unwrap_or((iw, ih));
    ((width, height) == (iw, ih) && width > 0 && height > 0).then_some(Info { width, height, lossy, alpha })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A lossless WebP of `w`×`h` RGBA pixels, made with image-webp's encoder.
    pub(crate) fn webp_of(w: u32, h: u32) -> Vec<u8> {
        let px: Vec<u8> = (0..w * h).flat_map(|i| [(i % 251) as u8, (i / w % 256) as u8, 40, 200]).collect();
        let mut out = Vec::new();
        image_webp::WebPEncoder::new(&mut out).encode(&px, w, h, image_webp::ColorType::Rgba8).unwrap();
        out
    }

    #[test]
    fn probes_size_and_refuses_disagreeing_headers() {
        let ok = webp_of(300, 200);
        let i = probe(&ok).unwrap();
        assert_eq!((i.width, i.height, i.lossy), (300, 200, false));
        // The VP8L header claiming 16384×16384 after a canvas of 300×200: refused before decoding.
        let mut x = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\x10\0\0\0".to_vec();
        x.extend_from_slice(&[43, 1, 0, 199, 0, 0]);
        x.extend_from_slice(b"VP8L\x05\0\0\0\x2f\xff\xff\xff\x0f\0");
        assert!(probe(&x).is_none());
        assert!(probe(b"RIFF\0\0\0\0WEBPANIM").is_none());
        assert!(probe(b"RIFF").is_none());
    }
}
