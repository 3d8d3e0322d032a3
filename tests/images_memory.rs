//! The thumbnail pipeline's memory stays within its budget (design: a 15 MB container): a
//! counting global allocator records the peak bytes live while a 4K photo (the bench's
//! `black_hole.jpg` size) and a large PNG are shrunk. One test per file, so no other test
//! thread allocates while it measures.

mod alloc_support;
use alloc_support::peak_of;

use campfire::images::{self, Outcome, MAX_DECODE_BYTES};

#[global_allocator]
static GLOBAL: alloc_support::Peak = alloc_support::Peak;

#[test]
fn thumbnails_stay_within_the_decoding_budget() {
    // A 3840×2160 photo-like JPEG (4:2:0), as the upload workload posts.
    let (w, h) = (3840u16, 2160u16);
    let px: Vec<u8> = (0..h as u32).flat_map(|y| (0..w as u32).flat_map(move |x| [(x / 15) as u8, (y / 9) as u8, ((x ^ y) & 0xff) as u8])).collect();
    let mut jpeg = Vec::new();
    jpeg_encoder::Encoder::new(&mut jpeg, 85).encode(&px, w, h, jpeg_encoder::ColorType::Rgb).unwrap();
    drop(px);
    let mut made = None;
    let peak = peak_of(|| made = Some(images::thumbnail(&jpeg, 1200, 800)));
    let Some(Outcome::Made(t)) = made else { panic!("no thumbnail") };
    assert_eq!((t.width, t.height), (960, 540), "decoded at 1/4 to stay in budget");
    eprintln!("4K JPEG → {}×{} ({} bytes): peak {} KiB", t.width, t.height, t.data.len(), peak / 1024);
    assert!(peak <= MAX_DECODE_BYTES + 1024 * 1024, "peak {peak} bytes");

    // A 3000×2000 RGBA PNG: decoded row by row, never whole.
    let (w, h) = (3000u32, 2000u32);
    let mut png = Vec::new();
    {
        let mut e = png::Encoder::new(&mut png, w, h);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        let mut wr = e.write_header().unwrap();
        let px: Vec<u8> = (0..w * h).flat_map(|i| [(i % 251) as u8, (i / w % 256) as u8, 40, 255]).collect();
        wr.write_image_data(&px).unwrap();
    }
    let mut made = None;
    let peak = peak_of(|| made = Some(images::thumbnail(&png, 1200, 800)));
    let Some(Outcome::Made(t)) = made else { panic!("no PNG thumbnail") };
    assert_eq!((t.width, t.height), (1200, 800));
    eprintln!("3000×2000 PNG ({} bytes) → 1200×800 ({} bytes): peak {} KiB", png.len(), t.data.len(), peak / 1024);
    // The 24 MB decoded image never exists: only the 1200×800 result and row buffers.
    assert!(peak <= 1200 * 800 * 4 * 3, "peak {peak} bytes");
}
