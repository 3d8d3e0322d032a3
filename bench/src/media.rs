//! Stand-in attachment media for the seed when no folder of Rails test fixture files is given:
//! deterministic images and a movie container written by our own code, of the same kinds and
//! dimensions as the fixture files (which we may not copy). See docs/bench.md.

/// The stand-in for one of the fixture file names the seed attaches (`moon.jpg`,
/// `black_hole.jpg`, `alpha-centuri.mov`, `pixel.bmp`); None for any other name.
/// The same name always gives the same bytes.
pub fn stand_in(name: &str) -> Option<Vec<u8>> {
    Some(match name {
        "moon.jpg" => jpeg(640, 640, moon),
        "black_hole.jpg" => jpeg(3840, 2160, black_hole),
        "alpha-centuri.mov" => quicktime(),
        "pixel.bmp" => bmp(1, 1, |_, _| [0x2e, 0x6f, 0xd8]),
        _ => return None,
    })
}

// A pale disc on a night sky, darker towards its rim.
fn moon(x: u32, y: u32) -> [u8; 3] {
    let d = dist(x, y, 320, 320);
    if d < 260.0 {
        let v = (230.0 - d * 0.3) as u8;
        [v, v, v.saturating_sub(12)]
    } else {
        [12, 14, 30]
    }
}

// An orange ring around a black centre, fading into a black sky.
fn black_hole(x: u32, y: u32) -> [u8; 3] {
    let d = dist(x, y, 1920, 1080);
    let glow = (1.0 - (d - 620.0).abs() / 260.0).max(0.0);
    [(255.0 * glow) as u8, (150.0 * glow * glow) as u8, (40.0 * glow * glow * glow) as u8]
}

fn dist(x: u32, y: u32, cx: u32, cy: u32) -> f64 {
    let (dx, dy) = (x as f64 - cx as f64, y as f64 - cy as f64);
    (dx * dx + dy * dy).sqrt()
}

/// A baseline JFIF JPEG of `width`×`height` (4:4:4 YCbCr) made of flat 8×8 tiles, each tile the
/// colour `colour(x, y)` gives at its centre pixel. Flat tiles need only DC coefficients, so the
/// encoder needs no DCT: a uniform quantizer of 8 makes each tile's DC exactly its sample minus
/// 128, the DC codes are the standard (ITU T.81 Annex K) tables and the AC table holds just EOB.
pub fn jpeg(width: u16, height: u16, colour: fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    let mut o = vec![0xFF, 0xD8];
    // APP0 JFIF 1.01, aspect ratio 1:1, no thumbnail.
    segment(&mut o, 0xE0, &[b'J', b'F', b'I', b'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
    let mut dqt = vec![0u8];
    dqt.extend_from_slice(&[8u8; 64]);
    segment(&mut o, 0xDB, &dqt);
    let [hh, hl] = height.to_be_bytes();
    let [wh, wl] = width.to_be_bytes();
    segment(&mut o, 0xC0, &[8, hh, hl, wh, wl, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0]);
    let mut dht = vec![];
    for (class_id, bits, vals) in [(0x00, &DC_LUMA_BITS, &DC_VALUES), (0x01, &DC_CHROMA_BITS, &DC_VALUES)] {
        dht.push(class_id);
        dht.extend_from_slice(bits);
        dht.extend_from_slice(vals);
    }
    // AC table 0: one code of length 1 for EOB (0x00), the only AC symbol flat tiles need.
    dht.push(0x10);
    dht.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00]);
    segment(&mut o, 0xC4, &dht);
    segment(&mut o, 0xDA, &[3, 1, 0x00, 2, 0x10, 3, 0x10, 0, 63, 0]);

    let luma = canonical_codes(&DC_LUMA_BITS);
    let chroma = canonical_codes(&DC_CHROMA_BITS);
    let mut w = BitWriter { out: o, acc: 0, n: 0 };
    let mut pred = [0i32; 3];
    for by in 0..(height as u32).div_ceil(8) {
        for bx in 0..(width as u32).div_ceil(8) {
            let [r, g, b] = colour(bx * 8 + 4, by * 8 + 4);
            for (c, v) in ycbcr(r, g, b).into_iter().enumerate() {
                let dc = v as i32 - 128;
                let table = if c == 0 { &luma } else { &chroma };
                put_dc(&mut w, table, dc - pred[c]);
                pred[c] = dc;
                w.put(0, 1); // EOB
            }
        }
    }
    let mut o = w.finish();
    o.extend_from_slice(&[0xFF, 0xD9]);
    o
}

// Annex K.3: the number of DC codes of each length 1..16, and the symbols (categories 0..11).
const DC_LUMA_BITS: [u8; 16] = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const DC_CHROMA_BITS: [u8; 16] = [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0];
const DC_VALUES: [u8; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

fn segment(o: &mut Vec<u8>, marker: u8, body: &[u8]) {
    o.extend_from_slice(&[0xFF, marker]);
    o.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
    o.extend_from_slice(body);
}

// (code, length) per symbol in order, assigned canonically as T.81 Annex C does.
fn canonical_codes(bits: &[u8; 16]) -> Vec<(u16, u8)> {
    let mut codes = vec![];
    let mut code = 0u16;
    for (i, &count) in bits.iter().enumerate() {
        for _ in 0..count {
            codes.push((code, i as u8 + 1));
            code += 1;
        }
        code <<= 1;
    }
    codes
}

// A DC difference: the Huffman code of its size category, then its low bits (negative values
// as one's complement).
fn put_dc(w: &mut BitWriter, table: &[(u16, u8)], diff: i32) {
    let size = 32 - diff.unsigned_abs().leading_zeros();
    let (code, len) = table[size as usize];
    w.put(code as u32, len as u32);
    if size > 0 {
        let bits = if diff < 0 { diff - 1 } else { diff };
        w.put(bits as u32 & ((1 << size) - 1), size);
    }
}

fn ycbcr(r: u8, g: u8, b: u8) -> [u8; 3] {
    let (r, g, b) = (r as f64, g as f64, b as f64);
    let clamp = |v: f64| v.round().clamp(0.0, 255.0) as u8;
    [
        clamp(0.299 * r + 0.587 * g + 0.114 * b),
        clamp(128.0 - 0.168736 * r - 0.331264 * g + 0.5 * b),
        clamp(128.0 + 0.5 * r - 0.418688 * g - 0.081312 * b),
    ]
}

// MSB-first bit packer for entropy-coded data: every 0xFF byte is followed by a stuffed 0x00,
// and the last byte is padded with 1 bits.
struct BitWriter {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, bits: u32, len: u32) {
        for i in (0..len).rev() {
            self.acc = (self.acc << 1) | ((bits >> i) & 1);
            self.n += 1;
            if self.n == 8 {
                self.byte();
            }
        }
    }

    fn byte(&mut self) {
        let b = self.acc as u8;
        self.out.push(b);
        if b == 0xFF {
            self.out.push(0);
        }
        self.acc = 0;
        self.n = 0;
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            let pad = 8 - self.n;
            self.acc = (self.acc << pad) | ((1 << pad) - 1);
            self.byte();
        }
        self.out
    }
}

/// A 24-bit uncompressed Windows BMP (BITMAPINFOHEADER, bottom-up rows padded to 4 bytes) of
/// `width`×`height`, pixel colours (RGB) from `colour(x, y)`.
pub fn bmp(width: u32, height: u32, colour: fn(u32, u32) -> [u8; 3]) -> Vec<u8> {
    let row = (width * 3).div_ceil(4) * 4;
    let image = row * height;
    let mut o = Vec::with_capacity(54 + image as usize);
    o.extend_from_slice(b"BM");
    o.extend_from_slice(&(54 + image).to_le_bytes());
    o.extend_from_slice(&[0, 0, 0, 0]);
    o.extend_from_slice(&54u32.to_le_bytes());
    o.extend_from_slice(&40u32.to_le_bytes());
    o.extend_from_slice(&(width as i32).to_le_bytes());
    o.extend_from_slice(&(height as i32).to_le_bytes());
    o.extend_from_slice(&1u16.to_le_bytes()); // planes
    o.extend_from_slice(&24u16.to_le_bytes());
    o.extend_from_slice(&0u32.to_le_bytes()); // BI_RGB
    o.extend_from_slice(&image.to_le_bytes());
    o.extend_from_slice(&2835i32.to_le_bytes()); // 72 dpi
    o.extend_from_slice(&2835i32.to_le_bytes());
    o.extend_from_slice(&[0; 8]); // palette sizes
    for y in (0..height).rev() {
        for x in 0..width {
            let [r, g, b] = colour(x, y);
            o.extend_from_slice(&[b, g, r]);
        }
        o.resize(o.len() + (row - width * 3) as usize, 0);
    }
    o
}

/// A QuickTime movie with no tracks: an `ftyp` atom (brand `qt  `) and a `moov` atom holding only
/// the movie header (time scale 600, duration 0, identity matrix). Structurally valid, but it has
/// no frames: the seed needs a `video/quicktime` blob, not a video.
pub fn quicktime() -> Vec<u8> {
    let mut o = vec![];
    atom(&mut o, b"ftyp", &[b"qt  ".as_slice(), &0x0200u32.to_be_bytes(), b"qt  "].concat());
    let mut mvhd = vec![0u8; 4]; // version 0, no flags
    mvhd.extend_from_slice(&[0; 8]); // creation and modification time
    mvhd.extend_from_slice(&600u32.to_be_bytes());
    mvhd.extend_from_slice(&0u32.to_be_bytes()); // duration
    mvhd.extend_from_slice(&0x0001_0000u32.to_be_bytes()); // rate 1.0
    mvhd.extend_from_slice(&0x0100u16.to_be_bytes()); // volume 1.0
    mvhd.extend_from_slice(&[0; 10]);
    for m in [0x0001_0000u32, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000] {
        mvhd.extend_from_slice(&m.to_be_bytes());
    }
    mvhd.extend_from_slice(&[0; 24]); // preview, poster, selection and current times
    mvhd.extend_from_slice(&1u32.to_be_bytes()); // next track id
    let mut moov = vec![];
    atom(&mut moov, b"mvhd", &mvhd);
    atom(&mut o, b"moov", &moov);
    o
}

fn atom(o: &mut Vec<u8>, kind: &[u8; 4], body: &[u8]) {
    o.extend_from_slice(&((body.len() + 8) as u32).to_be_bytes());
    o.extend_from_slice(kind);
    o.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    // The markers of a JPEG up to SOS, with each segment's body, and the scan data after it.
    fn segments(b: &[u8]) -> (Vec<(u8, Vec<u8>)>, Vec<u8>) {
        assert_eq!(&b[0..2], [0xFF, 0xD8]);
        let mut i = 2;
        let mut segs = vec![];
        loop {
            assert_eq!(b[i], 0xFF);
            let len = u16::from_be_bytes([b[i + 2], b[i + 3]]) as usize;
            segs.push((b[i + 1], b[i + 4..i + 2 + len].to_vec()));
            i += 2 + len;
            if segs.last().unwrap().0 == 0xDA {
                return (segs, b[i..].to_vec());
            }
        }
    }

    // Decodes the DC values of a flat-tile JPEG from our encoder with the Annex K DC codes read
    // as a prefix code table (independently of canonical_codes).
    fn decode_dc(scan: &[u8], blocks: usize) -> Vec<[i32; 3]> {
        let mut bits = vec![];
        let mut i = 0;
        while i < scan.len() {
            bits.extend((0..8).rev().map(|k| (scan[i] >> k) & 1));
            i += if scan[i] == 0xFF { 2 } else { 1 };
        }
        let luma = ["00", "010", "011", "100", "101", "110", "1110", "11110", "111110", "1111110", "11111110", "111111110"];
        let chroma = ["00", "01", "10", "110", "1110", "11110", "111110", "1111110", "11111110", "111111110", "1111111110", "11111111110"];
        let mut pos = 0;
        let mut read = |n: usize| {
            let v = bits[pos..pos + n].iter().fold(0u32, |a, b| a << 1 | *b as u32);
            pos += n;
            v
        };
        let mut out = vec![];
        let mut pred = [0i32; 3];
        for _ in 0..blocks {
            let mut dc = [0; 3];
            for c in 0..3 {
                let table = if c == 0 { &luma } else { &chroma };
                let mut code = String::new();
                let size = loop {
                    code.push(if read(1) == 1 { '1' } else { '0' });
                    if let Some(s) = table.iter().position(|t| *t == code) {
                        break s;
                    }
                };
                let raw = read(size) as i32;
                let diff = if size == 0 { 0 } else if raw >> (size - 1) == 1 { raw } else { raw - (1 << size) + 1 };
                pred[c] += diff;
                dc[c] = pred[c];
                assert_eq!(read(1), 0, "EOB");
            }
            out.push(dc);
        }
        out
    }

    #[test]
    fn jpeg_holds_the_tile_colours() {
        let img = jpeg(16, 8, |x, _| if x < 8 { [255, 255, 255] } else { [0, 0, 255] });
        assert_eq!(&img[img.len() - 2..], [0xFF, 0xD9]);
        let (segs, scan) = segments(&img);
        let kinds: Vec<u8> = segs.iter().map(|s| s.0).collect();
        assert_eq!(kinds, [0xE0, 0xDB, 0xC0, 0xC4, 0xDA]);
        assert_eq!(&segs[0].1[0..5], b"JFIF\0");
        // SOF0: 8-bit, height 8, width 16, three components.
        assert_eq!(&segs[2].1[0..6], [8, 0, 8, 0, 16, 3]);
        let dc = decode_dc(&scan[..scan.len() - 2], 2);
        // White: Y 255, Cb/Cr 128; blue (0,0,255): Y 29, Cb 255, Cr 107.
        assert_eq!(dc, [[127, 0, 0], [29 - 128, 127, 107 - 128]]);
    }

    #[test]
    fn stand_ins_have_the_fixture_kinds_and_sizes() {
        let moon = stand_in("moon.jpg").unwrap();
        let (segs, _) = segments(&moon);
        let sof = &segs.iter().find(|s| s.0 == 0xC0).unwrap().1;
        assert_eq!(&sof[1..5], [2, 128, 2, 128]); // 640 x 640
        let big = stand_in("black_hole.jpg").unwrap();
        let (segs, scan) = segments(&big);
        let sof = &segs.iter().find(|s| s.0 == 0xC0).unwrap().1;
        assert_eq!(&sof[1..5], [8, 112, 15, 0]); // 2160 high, 3840 wide
        // No marker inside the scan: every 0xFF in it is stuffed.
        let data = &scan[..scan.len() - 2];
        assert!(data.windows(2).all(|w| w[0] != 0xFF || w[1] == 0));
        assert!(big.len() > 100_000, "the large image is large: {}", big.len());
        assert_eq!(stand_in("black_hole.jpg").unwrap(), big);

        let bmp = stand_in("pixel.bmp").unwrap();
        assert_eq!(bmp.len(), 58);
        assert_eq!(&bmp[0..2], b"BM");
        assert_eq!(u32::from_le_bytes(bmp[2..6].try_into().unwrap()), 58);
        assert_eq!(&bmp[54..58], [0xd8, 0x6f, 0x2e, 0]);

        let mov = stand_in("alpha-centuri.mov").unwrap();
        assert_eq!(&mov[4..12], b"ftypqt  ");
        let moov = u32::from_be_bytes(mov[20..24].try_into().unwrap()) as usize;
        assert_eq!(&mov[24..28], b"moov");
        assert_eq!(20 + moov, mov.len());
        assert_eq!(&mov[32..36], b"mvhd");
        assert_eq!(u32::from_be_bytes(mov[28..32].try_into().unwrap()), 108);
        assert_eq!(stand_in("other.png"), None);
    }
}
