//! Active Storage rows (spec/01 §12): blobs and the attachments that tie them to a record
//! (`User`/`avatar`, `Account`/`logo`). The files themselves are on disk; `app::storage` owns
//! their paths. Rows are written the way Rails writes them so Rails can read ours.

use super::conn::Conn;
use super::error::Result;
use super::time;

/// One blob row, as file serving needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob {
    pub id: i64,
    pub key: String,
    pub filename: String,
    pub content_type: Option<String>,
    pub byte_size: i64,
}

/// A blob to record for a file already written under `key`.
pub struct NewBlob<'a> {
    pub key: &'a str,
    pub filename: &'a str,
    pub content_type: &'a str,
    pub byte_size: i64,
    /// Base64 of the MD5 of the content (Rails' integrity check).
    pub checksum: &'a str,
    /// JSON text, e.g. `{"identified":true,"width":64,"height":64,"analyzed":true}`.
    pub metadata: &'a str,
}

/// The blob with id `id`, if any.
pub fn find(c: &Conn, id: i64) -> Result<Option<Blob>> {
    let mut s = c.prepare_cached("SELECT id, key, filename, content_type, byte_size FROM active_storage_blobs WHERE id = ?1")?;
    s.bind(1, id)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Blob { id: s.int(0), key: s.string(1)?, filename: s.string(2)?, content_type: s.opt_string(3)?, byte_size: s.int(4) }))
}

/// The blob attached to record (`record_type`, `record_id`) as `name` (a `has_one_attached`).
pub fn attached(c: &Conn, record_type: &str, record_id: i64, name: &str) -> Result<Option<Blob>> {
    let mut s = c.prepare_cached(
        "SELECT b.id, b.key, b.filename, b.content_type, b.byte_size \
         FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id \
         WHERE a.record_type = ?1 AND a.record_id = ?2 AND a.name = ?3 ORDER BY a.id DESC LIMIT 1",
    )?;
    s.bind(1, record_type)?;
    s.bind(2, record_id)?;
    s.bind(3, name)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Blob { id: s.int(0), key: s.string(1)?, filename: s.string(2)?, content_type: s.opt_string(3)?, byte_size: s.int(4) }))
}

/// The blob of the tracked variant of blob `blob_id` whose `variation_digest` is `digest`
/// (spec/01 §12.4), when Rails (or we) made one.
pub fn variant(c: &Conn, blob_id: i64, digest: &str) -> Result<Option<Blob>> {
    let mut s = c.prepare_cached(
        "SELECT b.id, b.key, b.filename, b.content_type, b.byte_size FROM active_storage_variant_records v \
         JOIN active_storage_attachments a ON a.record_type = 'ActiveStorage::VariantRecord' AND a.record_id = v.id AND a.name = 'image' \
         JOIN active_storage_blobs b ON b.id = a.blob_id WHERE v.blob_id = ?1 AND v.variation_digest = ?2 LIMIT 1",
    )?;
    s.bind(1, blob_id)?;
    s.bind(2, digest)?;
    if !s.row()? {
        return Ok(None);
    }
    Ok(Some(Blob { id: s.int(0), key: s.string(1)?, filename: s.string(2)?, content_type: s.opt_string(3)?, byte_size: s.int(4) }))
}

/// What the avatar route needs about user `user_id`, in one query: `None` when no such user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AvatarOwner {
    pub id: i64,
    pub name: String,
    pub role: i64,
    pub updated_at: i64,
    /// The uploaded avatar's blob key and content type.
    pub blob: Option<(String, Option<String>)>,
    /// The key and content type of the avatar's variant, when one exists.
    pub variant: Option<(String, Option<String>)>,
}

/// The user, their avatar blob and its variant with one of the `digests` (the first
/// preferred when there are several: Rails' own before ours).
pub fn avatar_owner(c: &Conn, user_id: i64, digests: [&str; 3]) -> Result<Option<AvatarOwner>> {
    let mut s = c.prepare_cached(
        "SELECT u.id, u.name, u.role, u.updated_at, b.key, b.content_type, vb.key, vb.content_type \
         FROM users u \
         LEFT JOIN active_storage_attachments a ON a.record_type = 'User' AND a.record_id = u.id AND a.name = 'avatar' \
         LEFT JOIN active_storage_blobs b ON b.id = a.blob_id \
         LEFT JOIN active_storage_blobs vb ON vb.id = (SELECT va.blob_id FROM active_storage_variant_records v \
          JOIN active_storage_attachments va ON va.record_type = 'ActiveStorage::VariantRecord' AND va.record_id = v.id AND va.name = 'image' \
          WHERE v.blob_id = b.id AND v.variation_digest IN (?2, ?3, ?4) ORDER BY v.variation_digest = ?2 DESC, v.id LIMIT 1) \
         WHERE u.id = ?1 ORDER BY a.id DESC LIMIT 1",
    )?;
    s.bind(1, user_id)?;
    s.bind(2, digests[0])?;
    s.bind(3, digests[1])?;
    s.bind(4, digests[2])?;
    if !s.row()? {
        return Ok(None);
    }
    let blob = match s.opt_string(4)? {
        Some(key) => Some((key, s.opt_string(5)?)),
        None => None,
    };
    let variant = match s.opt_string(6)? {
        Some(key) => Some((key, s.opt_string(7)?)),
        None => None,
    };
    Ok(Some(AvatarOwner { id: s.int(0), name: s.string(1)?, role: s.int(2), updated_at: s.time(3)?, blob, variant }))
}

/// Replaces the `name` attachment of the record with a new blob (Rails' `has_one_attached`
/// assignment): the old attachment row goes, the new blob and attachment rows are inserted
/// with `service_name` `local`. Returns the keys of blobs left without any attachment, for
/// the caller to delete from disk after COMMIT (Rails purges them in a job).
pub fn attach(c: &Conn, record_type: &str, record_id: i64, name: &str, b: &NewBlob<'_>, now: i64) -> Result<Vec<String>> {
    let orphans = detach(c, record_type, record_id, name)?;
    attach_new(c, record_type, record_id, name, b, now)?;
    Ok(orphans)
}

/// Inserts blob `b` (service `local`) and attaches it to the record as `name`, next to any
/// attachment the record already has. Returns the new blob's id.
pub fn attach_new(c: &Conn, record_type: &str, record_id: i64, name: &str, b: &NewBlob<'_>, now: i64) -> Result<i64> {
    let ts = time::format(now);
    let mut s = c.prepare_cached(
        "INSERT INTO active_storage_blobs (key, filename, content_type, metadata, service_name, byte_size, checksum, created_at) \
         VALUES (?1, ?2, ?3, ?4, 'local', ?5, ?6, ?7)",
    )?;
    s.bind(1, b.key)?;
    s.bind(2, b.filename)?;
    s.bind(3, b.content_type)?;
    s.bind(4, b.metadata)?;
    s.bind(5, b.byte_size)?;
    s.bind(6, b.checksum)?;
    s.bind(7, ts.as_str())?;
    s.run()?;
    drop(s);
    let blob_id = c.last_insert_rowid();
    let mut s = c.prepare_cached(
        "INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    s.bind(1, name)?;
    s.bind(2, record_type)?;
    s.bind(3, record_id)?;
    s.bind(4, blob_id)?;
    s.bind(5, ts.as_str())?;
    s.run()?;
    Ok(blob_id)
}

/// Records `variant` as the tracked variant of blob `blob_id` with `variation_digest`
/// `digest` (spec/01 §12.4: a variant record, and the variant's blob attached to it as
/// `image`). Returns the variant blob's id.
pub fn add_variant(c: &Conn, blob_id: i64, digest: &str, variant: &NewBlob<'_>, now: i64) -> Result<i64> {
    let mut s = c.prepare_cached("INSERT INTO active_storage_variant_records (blob_id, variation_digest) VALUES (?1, ?2)")?;
    s.bind(1, blob_id)?;
    s.bind(2, digest)?;
    s.run()?;
    drop(s);
    let record_id = c.last_insert_rowid();
    attach_new(c, "ActiveStorage::VariantRecord", record_id, "image", variant, now)
}

/// Removes the `name` attachment of the record and every blob it leaves unattached (with
/// their variant records and variant blobs). Returns the keys of the removed blobs, whose
/// files the caller deletes after COMMIT.
pub fn detach(c: &Conn, record_type: &str, record_id: i64, name: &str) -> Result<Vec<String>> {
    let mut blob_ids = Vec::new();
    let mut s = c.prepare_cached(
        "SELECT blob_id FROM active_storage_attachments WHERE record_type = ?1 AND record_id = ?2 AND name = ?3",
    )?;
    s.bind(1, record_type)?;
    s.bind(2, record_id)?;
    s.bind(3, name)?;
    while s.row()? {
        blob_ids.push(s.int(0));
    }
    drop(s);
    let mut s = c.prepare_cached("DELETE FROM active_storage_attachments WHERE record_type = ?1 AND record_id = ?2 AND name = ?3")?;
    s.bind(1, record_type)?;
    s.bind(2, record_id)?;
    s.bind(3, name)?;
    s.run()?;
    drop(s);
    let mut keys = Vec::new();
    for id in blob_ids {
        purge_if_unattached(c, id, &mut keys)?;
    }
    Ok(keys)
}

/// Deletes blob `id` (and its variants) when no attachment refers to it any more.
fn purge_if_unattached(c: &Conn, id: i64, keys: &mut Vec<String>) -> Result<()> {
    let mut s = c.prepare_cached("SELECT EXISTS (SELECT 1 FROM active_storage_attachments WHERE blob_id = ?1)")?;
    s.bind(1, id)?;
    let used = s.row()? && s.int(0) != 0;
    drop(s);
    if used {
        return Ok(());
    }
    // A video's preview image is a blob attached to this blob (with variants of its own).
    let mut previews = Vec::new();
    let mut s = c.prepare_cached("SELECT blob_id FROM active_storage_attachments WHERE record_type = 'ActiveStorage::Blob' AND record_id = ?1")?;
    s.bind(1, id)?;
    while s.row()? {
        previews.push(s.int(0));
    }
    drop(s);
    let mut s = c.prepare_cached("DELETE FROM active_storage_attachments WHERE record_type = 'ActiveStorage::Blob' AND record_id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    for preview in previews {
        purge_if_unattached(c, preview, keys)?;
    }
    // A variant is a record whose `image` attachment holds the variant's blob.
    let mut variants = Vec::new();
    let mut s = c.prepare_cached(
        "SELECT v.id, a.blob_id FROM active_storage_variant_records v \
         JOIN active_storage_attachments a ON a.record_type = 'ActiveStorage::VariantRecord' AND a.record_id = v.id AND a.name = 'image' \
         WHERE v.blob_id = ?1",
    )?;
    s.bind(1, id)?;
    while s.row()? {
        variants.push((s.int(0), s.int(1)));
    }
    drop(s);
    for (record_id, variant_blob) in variants {
        let mut s = c.prepare_cached("DELETE FROM active_storage_attachments WHERE record_type = 'ActiveStorage::VariantRecord' AND record_id = ?1")?;
        s.bind(1, record_id)?;
        s.run()?;
        drop(s);
        delete_blob(c, variant_blob, keys)?;
    }
    let mut s = c.prepare_cached("DELETE FROM active_storage_variant_records WHERE blob_id = ?1")?;
    s.bind(1, id)?;
    s.run()?;
    drop(s);
    delete_blob(c, id, keys)
}

fn delete_blob(c: &Conn, id: i64, keys: &mut Vec<String>) -> Result<()> {
    let mut s = c.prepare_cached("DELETE FROM active_storage_blobs WHERE id = ?1 RETURNING key")?;
    s.bind(1, id)?;
    while s.row()? {
        keys.push(s.string(0)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing;

    fn blob<'a>(key: &'a str) -> NewBlob<'a> {
        NewBlob { key, filename: "me.png", content_type: "image/png", byte_size: 3, checksum: "x", metadata: "{\"identified\":true}" }
    }

    #[test]
    fn attach_replaces_and_purges_the_old_blob() {
        let (_db, c) = testing::TempDb::with_schema();
        assert_eq!(attached(&c, "User", 7, "avatar").unwrap(), None);
        assert!(attach(&c, "User", 7, "avatar", &blob("aaaa1111"), 1_700_000_000_000_000).unwrap().is_empty());
        let first = attached(&c, "User", 7, "avatar").unwrap().unwrap();
        assert_eq!((first.key.as_str(), first.content_type.as_deref(), first.byte_size), ("aaaa1111", Some("image/png"), 3));
        assert_eq!(find(&c, first.id).unwrap(), Some(first.clone()));
        let gone = attach(&c, "User", 7, "avatar", &blob("bbbb2222"), 1_700_000_000_000_000).unwrap();
        assert_eq!(gone, vec!["aaaa1111".to_string()]);
        assert_eq!(find(&c, first.id).unwrap(), None);
        assert_eq!(attached(&c, "User", 7, "avatar").unwrap().unwrap().key, "bbbb2222");
        assert_eq!(attached(&c, "User", 8, "avatar").unwrap(), None, "another user's avatar is separate");
        let u = testing::user(&c, "Ann");
        attach(&c, "User", u, "avatar", &blob("cccc3333"), 1_700_000_000_000_000).unwrap();
        let owner = avatar_owner(&c, u, ["d", "e", "f"]).unwrap().unwrap();
        assert_eq!((owner.name.as_str(), owner.blob.clone(), owner.variant), ("Ann", Some(("cccc3333".into(), Some("image/png".into()))), None));
        let av = attached(&c, "User", u, "avatar").unwrap().unwrap();
        c.exec(&format!("INSERT INTO active_storage_variant_records (blob_id, variation_digest) VALUES ({}, 'd')", av.id)).unwrap();
        let vr = c.last_insert_rowid();
        attach(&c, "ActiveStorage::VariantRecord", vr, "image", &blob("vvvv4444"), 1_700_000_000_000_000).unwrap();
        let square = |o: Option<AvatarOwner>| o.and_then(|o| o.variant).map(|v| v.0);
        assert_eq!(square(avatar_owner(&c, u, ["x", "d", "y"]).unwrap()).as_deref(), Some("vvvv4444"));
        add_variant(&c, av.id, "r", &blob("rrrr5555"), 1_700_000_000_000_000).unwrap();
        assert_eq!(square(avatar_owner(&c, u, ["r", "d", "y"]).unwrap()).as_deref(), Some("rrrr5555"), "the first digest wins");
        assert_eq!(square(avatar_owner(&c, u, ["x", "d", "r"]).unwrap()).as_deref(), Some("vvvv4444"), "then the oldest");
        assert_eq!(variant(&c, av.id, "d").unwrap().map(|b| b.key), Some("vvvv4444".to_string()));
        assert_eq!(
            detach(&c, "User", u, "avatar").unwrap(),
            vec!["vvvv4444".to_string(), "rrrr5555".to_string(), "cccc3333".to_string()],
            "variants go with their blob"
        );
        assert_eq!(avatar_owner(&c, u, ["d", "e", "f"]).unwrap().unwrap().blob, None);
        assert_eq!(avatar_owner(&c, 999_999, ["d", "e", "f"]).unwrap(), None);
        assert_eq!(detach(&c, "User", 7, "avatar").unwrap(), vec!["bbbb2222".to_string()]);
        assert_eq!(attached(&c, "User", 7, "avatar").unwrap(), None);
    }

    #[test]
    fn a_message_attachment_with_its_thumbnail_variant() {
        let (_db, c) = testing::TempDb::with_schema();
        let id = attach_new(&c, "Message", 5, "attachment", &blob("orig0001"), 1_700_000_000_000_000).unwrap();
        let v = add_variant(&c, id, "IBhrLAIapu+NCId+2Kz6EqUWRKY=", &blob("thumb001"), 1_700_000_000_000_000).unwrap();
        assert_eq!(variant(&c, id, "IBhrLAIapu+NCId+2Kz6EqUWRKY=").unwrap().map(|b| (b.id, b.key)), Some((v, "thumb001".to_string())));
        assert_eq!(variant(&c, id, "other").unwrap(), None);
        assert_eq!(attached(&c, "Message", 5, "attachment").unwrap().map(|b| b.id), Some(id));
        assert_eq!(detach(&c, "Message", 5, "attachment").unwrap(), vec!["thumb001".to_string(), "orig0001".to_string()]);
        // A video's preview image goes with the video.
        let video = attach_new(&c, "Message", 6, "attachment", &blob("video001"), 1_700_000_000_000_000).unwrap();
        attach_new(&c, "ActiveStorage::Blob", video, "preview_image", &blob("poster01"), 1_700_000_000_000_000).unwrap();
        assert_eq!(detach(&c, "Message", 6, "attachment").unwrap(), vec!["poster01".to_string(), "video001".to_string()]);
        let mut st = c.prepare("SELECT count(*) FROM active_storage_attachments").unwrap();
        assert!(st.row().unwrap());
        assert_eq!(st.int(0), 0, "no attachment row is left");
    }
}
