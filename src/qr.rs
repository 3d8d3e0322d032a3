//! QR code encoder (ISO/IEC 18004) for the sign-in transfer and join links, and its SVG.
//!
//! Only what those links need: byte mode, error correction level H (rqrcode's default, the one
//! Rails' `QrCodeController` uses), the smallest of versions 1–20 that fits (up to 382 bytes;
//! a transfer URL is about 150), and the mask with the lowest ISO penalty score.

/// Largest version built: 97×97 modules.
const MAX_VERSION: usize = 20;
/// Level H error correction codewords per block, by version.
const ECC_PER_BLOCK: [usize; MAX_VERSION] =
    [17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28];
/// Level H error correction block count, by version.
const BLOCKS: [usize; MAX_VERSION] = [1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25];
/// The two format-information bits of level H.
const LEVEL_H: u32 = 0b10;
/// Modules of light border drawn around the symbol in the SVG (the quiet zone scanners need).
const QUIET: usize = 4;

/// An encoded symbol: `size`×`size` modules, dark or light.
pub struct Code {
    size: usize,
    dark: Vec<bool>,
    function: Vec<bool>,
}

/// The symbol for `data`, or None when it is longer than version 20 holds at level H.
pub fn encode(data: &[u8]) -> Option<Code> {
    encode_with_mask(data, None)
}

/// `encode` with the mask forced (tests compare each mask against a reference encoder).
fn encode_with_mask(data: &[u8], forced: Option<u8>) -> Option<Code> {
    let version = (1..=MAX_VERSION).find(|&v| 4 + count_bits(v) + 8 * data.len() <= 8 * data_codewords(v))?;
    let codewords = add_ecc(version, &data_bits(version, data));
    let mut code = Code::blank(version);
    code.draw_function_patterns(version);
    code.draw_codewords(&codewords);
    let mask = match forced {
        Some(m) => m,
        None => {
            let mut best = (u32::MAX, 0);
            for m in 0..8 {
                code.apply_mask(m);
                code.draw_format(m);
                let score = code.penalty();
                code.apply_mask(m); // XOR again: undone
                if score < best.0 {
                    best = (score, m);
                }
            }
            best.1
        }
    };
    code.apply_mask(mask);
    code.draw_format(mask);
    Some(code)
}

/// Bits of the character count field in byte mode.
fn count_bits(version: usize) -> usize {
    if version < 10 {
        8
    } else {
        16
    }
}

/// Codewords of the whole symbol (data + error correction), from the modules left once the
/// function patterns are drawn.
fn total_codewords(version: usize) -> usize {
    let v = version;
    let mut modules = (16 * v + 128) * v + 64;
    if v >= 2 {
        let align = v / 7 + 2;
        modules -= (25 * align - 10) * align - 55;
        if v >= 7 {
            modules -= 36;
        }
    }
    modules / 8
}

/// Data codewords of `version` at level H.
fn data_codewords(version: usize) -> usize {
    total_codewords(version) - ECC_PER_BLOCK[version - 1] * BLOCKS[version - 1]
}

/// Mode indicator, count, data, terminator and padding, as codewords.
fn data_bits(version: usize, data: &[u8]) -> Vec<u8> {
    let capacity = data_codewords(version);
    let mut bits = Bits::default();
    bits.push(0b0100, 4);
    bits.push(data.len() as u32, count_bits(version));
    for &b in data {
        bits.push(u32::from(b), 8);
    }
    let room = capacity * 8 - bits.len;
    bits.push(0, room.min(4));
    let to_byte = (8 - bits.len % 8) % 8;
    bits.push(0, to_byte);
    let mut out = bits.bytes;
    let mut pad = [0xEC, 0x11].iter().cycle();
    while out.len() < capacity {
        out.push(*pad.next().unwrap_or(&0xEC));
    }
    out
}

/// A big-endian bit buffer.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    len: usize,
}

impl Bits {
    fn push(&mut self, value: u32, n: usize) {
        for i in (0..n).rev() {
            if self.len.is_multiple_of(8) {
                self.bytes.push(0);
            }
            if (value >> i) & 1 == 1 {
                if let Some(last) = self.bytes.last_mut() {
                    *last |= 0x80 >> (self.len % 8);
                }
            }
            self.len += 1;
        }
    }
}

/// Splits the data into blocks, appends each block's Reed–Solomon codewords and interleaves
/// them in the order they are placed in the symbol.
fn add_ecc(version: usize, data: &[u8]) -> Vec<u8> {
    let blocks = BLOCKS[version - 1];
    let ecc_len = ECC_PER_BLOCK[version - 1];
    let total = total_codewords(version);
    let short_blocks = blocks - total % blocks;
    let short_data = total / blocks - ecc_len;
    let generator = rs_generator(ecc_len);
    let mut split = Vec::with_capacity(blocks);
    let mut at = 0;
    for i in 0..blocks {
        let n = short_data + usize::from(i >= short_blocks);
        let block = &data[at..at + n];
        at += n;
        split.push((block, rs_remainder(block, &generator)));
    }
    let mut out = Vec::with_capacity(total);
    for i in 0..=short_data {
        for (block, _) in &split {
            if let Some(&b) = block.get(i) {
                out.push(b);
            }
        }
    }
    for i in 0..ecc_len {
        for (_, ecc) in &split {
            out.push(ecc[i]);
        }
    }
    out
}

/// Product in GF(2⁸) with the QR polynomial x⁸+x⁴+x³+x²+1.
fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 == 1 {
            p ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1D;
        }
        b >>= 1;
    }
    p
}

/// The monic generator polynomial ∏(x − αⁱ), i < `degree`, highest coefficient first.
fn rs_generator(degree: usize) -> Vec<u8> {
    let mut g = vec![1u8];
    let mut root = 1u8;
    for _ in 0..degree {
        g.push(0);
        for k in (1..g.len()).rev() {
            g[k] ^= gf_mul(g[k - 1], root);
        }
        root = gf_mul(root, 2);
    }
    g
}

/// The remainder of `data`·x^degree divided by the generator: the error correction codewords.
fn rs_remainder(data: &[u8], generator: &[u8]) -> Vec<u8> {
    let degree = generator.len() - 1;
    let mut rem = vec![0u8; degree];
    for &b in data {
        let factor = b ^ rem[0];
        rem.rotate_left(1);
        rem[degree - 1] = 0;
        for (r, &g) in rem.iter_mut().zip(&generator[1..]) {
            *r ^= gf_mul(g, factor);
        }
    }
    rem
}

/// Centres of the alignment patterns along one axis.
fn alignment_centres(version: usize) -> Vec<usize> {
    if version == 1 {
        return Vec::new();
    }
    let size = 4 * version + 17;
    let count = version / 7 + 2;
    let step = (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2;
    let mut centres: Vec<usize> = (0..count - 1).map(|i| size - 7 - i * step).collect();
    centres.push(6);
    centres.reverse();
    centres
}

impl Code {
    /// Modules per side.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether the module in column `x`, row `y` is dark (false outside the symbol).
    pub fn is_dark(&self, x: usize, y: usize) -> bool {
        x < self.size && y < self.size && self.dark[y * self.size + x]
    }

    /// Appends the symbol as a standalone SVG document: a `viewBox` in module units with a
    /// four-module quiet zone, a white background and one black path of horizontal runs.
    pub fn svg(&self, out: &mut Vec<u8>) {
        let side = self.size + 2 * QUIET;
        out.extend_from_slice(b"<?xml version=\"1.0\" standalone=\"yes\"?>\n");
        out.extend_from_slice(b"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ");
        out.extend_from_slice(format!("{side} {side}").as_bytes());
        out.extend_from_slice(b"\" shape-rendering=\"crispEdges\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><path fill=\"#000\" d=\"");
        for y in 0..self.size {
            let mut x = 0;
            while x < self.size {
                if !self.is_dark(x, y) {
                    x += 1;
                    continue;
                }
                let start = x;
                while self.is_dark(x, y) {
                    x += 1;
                }
                let run = x - start;
                out.extend_from_slice(format!("M{} {}h{run}v1h-{run}z", start + QUIET, y + QUIET).as_bytes());
            }
        }
        out.extend_from_slice(b"\"/></svg>\n");
    }

    fn blank(version: usize) -> Code {
        let size = 4 * version + 17;
        Code { size, dark: vec![false; size * size], function: vec![false; size * size] }
    }

    fn set_function(&mut self, x: usize, y: usize, dark: bool) {
        let i = y * self.size + x;
        self.dark[i] = dark;
        self.function[i] = true;
    }

    /// Finder, separator, timing and alignment patterns, the reserved format areas, the dark
    /// module and (from version 7) the version information.
    fn draw_function_patterns(&mut self, version: usize) {
        let size = self.size;
        for i in 0..size {
            self.set_function(6, i, i % 2 == 0);
            self.set_function(i, 6, i % 2 == 0);
        }
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4i32..=4 {
                for dx in -4i32..=4 {
                    let (x, y) = (cx as i32 + dx, cy as i32 + dy);
                    if x >= 0 && y >= 0 && (x as usize) < size && (y as usize) < size {
                        let ring = dx.abs().max(dy.abs());
                        self.set_function(x as usize, y as usize, ring != 2 && ring != 4);
                    }
                }
            }
        }
        let centres = alignment_centres(version);
        let last = centres.len().saturating_sub(1);
        for (i, &cx) in centres.iter().enumerate() {
            for (j, &cy) in centres.iter().enumerate() {
                // The three corners taken by finder patterns get none.
                let corner = (i == 0 || i == last) && (j == 0 || j == last);
                if corner && (i, j) != (last, last) {
                    continue;
                }
                for dy in -2i32..=2 {
                    for dx in -2i32..=2 {
                        let ring = dx.abs().max(dy.abs());
                        self.set_function((cx as i32 + dx) as usize, (cy as i32 + dy) as usize, ring != 1);
                    }
                }
            }
        }
        self.draw_format(0);
        if version >= 7 {
            let mut rem = version as u32;
            for _ in 0..12 {
                rem = (rem << 1) ^ ((rem >> 11) * 0x1F25);
            }
            let bits = (version as u32) << 12 | rem;
            for i in 0..18 {
                let dark = (bits >> i) & 1 == 1;
                let (a, b) = (size - 11 + i % 3, i / 3);
                self.set_function(a, b, dark);
                self.set_function(b, a, dark);
            }
        }
    }

    /// The 15 format bits (level H, `mask`), BCH-protected and XOR-masked, in both copies.
    fn draw_format(&mut self, mask: u8) {
        let data = LEVEL_H << 3 | u32::from(mask);
        let mut rem = data;
        for _ in 0..10 {
            rem = (rem << 1) ^ ((rem >> 9) * 0x537);
        }
        let bits = (data << 10 | rem) ^ 0x5412;
        let bit = |i: usize| (bits >> i) & 1 == 1;
        let size = self.size;
        for i in 0..6 {
            self.set_function(8, i, bit(i));
        }
        self.set_function(8, 7, bit(6));
        self.set_function(8, 8, bit(7));
        self.set_function(7, 8, bit(8));
        for i in 9..15 {
            self.set_function(14 - i, 8, bit(i));
        }
        for i in 0..8 {
            self.set_function(size - 1 - i, 8, bit(i));
        }
        for i in 8..15 {
            self.set_function(8, size - 15 + i, bit(i));
        }
        self.set_function(8, size - 8, true);
    }

    /// Places the codewords in the two-column zigzag from the bottom right, skipping the
    /// vertical timing column and every function module; leftover modules stay light.
    fn draw_codewords(&mut self, codewords: &[u8]) {
        let size = self.size;
        let total_bits = codewords.len() * 8;
        let mut i = 0;
        let mut right = size - 1;
        loop {
            if right == 6 {
                right = 5;
            }
            let upward = (right + 1) & 2 == 0;
            for vert in 0..size {
                let y = if upward { size - 1 - vert } else { vert };
                for x in [right, right - 1] {
                    if !self.function[y * size + x] && i < total_bits {
                        self.dark[y * size + x] = (codewords[i >> 3] >> (7 - (i & 7))) & 1 == 1;
                        i += 1;
                    }
                }
            }
            if right < 3 {
                break;
            }
            right -= 2;
        }
    }

    /// XORs mask pattern `mask` onto every non-function module (applying twice undoes it).
    fn apply_mask(&mut self, mask: u8) {
        let size = self.size;
        for y in 0..size {
            for x in 0..size {
                let flip = match mask {
                    0 => (x + y) % 2 == 0,
                    1 => y % 2 == 0,
                    2 => x % 3 == 0,
                    3 => (x + y) % 3 == 0,
                    4 => (x / 3 + y / 2) % 2 == 0,
                    5 => x * y % 2 + x * y % 3 == 0,
                    6 => (x * y % 2 + x * y % 3) % 2 == 0,
                    _ => ((x + y) % 2 + x * y % 3) % 2 == 0,
                };
                let i = y * size + x;
                if flip && !self.function[i] {
                    self.dark[i] = !self.dark[i];
                }
            }
        }
    }

    /// The ISO/IEC 18004 §7.8.3 penalty: long runs, 2×2 blocks, finder-like 1:1:3:1:1
    /// patterns with four light modules on a side (outside the symbol counts as light), and
    /// imbalance of dark and light.
    fn penalty(&self) -> u32 {
        let size = self.size;
        let mut score = 0u32;
        let mut line = vec![false; size];
        for horizontal in [true, false] {
            for a in 0..size {
                for (b, m) in line.iter_mut().enumerate() {
                    *m = if horizontal { self.dark[a * size + b] } else { self.dark[b * size + a] };
                }
                score += line_penalty(&line);
            }
        }
        for y in 0..size - 1 {
            for x in 0..size - 1 {
                let c = self.dark[y * size + x];
                if c == self.dark[y * size + x + 1] && c == self.dark[(y + 1) * size + x] && c == self.dark[(y + 1) * size + x + 1] {
                    score += 3;
                }
            }
        }
        let dark = self.dark.iter().filter(|&&d| d).count();
        let total = size * size;
        let percent_off = (dark * 100).abs_diff(total * 50);
        score + 10 * (percent_off / (total * 5)) as u32
    }
}

/// Run and finder-like penalties of one row or column.
fn line_penalty(line: &[bool]) -> u32 {
    const FINDER: [bool; 7] = [true, false, true, true, true, false, true];
    let mut score = 0u32;
    let mut run = 0;
    for (i, &m) in line.iter().enumerate() {
        run = if i > 0 && line[i - 1] == m { run + 1 } else { 1 };
        let ends = line.get(i + 1) != Some(&m);
        if ends && run >= 5 {
            score += run as u32 - 2;
        }
    }
    let light = |from: isize, to: isize| (from..to).all(|i| i < 0 || !line.get(i as usize).copied().unwrap_or(false));
    for start in 0..line.len().saturating_sub(6) {
        if line[start..start + 7] == FINDER {
            let s = start as isize;
            if light(s - 4, s) || light(s + 7, s + 11) {
                score += 40;
            }
        }
    }
    score
}

#[cfg(test)]
#[path = "qr_tests.rs"]
mod tests;
