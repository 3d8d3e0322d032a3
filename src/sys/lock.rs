//! An advisory whole-file lock (flock), held by a serving process on its database so that
//! `restore` can tell a live server from a stopped one (and a second server refuses to start
//! on the same database). The kernel drops it when the process dies, however it dies.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Held until dropped (or the process ends).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Takes the exclusive lock on `path` (created, mode 0600, when missing). `Ok(None)` when
/// another process holds it.
pub fn try_lock(path: &Path) -> std::io::Result<Option<FileLock>> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600).open(path)?;
    // SAFETY: the descriptor is open and owned by `file` for the whole call; flock only takes
    // an int and flags.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(Some(FileLock { _file: file }));
    }
    let err = std::io::Error::last_os_error();
    if err.kind() == std::io::ErrorKind::WouldBlock {
        Ok(None)
    } else {
        Err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_taker_is_refused_until_the_first_lets_go() {
        let path = std::env::temp_dir().join(format!("campfire-lock-{}", std::process::id()));
        let first = try_lock(&path).unwrap().expect("free");
        // flock locks belong to the open file description: a second open is a second taker.
        assert!(try_lock(&path).unwrap().is_none());
        drop(first);
        assert!(try_lock(&path).unwrap().is_some());
        let _ = std::fs::remove_file(&path);
    }
}
