//! The dependency direction of docs/architecture.md, checked: every `crate::<module>` that a
//! file of `src/` names (in code, not comments) must be listed before the file's own top-level
//! module on the architecture page's `Layers:` line. An arrow back up fails with its file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `Layers:` line's backticked names, bottom first.
fn layers() -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let line = doc.lines().find(|l| l.starts_with("Layers:")).expect("a Layers: line in docs/architecture.md");
    line.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`src/app/cable/hub.rs` → `app`).
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(root().join("src")).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    // `qr_tests.rs` is `qr`'s test module, kept beside it.
    first.trim_end_matches(".rs").trim_end_matches("_tests").to_string()
}

/// The modules named as `crate::name` or inside `crate::{a, b::c}` in `code`.
fn uses(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    for (i, _) in code.match_indices("crate::") {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` or a longer path such as `other_crate::`
        }
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name = ident(part.trim());
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found
}

/// `source` without `//` comments (doc comments included) and string contents that could
/// mention `crate::` in prose.
fn code_only(source: &str) -> String {
    source.lines().map(|l| match l.find("//") { Some(i) => &l[..i], None => l }).collect::<Vec<_>>().join("\n")
}

#[test]
fn no_module_uses_one_above_it() {
    let order = layers();
    let rank = |m: &str| order.iter().position(|l| l == m);
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut wrong = Vec::new();
    for f in &files {
        let me = module_of(f);
        if me == "main" || me == "lib" {
            continue;
        }
        let Some(mine) = rank(&me) else {
            wrong.push(format!("{}: module `{me}` is not on the Layers: line", f.display()));
            continue;
        };
        let code = code_only(&std::fs::read_to_string(f).unwrap());
        for used in uses(&code) {
            // An upper-case name is an item of the crate root (`crate::VERSION`), not a module.
            if used == me || used == "self" || used == "super" || used.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            match rank(&used) {
                Some(r) if r < mine => {}
                Some(_) => wrong.push(format!("{} ({me}) uses {used}, which is above it", f.display())),
                None => wrong.push(format!("{} ({me}) uses {used}, which is not on the Layers: line", f.display())),
            }
        }
    }
    assert!(wrong.is_empty(), "arrows against docs/architecture.md's Layers: line:\n{}", wrong.join("\n"));
}

#[test]
fn the_reader_finds_grouped_and_plain_paths_and_skips_comments() {
    let code = code_only("use crate::{db, http::Response};\nlet x = crate::sys::now(); // crate::app\nmacro $crate::y");
    assert_eq!(uses(&code).into_iter().collect::<Vec<_>>(), ["db", "http", "sys"]);
}
