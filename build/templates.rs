// Build-time template compiler.
//
// A template is HTML with holes: `{{name}}` (filled at render time by a method of the template's
// `View` trait), `{{! comment }}` (dropped) and `{{asset:path}}` (replaced now by the asset's
// fingerprinted URL). Each file `templates/<dir>/<name>.html` becomes the Rust module
// `<dir>::<name>` with `trait View` (one method per distinct hole, first-appearance order) and
// `fn render(v: &impl View, o: &mut Out)` that interleaves `&'static [u8]` literals with hole
// calls. There is no logic in templates and no parsing at run time.
//
// Whitespace is kept as written, except that one final newline of each file is dropped (editors
// add it; pages and partials should not carry it).
//
// This file is a module of build.rs and is also compiled into tests/views_templates.rs through
// #[path], so it uses only std (and build/dirs.rs, declared next to it as `dirs`).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use super::dirs;

/// A piece of a parsed template.
#[derive(Debug, PartialEq)]
pub enum Piece {
    Static(Vec<u8>),
    /// A hole name (validated) and the line it is on.
    Hole(String, usize),
}

/// Splits `src` into static text and holes. Comments are dropped, `{{asset:path}}` is replaced
/// by `asset_url(path)`, adjacent static text is merged. Errors are `file:line: message` for an
/// unclosed `{{`, a hole name outside `[a-z_][a-z0-9_]*` (or one Rust cannot use as a method
/// name), or an unknown asset.
pub fn parse(src: &str, file: &str, asset_url: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Piece>, String> {
    let src = src.strip_suffix('\n').map(|s| s.strip_suffix('\r').unwrap_or(s)).unwrap_or(src);
    let mut pieces = Vec::new();
    let mut text: Vec<u8> = Vec::new();
    let mut rest = src;
    let mut line = 1;
    while let Some(open) = rest.find("{{") {
        text.extend_from_slice(&rest.as_bytes()[..open]);
        line += count_newlines(&rest[..open]);
        let after = &rest[open + 2..];
        let close = after
            .find("}}")
            .ok_or_else(|| format!("{}:{}: `{{{{` is never closed with `}}}}`", file, line))?;
        let inner = &after[..close];
        if inner.starts_with('!') {
            // comment: dropped
        } else if let Some(path) = inner.trim().strip_prefix("asset:") {
            let path = path.trim();
            let url = asset_url(path)
                .ok_or_else(|| format!("{}:{}: unknown asset {:?} in {{{{asset:...}}}}", file, line, path))?;
            text.extend_from_slice(url.as_bytes());
        } else {
            let name = inner.trim();
            check_hole_name(name).map_err(|e| format!("{}:{}: {}", file, line, e))?;
            if !text.is_empty() {
                pieces.push(Piece::Static(std::mem::take(&mut text)));
            }
            pieces.push(Piece::Hole(name.to_string(), line));
        }
        line += count_newlines(inner);
        rest = &after[close + 2..];
    }
    text.extend_from_slice(rest.as_bytes());
    if !text.is_empty() {
        pieces.push(Piece::Static(text));
    }
    Ok(pieces)
}

fn count_newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

fn check_hole_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = matches!(chars.next(), Some('a'..='z' | '_'));
    let rest_ok = chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'));
    if !first_ok || !rest_ok {
        return Err(format!("bad hole name {:?}: holes are {{{{name}}}} with name = [a-z_][a-z0-9_]*", name));
    }
    if matches!(name, "_" | "self" | "super" | "crate") {
        return Err(format!("bad hole name {:?}: Rust cannot name a method that", name));
    }
    Ok(())
}

/// `name` as a Rust identifier: keywords become raw identifiers.
pub fn ident(name: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "do", "dyn",
        "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop",
        "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "static",
        "struct", "trait", "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual",
        "where", "while", "yield",
    ];
    if KEYWORDS.contains(&name) {
        format!("r#{}", name)
    } else {
        name.to_string()
    }
}

/// A template found on disk.
pub struct Template {
    /// Module path under `views`: directories, then the file name without `.html`
    /// (`-` and `.` become `_`).
    pub module: Vec<String>,
    /// Path as shown in error messages and generated comments (`templates/rooms/show.html`).
    pub file: String,
    pub pieces: Vec<Piece>,
}

/// Reads and parses every `*.html` under `root`, sorted by path. `shown_root` prefixes the file
/// names in messages. Fails on a parse error or on a file/directory name that cannot be a Rust
/// module name.
pub fn collect(root: &Path, shown_root: &str, asset_url: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Template>, String> {
    let mut out = Vec::new();
    if root.is_dir() {
        walk(root, shown_root, &mut Vec::new(), asset_url, &mut out)?;
    }
    Ok(out)
}

fn walk(
    dir: &Path,
    shown: &str,
    module: &mut Vec<String>,
    asset_url: &dyn Fn(&str) -> Option<String>,
    out: &mut Vec<Template>,
) -> Result<(), String> {
    for (file_name, path) in dirs::sorted_entries(dir)? {
        let shown_path = format!("{}/{}", shown, file_name);
        if path.is_dir() {
            module.push(module_name(&file_name).map_err(|m| format!("{}: {}", shown_path, m))?);
            walk(&path, &shown_path, module, asset_url, out)?;
            module.pop();
        } else if let Some(stem) = file_name.strip_suffix(".html") {
            let src = fs::read_to_string(&path).map_err(|e| format!("{}: {}", shown_path, e))?;
            let pieces = parse(&src, &shown_path, asset_url)?;
            let mut m = module.clone();
            m.push(module_name(stem).map_err(|msg| format!("{}: {}", shown_path, msg))?);
            out.push(Template { module: m, file: shown_path, pieces });
        }
    }
    Ok(())
}

fn module_name(name: &str) -> Result<String, String> {
    let m: String = name.chars().map(|c| if c == '-' || c == '.' { '_' } else { c }).collect();
    check_hole_name(&m).map_err(|_| {
        format!("{:?} cannot be a module name: use [a-z_][a-z0-9_-.]* for template files and folders", name)
    })?;
    Ok(m)
}

/// Generates the Rust source for all templates: nested `pub mod`s mirroring the folders.
/// `out_type` is the path of the writer type (`crate::views::Out`); `from` names the source
/// folder in the header comment. Fails when two files map to the same module.
pub fn generate(templates: &[Template], out_type: &str, from: &str) -> Result<String, String> {
    #[derive(Default)]
    struct Node<'a> {
        children: BTreeMap<String, Node<'a>>,
        template: Option<&'a Template>,
    }
    let mut root = Node::default();
    for t in templates {
        let mut node = &mut root;
        for seg in &t.module {
            if node.template.is_some() {
                return Err(format!("{}: its folder clashes with a template of the same module name", t.file));
            }
            node = node.children.entry(seg.clone()).or_default();
        }
        if node.template.is_some() || !node.children.is_empty() {
            return Err(format!("{}: module views::{} is defined twice", t.file, t.module.join("::")));
        }
        node.template = Some(t);
    }
    fn emit(node: &Node<'_>, depth: usize, out_type: &str, code: &mut String) {
        for (name, child) in &node.children {
            let pad = "    ".repeat(depth);
            match child.template {
                Some(t) => {
                    code.push_str(&format!("{}/// Compiled from `{}`.\n", pad, t.file));
                    code.push_str(&format!("{}pub mod {} {{\n", pad, ident(name)));
                    template_body(t, depth + 1, out_type, code);
                }
                None => {
                    code.push_str(&format!("{}pub mod {} {{\n", pad, ident(name)));
                    emit(child, depth + 1, out_type, code);
                }
            }
            code.push_str(&format!("{}}}\n", pad));
        }
    }
    let mut code = format!("// Generated by build.rs from {}/. Do not edit.\n", from);
    emit(&root, 0, out_type, &mut code);
    Ok(code)
}

fn template_body(t: &Template, depth: usize, out_type: &str, code: &mut String) {
    let pad = "    ".repeat(depth);
    let mut holes: Vec<(&str, usize)> = Vec::new();
    for p in &t.pieces {
        if let Piece::Hole(name, line) = p {
            if !holes.iter().any(|(n, _)| n == name) {
                holes.push((name, *line));
            }
        }
    }
    code.push_str(&format!("{}use {};\n", pad, out_type));
    if holes.is_empty() {
        let bytes: Vec<u8> = t.pieces.iter().flat_map(|p| match p {
            Piece::Static(b) => b.clone(),
            Piece::Hole(..) => Vec::new(),
        }).collect();
        code.push_str(&format!("{}/// The whole page: this template has no holes.\n", pad));
        code.push_str(&format!("{}pub const BYTES: &[u8] = {};\n", pad, byte_literal(&bytes)));
        code.push_str(&format!("{}/// No holes to fill.\n{}pub trait View {{}}\n", pad, pad));
        code.push_str(&format!("{}impl View for () {{}}\n", pad));
        code.push_str(&format!("{}/// Writes the page (`render(&(), o)`).\n", pad));
        code.push_str(&format!("{}pub fn render(_v: &impl View, o: &mut Out<'_>) {{\n", pad));
        code.push_str(&format!("{}    o.static_bytes(BYTES);\n{}}}\n", pad, pad));
        return;
    }
    code.push_str(&format!("{}/// The holes of `{}`, in order of first appearance.\n", pad, t.file));
    code.push_str(&format!("{}pub trait View {{\n", pad));
    for (name, line) in &holes {
        code.push_str(&format!("{}    /// `{{{{{}}}}}` ({}:{})\n", pad, name, t.file, line));
        code.push_str(&format!("{}    fn {}(&self, o: &mut Out<'_>);\n", pad, ident(name)));
    }
    code.push_str(&format!("{}}}\n", pad));
    code.push_str(&format!("{}/// Writes `{}` into `o`, calling `v` for each hole.\n", pad, t.file));
    code.push_str(&format!("{}pub fn render(v: &impl View, o: &mut Out<'_>) {{\n", pad));
    for p in &t.pieces {
        match p {
            Piece::Static(b) => code.push_str(&format!("{}    o.static_bytes({});\n", pad, byte_literal(b))),
            Piece::Hole(name, _) => code.push_str(&format!("{}    v.{}(o);\n", pad, ident(name))),
        }
    }
    code.push_str(&format!("{}}}\n", pad));
}

/// `bytes` as a Rust byte-string literal.
pub fn byte_literal(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 8);
    s.push_str("b\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(char::from(b)),
            _ => s.push_str(&format!("\\x{:02x}", b)),
        }
    }
    s.push('"');
    s
}
