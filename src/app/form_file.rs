//! A file sent with a form (`user[avatar]`, `account[logo]`) on its way into Active Storage:
//! copied out of the request on the loop, written to disk on the worker (`storage::write`)
//! with its named variants made once there (the avatar's `square`, the logo's `large` and
//! `small`: `Named`), then its blob, attachment and variant rows inserted by the writer.
//! Profiles, account settings, first run and join all take this one path, so an avatar is
//! stored the same way wherever it comes from. The caller answers with `storage::finish_upload` (or its own answer) so that a file
//! whose rows did not commit is deleted again.

use super::flow::Ticket;
use super::{storage, AppError, Req};
use crate::crypto::variation::Variation;
use crate::db::{self, Conn};
use crate::images::{self, Outcome, Target};
use std::path::Path;

/// A named variant (Rails' `has_one_attached … variant :name, resize_to_limit: [max, max]`)
/// made when the file is uploaded, so serving it never resizes.
pub struct Named {
    pub max: u32,
    pub target: Target,
}

/// The avatar's `square` (spec/01 §4.6): within 512×512, JPEG (PNG for transparent images).
pub const AVATAR: &[Named] = &[Named { max: 512, target: Target::Photo }];
/// The logo's `large` and `small` (spec/01 §3): within 512 and 192, PNG.
pub const LOGO: &[Named] = &[Named { max: 512, target: Target::Png }, Named { max: 192, target: Target::Png }];

impl Named {
    /// The `variation_digest` of this variant made as `content_type`: the format is named as
    /// Rails names a named variant's (a symbol), so the logo's rows are the ones Rails makes.
    pub fn digest(&self, content_type: &str) -> String {
        let format = if content_type == "image/jpeg" { "jpg" } else { "png" };
        Variation { format: format.to_string(), max_width: self.max, max_height: self.max }.named_digest()
    }
}

/// An uploaded file, owned so it can travel to the worker.
pub struct FormFile {
    filename: String,
    content_type: Vec<u8>,
    data: Vec<u8>,
}

/// Largest avatar or logo file. These are copied into memory to be resized, so they get a
/// bound of their own far below `CAMPFIRE_MAX_UPLOAD` (which admits a phone's videos); a phone
/// photo is 2–12 MB.
pub const MAX_BYTES: usize = 24 * 1024 * 1024;

impl FormFile {
    /// The file part `name` of the request; `None` when there is none or it is empty (a file
    /// input left alone is sent as an empty part with an empty filename). 413 when larger
    /// than `MAX_BYTES`.
    pub fn from_request(rq: &Req<'_, '_>, name: &str) -> Result<Option<FormFile>, AppError> {
        let Some(f) = rq.params.file(name, rq.http.body).filter(|f| !f.range.is_empty()) else { return Ok(None) };
        if f.range.len() > MAX_BYTES {
            return Err(AppError::Head(413));
        }
        let data = f.bytes(rq.http.spooled.map(|b| &**b)).map_err(|_| AppError::Internal("form file read failed"))?;
        Ok(Some(FormFile {
            filename: String::from_utf8_lossy(f.filename).into_owned(),
            content_type: f.content_type.to_vec(),
            data: data.into_owned(),
        }))
    }
}

/// A file written to storage whose rows are not in the database yet.
pub struct StoredFile {
    filename: String,
    stored: storage::Stored,
    /// The variants made of it: file, `variation_digest`, file name.
    variants: Vec<(storage::Stored, String, String)>,
}

/// Writes `file`, when there is one, under a fresh blob key with its `variants`, and hands
/// `ticket` back with it. Disk I/O and image work: call it on the worker. On a disk error the
/// request is answered with a 500 (507 when the disk is full) through `ticket`, one line is
/// logged naming `who` (e.g. `profiles#update`), and the result is `None`: the caller has
/// nothing left to do. An image
/// that cannot be resized just gets no variant (serving falls back to the original).
pub fn store(file: Option<FormFile>, root: &Path, variants: &[Named], who: &str, ticket: Ticket) -> Option<(Option<StoredFile>, Ticket)> {
    let Some(f) = file else { return Some((None, ticket)) };
    match write(root, &f, variants) {
        Ok(stored) => Some((Some(stored), ticket)),
        Err(e) => {
            eprintln!("{who}: cannot store the uploaded file: {e}");
            let err = AppError::file_not_stored(&e, "upload not stored");
            ticket.finish(move |_, _| Err(err));
            None
        }
    }
}

/// Writes the file and its variants; on a disk error, deletes what it wrote before failing.
fn write(root: &Path, f: &FormFile, variants: &[Named]) -> std::io::Result<StoredFile> {
    let stored = storage::write(root, &f.data, &f.filename, &f.content_type)?;
    let mut out = StoredFile { filename: f.filename.clone(), stored, variants: Vec::new() };
    if let Err(e) = add_variants(root, f, variants, &mut out) {
        storage::delete(root, &out.keys());
        return Err(e);
    }
    Ok(out)
}

fn add_variants(root: &Path, f: &FormFile, variants: &[Named], out: &mut StoredFile) -> std::io::Result<()> {
    let mut decoded = false;
    let base = f.filename.rsplit_once('.').map_or(f.filename.as_str(), |(b, _)| b);
    let name = |ct: &str| format!("{base}.{}", if ct == "image/jpeg" { "jpg" } else { "png" });
    for v in variants {
        let made = match images::variant(&f.data, v.max, v.max, v.target) {
            Outcome::AlreadyFits => storage::Stored { key: storage::link(root, &out.stored.key)?, ..out.stored.clone() },
            Outcome::Made(t) => {
                decoded = true;
                storage::write(root, &t.data, &name(t.content_type), t.content_type.as_bytes())?
            }
            Outcome::Unsupported => continue,
        };
        let (digest, filename) = (v.digest(made.content_type), name(made.content_type));
        out.variants.push((made, digest, filename));
    }
    if decoded {
        // The decoded image was megabytes the worker's arena would otherwise keep.
        crate::sys::process::release_free_memory();
    }
    Ok(())
}

impl StoredFile {
    /// The blob keys of the file and its variants (to delete them if the rows fail to commit).
    pub fn keys(&self) -> Vec<String> {
        let mut keys = vec![self.stored.key.clone()];
        keys.extend(self.variants.iter().map(|v| v.0.key.clone()));
        keys
    }

    /// Inserts the blob row and attaches it as `record_type`/`record_id`/`name` (a
    /// `has_one_attached`: a previous attachment is replaced), with its variant records.
    /// Returns the keys of the blobs left unattached, whose files the caller deletes after
    /// COMMIT (`db::blobs::detach`).
    pub fn attach(&self, c: &Conn, record_type: &str, record_id: i64, name: &str, now: i64) -> db::Result<Vec<String>> {
        let orphans = db::blobs::detach(c, record_type, record_id, name)?;
        let blob_id = db::blobs::attach_new(c, record_type, record_id, name, &self.stored.blob_row(&self.filename), now)?;
        for (v, digest, filename) in &self.variants {
            db::blobs::add_variant(c, blob_id, digest, &v.blob_row(filename), now)?;
        }
        Ok(orphans)
    }
}

