//! Image variants made in-process (design §12 "Files"), without libvips: the `thumb` Rails
//! makes for a message attachment (`resize_to_limit: [1200, 800]`), an avatar's `square` (512,
//! JPEG or PNG with alpha, `Target::Photo`) and the logo's `large` and `small` (512 and 192,
//! PNG).
//!
//! JPEG is decoded with `jpeg-decoder`, asking it for the smallest DCT scale (1/2, 1/4, 1/8)
//! that still covers the thumbnail, so a 12-megapixel photo is decoded at a quarter of its
//! pixels; PNG with `png`, one row at a time straight into the resizer (`resize.rs`, ours),
//! so the full-size image is never held; GIF (the first frame) with `gif`, a line at a time
//! (`gif_image.rs`); WebP with `image-webp`, whole, after a check of its chunks that bounds the
//! decode (`webp_image.rs`). The results are encoded with `jpeg-encoder` / `png`: a JPEG or PNG
//! thumbnail keeps its format, a GIF's or WebP's is PNG when it has transparency, else JPEG
//! (no GIF or lossy WebP encoder is linked). JPEGs are turned upright by their EXIF
//! orientation (`orient.rs`), as libvips does.
//! Decoders get a hard allocation cap (`MAX_DECODE_BYTES`); anything over it, or any other
//! format, gets no thumbnail (`Outcome::Unsupported`) and the message shows the original file
//! instead (CMYK JPEGs, animated or very large WebPs, video).
//!
//! Runs on the worker pool, never on a loop: a large photo takes tens of milliseconds.

mod gif_image;
pub mod orient;
pub mod resize;
mod webp_image;

use resize::{fit, Resizer};
use std::io::Cursor;

/// Rails' `Message::Attachment::THUMBNAIL_MAX_WIDTH` / `_HEIGHT`.
pub const THUMB_MAX_WIDTH: u32 = 1200;
pub const THUMB_MAX_HEIGHT: u32 = 800;
/// Most bytes a decoder may allocate for one image (decoded planes and output). A JPEG
/// decode at 4:2:0 takes about 4.5 bytes per output pixel, so this admits 1.4 megapixels:
/// a 1200×1000 image at full scale, a 4K or 12-megapixel photo at 1/4 (thumbnails of 960×540
/// and 1000×750: a little under the 1200×800 limit, which the page shows at half size). It is
/// the worker's peak beside the upload itself, and must leave room in a 15 MB container.
pub const MAX_DECODE_BYTES: usize = 6 * 1024 * 1024;
/// JPEG quality of thumbnails (libvips' default is 75; a little more for photos of text).
pub const JPEG_QUALITY: u8 = 80;

/// A thumbnail made from an image.
pub struct Thumbnail {
    pub data: Vec<u8>,
    pub content_type: &'static str,
    pub width: u32,
    pub height: u32,
}

/// What `thumbnail` or `variant` made of an image.
pub enum Outcome {
    /// The image already fits, in the wanted format: its variant is the image itself.
    AlreadyFits,
    /// A smaller copy, or the same size in another format.
    Made(Thumbnail),
    /// Not an image we can shrink (type, size, corruption): no thumbnail.
    Unsupported,
}

/// The format a variant is encoded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The original's format (a message attachment's `thumb`).
    Same,
    /// JPEG, or PNG for an image with an alpha channel (an avatar: Rails makes WebP, which we
    /// cannot encode without a large dependency; JPEG keeps a 512 px photo small).
    Photo,
    /// PNG whatever the original (the account logo: the manifest and icons declare PNG).
    Png,
}

/// Shrinks `data` (a JPEG, PNG, GIF or WebP, told apart by its bytes) to fit `max_w`×`max_h`,
/// keeping its aspect ratio (and its format, for JPEG and PNG). Other formats are
/// `Unsupported`. Never panics on hostile
/// input; allocations stay under `MAX_DECODE_BYTES` plus the thumbnail itself.
pub fn thumbnail(data: &[u8], max_w: u32, max_h: u32) -> Outcome {
    variant(data, max_w, max_h, Target::Same)
}

/// Like `thumbnail`, encoded as `target` says: an image that fits but is in another format
/// than the target's is converted at its own size.
pub fn variant(data: &[u8], max_w: u32, max_h: u32, target: Target) -> Outcome {
    let made = if data.starts_with(b"\xff\xd8\xff") {
        jpeg(data, max_w, max_h, target)
    } else if data.starts_with(b"\x89PNG\r\n\x1a\n") {
        png(data, max_w, max_h, target)
    } else if data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a") {
        gif_image::variant(data, max_w, max_h, target)
    } else if data.starts_with(b"RIFF") && data.get(8..12) == Some(b"WEBP") {
        webp_image::variant(data, max_w, max_h, target)
    } else {
        return Outcome::Unsupported;
    };
    match made {
        Some(Some(t)) => Outcome::Made(t),
        Some(None) => Outcome::AlreadyFits,
        None => Outcome::Unsupported,
    }
}

/// A JPEG variant; `Some(None)` when the image already fits and stays a JPEG.
fn jpeg(data: &[u8], max_w: u32, max_h: u32, target: Target) -> Option<Option<Thumbnail>> {
    use jpeg_decoder::PixelFormat;
    let mut d = jpeg_decoder::Decoder::new(Cursor::new(data));
    d.set_max_decoding_buffer_size(MAX_DECODE_BYTES);
    d.read_info().ok()?;
    let info = d.info()?;
    let (w, h) = (info.width as u32, info.height as u32);
    // The limit applies to the picture as shown, after its EXIF turn.
    let orientation = orient::jpeg_orientation(data);
    let swap = orient::swaps_axes(orientation);
    let (ow, oh) = if swap { (h, w) } else { (w, h) };
    let (otw, oth) = fit(ow, oh, max_w, max_h);
    if (otw, oth) == (ow, oh) && target != Target::Png {
        return Some(None);
    }
    let (tw, th) = if swap { (oth, otw) } else { (otw, oth) };
    let channels = match info.pixel_format {
        PixelFormat::L8 => 1,
        PixelFormat::RGB24 => 3,
        // CMYK and 16-bit lossless JPEGs are rare in chat; they keep the original.
        _ => return None,
    };
    // The coarsest DCT scale that still covers the thumbnail, coarser still when that would
    // not fit the decoding budget (the thumbnail is then a little smaller than 1200×800).
    let (mut rw, mut rh) = (tw, th);
    let (sw, sh) = loop {
        let (sw, sh) = d.scale(rw.min(65535) as u16, rh.min(65535) as u16).ok()?;
        let bytes = (sw as usize) * (sh as usize) * channels;
        if bytes / 2 * 3 <= MAX_DECODE_BYTES {
            break (sw as u32, sh as u32);
        }
        if rw <= 1 && rh <= 1 {
            return None;
        }
        (rw, rh) = ((rw / 2).max(1), (rh / 2).max(1));
    };
    let pixels = d.decode().ok()?;
    // The thumbnail's own size when the decode covers it; smaller when the budget forced a
    // coarser scale (computed afresh from the decoded size, which keeps the aspect ratio).
    let (dw, dh) = if sw >= tw && sh >= th { (tw, th) } else { fit(sw, sh, tw, th) };
    let mut r = Resizer::new(sw, sh, dw, dh, channels)?;
    for row in pixels.chunks(sw as usize * channels) {
        r.push_row(row);
    }
    drop(pixels);
    let (dw, dh) = r.size();
    let (out, dw, dh) = orient::apply(r.finish(), dw, dh, channels, orientation);
    if target == Target::Png {
        return Some(Some(encode_png(&out, dw, dh, channels)?));
    }
    Some(Some(encode_jpeg(&out, dw, dh, channels)?))
}

/// A PNG variant; `Some(None)` when the image already fits and stays a PNG.
fn png(data: &[u8], max_w: u32, max_h: u32, target: Target) -> Option<Option<Thumbnail>> {
    let mut d = png::Decoder::new_with_limits(Cursor::new(data), png::Limits { bytes: MAX_DECODE_BYTES });
    d.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = d.read_info().ok()?;
    let (w, h, interlaced) = {
        let i = reader.info();
        (i.width, i.height, i.interlaced)
    };
    let (tw, th) = fit(w, h, max_w, max_h);
    if (tw, th) == (w, h) {
        return Some(None);
    }
    let (color, _) = reader.output_color_type();
    let channels = color.samples();
    let mut r = Resizer::new(w, h, tw, th, channels)?;
    if interlaced {
        // Interlaced rows arrive pass by pass: decode the whole image (within the budget).
        let size = reader.output_buffer_size().filter(|&n| n <= MAX_DECODE_BYTES)?;
        let mut buf = vec![0u8; size];
        let frame = reader.next_frame(&mut buf).ok()?;
        for row in buf.chunks(frame.line_size.max(1)).take(h as usize) {
            r.push_row(row);
        }
    } else {
        while let Some(row) = reader.next_row().ok()? {
            r.push_row(row.data());
        }
    }
    let out = r.finish();
    // An avatar without transparency is a photo (or a screenshot): JPEG is a fraction of PNG.
    if target == Target::Photo && matches!(channels, 1 | 3) {
        return Some(Some(encode_jpeg(&out, tw, th, channels)?));
    }
    Some(Some(encode_png(&out, tw, th, channels)?))
}

/// Encodes RGBA pixels decoded from a GIF or WebP (or RGB, `channels` 3): PNG for the logo
/// or when some pixel is not opaque, else JPEG (the alpha dropped).
fn encode_any(px: Vec<u8>, w: u32, h: u32, channels: usize, target: Target) -> Option<Thumbnail> {
    let opaque = channels == 3 || px.chunks_exact(4).all(|p| p[3] == 255);
    if target == Target::Png || !opaque {
        return encode_png(&px, w, h, channels);
    }
    if channels == 3 {
        return encode_jpeg(&px, w, h, 3);
    }
    let rgb: Vec<u8> = px.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    drop(px);
    encode_jpeg(&rgb, w, h, 3)
}

/// Encodes 8-bit grey or RGB pixels as a baseline JPEG.
fn encode_jpeg(px: &[u8], w: u32, h: u32, channels: usize) -> Option<Thumbnail> {
    let mut data = Vec::with_capacity(px.len() / 8);
    let color = if channels == 1 { jpeg_encoder::ColorType::Luma } else { jpeg_encoder::ColorType::Rgb };
    jpeg_encoder::Encoder::new(&mut data, JPEG_QUALITY).encode(px, w.try_into().ok()?, h.try_into().ok()?, color).ok()?;
    Some(Thumbnail { data, content_type: "image/jpeg", width: w, height: h })
}

/// Encodes 8-bit pixels of 1–4 channels (grey, grey+alpha, RGB, RGBA) as a PNG.
fn encode_png(px: &[u8], w: u32, h: u32, channels: usize) -> Option<Thumbnail> {
    let mut data = Vec::with_capacity(px.len() / 2);
    {
        let mut e = png::Encoder::new(&mut data, w, h);
        e.set_color(match channels {
            1 => png::ColorType::Grayscale,
            2 => png::ColorType::GrayscaleAlpha,
            3 => png::ColorType::Rgb,
            _ => png::ColorType::Rgba,
        });
        e.set_depth(png::BitDepth::Eight);
        e.set_compression(png::Compression::Fast);
        let mut wr = e.write_header().ok()?;
        wr.write_image_data(px).ok()?;
        wr.finish().ok()?;
    }
    Some(Thumbnail { data, content_type: "image/png", width: w, height: h })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg_of(w: u16, h: u16) -> Vec<u8> {
        let px: Vec<u8> = [30u8, 90, 200].iter().copied().cycle().take(w as usize * h as usize * 3).collect();
        let mut out = Vec::new();
        jpeg_encoder::Encoder::new(&mut out, 90).encode(&px, w, h, jpeg_encoder::ColorType::Rgb).unwrap();
        out
    }

    fn png_of(w: u32, h: u32) -> Vec<u8> {
        let px: Vec<u8> = (0..w as usize * h as usize).flat_map(|i| [(i % 256) as u8, 0, 255, 128]).collect();
        let mut out = Vec::new();
        let mut e = png::Encoder::new(&mut out, w, h);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        let mut wr = e.write_header().unwrap();
        wr.write_image_data(&px).unwrap();
        wr.finish().unwrap();
        out
    }

    #[test]
    fn a_big_jpeg_is_shrunk_to_the_limit_and_still_decodes() {
        let Outcome::Made(t) = thumbnail(&jpeg_of(2400, 1000), THUMB_MAX_WIDTH, THUMB_MAX_HEIGHT) else { panic!("no thumbnail") };
        assert_eq!((t.width, t.height, t.content_type), (1200, 500, "image/jpeg"));
        let mut d = jpeg_decoder::Decoder::new(Cursor::new(&t.data));
        let px = d.decode().unwrap();
        let info = d.info().unwrap();
        assert_eq!((info.width, info.height, px.len()), (1200, 500, 1200 * 500 * 3));
        // The colour survives resizing and JPEG's loss.
        let near = |a: u8, b: i32| (a as i32 - b).abs() < 8;
        assert!(px.chunks(3).all(|p| near(p[0], 30) && near(p[1], 90) && near(p[2], 200)));
    }

    #[test]
    fn a_portrait_phone_photo_is_turned_upright_within_the_limit() {
        // Stored 2400×1600 landscape with "rotate 90° clockwise": shown as 1600×2400.
        let plain = jpeg_of(2400, 1600);
        let exif = orient::tests::jpeg_with_orientation(6, true);
        let mut photo = exif[..exif.len() - 4].to_vec(); // SOI + APP0 + APP1, without the fake SOS
        photo.extend_from_slice(&plain[2..]);
        assert_eq!(orient::jpeg_orientation(&photo), 6);
        let Outcome::Made(t) = thumbnail(&photo, 1200, 800) else { panic!("no thumbnail") };
        assert_eq!((t.width, t.height), (533, 800), "fits 1200×800 as shown, upright");
    }

    /// A GIF of a `w`×`h` screen whose first frame is a `fw`×`fh` red rectangle at (`left`,
    /// `top`) on transparency, then a second, blue, full frame (an animation).
    pub(crate) fn gif_of(w: u16, h: u16, (left, top, fw, fh): (u16, u16, u16, u16), interlaced: bool) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut e = gif::Encoder::new(&mut out, w, h, &[0, 0, 0, 255, 0, 0, 0, 0, 255]).unwrap();
            e.set_repeat(gif::Repeat::Infinite).unwrap();
            let red = vec![1u8; fw as usize * fh as usize];
            let first = gif::Frame { left, top, width: fw, height: fh, interlaced, buffer: red.into(), ..Default::default() };
            e.write_frame(&first).unwrap();
            let blue = vec![2u8; w as usize * h as usize];
            e.write_frame(&gif::Frame { width: w, height: h, delay: 10, buffer: blue.into(), ..Default::default() }).unwrap();
        }
        // The first frame drawn on transparency: index 0 is transparent in it.
        let gce = out.windows(3).position(|x| x == [0x21, 0xf9, 0x04]);
        match gce {
            Some(i) => {
                out[i + 3] |= 1;
                out[i + 6] = 0;
            }
            None => {
                let at = out.windows(1).position(|x| x == [0x2c]).unwrap();
                out.splice(at..at, [0x21, 0xf9, 0x04, 0x01, 0, 0, 0, 0]);
            }
        }
        out
    }

    fn png_pixels(data: &[u8]) -> (u32, u32, usize, Vec<u8>) {
        let mut r = png::Decoder::new(Cursor::new(data)).read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let f = r.next_frame(&mut buf).unwrap();
        (f.width, f.height, f.color_type.samples(), buf)
    }

    #[test]
    fn an_animated_gif_is_shrunk_to_its_first_frame_on_transparency() {
        for interlaced in [false, true] {
            let g = gif_of(2400, 1600, (1200, 0, 1200, 800), interlaced);
            let Outcome::Made(t) = thumbnail(&g, 1200, 800) else { panic!("no GIF thumbnail") };
            assert_eq!((t.width, t.height, t.content_type), (1200, 800, "image/png"), "transparent: PNG");
            let (w, _, ch, px) = png_pixels(&t.data);
            assert_eq!(ch, 4);
            let at = |x: u32, y: u32| &px[(y * w + x) as usize * 4..][..4];
            assert_eq!(at(900, 100), [255, 0, 0, 255], "the red rectangle, top right (interlaced: {interlaced})");
            assert_eq!(at(100, 100)[3], 0, "transparent where the first frame has nothing");
            assert_eq!(at(900, 700)[3], 0, "below the rectangle too");
        }
        // Fully opaque: a JPEG.
        let g = gif_of(1600, 1600, (0, 0, 1600, 1600), false);
        let Outcome::Made(t) = thumbnail(&g, 1200, 800) else { panic!("no GIF thumbnail") };
        assert_eq!((t.width, t.height, t.content_type), (800, 800, "image/jpeg"));
        assert!(matches!(thumbnail(&gif_of(300, 200, (0, 0, 300, 200), false), 1200, 800), Outcome::AlreadyFits));
        // A frame hanging over the screen's edge is cut, not a panic.
        let g = gif_of(1600, 900, (1500, 800, 400, 300), false);
        assert!(matches!(thumbnail(&g, 1200, 800), Outcome::Made(_)));
    }

    #[test]
    fn a_big_webp_is_shrunk() {
        // 1280×960 RGBA: 1.2 megapixels, within the decoding budget.
        let w = webp_image::tests::webp_of(1280, 960);
        let Outcome::Made(t) = thumbnail(&w, 1200, 800) else { panic!("no WebP thumbnail") };
        assert_eq!((t.width, t.height, t.content_type), (1067, 800, "image/png"), "alpha 200: PNG");
        let (_, _, ch, px) = png_pixels(&t.data);
        assert_eq!(ch, 4);
        assert!(px.chunks(4).all(|p| p[2] == 40 && p[3] == 200));
        let small = webp_image::tests::webp_of(300, 200);
        assert!(matches!(thumbnail(&small, 1200, 800), Outcome::AlreadyFits));
        // The avatar's square of a WebP: JPEG or PNG at most 512.
        let Outcome::Made(a) = variant(&w, 512, 512, Target::Photo) else { panic!("no WebP avatar") };
        assert_eq!((a.width, a.height), (512, 384));
        // Twice the pixels is over the budget: no thumbnail, the original is shown.
        assert!(matches!(thumbnail(&webp_image::tests::webp_of(1810, 1358), 1200, 800), Outcome::Unsupported));
    }

    #[test]
    fn a_big_png_is_shrunk_row_by_row() {
        let Outcome::Made(t) = thumbnail(&png_of(1600, 1600), 1200, 800) else { panic!("no thumbnail") };
        assert_eq!((t.width, t.height, t.content_type), (800, 800, "image/png"));
        let mut r = png::Decoder::new(Cursor::new(&t.data)).read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        r.next_frame(&mut buf).unwrap();
        assert!(buf.chunks(4).all(|p| p[1] == 0 && p[2] == 255 && p[3] == 128));
    }

    #[test]
    fn small_images_fit_and_garbage_is_unsupported() {
        assert!(matches!(thumbnail(&jpeg_of(64, 32), 1200, 800), Outcome::AlreadyFits));
        assert!(matches!(thumbnail(&png_of(10, 10), 1200, 800), Outcome::AlreadyFits));
        assert!(matches!(thumbnail(b"GIF89a\x10\x27\x08\x00", 1200, 800), Outcome::Unsupported));
        assert!(matches!(thumbnail(b"RIFF\0\0\0\0WEBPVP8 ", 1200, 800), Outcome::Unsupported));
        assert!(matches!(thumbnail(b"not an image", 1200, 800), Outcome::Unsupported));
        let mut cut = jpeg_of(2400, 1000);
        cut.truncate(cut.len() / 3);
        let _ = thumbnail(&cut, 1200, 800); // a cut-off file may give a partial image, never a panic
        let mut bad = png_of(1600, 1600);
        let n = bad.len();
        bad[n / 2..].iter_mut().for_each(|b| *b = 0x5a);
        assert!(matches!(thumbnail(&bad, 1200, 800), Outcome::Unsupported));
    }

    #[test]
    fn mutated_images_never_panic() {
        // Bytes flipped, runs zeroed and files cut at random places, through the whole pipeline
        // (EXIF walk, decoders, resizer, encoders): a panic would abort the release build.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut exif_jpeg = orient::tests::jpeg_with_orientation(6, false);
        exif_jpeg.truncate(exif_jpeg.len() - 4);
        exif_jpeg.extend_from_slice(&jpeg_of(240, 160)[2..]);
        let gif = gif_of(240, 160, (20, 10, 200, 100), false);
        let webp = webp_image::tests::webp_of(240, 160);
        for base in [jpeg_of(240, 160), exif_jpeg, png_of(240, 160), gif, webp] {
            for _ in 0..400 {
                let mut d = base.clone();
                for _ in 0..1 + next() % 6 {
                    let at = (next() as usize) % d.len();
                    match next() % 3 {
                        0 => d[at] ^= 1 << (next() % 8),
                        1 => d[at..].iter_mut().take(1 + (next() % 16) as usize).for_each(|b| *b = 0),
                        _ => d.truncate(at.max(8)),
                    }
                }
                let _ = thumbnail(&d, 100, 60);
                let _ = orient::jpeg_orientation(&d);
            }
        }
    }

    #[test]
    fn a_jpeg_too_big_to_decode_within_the_budget_is_refused_not_allocated() {
        // 65000×65000 claimed in the header: even at 1/8 it is over the budget.
        let mut j = jpeg_of(16, 16);
        let sof = j.windows(2).position(|w| w == [0xff, 0xc0]).unwrap();
        j[sof + 5..sof + 9].copy_from_slice(&[0xfd, 0xe8, 0xfd, 0xe8]);
        assert!(matches!(thumbnail(&j, 1200, 800), Outcome::Unsupported));
    }
}
