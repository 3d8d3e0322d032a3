//! Message attachments (spec/01 §12.5, Rails' `Message::Attachment`): the file of an uploaded
//! attachment is stored, analyzed and given its `thumb` variant (`resize_to_limit: [1200,
//! 800]`, the web format kept) before the message's rows are written, all on the worker.
//!
//! What gets a thumbnail: JPEG, PNG, GIF (its first frame) and WebP are shrunk in-process
//! (`crate::images`); any web image (JPEG, PNG, GIF, WebP) that already fits is its own
//! thumbnail (a hard link under a new key, so the variant is a blob of its own as Rails has
//! it). CMYK JPEGs, animated or very large WebPs and every other file get no variant: images
//! then show the original scaled by the browser, other files the download row. A spooled
//! upload is copied into storage from its spool file in chunks; only an image is read whole,
//! for its thumbnail, and only up to `IMAGE_MAX_BYTES`.
//!
//! A video's poster is not made here (that needs ffmpeg): the uploading browser draws a frame
//! on a canvas and sends it along (`message[poster]`, a JPEG or PNG of at most
//! `POSTER_MAX_BYTES`). It is stored where Rails keeps a video's preview, a blob attached to
//! the video's blob as `preview_image`, and its size is recorded as the video's (the frame is
//! drawn at the video's size, fitted to 1200×800). Without one the video still plays.

use super::storage::{self, Stored};
use crate::crypto::variation::Variation;
use crate::db::{self, Conn};
use crate::images::{self, resize::fit, Outcome, THUMB_MAX_HEIGHT, THUMB_MAX_WIDTH};
use crate::http::spool::SpooledBody;
use std::borrow::Cow;
use std::io;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

/// Largest spooled image read into memory for its thumbnail (a phone photo is 2–12 MB); a
/// larger one is stored as a file without a thumbnail, as other large uploads are.
pub const IMAGE_MAX_BYTES: usize = 24 * 1024 * 1024;

/// Largest poster frame taken with a video (a 1200×800 JPEG is about 100–300 KB).
pub const POSTER_MAX_BYTES: usize = 2 * 1024 * 1024;

/// A file as it arrived in the request, owned so it can travel to the worker.
pub struct Upload {
    pub filename: String,
    pub content_type: Vec<u8>,
    data: Data,
    /// The poster frame the browser drew for a video, when it sent one.
    poster: Option<Vec<u8>>,
}

/// The bytes of an upload: copied out of a small request, or a range of a large request's
/// body spooled to disk (shared, not copied: the memory map stays alive with the upload).
enum Data {
    Owned(Vec<u8>),
    Spooled(Arc<SpooledBody>, Range<usize>),
}

impl Upload {
    /// Owns the parts of a multipart file part of a request whose body is `spooled` on disk
    /// (or `None` when it is in memory).
    pub fn of(f: &super::params::Upload<'_>, spooled: Option<&Arc<SpooledBody>>) -> Upload {
        let data = match spooled {
            Some(body) if f.range.end <= body.len() => Data::Spooled(Arc::clone(body), f.range.clone()),
            _ => Data::Owned(f.data.to_vec()),
        };
        Upload { filename: clean_filename(f.filename), content_type: f.content_type.to_vec(), data, poster: None }
    }

    /// The same upload with the browser's poster frame for it (ignored when too large).
    pub fn with_poster(mut self, poster: Option<&[u8]>) -> Upload {
        self.poster = poster.filter(|p| !p.is_empty() && p.len() <= POSTER_MAX_BYTES).map(<[u8]>::to_vec);
        self
    }

    /// An upload of bytes already in memory (tests).
    #[cfg(test)]
    pub fn owned(filename: &str, content_type: &[u8], data: Vec<u8>) -> Upload {
        Upload { filename: filename.to_string(), content_type: content_type.to_vec(), data: Data::Owned(data), poster: None }
    }

}

/// A spooled file's bytes when it is an image small enough to be read for its thumbnail
/// (`IMAGE_MAX_BYTES`); `None` for anything else, which is copied into storage from the spool
/// a chunk at a time.
fn spooled_image(body: &SpooledBody, range: &Range<usize>) -> io::Result<Option<Vec<u8>>> {
    let mut magic = [0u8; 16];
    let n = magic.len().min(range.len());
    body.read_at(&mut magic[..n], range.start)?;
    let image = crate::app::content_types::by_magic(&magic[..n]).is_some_and(|t| thumb_format("", t).is_some());
    if !image || range.len() > IMAGE_MAX_BYTES {
        return Ok(None);
    }
    body.read_range(range.clone()).map(Some)
}

/// The files of an attachment, on disk, waiting for their rows.
pub struct StoredAttachment {
    pub filename: String,
    pub blob: Stored,
    /// The thumbnail: its file, its variation digest and its file name (`<base>.<format>`).
    pub thumb: Option<(Stored, String, String)>,
    /// A video's preview image (the browser's poster frame) and its file name.
    pub preview: Option<(Stored, String)>,
}

impl StoredAttachment {
    /// The keys of every file written, to delete them when the rows fail to commit.
    pub fn keys(&self) -> Vec<String> {
        let mut k = vec![self.blob.key.clone()];
        k.extend(self.thumb.as_ref().map(|t| t.0.key.clone()));
        k.extend(self.preview.as_ref().map(|p| p.0.key.clone()));
        k
    }

    /// Writes the attachment's rows for message `message_id` (blob, attachment, variant
    /// record and variant blob, or a video's preview image) inside the writer's transaction.
    pub fn attach(&self, c: &Conn, message_id: i64, now: i64) -> db::Result<()> {
        let blob_id = db::blobs::attach_new(c, "Message", message_id, "attachment", &self.blob.blob_row(&self.filename), now)?;
        if let Some((thumb, digest, name)) = &self.thumb {
            db::blobs::add_variant(c, blob_id, digest, &thumb.blob_row(name), now)?;
        }
        if let Some((preview, name)) = &self.preview {
            db::blobs::attach_new(c, "ActiveStorage::Blob", blob_id, "preview_image", &preview.blob_row(name), now)?;
        }
        Ok(())
    }
}

/// Stores `up` under `root`, analyzes it and makes its thumbnail. Worker thread only.
/// A thumbnail that cannot be made is not an error (the message shows the original). On a
/// disk error (a full disk) the files already written are deleted before the error returns.
pub fn store(root: &Path, up: Upload) -> io::Result<StoredAttachment> {
    let (name, declared) = (&up.filename, &up.content_type);
    let (mut blob, bytes): (Stored, Cow<'_, [u8]>) = match &up.data {
        Data::Owned(v) => (storage::write(root, v, name, declared)?, Cow::Borrowed(v)),
        Data::Spooled(body, range) => match spooled_image(body, range)? {
            Some(v) => (storage::write(root, &v, name, declared)?, Cow::Owned(v)),
            None => (storage::write_spooled(root, body, range.clone(), name, declared)?, Cow::Borrowed(&[])),
        },
    };
    let mut written = vec![blob.key.clone()];
    match derived(root, &up, &bytes, &mut blob, &mut written) {
        Ok((preview, thumb, decoded)) => {
            let filename = up.filename.clone();
            drop(bytes);
            drop(up);
            if decoded {
                // The decoded image was megabytes the worker's arena would otherwise keep.
                crate::sys::process::release_free_memory();
            }
            Ok(StoredAttachment { filename, blob, thumb, preview })
        }
        Err(e) => {
            storage::delete(root, &written);
            Err(e)
        }
    }
}

type Preview = Option<(Stored, String)>;
type Thumb = Option<(Stored, String, String)>;

/// The files made from a stored `blob` whose bytes (when it is an image read whole) are
/// `data`: a video's preview image and the thumbnail, each key added to `written` as soon as
/// its file exists; and whether the image was decoded.
fn derived(root: &Path, up: &Upload, data: &[u8], blob: &mut Stored, written: &mut Vec<String>) -> io::Result<(Preview, Thumb, bool)> {
    let preview = match &up.poster {
        Some(poster) if blob.content_type.starts_with("video/") => video_preview(root, &up.filename, poster)?,
        _ => None,
    };
    if let Some((p, _)) = &preview {
        written.push(p.key.clone());
        if let Some((w, h)) = up.poster.as_deref().and_then(storage::display_size) {
            blob.metadata = format!("{{\"identified\":true,\"width\":{w},\"height\":{h},\"video\":true,\"analyzed\":true}}");
        }
    }
    let mut decoded = false;
    let thumb = match (thumb_format(&up.filename, blob.content_type), storage::display_size(data)) {
        (Some(format), Some((w, h))) => {
            let name = variant_filename(&up.filename, &format);
            let variation = Variation { format: format.clone(), max_width: THUMB_MAX_WIDTH, max_height: THUMB_MAX_HEIGHT };
            decoded = fit(w, h, THUMB_MAX_WIDTH, THUMB_MAX_HEIGHT) != (w, h);
            let made = if !decoded {
                Outcome::AlreadyFits
            } else {
                images::thumbnail(data, THUMB_MAX_WIDTH, THUMB_MAX_HEIGHT)
            };
            let stored = match made {
                Outcome::AlreadyFits => Some(Stored { key: storage::link(root, &blob.key)?, ..blob.clone() }),
                Outcome::Made(t) => Some(storage::write(root, &t.data, &name, t.content_type.as_bytes())?),
                Outcome::Unsupported => None,
            };
            written.extend(stored.as_ref().map(|s| s.key.clone()));
            stored.map(|s| (s, variation.digest(), name))
        }
        _ => None,
    };
    Ok((preview, thumb, decoded))
}

/// Stores the browser's poster frame for video `filename` as its preview image, when it is a
/// JPEG or PNG within 1200×800, the size the composer draws it at (anything else is dropped:
/// the video plays without; no picture of hostile dimensions is handed to other browsers).
fn video_preview(root: &Path, filename: &str, poster: &[u8]) -> io::Result<Option<(Stored, String)>> {
    let ext = match crate::app::content_types::by_magic(poster) {
        Some("image/jpeg") => "jpg",
        Some("image/png") => "png",
        _ => return Ok(None),
    };
    match storage::display_size(poster) {
        Some((w, h)) if w >= 1 && h >= 1 && w <= THUMB_MAX_WIDTH && h <= THUMB_MAX_HEIGHT => {}
        _ => return Ok(None),
    }
    let name = variant_filename(filename, ext);
    Ok(Some((storage::write(root, poster, &name, b"")?, name)))
}

/// The format a web image's thumbnail keeps, as Rails names it in the variation: the file
/// name's extension when it means the blob's type, else the type's usual extension. None for
/// a type that gets no thumbnail.
pub fn thumb_format(filename: &str, content_type: &str) -> Option<String> {
    let usual = match content_type {
        "image/jpeg" => "jpg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => return None,
    };
    let ext = filename.rsplit_once('.').map_or("", |(_, e)| e);
    let means = match ext.to_ascii_lowercase().as_str() {
        "jpg" | "jpeg" | "jpe" | "jfif" | "pjpeg" | "pjp" => "image/jpeg",
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => "",
    };
    Some(if means == content_type { ext } else { usual }.to_string())
}

/// Rails names a variant's file after the original with the variant's extension.
fn variant_filename(filename: &str, format: &str) -> String {
    let base = filename.rsplit_once('.').map_or(filename, |(b, _)| b);
    format!("{base}.{format}")
}

/// Active Storage's filename sanitizing: the last path segment, control characters and
/// characters that are trouble in file systems replaced by `-`; never empty.
pub fn clean_filename(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    let last = s.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = last
        .chars()
        .map(|c| if c.is_control() || matches!(c, '"' | '*' | ':' | '<' | '>' | '?' | '|') { '-' } else { c })
        .collect();
    let cleaned = cleaned.trim().chars().take(255).collect::<String>();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "file".to_string()
    } else {
        cleaned
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thumb_formats_follow_the_file_name_when_it_agrees() {
        let f = |n: &str, t: &str| thumb_format(n, t);
        assert_eq!(f("a.jpg", "image/jpeg").as_deref(), Some("jpg"));
        assert_eq!(f("a.JPEG", "image/jpeg").as_deref(), Some("JPEG"));
        assert_eq!(f("a.png", "image/jpeg").as_deref(), Some("jpg"));
        assert_eq!(f("noext", "image/png").as_deref(), Some("png"));
        assert_eq!(f("a.webp", "image/webp").as_deref(), Some("webp"));
        assert_eq!(thumb_format("a.pdf", "application/pdf"), None);
        assert_eq!(variant_filename("black_hole.jpg", "jpg"), "black_hole.jpg");
        assert_eq!(variant_filename("x", "png"), "x.png");
    }

    #[test]
    fn file_names_are_cleaned() {
        assert_eq!(clean_filename(b"C:\\\\Users\\\\me\\\\a.png"), "a.png");
        assert_eq!(clean_filename(b"../../etc/passwd"), "passwd");
        assert_eq!(clean_filename(b"a\"b\r\n.txt"), "a-b--.txt");
        assert_eq!(clean_filename(b""), "file");
        assert_eq!(clean_filename(b".."), "file");
    }

    #[test]
    fn stores_a_big_jpeg_with_a_smaller_thumbnail_and_a_text_file_without() {
        let dir = std::env::temp_dir().join(format!("cr-attach-{}", std::process::id()));
        let px = vec![128u8; 1400 * 900 * 3];
        let mut jpg = Vec::new();
        jpeg_encoder::Encoder::new(&mut jpg, 85).encode(&px, 1400, 900, jpeg_encoder::ColorType::Rgb).unwrap();
        let a = store(&dir, Upload::owned("p.jpg", b"image/jpeg", jpg)).unwrap();
        assert!(a.blob.metadata.contains("\"width\":1400,\"height\":900"));
        let (t, digest, name) = a.thumb.as_ref().unwrap();
        assert_eq!((digest.as_str(), name.as_str(), t.content_type), ("IBhrLAIapu+NCId+2Kz6EqUWRKY=", "p.jpg", "image/jpeg"));
        assert!(t.metadata.contains("\"width\":1200,\"height\":771"), "{}", t.metadata);
        let b = store(&dir, Upload::owned("n.txt", b"text/plain", b"hi".to_vec())).unwrap();
        assert!(b.thumb.is_none());
        assert_eq!(b.keys().len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
