// Build-time half of the embedded assets.
//
// Collects every file under public/ and every file listed in vendor/manifest.txt, rewrites the
// url() references inside our own stylesheets to fingerprinted URLs, hashes each file (SHA-256),
// gzips it once at level 9 (kept only when smaller) and emits $OUT_DIR/assets.rs: a static table
// sorted by URL that src/assets.rs includes. The runtime never hashes or compresses a static file.
//
// This file is a module of build.rs and is also compiled into tests/assets_build.rs through
// #[path], so it may use only std, sha2 and miniz_oxide (and build/dirs.rs, declared next to it as `dirs`).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::dirs;

/// One file to embed, before processing.
pub struct Source {
    /// The name templates use in `{{asset:name}}`: the path under public/, or the served name
    /// given in vendor/manifest.txt.
    pub name: String,
    /// Where the bytes are.
    pub path: PathBuf,
    /// Our own stylesheets get their url() references rewritten; vendored files stay as shipped.
    pub rewrite_css: bool,
}

/// One processed file, ready to be emitted.
pub struct Built {
    pub name: String,
    /// `/assets/<dir>/<stem>-<8 hex>.<ext>`
    pub url: String,
    pub content_type: &'static str,
    /// Lowercase hex SHA-256 of the identity bytes.
    pub sha256_hex: String,
    pub identity: Vec<u8>,
    /// The source file when the identity bytes are its exact content (so the emitted code can
    /// include_bytes! it in place); None when the bytes were rewritten.
    pub source_path: Option<PathBuf>,
    pub gzip: Option<Vec<u8>>,
}

/// Lists the files under `public` (recursively, sorted, dotfiles skipped) and those named by
/// `vendor/manifest.txt` (missing manifest: no vendor files). Fails on a manifest line that does
/// not parse, a listed file that does not exist, a name with characters that would need
/// percent-encoding in a URL, or two files with the same name.
pub fn collect(public: &Path, vendor: &Path) -> Result<Vec<Source>, String> {
    let mut out = Vec::new();
    if public.is_dir() {
        walk(public, "", &mut out)?;
    }
    let manifest = vendor.join("manifest.txt");
    if let Ok(text) = fs::read_to_string(&manifest) {
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (file, name) = match fields.as_slice() {
                [file] => (*file, *file),
                [file, name] => (*file, *name),
                _ => {
                    return Err(format!(
                        "{}:{}: expected `<path under vendor/> [<served name>]`",
                        manifest.display(),
                        i + 1
                    ))
                }
            };
            let path = vendor.join(file);
            if !path.is_file() {
                return Err(format!("{}:{}: no such file {}", manifest.display(), i + 1, path.display()));
            }
            out.push(Source { name: name.to_string(), path, rewrite_css: false });
        }
    }
    let mut seen = BTreeMap::new();
    for s in &out {
        check_name(&s.name).map_err(|e| format!("{}: {}", s.path.display(), e))?;
        if let Some(other) = seen.insert(s.name.as_str(), &s.path) {
            return Err(format!(
                "asset name {:?} is used twice: {} and {}",
                s.name,
                other.display(),
                s.path.display()
            ));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<Source>) -> Result<(), String> {
    for (file_name, path) in dirs::sorted_entries(dir)? {
        let name = format!("{}{}", prefix, file_name);
        if path.is_dir() {
            walk(&path, &format!("{}/", name), out)?;
        } else {
            let rewrite_css = name.ends_with(".css");
            out.push(Source { name, path, rewrite_css });
        }
    }
    Ok(())
}

/// Names become URL paths verbatim, so they are kept to characters that never need escaping.
fn check_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "-_./@+~".contains(c);
    if name.is_empty()
        || name.starts_with('/')
        || name.split('/').any(|seg| seg.is_empty() || seg == "." || seg == "..")
        || !name.chars().all(ok_char)
    {
        return Err(format!("asset name {:?} must be a relative path of [A-Za-z0-9-_.@+~/]", name));
    }
    Ok(())
}

/// `/assets/<dir>/<stem>-<first 8 hex>.<ext>`, where `<ext>` is everything after the first dot
/// of the file name (`trix.esm.min.js` → `trix-1a2b3c4d.esm.min.js`), so the served name keeps
/// the extensions browsers and tools look at.
pub fn fingerprinted_url(name: &str, sha256_hex: &str) -> String {
    let (dir, file) = match name.rfind('/') {
        Some(i) => (&name[..=i], &name[i + 1..]),
        None => ("", name),
    };
    let short = &sha256_hex[..8.min(sha256_hex.len())];
    match file.find('.') {
        Some(dot) => format!("/assets/{}{}-{}{}", dir, &file[..dot], short, &file[dot..]),
        None => format!("/assets/{}{}-{}", dir, file, short),
    }
}

/// The Content-Type for a file name, by its last extension.
pub fn content_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "css" => "text/css; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "html" | "htm" => "text/html; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "ico" => "image/x-icon",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "otf" => "font/otf",
        "wasm" => "application/wasm",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// Formats that are already compressed never shrink under gzip; skipping them keeps the build
/// fast (there are dozens of MP3s and images).
fn worth_compressing(content_type: &str) -> bool {
    content_type.starts_with("text/")
        || content_type.starts_with("application/")
        || content_type == "image/svg+xml"
        || content_type == "image/x-icon"
        || content_type == "font/ttf"
        || content_type == "font/otf"
}

/// Processes every source: plain files first, then our stylesheets, whose url() references
/// resolve against the plain files (a stylesheet may not url() another stylesheet: link each
/// one from the layout instead). Fails with file:line on a reference to an unknown file.
pub fn build_all(sources: &[Source]) -> Result<Vec<Built>, String> {
    let mut built = Vec::with_capacity(sources.len());
    for s in sources.iter().filter(|s| !s.rewrite_css) {
        let bytes = fs::read(&s.path).map_err(|e| format!("{}: {}", s.path.display(), e))?;
        built.push(process(&s.name, bytes, Some(s.path.clone())));
    }
    let urls: BTreeMap<String, String> =
        built.iter().map(|b| (b.name.clone(), b.url.clone())).collect();
    for s in sources.iter().filter(|s| s.rewrite_css) {
        let text = fs::read_to_string(&s.path).map_err(|e| format!("{}: {}", s.path.display(), e))?;
        let file = s.path.display().to_string();
        let rewritten = rewrite_css(&text, &s.name, &file, &|n| urls.get(n).cloned())?;
        let source_path = if rewritten == text { Some(s.path.clone()) } else { None };
        built.push(process(&s.name, rewritten.into_bytes(), source_path));
    }
    built.sort_by(|a, b| a.url.cmp(&b.url));
    Ok(built)
}

fn process(name: &str, identity: Vec<u8>, source_path: Option<PathBuf>) -> Built {
    let sha256_hex = sha256_hex(&identity);
    let content_type = content_type(name);
    let gzip = if worth_compressing(content_type) {
        Some(gzip(&identity)).filter(|g| g.len() < identity.len())
    } else {
        None
    };
    Built {
        name: name.to_string(),
        url: fingerprinted_url(name, &sha256_hex),
        content_type,
        sha256_hex,
        identity,
        source_path,
        gzip,
    }
}

/// Lowercase hex of the SHA-256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(data);
    let mut s = String::with_capacity(64);
    for b in digest.iter() {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

/// Rewrites `url(x)`, `url('x')` and `url("x")` in a stylesheet named `css_name` (its path under
/// public/) to the fingerprinted URL of `x`. `x` is resolved relative to the stylesheet's
/// directory first, then as a bare asset name (vendor served names). Absolute paths, schemes
/// (`data:`, `https:`) and pure fragments are left alone; a `?query` or `#fragment` is kept.
/// `file` is only used in error messages (file:line).
pub fn rewrite_css(
    css: &str,
    css_name: &str,
    file: &str,
    resolve: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let dir = match css_name.rfind('/') {
        Some(i) => &css_name[..=i],
        None => "",
    };
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    let mut consumed = 0;
    while let Some(i) = find_url_open(rest) {
        let open = i + 4; // past "url("
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        // A quoted target may itself contain ')' (data: URIs), so look past the closing quote.
        let lead = after.len() - after.trim_start().len();
        let quoted_end = match after[lead..].chars().next() {
            Some(q @ ('"' | '\'')) => after[lead + 1..].find(q).map(|e| lead + 1 + e + 1),
            _ => Some(lead),
        };
        let close = match quoted_end.and_then(|from| after[from..].find(')').map(|c| from + c)) {
            Some(c) => c,
            None => {
                let line = line_of(css, consumed + i);
                return Err(format!("{}:{}: url( without a closing )", file, line));
            }
        };
        let raw = &after[..close];
        let inner = raw.trim();
        let (quote, target) = match inner.chars().next() {
            Some(q @ ('"' | '\'')) if inner.len() >= 2 && inner.ends_with(q) => {
                (Some(q), &inner[1..inner.len() - 1])
            }
            _ => (None, inner),
        };
        if is_external(target) {
            out.push_str(raw);
        } else {
            let split = target.find(['?', '#']).unwrap_or(target.len());
            let (path, suffix) = target.split_at(split);
            let joined = join(dir, path);
            let url = joined.as_deref().and_then(resolve).or_else(|| resolve(path));
            let url = match url {
                Some(u) => u,
                None => {
                    let line = line_of(css, consumed + i);
                    return Err(format!(
                        "{}:{}: url({}) names no embedded asset (stylesheets may reference \
                         public/ files and vendor served names, but not other stylesheets)",
                        file, line, target
                    ));
                }
            };
            let lead = raw.len() - raw.trim_start().len();
            out.push_str(&raw[..lead]);
            if let Some(q) = quote {
                out.push(q);
            }
            out.push_str(&url);
            out.push_str(suffix);
            if let Some(q) = quote {
                out.push(q);
            }
            out.push_str(&raw[raw.trim_end().len()..]);
        }
        consumed += open + close;
        rest = &after[close..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Finds `url(` as a function call (case-insensitive), not as the tail of another identifier
/// and not inside a `/* comment */`.
fn find_url_open(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i + 4 <= bytes.len() {
        if bytes[i..].starts_with(b"/*") {
            i = s[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
            continue;
        }
        let ident_before = i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'-' || bytes[i - 1] == b'_');
        if !ident_before && bytes[i..i + 4].eq_ignore_ascii_case(b"url(") {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn is_external(target: &str) -> bool {
    target.is_empty()
        || target.starts_with('/')
        || target.starts_with('#')
        || target.contains(':')
}

/// Joins a relative reference onto a directory ("css/" + "../icons/a.svg" → "icons/a.svg");
/// None when it climbs above public/.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// A complete gzip member (RFC 1952) of `data`: deflate level 9, mtime 0 so builds are
/// reproducible.
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let deflated = miniz_oxide::deflate::compress_to_vec(data, 9);
    let mut out = Vec::with_capacity(deflated.len() + 18);
    // magic, CM=deflate, FLG=0, MTIME=0, XFL=2 (best compression), OS=3 (Unix)
    out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
    out.extend_from_slice(&deflated);
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

const CRC_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0xedb8_8320 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[n] = c;
        n += 1;
    }
    t
};

/// CRC-32 (IEEE, as gzip uses it).
pub fn crc32(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c = CRC_TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// Writes the bytes that are not already a source file into `out_dir/assets/` and returns the
/// Rust source of the table: `static ASSETS: [Asset; N]` sorted by URL and
/// `static BY_NAME: [(&str, usize); N]` sorted by name (index into ASSETS).
pub fn emit(built: &[Built], out_dir: &Path) -> Result<String, String> {
    let dir = out_dir.join("assets");
    fs::create_dir_all(&dir).map_err(|e| format!("{}: {}", dir.display(), e))?;
    let write = |file: String, bytes: &[u8]| -> Result<String, String> {
        let path = dir.join(file);
        // Skip the write when unchanged so rustc's include_bytes! inputs keep their mtimes.
        if fs::read(&path).ok().as_deref() != Some(bytes) {
            fs::write(&path, bytes).map_err(|e| format!("{}: {}", path.display(), e))?;
        }
        Ok(path.display().to_string())
    };
    let mut code = String::new();
    code.push_str("// Generated by build.rs from public/ and vendor/manifest.txt. Do not edit.\n");
    code.push_str(&format!("static ASSETS: [Asset; {}] = [\n", built.len()));
    for b in built {
        let body_path = match &b.source_path {
            Some(p) => p.display().to_string(),
            None => write(format!("{}.id", &b.sha256_hex), &b.identity)?,
        };
        let gzip = match &b.gzip {
            Some(g) => format!("Some(include_bytes!({:?}))", write(format!("{}.gz", &b.sha256_hex), g)?),
            None => "None".to_string(),
        };
        let tag = &b.sha256_hex[..16];
        code.push_str(&format!(
            "    Asset {{ name: {:?}, url: {:?}, content_type: {:?}, etag: {:?}, etag_gzip: {:?}, body: include_bytes!({:?}), gzip: {} }},\n",
            b.name,
            b.url,
            b.content_type,
            format!("\"{}\"", tag),
            format!("\"{}-gz\"", tag),
            body_path,
            gzip
        ));
    }
    code.push_str("];\n");
    let mut by_name: Vec<(&str, usize)> = built.iter().enumerate().map(|(i, b)| (b.name.as_str(), i)).collect();
    by_name.sort();
    code.push_str(&format!("static BY_NAME: [(&str, usize); {}] = [\n", built.len()));
    for (name, i) in by_name {
        code.push_str(&format!("    ({:?}, {}),\n", name, i));
    }
    code.push_str("];\n");
    Ok(code)
}
