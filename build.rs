// Build script: embeds the static assets and compiles the templates.
//
// Order matters: assets are hashed first, because templates resolve `{{asset:path}}` to
// fingerprinted URLs at build time. Outputs, both include!d by the library:
//   $OUT_DIR/assets.rs     the asset table (src/assets.rs)
//   $OUT_DIR/templates.rs  one module per template (src/views/mod.rs)
//   $OUT_DIR/fixture_templates.rs  tests/fixtures/templates, for tests/views_templates.rs only
// Any error stops the build with a file:line message.

#[path = "build/assets.rs"]
mod assets;
#[path = "build/dirs.rs"]
mod dirs;
#[path = "build/templates.rs"]
mod templates;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {}", e);
        println!("cargo:warning={}", e);
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").map_err(|e| e.to_string())?);
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").map_err(|e| e.to_string())?);
    for watched in ["build", "templates", "public", "vendor", "tests/fixtures/templates"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-changed=build.rs");

    let sources = assets::collect(&root.join("public"), &root.join("vendor"))?;
    let built = assets::build_all(&sources)?;
    write(&out_dir.join("assets.rs"), &assets::emit(&built, &out_dir)?)?;

    let urls: BTreeMap<String, String> = built.iter().map(|b| (b.name.clone(), b.url.clone())).collect();
    let asset_url = |name: &str| urls.get(name).cloned();
    let compile = |dir: &Path, shown: &str, out_type: &str, file: &str| -> Result<(), String> {
        let found = templates::collect(dir, shown, &asset_url)?;
        write(&out_dir.join(file), &templates::generate(&found, out_type, shown)?)
    };
    compile(&root.join("templates"), "templates", "crate::views::Out", "templates.rs")?;
    compile(
        &root.join("tests/fixtures/templates"),
        "tests/fixtures/templates",
        "campfire::views::Out",
        "fixture_templates.rs",
    )?;
    Ok(())
}

/// Writes `path` only when its content changes, so unchanged output does not trigger recompiles.
fn write(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {}", path.display(), e))
}
