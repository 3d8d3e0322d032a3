//! Named variants made on upload, against the real binary (spec/01 §4.6, §3 logo, §12.4;
//! issue 16): a phone photo as an avatar is served as its `square` variant, at most 512×512,
//! upright, small; a JPEG logo is served as its PNG `large` and `small` variants; a variant
//! Rails made is served before ours.

mod support;
use campfire::crypto::variation::Variation;
use support::*;

/// A 4000×3000 photo-like JPEG (smooth gradients with fine texture, like a phone picture),
/// with an EXIF Orientation tag when `orientation` is not 1.
fn photo(w: u16, h: u16, orientation: u8) -> Vec<u8> {
    let px: Vec<u8> = (0..h as u32)
        .flat_map(|y| {
            (0..w as u32).flat_map(move |x| {
                let grain = ((x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503)) >> 28) as u8;
                [(x * 200 / w as u32) as u8 + grain, (y * 180 / h as u32) as u8 + grain, 90u8.wrapping_add((x / 40 + y / 30) as u8 % 64)]
            })
        })
        .collect();
    let mut plain = Vec::new();
    jpeg_encoder::Encoder::new(&mut plain, 90).encode(&px, w, h, jpeg_encoder::ColorType::Rgb).unwrap();
    if orientation == 1 {
        return plain;
    }
    // APP1 "Exif": a big-endian TIFF header and one IFD entry, Orientation (0x0112) SHORT.
    let mut out = plain[..2].to_vec();
    out.extend_from_slice(&[0xff, 0xe1, 0x00, 0x22]);
    out.extend_from_slice(b"Exif\0\0MM\0*\0\0\0\x08\0\x01\x01\x12\0\x03\0\0\0\x01\0");
    out.extend_from_slice(&[orientation, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&plain[2..]);
    out
}

fn jpeg_size(data: &[u8]) -> (u16, u16) {
    let mut d = jpeg_decoder::Decoder::new(data);
    d.decode().expect("a JPEG");
    let i = d.info().unwrap();
    (i.width, i.height)
}

fn png_size(data: &[u8]) -> (u32, u32) {
    let r = png::Decoder::new(std::io::Cursor::new(data)).read_info().expect("a PNG");
    (r.info().width, r.info().height)
}

/// The first avatar URL of `user_id` in `html` (`/users/<token>/avatar?v=<stamp>`).
fn avatar_url_in(html: &str, s: &Seeded, user_id: i64) -> String {
    let mut t = Vec::new();
    campfire::crypto::signed_id::avatar_token(&campfire::crypto::Keys::derive(b"dummy"), user_id, &mut t);
    let prefix = format!("/users/{}/avatar?v=", String::from_utf8(t).unwrap());
    let at = html.find(&prefix).unwrap_or_else(|| panic!("no avatar URL for {user_id}: {}", s.srv.stderr()));
    html[at..at + prefix.len() + 14].to_string()
}

#[test]
fn a_phone_photo_avatar_is_served_as_an_upright_square_variant_under_60_kb() {
    let s = start();
    let original = photo(4000, 3000, 6);
    let mut jar = s.jar(KEVIN);
    let req = Request::multipart("/users/me/profile", &[("_method", "patch")], Some(("user[avatar]", "IMG_0001.JPG", "image/jpeg", &original)));
    let r = jar.send(&s.srv, req);
    assert_eq!(r.status, 302, "{r:?}\n{}", s.srv.stderr());

    // The variant is recorded the way Rails records one: a record for the avatar's blob, its
    // image a blob of its own.
    let digest = Variation { format: "jpg".into(), max_width: 512, max_height: 512 }.named_digest();
    let row = s.query_text(&format!(
        "SELECT v.variation_digest || '|' || vb.content_type || '|' || vb.filename || '|' || vb.metadata \
         FROM active_storage_attachments a JOIN active_storage_variant_records v ON v.blob_id = a.blob_id \
         JOIN active_storage_attachments va ON va.record_type = 'ActiveStorage::VariantRecord' AND va.record_id = v.id AND va.name = 'image' \
         JOIN active_storage_blobs vb ON vb.id = va.blob_id WHERE a.record_type = 'User' AND a.record_id = {KEVIN} AND a.name = 'avatar'"
    ));
    assert_eq!(row, format!("{digest}|image/jpeg|IMG_0001.jpg|{{\"identified\":true,\"width\":384,\"height\":512,\"analyzed\":true}}"));

    let page = jar.send(&s.srv, Request::get("/users/me/profile"));
    let url = avatar_url_in(&page.body, &s, KEVIN);
    let a = s.srv.send(&Request::get(&url).cookies(&s.jar(DAVID)));
    assert_eq!(a.status, 200);
    assert_eq!(a.header("Content-Type"), Some("image/jpeg"));
    assert_eq!(a.header("Cache-Control"), Some("max-age=31536000, public, immutable"), "the URL names this picture for good");
    let (w, h) = jpeg_size(&a.raw_body);
    eprintln!("avatar: {} bytes original {}×{} → {} bytes {w}×{h}", original.len(), 4000, 3000, a.raw_body.len());
    assert_eq!((w, h), (384, 512), "within 512×512, turned upright by its EXIF orientation, aspect kept");
    assert!(a.raw_body.len() <= 60 * 1024, "{} bytes", a.raw_body.len());
    assert!(original.len() > 1_000_000, "the original was a real-size photo ({} bytes)", original.len());
    // A stale stamp still gets the picture, but only for a while.
    let stale = s.srv.send(&Request::get(&url.replace("?v=", "?v=1")).cookies(&s.jar(DAVID)));
    assert_eq!(stale.header("Cache-Control"), Some("max-age=1800, public, stale-while-revalidate=604800"));

    // A variant Rails made (WebP, its own digest) is read before ours.
    let blob = s.query_int(&format!("SELECT blob_id FROM active_storage_attachments WHERE record_type = 'User' AND record_id = {KEVIN} AND name = 'avatar'"));
    let key = "railswebpvariant000000000001";
    let dir = s.srv.dir.join("storage/files").join(&key[0..2]).join(&key[2..4]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(key), b"RIFF\x10\0\0\0WEBPVP8 rails-made").unwrap();
    s.srv.sql(&format!(
        "INSERT INTO active_storage_variant_records (blob_id, variation_digest) VALUES ({blob}, '6gwfjNKv9eUy9jNUtEZvQFLU0hQ=');
         INSERT INTO active_storage_blobs (key, filename, content_type, service_name, byte_size, created_at) VALUES ('{key}', 'IMG_0001.webp', 'image/webp', 'local', 27, '2025-01-01 00:00:00');
         INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) SELECT 'image', 'ActiveStorage::VariantRecord', (SELECT max(id) FROM active_storage_variant_records), id, '2025-01-01 00:00:00' FROM active_storage_blobs WHERE key = '{key}';
         UPDATE users SET updated_at = '2031-01-01 00:00:00' WHERE id = {KEVIN};"
    ));
    let r = s.srv.send(&Request::get(&avatar_url_in(&jar.send(&s.srv, Request::get("/users/me/profile")).body, &s, KEVIN)).cookies(&s.jar(DAVID)));
    assert_eq!((r.status, r.header("Content-Type")), (200, Some("image/webp")));
    assert!(r.raw_body.ends_with(b"rails-made"));

    // Removing the avatar removes the original and both variants' files.
    let keys = s.query_text("SELECT group_concat(key, ' ') FROM active_storage_blobs");
    assert_eq!(keys.split(' ').count(), 3);
    assert_eq!(s.srv.send(&Request::post_form(&format!("/users/{KEVIN}/avatar"), &[("_method", "delete")]).cookies(&s.jar(KEVIN))).status, 302);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs"), 0);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_variant_records"), 0);
}

#[test]
fn a_transparent_png_avatar_keeps_its_alpha_as_a_png_variant() {
    let s = start();
    let (w, h) = (1000u32, 1000u32);
    let mut data = Vec::new();
    {
        let mut e = png::Encoder::new(&mut data, w, h);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        let px: Vec<u8> = (0..w * h).flat_map(|i| [200, (i % 200) as u8, 40, if (i / w) < 500 { 0 } else { 255 }]).collect();
        let mut wr = e.write_header().unwrap();
        wr.write_image_data(&px).unwrap();
    }
    let req = Request::multipart("/users/me/profile", &[("_method", "patch")], Some(("user[avatar]", "logo.png", "image/png", &data)));
    assert_eq!(s.jar(KEVIN).send(&s.srv, req).status, 302);
    let mut jar = s.jar(KEVIN);
    let url = avatar_url_in(&jar.send(&s.srv, Request::get("/users/me/profile")).body, &s, KEVIN);
    let a = s.srv.send(&Request::get(&url).cookies(&s.jar(DAVID)));
    assert_eq!(a.header("Content-Type"), Some("image/png"));
    let mut r = png::Decoder::new(std::io::Cursor::new(&a.raw_body)).read_info().unwrap();
    let mut buf = vec![0; r.output_buffer_size().unwrap()];
    let info = r.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height, info.color_type), (512, 512, png::ColorType::Rgba));
    assert_eq!((buf[3], buf[buf.len() - 1]), (0, 255), "transparent top, opaque bottom");
}

#[test]
fn a_jpeg_logo_is_shown_at_512_and_192_as_png() {
    let s = start();
    let logo = photo(1200, 900, 1);
    let req = Request::multipart("/account", &[("_method", "patch")], Some(("account[logo]", "logo.jpg", "image/jpeg", &logo)));
    let r = s.srv.send(&req.cookies(&s.jar(DAVID)));
    assert_eq!(r.status, 302, "{r:?}\n{}", s.srv.stderr());
    assert_eq!(
        s.query_text("SELECT group_concat(variation_digest, ' ') FROM (SELECT variation_digest FROM active_storage_variant_records ORDER BY id)"),
        "ksXvpLsa7BuCVyHOwmQOKedbIbM= EXATZfM7OVVC86CDh85TOsa8ZSw=",
        "Rails' own digests for the logo's large and small variants"
    );
    for (path, size) in [("/account/logo", (512, 384)), ("/account/logo?size=small", (192, 144))] {
        let r = s.srv.send(&Request::get(path));
        assert_eq!((r.status, r.header("Content-Type")), (200, Some("image/png")), "{path}");
        assert_eq!(png_size(&r.raw_body), size, "{path}");
    }
    let page = s.get(DAVID, "/account/edit");
    assert!(page.body.contains("account-has-logo"), "the page knows there is a logo");
}

#[test]
fn gif_and_webp_avatars_and_logos_get_their_variants() {
    let s = start();
    // An opaque animated GIF avatar: its first frame, as a JPEG square of at most 512.
    let mut gif = Vec::new();
    {
        let mut e = gif::Encoder::new(&mut gif, 900, 600, &[10, 200, 30, 0, 0, 255]).unwrap();
        for index in [0u8, 1] {
            let px = vec![index; 900 * 600];
            e.write_frame(&gif::Frame { width: 900, height: 600, delay: 20, buffer: px.into(), ..Default::default() }).unwrap();
        }
    }
    let req = Request::multipart("/users/me/profile", &[("_method", "patch")], Some(("user[avatar]", "me.gif", "image/gif", &gif)));
    assert_eq!(s.jar(KEVIN).send(&s.srv, req).status, 302);
    let mut jar = s.jar(KEVIN);
    let url = avatar_url_in(&jar.send(&s.srv, Request::get("/users/me/profile")).body, &s, KEVIN);
    let a = s.srv.send(&Request::get(&url).cookies(&s.jar(DAVID)));
    assert_eq!((a.status, a.header("Content-Type")), (200, Some("image/jpeg")));
    assert_eq!(jpeg_size(&a.raw_body), (512, 341), "the first frame, within 512×512");
    let mut d = jpeg_decoder::Decoder::new(&a.raw_body[..]);
    let px = d.decode().unwrap();
    assert!(px[1] > 150 && px[2] < 100, "green, the first frame's colour: {:?}", &px[..3]);

    // A WebP logo: PNG at 512 and 192.
    let px: Vec<u8> = (0..700u32 * 700).flat_map(|i| [(i % 251) as u8, 90, 30]).collect();
    let mut webp = Vec::new();
    image_webp::WebPEncoder::new(&mut webp).encode(&px, 700, 700, image_webp::ColorType::Rgb8).unwrap();
    let req = Request::multipart("/account", &[("_method", "patch")], Some(("account[logo]", "logo.webp", "image/webp", &webp)));
    assert_eq!(s.srv.send(&req.cookies(&s.jar(DAVID))).status, 302);
    for (path, size) in [("/account/logo", (512, 512)), ("/account/logo?size=small", (192, 192))] {
        let r = s.srv.send(&Request::get(path));
        assert_eq!((r.status, r.header("Content-Type")), (200, Some("image/png")), "{path}");
        assert_eq!(png_size(&r.raw_body), size, "{path}");
    }
}

#[test]
fn an_avatar_over_the_form_file_bound_is_refused_and_nothing_is_stored() {
    // Avatars are resized in memory, so they have a bound (24 MiB) of their own, below an
    // upload limit raised for big attachments.
    let s = start_with(&[("CAMPFIRE_MAX_UPLOAD", "104857600")]);
    let big = vec![0u8; 25 * 1024 * 1024];
    let req = Request::multipart("/users/me/profile", &[("_method", "patch")], Some(("user[avatar]", "huge.jpg", "image/jpeg", &big)));
    assert_eq!(s.jar(KEVIN).send(&s.srv, req).status, 413);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs"), 0);
    assert_eq!(s.get(KEVIN, "/up").status, 200);
}
