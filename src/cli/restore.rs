//! `restore SRC`: puts a backup (a directory or a `.tar` from `backup`) in place. It refuses
//! while a server holds the database's lock, holds that lock itself so none starts meanwhile,
//! and checks the copy (`PRAGMA integrity_check`, Campfire's tables) before anything of the
//! current state is touched. Then the files are copied into STORAGE_PATH and the database is
//! switched by one rename, its old WAL removed first so SQLite cannot replay it onto the copy.

use super::backup::{DATABASE, STORAGE};
use super::tar;
use crate::config::Config;
use std::fs;
use std::path::{Component, Path, PathBuf};

pub fn run(cfg: &Config, src: &str) -> Result<(), String> {
    let lock_path = cfg.server_lock_path();
    let _lock = match crate::sys::lock::try_lock(&lock_path) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Err(format!("a server is running on {}; stop it before restoring", cfg.database_path.display()))
        }
        Err(e) => return Err(format!("cannot take the lock {}: {e}", lock_path.display())),
    };
    let src = PathBuf::from(src);
    let incoming = PathBuf::from(format!("{}.restoring", cfg.database_path.display()));
    let staging = PathBuf::from(format!("{}.restoring", cfg.storage_path.display()));
    let _ = fs::remove_dir_all(&staging);
    let result = stage(&src, &incoming, &staging)
        .and_then(|files| check(&incoming).map(|()| files))
        .and_then(|files| switch(cfg, &incoming, &files));
    let _ = fs::remove_dir_all(&staging);
    let _ = fs::remove_file(&incoming);
    let count = result?;
    eprintln!("campfire-room: restored {} and {count} files from {}", cfg.database_path.display(), src.display());
    Ok(())
}

/// Puts the backup's database at `incoming` and lists its files as (relative path, where it is
/// now): in the backup folder itself, or extracted from the archive into `staging`.
fn stage(src: &Path, incoming: &Path, staging: &Path) -> Result<Vec<(PathBuf, PathBuf)>, String> {
    if src.is_dir() {
        let db = src.join(DATABASE);
        fs::copy(&db, incoming).map_err(|e| format!("cannot copy {}: {e}", db.display()))?;
        let root = src.join(STORAGE);
        let mut files = Vec::new();
        if root.is_dir() {
            walk(&root, &root, &mut files)?;
        }
        return Ok(files);
    }
    let f = fs::File::open(src).map_err(|e| format!("cannot open {}: {e}", src.display()))?;
    let mut r = tar::Reader::new(std::io::BufReader::with_capacity(64 * 1024, f));
    let mut files = Vec::new();
    let mut saw_db = false;
    let bad = |e: std::io::Error| format!("{}: {e}", src.display());
    while let Some(entry) = r.next().map_err(bad)? {
        let to = if entry.name == DATABASE {
            saw_db = true;
            incoming.to_path_buf()
        } else if let Some(rel) = entry.name.strip_prefix(&format!("{STORAGE}/")).and_then(safe_relative) {
            let to = staging.join(&rel);
            files.push((rel, to.clone()));
            to
        } else {
            return Err(format!("{}: unexpected entry {:?}", src.display(), entry.name));
        };
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let mut out = fs::File::create(&to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        r.data(&entry, &mut out).map_err(bad)?;
    }
    if !saw_db {
        return Err(format!("{}: no {DATABASE} in the archive", src.display()));
    }
    Ok(files)
}

/// A relative path with no `..`, root or prefix: what an archive may name.
fn safe_relative(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    let ok = !name.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
    ok.then(|| p.to_path_buf())
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, PathBuf)>) -> Result<(), String> {
    for entry in fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(|e| format!("cannot stat {}: {e}", path.display()))?;
        if kind.is_dir() {
            walk(root, &path, out)?;
        } else if kind.is_file() {
            let rel = path.strip_prefix(root).map_err(|_| format!("{} is outside the backup", path.display()))?;
            out.push((rel.to_path_buf(), path));
        }
    }
    Ok(())
}

/// The staged database is whole and is a Campfire database.
fn check(db: &Path) -> Result<(), String> {
    let path = db.to_string_lossy().into_owned();
    let c = crate::db::Conn::open(&path, crate::db::Mode::ReadOnly).map_err(|e| format!("the backup's database does not open: {e}"))?;
    let mut s = c.prepare("PRAGMA integrity_check").map_err(|e| format!("the backup's database: {e}"))?;
    let verdict = if s.row().map_err(|e| format!("the backup's database: {e}"))? { s.string(0).unwrap_or_default() } else { String::new() };
    if verdict != "ok" {
        return Err(format!("the backup's database fails its integrity check: {verdict}"));
    }
    drop(s);
    let mut s = c
        .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'rooms', 'messages', 'accounts')")
        .map_err(|e| format!("the backup's database: {e}"))?;
    let tables = if s.row().map_err(|e| format!("the backup's database: {e}"))? { s.int(0) } else { 0 };
    if tables != 4 {
        return Err("the backup's database is not a Campfire database".into());
    }
    Ok(())
}

/// Copies the files in, then swaps the database. Returns how many files were restored.
fn switch(cfg: &Config, incoming: &Path, files: &[(PathBuf, PathBuf)]) -> Result<usize, String> {
    for (rel, from) in files {
        let to = cfg.storage_path.join(rel);
        if let Some(dir) = to.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let partial = PathBuf::from(format!("{}.restoring", to.display()));
        fs::copy(from, &partial)
            .and_then(|_| fs::rename(&partial, &to))
            .map_err(|e| format!("cannot restore {}: {e}", to.display()))?;
    }
    let db = cfg.database_path.to_string_lossy().into_owned();
    for companion in ["-wal", "-shm", "-journal"] {
        match fs::remove_file(format!("{db}{companion}")) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove {db}{companion}: {e}")),
        }
    }
    fs::rename(incoming, &cfg.database_path).map_err(|e| format!("cannot move the database into {db}: {e}"))?;
    Ok(files.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_names_stay_inside() {
        assert_eq!(safe_relative("ab/cd/x"), Some(PathBuf::from("ab/cd/x")));
        for bad in ["", "/etc/passwd", "../x", "a/../../x", "./a"] {
            assert!(safe_relative(bad).is_none(), "{bad}");
        }
    }
}
