//! A file sent with a form (`user[avatar]`, `account[logo]`) on its way into Active Storage:
//! copied out of the request on the loop, written to disk on the worker (`storage::write`),
//! then its blob and attachment rows inserted by the writer. Profiles, account settings, first
//! run and join all take this one path, so an avatar is stored the same way wherever it comes
//! from. The caller answers with `storage::finish_upload` (or its own answer) so that a file
//! whose rows did not commit is deleted again.

use super::flow::Ticket;
use super::{storage, AppError, Req};
use crate::db::{self, Conn};
use std::path::Path;

/// An uploaded file, owned so it can travel to the worker.
pub struct FormFile {
    filename: String,
    content_type: Vec<u8>,
    data: Vec<u8>,
}

impl FormFile {
    /// The file part `name` of the request; `None` when there is none or it is empty (a file
    /// input left alone is sent as an empty part with an empty filename).
    pub fn from_request(rq: &Req<'_, '_>, name: &str) -> Option<FormFile> {
        let f = rq.params.file(name, rq.http.body).filter(|f| !f.data.is_empty())?;
        Some(FormFile {
            filename: String::from_utf8_lossy(f.filename).into_owned(),
            content_type: f.content_type.to_vec(),
            data: f.data.to_vec(),
        })
    }
}

/// A file written to storage whose rows are not in the database yet.
pub struct StoredFile {
    filename: String,
    stored: storage::Stored,
}

/// Writes `file`, when there is one, under a fresh blob key, and hands `ticket` back with it.
/// Disk I/O: call it on the worker. On a disk error the request is answered with a 500
/// through `ticket`, one line is logged naming `who` (e.g. `profiles#update`), and the result
/// is `None`: the caller has nothing left to do.
pub fn store(file: Option<FormFile>, root: &Path, who: &str, ticket: Ticket) -> Option<(Option<StoredFile>, Ticket)> {
    let Some(f) = file else { return Some((None, ticket)) };
    match storage::write(root, &f.data, &f.content_type) {
        Ok(stored) => Some((Some(StoredFile { filename: f.filename, stored }), ticket)),
        Err(e) => {
            eprintln!("{who}: cannot store the uploaded file: {e}");
            ticket.finish(|_, _| Err(AppError::Internal("upload not stored")));
            None
        }
    }
}

impl StoredFile {
    /// The blob key the file was written under (to delete it if its rows fail to commit).
    pub fn key(&self) -> &str {
        &self.stored.key
    }

    /// Inserts the blob row and attaches it as `record_type`/`record_id`/`name` (a
    /// `has_one_attached`: a previous attachment is replaced). Returns the keys of the blobs
    /// left unattached, whose files the caller deletes after COMMIT (`db::blobs::attach`).
    pub fn attach(&self, c: &Conn, record_type: &str, record_id: i64, name: &str, now: i64) -> db::Result<Vec<String>> {
        let s = &self.stored;
        let blob = db::blobs::NewBlob {
            key: &s.key,
            filename: &self.filename,
            content_type: s.content_type,
            byte_size: s.byte_size,
            checksum: &s.checksum,
            metadata: &s.metadata,
        };
        db::blobs::attach(c, record_type, record_id, name, &blob, now)
    }
}
