//! GIF variants: the first frame, decoded with the `gif` crate one line at a time into the
//! resizer, placed on the transparent screen as the GIF draws it. Nothing the size of the
//! screen is ever allocated (only an interlaced frame is decoded whole, within the budget), and
//! the decoder's own buffers are capped by its memory limit, so a header claiming 65535×65535
//! costs one screen row.

use super::resize::{fit, Resizer};
use super::{encode_any, Target, Thumbnail, MAX_DECODE_BYTES};
use std::io::Cursor;
use std::num::NonZeroU64;

/// Largest screen shrunk: every row is pushed through the resizer, even the empty ones, so this
/// bounds the time a header with a huge screen and a tiny frame can cost.
const MAX_PIXELS: u64 = 50_000_000;

/// A GIF's variant; `Some(None)` when it already fits and stays a GIF (`Target::Same`).
pub(super) fn variant(data: &[u8], max_w: u32, max_h: u32, target: Target) -> Option<Option<Thumbnail>> {
    let mut o = gif::DecodeOptions::new();
    o.set_color_output(gif::ColorOutput::RGBA);
    o.set_memory_limit(gif::MemoryLimit::Bytes(NonZeroU64::new(MAX_DECODE_BYTES as u64)?));
    let mut d = o.read_info(Cursor::new(data)).ok()?;
    let (w, h) = (d.width() as u32, d.height() as u32);
    if w == 0 || h == 0 || w as u64 * h as u64 > MAX_PIXELS {
        return None;
    }
    let (tw, th) = fit(w, h, max_w, max_h);
    if (tw, th) == (w, h) && target == Target::Same {
        return Some(None);
    }
    let f = d.next_frame_info().ok()??;
    let (left, top, fw, fh, interlaced) = (f.left as usize, f.top as usize, f.width as usize, f.height as usize, f.interlaced);
    let (w, h) = (w as usize, h as usize);
    let mut r = Resizer::new(w as u32, h as u32, tw, th, 4)?;
    let mut row = vec![0u8; w * 4];
    // What of each frame line lands on the screen (a frame may hang over its edge).
    let shown = fw.min(w.saturating_sub(left));
    let whole = if interlaced && fw > 0 && fh > 0 {
        // Lines arrive pass by pass: the frame is decoded whole, deinterlaced.
        let size = fw.checked_mul(fh)?.checked_mul(4).filter(|&n| n <= MAX_DECODE_BYTES)?;
        let mut buf = vec![0u8; size];
        d.read_into_buffer(&mut buf).ok()?;
        Some(buf)
    } else {
        None
    };
    let mut line = vec![0u8; if whole.is_some() { 0 } else { fw * 4 }];
    let mut ended = fw == 0;
    for y in 0..h {
        row.fill(0);
        if y >= top && y < top + fh {
            let src = match &whole {
                Some(buf) => buf.get((y - top) * fw * 4..(y - top + 1) * fw * 4),
                // A frame whose data ends early leaves the rest of its lines transparent.
                None if !ended => match d.fill_buffer(&mut line) {
                    Ok(true) => Some(&line[..]),
                    _ => {
                        ended = true;
                        None
                    }
                },
                None => None,
            };
            if let (Some(src), true) = (src, shown > 0) {
                row[left * 4..(left + shown) * 4].copy_from_slice(&src[..shown * 4]);
            }
        }
        r.push_row(&row);
    }
    drop((row, line, whole));
    let (dw, dh) = r.size();
    Some(Some(encode_any(r.finish(), dw, dh, 4, target)?))
}
