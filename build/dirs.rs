// Reading a source folder at build time: build/assets.rs and build/templates.rs walk public/
// and templates/ the same way, in a fixed order so the output does not depend on the file
// system's listing order.

use std::fs;
use std::path::{Path, PathBuf};

/// The entries of `dir` sorted by name, hidden ones (`.name`) left out: (file name, path).
pub fn sorted_entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let mut entries: Vec<(String, PathBuf)> = fs::read_dir(dir)
        .map_err(|e| format!("{}: {}", dir.display(), e))?
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(name, _)| !name.starts_with('.'))
        .collect();
    entries.sort();
    Ok(entries)
}
