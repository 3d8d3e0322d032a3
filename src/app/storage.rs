//! Active Storage on disk (spec/01 §12.3): the one place that knows where a blob's file lives
//! (`<STORAGE_PATH>/files/ab/cd/abcd…`), writes an uploaded file there, reads and deletes it,
//! and works out what Rails records about a file (MD5 checksum, image size; the content type
//! comes from `content_types`).
//!
//! Files are written without fsync: an upload is rare and its rows commit after the file is
//! in place, so a crash loses at most a file nobody refers to yet.

use crate::crypto::{base64, token};
use crate::http::spool::SpooledBody;
use std::fs;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// The path of the blob stored under `key`, or `None` for a key that is not Rails' shape
/// (so a key from the database can never walk out of the folder).
pub fn blob_path(storage: &Path, key: &str) -> Option<PathBuf> {
    let b = key.as_bytes();
    if b.len() < 4 || b.len() > 64 || !b.iter().all(u8::is_ascii_alphanumeric) {
        return None;
    }
    let mut p = storage.join("files");
    p.push(key.get(0..2)?);
    p.push(key.get(2..4)?);
    p.push(key);
    Some(p)
}

/// What Rails records about a stored file.
#[derive(Clone, Debug)]
pub struct Stored {
    pub key: String,
    pub content_type: &'static str,
    pub byte_size: i64,
    pub checksum: String,
    pub metadata: String,
}

impl Stored {
    /// The `active_storage_blobs` row of this file under `filename`.
    pub fn blob_row<'a>(&'a self, filename: &'a str) -> crate::db::blobs::NewBlob<'a> {
        crate::db::blobs::NewBlob {
            key: &self.key,
            filename,
            content_type: self.content_type,
            byte_size: self.byte_size,
            checksum: &self.checksum,
            metadata: &self.metadata,
        }
    }
}

/// Writes `data` under a fresh random key (via a temporary name, then rename, so a reader
/// never sees half a file) and describes it. Its content type comes from its bytes, its
/// `filename` and the client's `declared` type (`content_types::detect`).
pub fn write(storage: &Path, data: &[u8], filename: &str, declared: &[u8]) -> io::Result<Stored> {
    let key_bytes = token::blob_key();
    let key = String::from_utf8_lossy(&key_bytes).into_owned();
    let path = blob_path(storage, &key).ok_or_else(|| io::Error::other("bad blob key"))?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("part");
    if let Err(e) = fs::write(&tmp, data).and_then(|()| fs::rename(&tmp, &path)) {
        // A full disk leaves half a file: it must not keep the space it took.
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(describe(key, data, data.len(), &md5(data), filename, declared))
}

/// How much of a spooled upload is copied at a time.
const COPY_CHUNK: usize = 64 * 1024;
/// How much of a file's start is looked at for its type and image size when it is copied
/// from a spool (a JPEG's frame header can follow a large EXIF block).
const SNIFF_BYTES: usize = 256 * 1024;

/// Like `write`, for the bytes in `range` of a spooled request body: copied into the blob file
/// a chunk at a time and checksummed on the way, so memory stays at two chunks whatever the
/// file's size. Type and image size come from the file's first `SNIFF_BYTES`.
pub fn write_spooled(storage: &Path, body: &SpooledBody, range: Range<usize>, filename: &str, declared: &[u8]) -> io::Result<Stored> {
    let key = String::from_utf8_lossy(&token::blob_key()).into_owned();
    let path = blob_path(storage, &key).ok_or_else(|| io::Error::other("bad blob key"))?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    let head = body.read_range(range.start..range.start + range.len().min(SNIFF_BYTES))?;
    let tmp = path.with_extension("part");
    let copied = (|| {
        let mut out = fs::File::create(&tmp)?;
        let mut md5 = Md5::new();
        let mut buf = vec![0; COPY_CHUNK];
        let mut at = range.start;
        while at < range.end {
            let n = COPY_CHUNK.min(range.end - at);
            body.read_at(&mut buf[..n], at)?;
            md5.update(&buf[..n]);
            out.write_all(&buf[..n])?;
            at += n;
        }
        fs::rename(&tmp, &path)?;
        Ok::<_, io::Error>(md5.finish())
    })();
    let digest = copied.inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })?;
    Ok(describe(key, &head, range.len(), &digest, filename, declared))
}

/// What Rails records about the file stored under `key`, of `size` bytes that start with
/// `head` and whose MD5 is `digest`.
fn describe(key: String, head: &[u8], size: usize, digest: &[u8; 16], filename: &str, declared: &[u8]) -> Stored {
    let content_type = super::content_types::detect(head, filename, declared);
    let metadata = match display_size(head) {
        Some((w, h)) => format!("{{\"identified\":true,\"width\":{w},\"height\":{h},\"analyzed\":true}}"),
        None => "{\"identified\":true,\"analyzed\":true}".to_string(),
    };
    let mut checksum = Vec::with_capacity(24);
    base64::encode(base64::Alphabet::Standard, true, digest, &mut checksum);
    Stored { key, content_type, byte_size: size as i64, checksum: String::from_utf8_lossy(&checksum).into_owned(), metadata }
}

/// Stores the file of blob `key` again under a fresh key, as a hard link (no bytes copied;
/// deleting either name leaves the other), or a copy where links are not possible. For a
/// variant that is the original itself (an image already within the variant's bounds).
pub fn link(storage: &Path, key: &str) -> io::Result<String> {
    let from = blob_path(storage, key).ok_or_else(|| io::Error::other("bad blob key"))?;
    let new_key = String::from_utf8_lossy(&token::blob_key()).into_owned();
    let to = blob_path(storage, &new_key).ok_or_else(|| io::Error::other("bad blob key"))?;
    if let Some(dir) = to.parent() {
        fs::create_dir_all(dir)?;
    }
    if fs::hard_link(&from, &to).is_err() {
        let tmp = to.with_extension("part");
        if let Err(e) = fs::copy(&from, &tmp).and_then(|_| fs::rename(&tmp, &to)) {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
    }
    Ok(new_key)
}

/// The bytes of the blob stored under `key`.
pub fn read(storage: &Path, key: &str) -> io::Result<Vec<u8>> {
    fs::read(blob_path(storage, key).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?)
}

/// Deletes the files of blobs whose rows are gone; a file already missing is fine.
pub fn delete(storage: &Path, keys: &[String]) {
    for key in keys {
        if let Some(p) = blob_path(storage, key) {
            if let Err(e) = fs::remove_file(&p) {
                if e.kind() != io::ErrorKind::NotFound {
                    eprintln!("storage: cannot delete {}: {e}", p.display());
                }
            }
        }
    }
}

/// Width and height of an image as it is shown: a JPEG whose EXIF orientation turns it by
/// 90° has them swapped (what Rails' analyzer records).
pub fn display_size(d: &[u8]) -> Option<(u32, u32)> {
    let (w, h) = image_size(d)?;
    let turned = d.starts_with(b"\xff\xd8") && crate::images::orient::swaps_axes(crate::images::orient::jpeg_orientation(d));
    Some(if turned { (h, w) } else { (w, h) })
}

/// Width and height of a PNG, GIF, JPEG or WebP image, as stored.
pub fn image_size(d: &[u8]) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u16::from_be_bytes([*d.get(i)?, *d.get(i + 1)?]) as u32);
    let le16 = |i: usize| Some(u16::from_le_bytes([*d.get(i)?, *d.get(i + 1)?]) as u32);
    let be32 = |i: usize| Some(u32::from_be_bytes(d.get(i..i + 4)?.try_into().ok()?));
    match super::content_types::by_magic(d)? {
        "image/png" => Some((be32(16)?, be32(20)?)),
        "image/gif" => Some((le16(6)?, le16(8)?)),
        "image/jpeg" => {
            // Walk the marker segments to the first start-of-frame.
            let mut i = 2;
            loop {
                if *d.get(i)? != 0xff {
                    return None;
                }
                let marker = *d.get(i + 1)?;
                let len = be16(i + 2)? as usize;
                if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
                    return Some((be16(i + 7)?, be16(i + 5)?));
                }
                i += 2 + len;
            }
        }
        "image/webp" => match d.get(12..16)? {
            b"VP8X" => {
                let w = u32::from_le_bytes([*d.get(24)?, *d.get(25)?, *d.get(26)?, 0]) + 1;
                let h = u32::from_le_bytes([*d.get(27)?, *d.get(28)?, *d.get(29)?, 0]) + 1;
                Some((w, h))
            }
            b"VP8 " => Some((le16(26)? & 0x3fff, le16(28)? & 0x3fff)),
            b"VP8L" => {
                let b = u32::from_le_bytes(d.get(21..25)?.try_into().ok()?);
                Some(((b & 0x3fff) + 1, ((b >> 14) & 0x3fff) + 1))
            }
            _ => None,
        },
        _ => None,
    }
}

/// MD5 (RFC 1321), for Active Storage's `checksum` column only: Rails verifies downloads
/// against it. Not used for anything that needs a secure hash.
pub fn md5(data: &[u8]) -> [u8; 16] {
    let mut m = Md5::new();
    m.update(data);
    m.finish()
}

/// MD5 over bytes given a piece at a time (a large upload is checksummed as it is copied).
pub struct Md5 {
    h: [u32; 4],
    /// RFC 1321's table, `floor(abs(sin(i + 1)) * 2^32)`.
    k: [u32; 64],
    /// A block not yet full, and how much of it is.
    block: [u8; 64],
    fill: usize,
    len: u64,
}

impl Default for Md5 {
    fn default() -> Self {
        Md5::new()
    }
}

impl Md5 {
    pub fn new() -> Md5 {
        let k = std::array::from_fn(|i| ((i as f64 + 1.0).sin().abs() * 4294967296.0) as u32);
        Md5 { h: [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476], k, block: [0; 64], fill: 0, len: 0 }
    }

    pub fn update(&mut self, mut data: &[u8]) {
        self.len = self.len.wrapping_add(data.len() as u64);
        if self.fill > 0 {
            let take = (64 - self.fill).min(data.len());
            self.block[self.fill..self.fill + take].copy_from_slice(&data[..take]);
            self.fill += take;
            data = &data[take..];
            if self.fill < 64 {
                return;
            }
            let block = self.block;
            self.compress(&block);
            self.fill = 0;
        }
        // Whole blocks straight from `data`; only a remainder is copied.
        let mut blocks = data.chunks_exact(64);
        for b in &mut blocks {
            self.compress(b);
        }
        let rest = blocks.remainder();
        self.block[..rest.len()].copy_from_slice(rest);
        self.fill = rest.len();
    }

    pub fn finish(mut self) -> [u8; 16] {
        let bits = self.len.wrapping_mul(8);
        let mut pad = [0u8; 72];
        pad[0] = 0x80;
        let pad_len = if self.fill < 56 { 56 - self.fill } else { 120 - self.fill };
        let len = self.len;
        self.update(&pad[..pad_len]);
        self.update(&bits.to_le_bytes());
        self.len = len;
        debug_assert_eq!(self.fill, 0, "padding ends on a block boundary");
        let mut out = [0u8; 16];
        for (i, w) in self.h.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
        }
        out
    }

    fn compress(&mut self, chunk: &[u8]) {
        const S: [u32; 64] = [
            7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
            4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
        ];
        let m: [u32; 16] = std::array::from_fn(|i| {
            let w = i * 4;
            u32::from_le_bytes([chunk[w], chunk[w + 1], chunk[w + 2], chunk[w + 3]])
        });
        let [mut a, mut b, mut c, mut d] = self.h;
        let k = &self.k;
        for (i, (&ki, &si)) in k.iter().zip(S.iter()).enumerate() {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let t = d;
            d = c;
            c = b;
            b = b.wrapping_add(a.wrapping_add(f).wrapping_add(ki).wrapping_add(m[g]).rotate_left(si));
            a = t;
        }
        let h = &mut self.h;
        *h = [h[0].wrapping_add(a), h[1].wrapping_add(b), h[2].wrapping_add(c), h[3].wrapping_add(d)];
    }
}

/// Answers an upload once its rows were written, or failed to be: on success the files of the
/// blobs it replaced are deleted, on failure the new file is, so no file outlives its rows.
/// Then the client is redirected to `to`.
pub fn finish_upload(ticket: super::flow::Ticket, saved: crate::db::Result<Vec<String>>, new_keys: Vec<String>, to: &'static str) {
    ticket.finish(move |cx, res| {
        match saved {
            Ok(orphans) => delete(&cx.config.storage_path, &orphans),
            Err(e) => {
                delete(&cx.config.storage_path, &new_keys);
                return Err(e.into());
            }
        }
        super::respond::redirect(res, to);
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn md5_vectors() {
        assert_eq!(hex(&md5(b"")), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(hex(&md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(&md5(b"12345678901234567890123456789012345678901234567890123456789012345678901234567890")),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for step in [1, 3, 63, 64, 65, 1000] {
            let mut m = Md5::new();
            data.chunks(step).for_each(|c| m.update(c));
            assert_eq!(m.finish(), md5(&data), "in pieces of {step}");
        }
    }

    #[test]
    fn paths_follow_the_rails_layout_and_refuse_odd_keys() {
        let root = Path::new("/s");
        assert_eq!(blob_path(root, "abcdef123").unwrap(), Path::new("/s/files/ab/cd/abcdef123"));
        assert_eq!(blob_path(root, "../x/../y"), None);
        assert_eq!(blob_path(root, "ab/"), None);
        assert_eq!(blob_path(root, "abc"), None);
    }

    #[test]
    fn sniffs_types_and_sizes() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&[0, 0, 0, 64, 0, 0, 0, 32]);
        assert_eq!(image_size(&png), Some((64, 32)));
        assert_eq!(image_size(b"GIF89a\x10\x00\x08\x00"), Some((16, 8)));
        let jpeg = [0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xc0, 0, 11, 8, 0, 20, 0, 30];
        assert_eq!(image_size(&jpeg), Some((30, 20)));
        assert_eq!(image_size(&jpeg[..12]), None, "a cut-off file has no size");
    }

    #[test]
    fn writes_reads_and_deletes() {
        let dir = std::env::temp_dir().join(format!("cr-storage-{}", std::process::id()));
        let s = write(&dir, b"abc", "a.txt", b"").unwrap();
        assert_eq!((s.content_type, s.byte_size, s.checksum.as_str()), ("text/plain", 3, "kAFQmDzST7DWlj99KOF/cg=="));
        assert_eq!(read(&dir, &s.key).unwrap(), b"abc");
        let linked = link(&dir, &s.key).unwrap();
        assert_ne!(linked, s.key);
        delete(&dir, std::slice::from_ref(&s.key));
        assert!(read(&dir, &s.key).is_err());
        assert_eq!(read(&dir, &linked).unwrap(), b"abc", "a link outlives the original's name");
        let _ = fs::remove_dir_all(&dir);
    }
}
