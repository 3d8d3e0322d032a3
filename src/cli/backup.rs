//! `backup DEST`: the database as one consistent snapshot (`VACUUM INTO` on a read transaction,
//! so a running server goes on writing meanwhile) and the files under `STORAGE_PATH`
//! (attachments, avatars, the generated secret), into a directory or a `.tar`:
//!
//! ```text
//! database.sqlite3     the snapshot
//! storage/...          STORAGE_PATH's files, without the live database, its WAL, and tmp/
//! ```
//!
//! The snapshot is taken first: a file uploaded later is copied as an extra, harmlessly; every
//! message acknowledged before the backup began is in the snapshot.

use super::tar;
use crate::config::Config;
use std::fs;
use std::path::{Path, PathBuf};

/// The backup's name for the database snapshot.
pub const DATABASE: &str = "database.sqlite3";
/// The backup's folder for STORAGE_PATH's files.
pub const STORAGE: &str = "storage";

pub fn run(cfg: &Config, dest: &str) -> Result<(), String> {
    if !cfg.database_path.is_file() {
        return Err(format!("no database at {}", cfg.database_path.display()));
    }
    let dest = PathBuf::from(dest);
    if dest.exists() && !(dest.is_dir() && dir_is_empty(&dest)) {
        return Err(format!("{} exists; a backup goes to a new path (or an empty folder)", dest.display()));
    }
    let as_tar = dest.extension().is_some_and(|e| e == "tar");
    let files = storage_files(cfg, &dest)?;
    if as_tar {
        let snapshot = dest.with_extension("tar.db-partial");
        let result = snapshot_database(cfg, &snapshot).and_then(|()| write_tar(&dest, &snapshot, &files));
        let _ = fs::remove_file(&snapshot);
        if result.is_err() {
            let _ = fs::remove_file(&dest);
        }
        result?;
    } else {
        fs::create_dir_all(&dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
        snapshot_database(cfg, &dest.join(DATABASE))?;
        for (rel, abs) in &files {
            let to = dest.join(STORAGE).join(rel);
            if let Some(dir) = to.parent() {
                fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            }
            fs::copy(abs, &to).map_err(|e| format!("cannot copy {}: {e}", abs.display()))?;
        }
    }
    eprintln!("campfire-room: backup of {} and {} files written to {}", cfg.database_path.display(), files.len(), dest.display());
    Ok(())
}

/// `VACUUM INTO`: one read transaction, so the copy is the database as of one commit,
/// compacted, without a WAL beside it. (A read-only connection may not run it: SQLite counts
/// writing the new file as a write.)
fn snapshot_database(cfg: &Config, to: &Path) -> Result<(), String> {
    let path = cfg.database_path.to_string_lossy().into_owned();
    let c = crate::db::Conn::open(&path, crate::db::Mode::ReadWrite).map_err(|e| format!("cannot open {path}: {e}"))?;
    let target = to.to_string_lossy().into_owned();
    let mut s = c.prepare("VACUUM INTO ?1").map_err(|e| format!("cannot snapshot the database: {e}"))?;
    s.bind(1, target.as_str()).and_then(|()| s.run()).map_err(|e| format!("cannot snapshot the database into {target}: {e}"))?;
    set_private(to)
}

fn write_tar(dest: &Path, snapshot: &Path, files: &[(String, PathBuf)]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(dest)
        .map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    let mut w = tar::Writer::new(std::io::BufWriter::with_capacity(64 * 1024, out));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let fail = |what: &Path, e: std::io::Error| format!("cannot write {} into {}: {e}", what.display(), dest.display());
    add(&mut w, DATABASE, snapshot, now).map_err(|e| fail(snapshot, e))?;
    w.dir(STORAGE, now).map_err(|e| fail(dest, e))?;
    for (rel, abs) in files {
        add(&mut w, &format!("{STORAGE}/{rel}"), abs, now).map_err(|e| fail(abs, e))?;
    }
    let out = w.finish().map_err(|e| fail(dest, e))?;
    out.into_inner().map_err(|e| e.to_string())?.sync_all().map_err(|e| fail(dest, e))
}

fn add(w: &mut tar::Writer<impl std::io::Write>, name: &str, path: &Path, now: u64) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut f = fs::File::open(path)?;
    let meta = f.metadata()?;
    w.file(name, meta.permissions().mode(), meta.len(), now, &mut f)
}

/// Every regular file under STORAGE_PATH as (path relative to it, path), but the database and
/// its companions (copied by the snapshot), the upload spool `tmp/`, and `skip` (the backup's
/// own destination, should it lie inside).
pub fn storage_files(cfg: &Config, skip: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let root = &cfg.storage_path;
    let db = cfg.database_path.to_string_lossy().into_owned();
    let live: Vec<PathBuf> = ["", "-wal", "-shm", "-journal"]
        .iter()
        .map(|s| PathBuf::from(format!("{db}{s}")))
        .chain([cfg.server_lock_path(), root.join("tmp"), skip.to_path_buf()])
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            let path = entry.path();
            if path.canonicalize().is_ok_and(|c| live.contains(&c)) {
                continue;
            }
            let kind = entry.file_type().map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path.strip_prefix(root).map_err(|_| format!("{} is outside STORAGE_PATH", path.display()))?;
                out.push((rel.to_string_lossy().into_owned(), path));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn dir_is_empty(dir: &Path) -> bool {
    fs::read_dir(dir).is_ok_and(|mut d| d.next().is_none())
}

/// A backup holds the secret key base and everyone's messages: owner-only.
fn set_private(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(|e| format!("cannot chmod {}: {e}", path.display()))
}
