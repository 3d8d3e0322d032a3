//! Message attachments against the real binary (spec/02 §4.26 `message[attachment]`, §4.15
//! representations, spec/01 §12.4–12.5, bench/workloads.md §9): a multipart post answers the
//! append stream with the thumbnail's `<img>`, the thumbnail URL serves a JPEG within
//! 1200×800, other files get the download row, and bad uploads get 413/400 without harm.

mod support;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use support::*;

const BOUNDARY: &str = "----campfireTestBoundary7MA4YWxk";

/// The multipart body a browser's XHR `FormData` sends.
fn multipart(fields: &[(&str, &str)], file: Option<(&str, &str, &str, &[u8])>) -> Vec<u8> {
    let mut b = Vec::new();
    for (name, value) in fields {
        b.extend_from_slice(format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes());
    }
    if let Some((name, filename, content_type, data)) = file {
        b.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n").as_bytes(),
        );
        b.extend_from_slice(data);
        b.extend_from_slice(b"\r\n");
    }
    b.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    b
}

fn upload(s: &Seeded, user: i64, room: i64, filename: &str, content_type: &str, data: &[u8], cmid: &str) -> Response {
    let body = multipart(&[("message[client_message_id]", cmid)], Some(("message[attachment]", filename, content_type, data)));
    let req = Request {
        method: "POST",
        path: format!("/rooms/{room}/messages"),
        headers: vec![
            ("Content-Type".into(), format!("multipart/form-data; boundary={BOUNDARY}")),
            ("Accept".into(), "text/vnd.turbo-stream.html, text/html".into()),
            ("X-CSRF-Token".into(), "token".into()),
            ("Sec-Fetch-Site".into(), "same-origin".into()),
        ],
        body,
    };
    s.srv.send(&req.cookies(&s.jar(user)))
}

/// A GET whose body is kept as bytes (images), with the response head as text.
fn fetch(port: u16, path: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n").unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head, raw[split + 4..].to_vec())
}

fn attr<'a>(html: &'a str, tag_start: &str, name: &str) -> &'a str {
    let tag = &html[html.find(tag_start).unwrap_or_else(|| panic!("no {tag_start} in {html}"))..];
    let tag = &tag[..tag.find('>').unwrap()];
    let at = tag.find(&format!(" {name}=\"")).unwrap_or_else(|| panic!("no {name} in {tag}")) + name.len() + 3;
    &tag[at..at + tag[at..].find('"').unwrap()]
}

fn jpeg(w: u16, h: u16) -> Vec<u8> {
    // A horizontal gradient, so a broken resize would show.
    let px: Vec<u8> = (0..h as usize).flat_map(|_| (0..w as usize).flat_map(|x| [(x * 255 / w as usize) as u8, 80, 160])).collect();
    let mut out = Vec::new();
    jpeg_encoder::Encoder::new(&mut out, 85).encode(&px, w, h, jpeg_encoder::ColorType::Rgb).unwrap();
    out
}

#[test]
fn an_image_upload_answers_the_stream_and_its_thumbnail_fits_the_variant() {
    let s = start();
    let original = jpeg(2400, 1600);
    let r = upload(&s, DAVID, HQ, "black_hole.jpg", "image/jpeg", &original, "up-1");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.header("Content-Type").unwrap().starts_with("text/vnd.turbo-stream.html"));
    assert!(r.body.starts_with(&format!(r#"<turbo-stream action="append" target="messages_rooms_open_{HQ}">"#)));
    assert!(r.body.contains(r#"id="message_up-1""#));
    let src = attr(&r.body, "<img class=\"message__attachment\"", "src").replace("&amp;", "&");
    assert!(src.starts_with("/rails/active_storage/representations/redirect/"), "{src}");
    assert!(src.ends_with("/black_hole.jpg"));
    assert_eq!(attr(&r.body, "<img class=\"message__attachment\"", "width"), "1200");
    assert_eq!(attr(&r.body, "<img class=\"message__attachment\"", "height"), "800");

    // Rows: the blob with Rails' metadata, its attachment, the tracked thumb variant.
    let id = s.query_int("SELECT id FROM messages WHERE client_message_id = 'up-1'");
    let blob = |col: &str| {
        s.query_text(&format!(
            "SELECT b.{col} FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id \
             WHERE a.record_type = 'Message' AND a.record_id = {id} AND a.name = 'attachment'"
        ))
    };
    assert_eq!(blob("metadata"), r#"{"identified":true,"width":2400,"height":1600,"analyzed":true}"#);
    assert_eq!(blob("content_type"), "image/jpeg");
    assert_eq!(blob("service_name"), "local");
    assert_eq!(blob("byte_size"), original.len().to_string());
    assert_eq!(blob("checksum").len(), 24, "base64 of an MD5");
    assert_eq!(
        s.query_text(&format!(
            "SELECT v.variation_digest FROM active_storage_variant_records v JOIN active_storage_attachments a \
             ON a.record_type = 'Message' AND a.blob_id = v.blob_id WHERE a.record_id = {id}"
        )),
        "IBhrLAIapu+NCId+2Kz6EqUWRKY="
    );
    assert_eq!(s.query_text(&format!("SELECT body FROM message_search_index WHERE rowid = {id}")), "black_hole.jpg");

    // The thumbnail: a JPEG exactly within the variant's bounds, with the gradient kept.
    let (status, head, bytes) = fetch(s.srv.port, &src);
    assert_eq!(status, 200, "{head}");
    assert!(head.contains("Content-Type: image/jpeg"), "{head}");
    assert!(bytes.len() < original.len());
    let mut d = jpeg_decoder::Decoder::new(&bytes[..]);
    let px = d.decode().expect("the thumbnail decodes");
    let info = d.info().unwrap();
    assert!(info.width <= 1200 && info.height <= 800);
    assert_eq!((info.width, info.height), (1200, 800));
    let left = px[3 * (400 * 1200 + 10)];
    let right = px[3 * (400 * 1200 + 1190)];
    assert!(left < 20 && right > 235, "gradient kept: {left} … {right}");

    // The download link serves the original, as an attachment.
    let download = attr(&r.body, "<a class=\"message__attachment-download\"", "href").replace("&amp;", "&");
    let (status, head, bytes) = fetch(s.srv.port, &download);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Disposition: attachment; filename=\"black_hole.jpg\""), "{head}");
    assert_eq!(bytes, original);

    // The room page renders the same markup.
    let page = s.get(DAVID, &format!("/rooms/{HQ}/messages"));
    assert!(page.body.contains(&src.replace('&', "&amp;")));
}

#[test]
fn a_12_megapixel_photo_states_its_thumbnails_own_size() {
    // Decoded at 1/4 to stay in the decoding budget: the thumbnail is 1000×750, not the
    // 1067×800 that scaling the original to the limit would say.
    let s = start();
    let r = upload(&s, DAVID, HQ, "big.jpg", "image/jpeg", &jpeg(4000, 3000), "up-12mp");
    assert_eq!(r.status, 200, "{}", r.body);
    let img = "<img class=\"message__attachment\"";
    assert_eq!((attr(&r.body, img, "width"), attr(&r.body, img, "height")), ("1000", "750"));
    let src = attr(&r.body, img, "src").replace("&amp;", "&");
    let (status, _, bytes) = fetch(s.srv.port, &src);
    assert_eq!(status, 200);
    let mut d = jpeg_decoder::Decoder::new(&bytes[..]);
    d.decode().unwrap();
    assert_eq!(d.info().map(|i| (i.width, i.height)), Some((1000, 750)));
    assert!(r.body.contains("width: 500px; aspect-ratio: 1000/750;"), "{}", r.body);
}

#[test]
fn a_small_image_is_its_own_thumbnail_and_other_files_get_a_download_row() {
    let s = start();
    let small = jpeg(64, 48);
    let r = upload(&s, DAVID, HQ, "tiny.jpeg", "image/jpeg", &small, "up-2");
    assert_eq!(r.status, 200, "{}", r.body);
    let src = attr(&r.body, "<img class=\"message__attachment\"", "src").replace("&amp;", "&");
    assert!(src.ends_with("/tiny.jpeg"));
    let (status, _, bytes) = fetch(s.srv.port, &src);
    assert_eq!((status, bytes == small), (200, true), "an image within bounds is served as is");

    let r = upload(&s, DAVID, HQ, "notes.txt", "text/plain", b"some notes", "up-3");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(!r.body.contains("<img class=\"message__attachment\""));
    assert!(r.body.contains(r#"<span class="message__filename">notes.txt</span>"#), "{}", r.body);
    let href = attr(&r.body, "<a class=\"btn message__action-btn message__attachment-download", "href").replace("&amp;", "&");
    assert!(href.ends_with("/notes.txt?disposition=attachment"), "{href}");
    let (status, head, bytes) = fetch(s.srv.port, &href);
    assert_eq!((status, bytes.as_slice()), (200, &b"some notes"[..]));
    assert!(head.contains("Content-Type: text/plain"));
    let id = s.query_int("SELECT id FROM messages WHERE client_message_id = 'up-3'");
    assert_eq!(
        s.query_int(&format!(
            "SELECT count(*) FROM active_storage_variant_records v JOIN active_storage_attachments a \
             ON a.record_type = 'Message' AND a.blob_id = v.blob_id WHERE a.record_id = {id}"
        )),
        0,
        "no thumbnail for a text file"
    );

    // Deleting the photo message removes its blob, its variant and both files.
    let photo = s.query_int("SELECT id FROM messages WHERE client_message_id = 'up-2'");
    let keys: Vec<String> = s
        .query_text(&format!(
            "SELECT group_concat(key, ' ') FROM active_storage_blobs WHERE id IN (SELECT blob_id FROM active_storage_attachments \
             WHERE (record_type = 'Message' AND record_id = {photo}) OR (record_type = 'ActiveStorage::VariantRecord' AND record_id IN \
             (SELECT v.id FROM active_storage_variant_records v JOIN active_storage_attachments a ON a.blob_id = v.blob_id \
              WHERE a.record_type = 'Message' AND a.record_id = {photo})))"
        ))
        .split(' ')
        .map(str::to_string)
        .collect();
    assert_eq!(keys.len(), 2, "the original and its thumbnail");
    let path = |k: &str| s.srv.dir.join("storage/files").join(&k[0..2]).join(&k[2..4]).join(k);
    assert!(keys.iter().all(|k| path(k).exists()));
    let del = Request { method: "DELETE", ..Request::post_form(&format!("/rooms/{HQ}/messages/{photo}"), &[]) }
        .header("Accept", "text/vnd.turbo-stream.html");
    assert_eq!(s.srv.send(&del.cookies(&s.jar(DAVID))).status, 200);
    assert!(keys.iter().all(|k| !path(k).exists()), "files deleted");
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM active_storage_blobs WHERE key IN ('{}', '{}')", keys[0], keys[1])), 0);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_variant_records"), 0);
}

/// An animated GIF: a red first frame over the whole screen, then a blue one.
fn animated_gif(w: u16, h: u16) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut e = gif::Encoder::new(&mut out, w, h, &[255, 0, 0, 0, 0, 255]).unwrap();
        e.set_repeat(gif::Repeat::Infinite).unwrap();
        for index in [0u8, 1] {
            let px = vec![index; w as usize * h as usize];
            e.write_frame(&gif::Frame { width: w, height: h, delay: 20, buffer: px.into(), ..Default::default() }).unwrap();
        }
    }
    out
}

/// A lossless WebP of `w`×`h` opaque pixels.
fn webp(w: u32, h: u32) -> Vec<u8> {
    let px: Vec<u8> = (0..w * h).flat_map(|i| [(i % 251) as u8, 90, 30]).collect();
    let mut out = Vec::new();
    image_webp::WebPEncoder::new(&mut out).encode(&px, w, h, image_webp::ColorType::Rgb8).unwrap();
    out
}

/// Width and height of a PNG or JPEG, from its header.
fn picture_size(b: &[u8]) -> (u32, u32) {
    if b.starts_with(b"\x89PNG") {
        return (u32::from_be_bytes(b[16..20].try_into().unwrap()), u32::from_be_bytes(b[20..24].try_into().unwrap()));
    }
    let mut d = jpeg_decoder::Decoder::new(b);
    d.read_info().unwrap();
    let i = d.info().unwrap();
    (i.width as u32, i.height as u32)
}

#[test]
fn gif_and_webp_images_get_thumbnails_within_1200_by_800_and_the_gif_plays_in_the_lightbox() {
    let s = start();
    let gif = animated_gif(2400, 1800);
    // Lossless and opaque: 0.77 megapixels, within what a WebP decode may take.
    let webp = webp(1280, 600);
    for (name, ct, data, width, thumb_type) in
        [("party.gif", "image/gif", &gif, 1067, "image/jpeg"), ("photo.webp", "image/webp", &webp, 1200, "image/jpeg")]
    {
        let r = upload(&s, DAVID, HQ, name, ct, data, name);
        assert_eq!(r.status, 200, "{}", r.body);
        let img = "<img class=\"message__attachment\"";
        let (w, h) = (attr(&r.body, img, "width"), attr(&r.body, img, "height"));
        let src = attr(&r.body, img, "src").replace("&amp;", "&");
        assert!(src.starts_with("/rails/active_storage/representations/"), "{name}: {src}");
        let (status, head, bytes) = fetch(s.srv.port, &src);
        assert_eq!(status, 200, "{name}");
        assert!(head.contains(&format!("Content-Type: {thumb_type}")), "{name}: {head}");
        let shown = picture_size(&bytes);
        assert!(shown.0 <= 1200 && shown.1 <= 800, "{name}: {shown:?}");
        assert_eq!(shown.0, width, "{name}: shrunk to the limit");
        assert_eq!((w, h), (shown.0.to_string().as_str(), shown.1.to_string().as_str()), "{name}: the markup states the thumbnail's size");
        // The lightbox opens the original: the animated GIF itself.
        let original = attr(&r.body, "<a class=\"flex\"", "href").replace("&amp;", "&");
        let (status, head, bytes) = fetch(s.srv.port, &original);
        assert_eq!((status, bytes == *data), (200, true), "{name}");
        assert!(head.contains(&format!("Content-Type: {ct}")), "{name}: {head}");
    }
}

#[test]
fn files_without_magic_bytes_take_their_type_from_the_name_and_active_types_download() {
    let s = start();
    let stored_type = |cmid: &str| {
        s.query_text(&format!(
            "SELECT b.content_type FROM active_storage_blobs b JOIN active_storage_attachments a ON a.blob_id = b.id \
             JOIN messages m ON a.record_type = 'Message' AND a.record_id = m.id WHERE m.client_message_id = '{cmid}'"
        ))
    };
    // Browsers often send a CSV as application/octet-stream (or application/vnd.ms-excel).
    let r = upload(&s, DAVID, HQ, "budget.csv", "application/octet-stream", b"item,cost\ntea,3\n", "ct-csv");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(stored_type("ct-csv"), "text/csv");
    let href = attr(&r.body, "<a class=\"btn message__action-btn message__attachment-download", "href").replace("&amp;", "&");
    let (status, head, _) = fetch(s.srv.port, &href);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Type: text/csv"), "{head}");

    assert_eq!(upload(&s, DAVID, HQ, "notes.md", "", b"# Plan", "ct-md").status, 200);
    assert_eq!(stored_type("ct-md"), "text/markdown");
    assert_eq!(upload(&s, DAVID, HQ, "Report.DOCX", "application/octet-stream", b"PK\x03\x04\x14\0\0\0rest", "ct-docx").status, 200);
    assert_eq!(stored_type("ct-docx"), "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    assert_eq!(upload(&s, DAVID, HQ, "clip.webm", "video/webm", b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm", "ct-webm").status, 200);
    assert_eq!(stored_type("ct-webm"), "video/webm");

    // HTML dressed up as a CSV, and a script: recorded as what they are, served as downloads
    // of opaque bytes.
    for (name, data, cmid, recorded) in [
        ("totally.csv", &b"<!DOCTYPE html><script>alert(1)</script>"[..], "ct-html", "text/html"),
        ("app.js", &b"alert(1)"[..], "ct-js", "text/javascript"),
    ] {
        let r = upload(&s, DAVID, HQ, name, "text/csv", data, cmid);
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(stored_type(cmid), recorded);
        let inline = attr(&r.body, "<a class=\"btn message__action-btn message__attachment-download", "href")
            .replace("&amp;", "&")
            .replace("?disposition=attachment", "");
        let (status, head, _) = fetch(s.srv.port, &inline);
        assert_eq!(status, 200, "{head}");
        assert!(head.contains("Content-Type: application/octet-stream"), "{head}");
        assert!(head.contains("Content-Disposition: attachment"), "{head}");
    }
}

/// A multipart post of a video with the poster frame the composer draws for it.
fn upload_video(s: &Seeded, video: &[u8], poster: Option<&[u8]>, cmid: &str) -> Response {
    let mut body = multipart(&[("message[client_message_id]", cmid)], Some(("message[attachment]", "clip.webm", "video/webm", video)));
    if let Some(p) = poster {
        body.truncate(body.len() - format!("--{BOUNDARY}--\r\n").len());
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"message[poster]\"; filename=\"poster.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n").as_bytes(),
        );
        body.extend_from_slice(p);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    }
    let req = Request {
        method: "POST",
        path: format!("/rooms/{HQ}/messages"),
        headers: vec![
            ("Content-Type".into(), format!("multipart/form-data; boundary={BOUNDARY}")),
            ("Accept".into(), "text/vnd.turbo-stream.html, text/html".into()),
            ("Sec-Fetch-Site".into(), "same-origin".into()),
        ],
        body,
    };
    s.srv.send(&req.cookies(&s.jar(DAVID)))
}

#[test]
fn a_video_plays_inline_with_the_poster_its_uploader_drew() {
    let s = start();
    let webm = b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm-and-some-frames";
    let poster = jpeg(640, 360);
    let r = upload_video(&s, webm, Some(&poster), "vid-1");
    assert_eq!(r.status, 200, "{}", r.body);
    let video = "<video class=\"message__attachment\"";
    assert_eq!(attr(&r.body, video, "preload"), "metadata");
    assert_eq!((attr(&r.body, video, "width"), attr(&r.body, video, "height")), ("640", "360"));
    assert!(r.body.contains(" controls "), "{}", r.body);
    let poster_url = attr(&r.body, video, "poster").replace("&amp;", "&");
    assert!(poster_url.starts_with("/rails/active_storage/blobs/redirect/"), "{poster_url}");
    let (status, head, bytes) = fetch(s.srv.port, &poster_url);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Type: image/jpeg") && head.contains("Content-Disposition: inline"), "{head}");
    assert_eq!(bytes, poster);
    let src = attr(&r.body, video, "src").replace("&amp;", "&");
    let (status, head, bytes) = fetch(s.srv.port, &src);
    assert_eq!((status, bytes.as_slice()), (200, &webm[..]));
    assert!(head.contains("Content-Type: video/webm"), "{head}");

    // Stored where Rails keeps a video's preview: a blob attached to the video's blob.
    let id = s.query_int("SELECT id FROM messages WHERE client_message_id = 'vid-1'");
    let video_blob = s.query_int(&format!("SELECT blob_id FROM active_storage_attachments WHERE record_type = 'Message' AND record_id = {id}"));
    assert_eq!(
        s.query_text(&format!(
            "SELECT b.content_type || '|' || b.filename FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id \
             WHERE a.record_type = 'ActiveStorage::Blob' AND a.record_id = {video_blob} AND a.name = 'preview_image'"
        )),
        "image/jpeg|clip.jpg"
    );
    assert!(s.query_text(&format!("SELECT metadata FROM active_storage_blobs WHERE id = {video_blob}")).contains("\"width\":640,\"height\":360"));

    // Without a poster (a browser that could not decode the file) it still shows a player.
    let r = upload_video(&s, webm, None, "vid-2");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(attr(&r.body, video, "poster"), "");
    assert_eq!(attr(&r.body, video, "width"), "100%");
    // A poster that is not an image is dropped, the video kept.
    let r = upload_video(&s, webm, Some(b"<svg onload=alert(1)>"), "vid-3");
    assert_eq!((r.status, attr(&r.body, video, "poster")), (200, ""));
    // So is one larger than the composer draws (1200×800 at most).
    let r = upload_video(&s, webm, Some(&jpeg(2000, 1000)), "vid-4");
    assert_eq!((r.status, attr(&r.body, video, "poster")), (200, ""));

    // Deleting the message deletes the video, its poster and their rows.
    let del = Request { method: "DELETE", ..Request::post_form(&format!("/rooms/{HQ}/messages/{id}"), &[]) }
        .header("Accept", "text/vnd.turbo-stream.html");
    assert_eq!(s.srv.send(&del.cookies(&s.jar(DAVID))).status, 200);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_attachments WHERE record_type = 'ActiveStorage::Blob'"), 0);
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs WHERE filename = 'clip.jpg'"), 0);
}

#[test]
fn oversize_and_malformed_uploads_are_refused_without_harm() {
    let s = start_with(&[("CAMPFIRE_MAX_UPLOAD", "200000")]);
    let before = s.query_int("SELECT count(*) FROM messages");
    let big = vec![b'x'; 300_000];
    let r = upload(&s, DAVID, HQ, "big.bin", "application/octet-stream", &big, "up-4");
    assert_eq!(r.status, 413);
    // Just under the limit is fine.
    let ok = upload(&s, DAVID, HQ, "fine.bin", "application/octet-stream", &big[..150_000], "up-5");
    assert_eq!(ok.status, 200, "{}", ok.body);

    let broken = Request {
        method: "POST",
        path: format!("/rooms/{HQ}/messages"),
        headers: vec![
            ("Content-Type".into(), format!("multipart/form-data; boundary={BOUNDARY}")),
            ("Sec-Fetch-Site".into(), "same-origin".into()),
        ],
        body: format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"message[attachment]\"; filename=\"a.png\"\r\n\r\nno end").into_bytes(),
    };
    assert_eq!(s.srv.send(&broken.cookies(&s.jar(DAVID))).status, 400);
    // A file that claims to be a JPEG but is not: stored as a file, no thumbnail, no crash.
    let fake = upload(&s, DAVID, HQ, "fake.jpg", "image/jpeg", b"\xff\xd8\xff\xe0garbage", "up-6");
    assert_eq!(fake.status, 200, "{}", fake.body);
    assert_eq!(s.query_int("SELECT count(*) FROM messages"), before + 2);
    assert_eq!(s.get(DAVID, "/up").status, 200, "the server is still up");
}

#[test]
fn a_large_upload_is_spooled_to_disk_and_stored_intact() {
    let s = start();
    // Over the spool threshold (256 KiB) and over the ordinary body limit (1 MiB).
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let r = upload(&s, DAVID, HQ, "data.bin", "application/octet-stream", &big, "up-big");
    assert_eq!(r.status, 200, "{}", r.body);
    let href = attr(&r.body, "<a class=\"btn message__action-btn message__attachment-download", "href").replace("&amp;", "&");
    let (status, _, bytes) = fetch(s.srv.port, &href);
    assert_eq!(status, 200);
    assert!(bytes == big, "the stored file is the uploaded one");
    let tmp = s.srv.dir.join("storage/tmp");
    assert_eq!(std::fs::read_dir(&tmp).map(|d| d.count()).unwrap_or(0), 0, "spool files have no name");
    // Proof that the body went through the spool: with no spool folder possible, the same
    // upload is refused (503), while a small one, kept in memory, still works.
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::write(&tmp, b"not a folder").unwrap();
    assert_eq!(upload(&s, DAVID, HQ, "data.bin", "application/octet-stream", &big, "up-big2").status, 503);
    assert_eq!(upload(&s, DAVID, HQ, "small.bin", "application/octet-stream", &big[..1000], "up-small").status, 200);
    // The body limit for anything but uploads is unchanged.
    let form = Request::post_form(&format!("/rooms/{HQ}/messages"), &[("message[body]", &"x".repeat(1_100_000))]);
    assert_eq!(s.srv.send(&form.cookies(&s.jar(DAVID))).status, 413);
}

/// A field of `/proc/<pid>/status` in KiB (VmHWM: peak resident set; RssAnon, RssFile: now).
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}
fn vm_hwm_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:")
}

/// Peak resident set a large upload or download may reach: the 15 MB container.
const PEAK_LIMIT_KIB: u64 = 15_000_000 / 1024;

/// Feeds bytes to the system's `md5sum` (an MD5 that is not ours) and gives the digest as
/// Rails stores it (base64).
struct Md5Sum(std::process::Child);

impl Md5Sum {
    fn new() -> Md5Sum {
        let cmd = std::process::Command::new("md5sum").stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).spawn();
        Md5Sum(cmd.expect("md5sum (coreutils)"))
    }
    fn update(&mut self, b: &[u8]) {
        self.0.stdin.as_mut().unwrap().write_all(b).unwrap();
    }
    fn base64(mut self) -> String {
        drop(self.0.stdin.take());
        let out = self.0.wait_with_output().unwrap();
        let hex = String::from_utf8(out.stdout).unwrap();
        let bytes: Vec<u8> = (0..16).map(|i| u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16).unwrap()).collect();
        let mut b64 = Vec::new();
        campfire::crypto::base64::encode(campfire::crypto::base64::Alphabet::Standard, true, &bytes, &mut b64);
        String::from_utf8(b64).unwrap()
    }
}

/// Samples the server's anonymous and file-backed resident pages until the returned flag is set.
fn sample_rss(pid: u32) -> (std::sync::Arc<std::sync::atomic::AtomicBool>, std::thread::JoinHandle<(u64, u64)>) {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let sampler = std::thread::spawn(move || {
        let (mut anon, mut file) = (0, 0);
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            anon = status_kib(pid, "RssAnon:").max(anon);
            file = status_kib(pid, "RssFile:").max(file);
            std::thread::sleep(Duration::from_millis(5));
        }
        (anon, file)
    });
    (done, sampler)
}

#[test]
fn a_1_gib_upload_and_its_download_stay_at_constant_memory_with_rails_checksum() {
    // The default limit admits it. The file is generated on the fly in 1 MiB writes (each a
    // fixed pattern stamped with its index), never held whole by the test or the server.
    let s = start();
    let size: usize = 1 << 30;
    const MIB: usize = 1 << 20;
    let pattern: Vec<u8> = (0..MIB).map(|j| (j * 31 % 251) as u8).collect();
    let chunk = |i: usize, buf: &mut Vec<u8>| {
        buf.clear();
        buf.extend_from_slice(&pattern);
        buf[..8].copy_from_slice(&(i as u64).to_le_bytes());
    };
    let head = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"message[client_message_id]\"\r\n\r\nbig-1\r\n\
         --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"message[attachment]\"; filename=\"phone.mp4\"\r\nContent-Type: video/mp4\r\n\r\n"
    );
    let tail = format!("\r\n--{BOUNDARY}--\r\n");
    let pid = s.srv.pid();
    let before = vm_hwm_kib(pid);
    let (done, sampler) = sample_rss(pid);
    let mut sock = TcpStream::connect(("127.0.0.1", s.srv.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
    let cookie = s.jar(DAVID).0.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; ");
    write!(
        sock,
        "POST /rooms/{HQ}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary={BOUNDARY}\r\n\
         Content-Length: {}\r\nAccept: text/vnd.turbo-stream.html\r\nSec-Fetch-Site: same-origin\r\nCookie: {cookie}\r\nConnection: close\r\n\r\n{head}",
        head.len() + size + tail.len()
    )
    .unwrap();
    let mut sum = Md5Sum::new();
    let mut buf = Vec::with_capacity(MIB);
    for i in 0..size / MIB {
        chunk(i, &mut buf);
        sock.write_all(&buf).unwrap();
        sum.update(&buf);
    }
    sock.write_all(tail.as_bytes()).unwrap();
    let mut answer = Vec::new();
    sock.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", &answer[..answer.len().min(400)]);
    let after_upload = vm_hwm_kib(pid);
    let checksum = sum.base64();
    let row = s.query_text("SELECT byte_size || '|' || checksum || '|' || content_type FROM active_storage_blobs WHERE filename = 'phone.mp4'");
    assert_eq!(row, format!("{size}|{checksum}|video/mp4"), "Rails' checksum, and the type named by the extension");

    // The download streams from disk: the whole file, then a range of it, same bytes.
    let src = attr(&answer, "<video class=\"message__attachment\"", "src").replace("&amp;", "&");
    let mut sock = TcpStream::connect(("127.0.0.1", s.srv.port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
    write!(sock, "GET {src} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut sum = Md5Sum::new();
    let mut got = 0usize;
    let mut head_seen = Vec::new();
    let mut rbuf = vec![0u8; 256 * 1024];
    loop {
        let n = sock.read(&mut rbuf).unwrap();
        if n == 0 {
            break;
        }
        let mut part = &rbuf[..n];
        if !head_seen.ends_with(b"\r\n\r\n") {
            let take = (1..=part.len()).find(|&k| {
                head_seen.push(part[k - 1]);
                head_seen.ends_with(b"\r\n\r\n")
            });
            part = match take {
                Some(k) => &part[k..],
                None => &[],
            };
        }
        got += part.len();
        sum.update(part);
    }
    let head_text = String::from_utf8_lossy(&head_seen);
    assert!(head_text.starts_with("HTTP/1.1 200") && head_text.contains(&format!("Content-Length: {size}\r\n")), "{head_text}");
    assert_eq!((got, sum.base64()), (size, checksum), "the whole file came back");
    let after_download = vm_hwm_kib(pid);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (anon, file) = sampler.join().unwrap();
    eprintln!(
        "1 GiB upload and download: server VmHWM {before} KiB before, {after_upload} KiB after the upload, {after_download} KiB after the download; sampled peaks RssAnon {anon} KiB, RssFile {file} KiB"
    );
    assert!(after_download <= PEAK_LIMIT_KIB, "VmHWM {after_download} KiB over {PEAK_LIMIT_KIB} KiB");
    let tmp = s.srv.dir.join("storage/tmp");
    assert_eq!(std::fs::read_dir(&tmp).map(|d| d.count()).unwrap_or(0), 0, "the spool is gone");
}

#[test]
fn blobs_answer_head_ranges_and_etags_from_disk() {
    let s = start();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let r = upload(&s, DAVID, HQ, "data.bin", "application/octet-stream", &big, "up-ranges");
    assert_eq!(r.status, 200, "{}", r.body);
    let href = attr(&r.body, "<a class=\"btn message__action-btn message__attachment-download", "href").replace("&amp;", "&");
    let raw = |req: String| -> (String, Vec<u8>) {
        let mut sock = TcpStream::connect(("127.0.0.1", s.srv.port)).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        sock.write_all(req.as_bytes()).unwrap();
        let mut all = Vec::new();
        sock.read_to_end(&mut all).unwrap();
        let split = all.windows(4).position(|w| w == b"\r\n\r\n").expect("a head") + 4;
        (String::from_utf8_lossy(&all[..split]).into_owned(), all[split..].to_vec())
    };
    let get = |extra: &str| raw(format!("GET {href} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n"));

    let (head, body) = get("");
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("Content-Length: 3000000\r\n"), "{head}");
    assert!(body == big);
    let etag = head.lines().find_map(|l| l.strip_prefix("ETag: ")).expect("an ETag").to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "strong: {etag}");

    let (head, body) = raw(format!("HEAD {href} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
    assert!(head.starts_with("HTTP/1.1 200") && head.contains("Content-Length: 3000000\r\n") && body.is_empty(), "{head}");

    let (head, body) = get(&format!("If-None-Match: {etag}\r\n"));
    assert!(head.starts_with("HTTP/1.1 304") && body.is_empty(), "{head}");

    // An open range is answered to the end now (no 2 MiB cut), as a seeking player asks.
    let (head, body) = get("Range: bytes=1000000-\r\n");
    assert!(head.starts_with("HTTP/1.1 206") && head.contains("Content-Range: bytes 1000000-2999999/3000000\r\n"), "{head}");
    assert!(body == big[1_000_000..]);
    let (head, body) = get("Range: bytes=-10\r\n");
    assert!(head.contains("Content-Range: bytes 2999990-2999999/3000000\r\n") && body == big[2_999_990..], "{head}");
    let (head, _) = get("Range: bytes=3000000-\r\n");
    assert!(head.starts_with("HTTP/1.1 416") && head.contains("Content-Range: bytes */3000000\r\n"), "{head}");

    // Two downloads pipelined on one connection: the second answer follows all of the first.
    let (head, rest) = raw(format!("GET {href} HTTP/1.1\r\nHost: x\r\n\r\nGET {href} HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nConnection: close\r\n\r\n"));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(rest[..big.len()] == big[..], "the first body whole");
    let second = String::from_utf8_lossy(&rest[big.len()..]).into_owned();
    assert!(second.starts_with("HTTP/1.1 206") && rest.ends_with(&big[..10]), "{}", &second[..second.len().min(300)]);
}

#[test]
fn banning_the_poster_or_deleting_the_room_deletes_attachment_files() {
    let s = start();
    let file_of = |cmid: &str| {
        let key = s.query_text(&format!(
            "SELECT b.key FROM active_storage_blobs b JOIN active_storage_attachments a ON a.blob_id = b.id \
             JOIN messages m ON a.record_type = 'Message' AND a.record_id = m.id WHERE m.client_message_id = '{cmid}'"
        ));
        s.srv.dir.join("storage/files").join(&key[0..2]).join(&key[2..4]).join(&key)
    };
    assert_eq!(upload(&s, KEVIN, DESIGNERS, "kevin.txt", "text/plain", b"from kevin", "ban-1").status, 200);
    let kevins = file_of("ban-1");
    assert!(kevins.exists());
    // A ban leaves private addresses out; give Kevin a public one so his address is banned too.
    s.srv.sql(&format!("UPDATE sessions SET ip_address = '93.184.216.34' WHERE user_id = {KEVIN}"));
    assert_eq!(s.post(DAVID, &format!("/users/{KEVIN}/ban"), &[]).status, 302);
    assert!(!kevins.exists(), "the banned user's attachment file is gone with the message");
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs WHERE filename = 'kevin.txt'"), 0);

    assert_eq!(upload(&s, DAVID, HQ, "hq.txt", "text/plain", b"in hq", "room-1").status, 200);
    let hqs = file_of("room-1");
    assert!(hqs.exists());
    assert_eq!(s.post(DAVID, &format!("/rooms/{HQ}"), &[("_method", "delete")]).status, 302);
    assert!(!hqs.exists(), "deleting the room deletes its messages' files");
    assert_eq!(s.query_int("SELECT count(*) FROM active_storage_blobs WHERE filename = 'hq.txt'"), 0);
}
