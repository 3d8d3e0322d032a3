//! Area-averaging ("box") downscaler that takes the source one row at a time, so a PNG can be
//! shrunk while it is being decoded and never held whole. Each destination pixel is the
//! average of the source area it covers, with fractional weights at the edges: the classic
//! way to shrink photos without the aliasing of nearest-neighbour sampling.
//!
//! Colour channels are averaged premultiplied by alpha (when there is an alpha channel), so a
//! transparent pixel's hidden colour does not bleed into its neighbours.
//!
//! Memory: one row of horizontal weights and two accumulator rows of the destination width,
//! plus the destination image itself. Only shrinking: a destination larger than the source in
//! either dimension is clamped to the source's.

/// A shrink in progress: feed `height` source rows with `push_row`, then `finish`.
pub struct Resizer {
    channels: usize,
    src_h: usize,
    dst_w: usize,
    dst_h: usize,
    /// For each destination column, the source columns it covers with their weights.
    spans: Vec<(usize, Vec<f32>)>,
    /// The current source row, shrunk horizontally (premultiplied).
    row: Vec<f32>,
    /// The destination row being accumulated, and the next one (a source row may straddle).
    acc: Vec<f32>,
    next: Vec<f32>,
    /// Source rows seen, destination rows finished.
    src_y: usize,
    dst_y: usize,
    out: Vec<u8>,
}

impl Resizer {
    /// A shrink of a `src_w`×`src_h` image of `channels` interleaved 8-bit channels (1 grey,
    /// 2 grey+alpha, 3 RGB, 4 RGBA) to `dst_w`×`dst_h` (each at least 1, at most the source's).
    /// None for a zero-sized source or an unsupported channel count.
    pub fn new(src_w: u32, src_h: u32, dst_w: u32, dst_h: u32, channels: usize) -> Option<Resizer> {
        if src_w == 0 || src_h == 0 || !(1..=4).contains(&channels) {
            return None;
        }
        let (src_w, src_h) = (src_w as usize, src_h as usize);
        let dst_w = (dst_w as usize).clamp(1, src_w);
        let dst_h = (dst_h as usize).clamp(1, src_h);
        let spans = (0..dst_w).map(|x| span(x, src_w, dst_w)).collect();
        Some(Resizer {
            channels,
            src_h,
            dst_w,
            dst_h,
            spans,
            row: vec![0.0; dst_w * channels],
            acc: vec![0.0; dst_w * channels],
            next: vec![0.0; dst_w * channels],
            src_y: 0,
            dst_y: 0,
            out: Vec::with_capacity(dst_w * dst_h * channels),
        })
    }

    /// The destination size (after clamping).
    pub fn size(&self) -> (u32, u32) {
        (self.dst_w as u32, self.dst_h as u32)
    }

    /// Adds the next source row (`src_w × channels` bytes; a shorter row is padded with its
    /// missing pixels as transparent black, extra bytes and rows are ignored).
    pub fn push_row(&mut self, src: &[u8]) {
        if self.src_y >= self.src_h {
            return;
        }
        let ch = self.channels;
        let alpha = ch == 2 || ch == 4;
        // Horizontal pass into `row`.
        for (x, (start, weights)) in self.spans.iter().enumerate() {
            let mut sum = [0f32; 4];
            for (k, w) in weights.iter().enumerate() {
                let at = (start + k) * ch;
                let Some(px) = src.get(at..at + ch) else { continue };
                let a = if alpha { px[ch - 1] as f32 / 255.0 } else { 1.0 };
                for c in 0..ch {
                    let v = px[c] as f32;
                    sum[c] += w * if alpha && c < ch - 1 { v * a } else { v };
                }
            }
            self.row[x * ch..x * ch + ch].copy_from_slice(&sum[..ch]);
        }
        // Vertical pass: this source row covers [y, y+1) in source units; destination row j
        // covers [j·r, (j+1)·r) with r = src_h / dst_h ≥ 1.
        let r = self.src_h as f64 / self.dst_h as f64;
        let y = self.src_y as f64;
        let end_of_dst = (self.dst_y + 1) as f64 * r;
        let inside = ((end_of_dst.min(y + 1.0) - y).max(0.0) / r) as f32;
        let spill = ((y + 1.0 - end_of_dst).max(0.0) / r) as f32;
        for (a, v) in self.acc.iter_mut().zip(&self.row) {
            *a += inside * v;
        }
        for (n, v) in self.next.iter_mut().zip(&self.row) {
            *n += spill * v;
        }
        self.src_y += 1;
        if (self.src_y as f64) + 1e-9 >= end_of_dst || self.src_y == self.src_h {
            self.emit();
        }
    }

    /// The shrunk image (`dst_w × dst_h × channels` bytes). Rows never pushed count as
    /// transparent black.
    pub fn finish(mut self) -> Vec<u8> {
        while self.dst_y < self.dst_h {
            self.emit();
        }
        self.out
    }

    fn emit(&mut self) {
        if self.dst_y >= self.dst_h {
            return;
        }
        let ch = self.channels;
        let alpha = ch == 2 || ch == 4;
        for px in self.acc.chunks_exact(ch) {
            let a = if alpha { px[ch - 1] / 255.0 } else { 1.0 };
            for (c, v) in px.iter().enumerate() {
                let v = if alpha && c < ch - 1 { if a > 0.0 { v / a } else { 0.0 } } else { *v };
                self.out.push(v.round().clamp(0.0, 255.0) as u8);
            }
        }
        std::mem::swap(&mut self.acc, &mut self.next);
        self.next.iter_mut().for_each(|v| *v = 0.0);
        self.dst_y += 1;
    }
}

/// The source columns destination column `x` covers, with weights summing to 1.
fn span(x: usize, src: usize, dst: usize) -> (usize, Vec<f32>) {
    let r = src as f64 / dst as f64;
    let (lo, hi) = (x as f64 * r, ((x + 1) as f64 * r).min(src as f64));
    let first = lo.floor() as usize;
    let last = (hi.ceil() as usize).clamp(first + 1, src);
    let weights = (first..last)
        .map(|i| ((hi.min(i as f64 + 1.0) - lo.max(i as f64)).max(0.0) / r) as f32)
        .collect();
    (first, weights)
}

/// Rails' `resize_to_limit`: the size of a `w`×`h` image scaled down (never up) to fit within
/// `max_w`×`max_h`, keeping its aspect ratio; each side at least 1.
pub fn fit(w: u32, h: u32, max_w: u32, max_h: u32) -> (u32, u32) {
    if w == 0 || h == 0 {
        return (w, h);
    }
    let scale = (max_w as f64 / w as f64).min(max_h as f64 / h as f64).min(1.0);
    (((w as f64 * scale).round() as u32).max(1), ((h as f64 * scale).round() as u32).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shrink(src: &[u8], sw: u32, sh: u32, dw: u32, dh: u32, ch: usize) -> Vec<u8> {
        let mut r = Resizer::new(sw, sh, dw, dh, ch).unwrap();
        for row in src.chunks(sw as usize * ch) {
            r.push_row(row);
        }
        r.finish()
    }

    #[test]
    fn halving_averages_each_two_by_two_block() {
        let src = [0, 100, 10, 20, 50, 150, 30, 40];
        assert_eq!(shrink(&src, 4, 2, 2, 1, 1), vec![75, 25]);
    }

    #[test]
    fn a_uniform_image_stays_uniform_at_any_ratio() {
        let (sw, sh) = (97, 61);
        let src: Vec<u8> = [200u8, 10, 60].iter().copied().cycle().take(sw * sh * 3).collect();
        for (dw, dh) in [(13, 7), (50, 31), (96, 60), (1, 1)] {
            let out = shrink(&src, sw as u32, sh as u32, dw, dh, 3);
            assert_eq!(out.len(), (dw * dh * 3) as usize);
            assert!(out.chunks(3).all(|p| p == [200, 10, 60]), "{dw}x{dh}");
        }
    }

    #[test]
    fn fractional_ratio_weights_partial_pixels() {
        // 3 → 2: the middle source pixel is split half and half.
        assert_eq!(shrink(&[0, 90, 180], 3, 1, 2, 1, 1), vec![30, 150]);
        // 3 rows → 2 rows, the same in the vertical direction.
        assert_eq!(shrink(&[0, 90, 180], 1, 3, 1, 2, 1), vec![30, 150]);
    }

    #[test]
    fn transparent_pixels_do_not_darken_their_neighbours() {
        // A red opaque pixel next to a fully transparent black one.
        let out = shrink(&[255, 0, 0, 255, 0, 0, 0, 0], 2, 1, 1, 1, 4);
        assert_eq!(out, vec![255, 0, 0, 128]);
    }

    #[test]
    fn never_enlarges_and_missing_rows_are_blank() {
        let r = Resizer::new(10, 10, 20, 5, 1).unwrap();
        assert_eq!(r.size(), (10, 5));
        assert_eq!(r.finish(), vec![0; 50]);
        assert!(Resizer::new(0, 1, 1, 1, 3).is_none());
        assert!(Resizer::new(1, 1, 1, 1, 5).is_none());
    }

    #[test]
    fn fit_keeps_the_aspect_ratio_within_the_limit() {
        assert_eq!(fit(4000, 3000, 1200, 800), (1067, 800));
        assert_eq!(fit(2400, 800, 1200, 800), (1200, 400));
        assert_eq!(fit(640, 480, 1200, 800), (640, 480));
        assert_eq!(fit(100_000, 1, 1200, 800), (1200, 1));
    }
}
