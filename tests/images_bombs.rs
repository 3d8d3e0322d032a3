//! Image bombs: headers that claim enormous pictures, for every decoder (JPEG, PNG, GIF, WebP),
//! through the thumbnail and avatar paths. A counting global allocator records the peak bytes
//! live for each; all must stay far under the 15 MB container, whatever the header claims.
//! One test in this file, so no other test thread allocates while it measures.

mod alloc_support;
use alloc_support::peak_of;

use campfire::images::{self, Outcome};

#[global_allocator]
static GLOBAL: alloc_support::Peak = alloc_support::Peak;

/// A GIF whose screen and first frame are `w`×`h`, with a few bytes of LZW data.
fn gif_header(w: u16, h: u16, frame: (u16, u16), interlaced: bool) -> Vec<u8> {
    let mut g = b"GIF89a".to_vec();
    g.extend_from_slice(&w.to_le_bytes());
    g.extend_from_slice(&h.to_le_bytes());
    g.extend_from_slice(&[0x80, 0, 0, 0, 0, 0, 255, 255, 255]);
    g.push(0x2c);
    g.extend_from_slice(&[0, 0, 0, 0]);
    g.extend_from_slice(&frame.0.to_le_bytes());
    g.extend_from_slice(&frame.1.to_le_bytes());
    g.push(if interlaced { 0x40 } else { 0 });
    g.extend_from_slice(&[2, 4, 0x84, 0x8f, 0xa9, 0x0b, 0, 0x3b]);
    g
}

/// A WebP with a `VP8X` canvas of `canvas` and one image chunk (`VP8 ` or `VP8L`) claiming `image`.
fn webp_header(canvas: Option<(u32, u32)>, image: (u32, u32), lossy: bool) -> Vec<u8> {
    let mut chunks = Vec::new();
    if let Some((w, h)) = canvas {
        chunks.extend_from_slice(b"VP8X\x0a\0\0\0\x10\0\0\0");
        chunks.extend_from_slice(&(w - 1).to_le_bytes()[..3]);
        chunks.extend_from_slice(&(h - 1).to_le_bytes()[..3]);
    }
    if lossy {
        chunks.extend_from_slice(b"VP8 \x0a\0\0\0\x10\x02\0\x9d\x01\x2a");
        chunks.extend_from_slice(&(image.0 as u16).to_le_bytes());
        chunks.extend_from_slice(&(image.1 as u16).to_le_bytes());
    } else {
        let bits = (image.0 - 1) | (image.1 - 1) << 14 | 1 << 28;
        chunks.extend_from_slice(b"VP8L\x05\0\0\0\x2f");
        chunks.extend_from_slice(&bits.to_le_bytes());
        chunks.push(0);
    }
    chunks.extend_from_slice(&[0; 64]);
    let mut w = b"RIFF".to_vec();
    w.extend_from_slice(&(chunks.len() as u32 + 4).to_le_bytes());
    w.extend_from_slice(b"WEBP");
    w.extend_from_slice(&chunks);
    w
}

#[test]
fn bomb_headers_stay_small_for_every_decoder() {
    const LIMIT: usize = 15_000_000;
    // A real 16×16 JPEG and PNG with their size fields rewritten.
    let mut jpeg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpeg, 85).encode(&[128; 16 * 16 * 3], 16, 16, jpeg_encoder::ColorType::Rgb).unwrap();
    let sof = jpeg.windows(2).position(|w| w == [0xff, 0xc0]).unwrap();
    jpeg[sof + 5..sof + 9].copy_from_slice(&[0xff, 0xdc, 0xff, 0xdc]); // 65500×65500
    let mut png = Vec::new();
    {
        let mut e = png::Encoder::new(&mut png, 16, 16);
        e.set_color(png::ColorType::Rgba);
        let mut wr = e.write_header().unwrap();
        wr.write_image_data(&[7; 16 * 16 * 4]).unwrap();
    }
    png[16..24].copy_from_slice(&[0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff]); // 65535×65535 (CRC now wrong too)
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("JPEG 65500²", jpeg),
        ("PNG 65535²", png),
        ("GIF 65535² screen and frame", gif_header(65535, 65535, (65535, 65535), false)),
        ("GIF 65535² interlaced", gif_header(65535, 65535, (65535, 65535), true)),
        ("GIF 4000² screen, 65535² frame", gif_header(4000, 4000, (65535, 65535), false)),
        ("GIF 4000² interlaced frame", gif_header(4000, 4000, (4000, 4000), true)),
        ("WebP VP8X 16384² canvas, VP8L 16384²", webp_header(Some((16384, 16384)), (16384, 16384), false)),
        ("WebP VP8 16383²", webp_header(None, (16383, 16383), true)),
        ("WebP small canvas, VP8 16383²", webp_header(Some((100, 100)), (16383, 16383), true)),
        ("WebP VP8L 16384²", webp_header(None, (16384, 16384), false)),
    ];
    for (name, data) in &cases {
        for (max, target) in [(1200, images::Target::Same), (512, images::Target::Photo), (192, images::Target::Png)] {
            let mut made = None;
            let peak = peak_of(|| made = Some(images::variant(data, max, max * 2 / 3, target)));
            let what = match made {
                Some(Outcome::Made(t)) => format!("made {}×{}", t.width, t.height),
                Some(Outcome::AlreadyFits) => "fits".to_string(),
                _ => "refused".to_string(),
            };
            eprintln!("{name} → {max} {target:?}: {what}, peak {} KiB", peak / 1024);
            assert!(peak < LIMIT, "{name}: peak {peak} bytes");
        }
    }
}
