//! EXIF orientation: phones store a portrait photo as landscape pixels plus an Orientation tag
//! (TIFF tag 0x0112) saying how to turn it. Browsers honour the tag when they show the
//! original, but a thumbnail we encode carries no EXIF, so it is turned here instead, as
//! libvips' `autorot` does for Rails. The analyzer, likewise, reports the size as displayed
//! (width and height swapped for the four orientations that turn by 90°).

/// The Orientation (1–8) of a JPEG's EXIF block; 1 (as stored) when there is none or it is
/// unreadable.
pub fn jpeg_orientation(d: &[u8]) -> u8 {
    exif_block(d).and_then(tiff_orientation).filter(|o| (1..=8).contains(o)).unwrap_or(1)
}

/// Whether an orientation turns the picture by 90° (its displayed width is the stored height).
pub fn swaps_axes(orientation: u8) -> bool {
    (5..=8).contains(&orientation)
}

/// The TIFF data of the first `APP1` `Exif\0\0` segment before the image data.
fn exif_block(d: &[u8]) -> Option<&[u8]> {
    if !d.starts_with(b"\xff\xd8") {
        return None;
    }
    let mut i = 2;
    loop {
        if *d.get(i)? != 0xff {
            return None;
        }
        let marker = *d.get(i + 1)?;
        if marker == 0xda || marker == 0xd9 {
            return None; // start of scan / end of image: no EXIF before the pixels
        }
        let len = u16::from_be_bytes([*d.get(i + 2)?, *d.get(i + 3)?]) as usize;
        let seg = d.get(i + 4..i + 2 + len)?;
        if marker == 0xe1 && seg.starts_with(b"Exif\0\0") {
            return seg.get(6..);
        }
        i += 2 + len;
    }
}

/// Tag 0x0112 of IFD0 of a TIFF structure.
fn tiff_orientation(t: &[u8]) -> Option<u8> {
    let le = match t.get(0..2)? {
        b"II" => true,
        b"MM" => false,
        _ => return None,
    };
    let u16_at = |i: usize| -> Option<u16> {
        let b = [*t.get(i)?, *t.get(i + 1)?];
        Some(if le { u16::from_le_bytes(b) } else { u16::from_be_bytes(b) })
    };
    let u32_at = |i: usize| -> Option<u32> {
        let b = [*t.get(i)?, *t.get(i + 1)?, *t.get(i + 2)?, *t.get(i + 3)?];
        Some(if le { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) })
    };
    let ifd = u32_at(4)? as usize;
    let count = u16_at(ifd)? as usize;
    (0..count.min(512)).find_map(|k| {
        let e = ifd + 2 + k * 12;
        (u16_at(e)? == 0x0112 && u16_at(e + 2)? == 3).then(|| u16_at(e + 8).map(|v| v as u8)).flatten()
    })
}

/// Turns a `w`×`h` image of `ch` interleaved channels as `orientation` says; returns the
/// pixels and the new size.
pub fn apply(px: Vec<u8>, w: u32, h: u32, ch: usize, orientation: u8) -> (Vec<u8>, u32, u32) {
    if orientation <= 1 || orientation > 8 {
        return (px, w, h);
    }
    let (w, h) = (w as usize, h as usize);
    let (nw, nh) = if swaps_axes(orientation) { (h, w) } else { (w, h) };
    let mut out = vec![0u8; px.len()];
    for y in 0..h {
        for x in 0..w {
            // Where stored pixel (x, y) is displayed.
            let (dx, dy) = match orientation {
                2 => (w - 1 - x, y),
                3 => (w - 1 - x, h - 1 - y),
                4 => (x, h - 1 - y),
                5 => (y, x),
                6 => (h - 1 - y, x),
                7 => (h - 1 - y, w - 1 - x),
                _ => (y, w - 1 - x), // 8
            };
            let (from, to) = ((y * w + x) * ch, (dy * nw + dx) * ch);
            if let (Some(src), Some(dst)) = (px.get(from..from + ch), out.get_mut(to..to + ch)) {
                dst.copy_from_slice(src);
            }
        }
    }
    (out, nw as u32, nh as u32)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A JPEG prefix with an EXIF block holding `orientation`, in either byte order.
    pub fn jpeg_with_orientation(orientation: u16, le: bool) -> Vec<u8> {
        let w16 = |v: u16| if le { v.to_le_bytes() } else { v.to_be_bytes() };
        let w32 = |v: u32| if le { v.to_le_bytes() } else { v.to_be_bytes() };
        let mut tiff = Vec::new();
        tiff.extend_from_slice(if le { b"II" } else { b"MM" });
        tiff.extend_from_slice(&w16(42));
        tiff.extend_from_slice(&w32(8));
        tiff.extend_from_slice(&w16(1));
        tiff.extend_from_slice(&w16(0x0112));
        tiff.extend_from_slice(&w16(3));
        tiff.extend_from_slice(&w32(1));
        tiff.extend_from_slice(&w16(orientation));
        tiff.extend_from_slice(&[0, 0]);
        tiff.extend_from_slice(&w32(0));
        let mut d = vec![0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xe1];
        d.extend_from_slice(&((tiff.len() + 8) as u16).to_be_bytes());
        d.extend_from_slice(b"Exif\0\0");
        d.extend_from_slice(&tiff);
        d.extend_from_slice(&[0xff, 0xda, 0, 2]);
        d
    }

    #[test]
    fn reads_the_tag_in_both_byte_orders() {
        assert_eq!(jpeg_orientation(&jpeg_with_orientation(6, true)), 6);
        assert_eq!(jpeg_orientation(&jpeg_with_orientation(8, false)), 8);
        assert_eq!(jpeg_orientation(&jpeg_with_orientation(77, false)), 1, "nonsense is ignored");
        assert_eq!(jpeg_orientation(b"\xff\xd8\xff\xe1\x00"), 1, "cut off");
        assert_eq!(jpeg_orientation(b"not a jpeg"), 1);
    }

    #[test]
    fn turns_pixels() {
        // 3×2 grey image:  1 2 3 / 4 5 6
        let px = vec![1, 2, 3, 4, 5, 6];
        assert_eq!(apply(px.clone(), 3, 2, 1, 1), (px.clone(), 3, 2));
        assert_eq!(apply(px.clone(), 3, 2, 1, 2), (vec![3, 2, 1, 6, 5, 4], 3, 2));
        assert_eq!(apply(px.clone(), 3, 2, 1, 3), (vec![6, 5, 4, 3, 2, 1], 3, 2));
        assert_eq!(apply(px.clone(), 3, 2, 1, 4), (vec![4, 5, 6, 1, 2, 3], 3, 2));
        // 6: rotate 90° clockwise → 2×3:  4 1 / 5 2 / 6 3
        assert_eq!(apply(px.clone(), 3, 2, 1, 6), (vec![4, 1, 5, 2, 6, 3], 2, 3));
        // 8: rotate 90° counter-clockwise → 3 6 / 2 5 / 1 4
        assert_eq!(apply(px.clone(), 3, 2, 1, 8), (vec![3, 6, 2, 5, 1, 4], 2, 3));
        // 5: transpose → 1 4 / 2 5 / 3 6
        assert_eq!(apply(px.clone(), 3, 2, 1, 5), (vec![1, 4, 2, 5, 3, 6], 2, 3));
        // 7: transverse → 6 3 / 5 2 / 4 1
        assert_eq!(apply(px, 3, 2, 1, 7), (vec![6, 3, 5, 2, 4, 1], 2, 3));
    }
}
