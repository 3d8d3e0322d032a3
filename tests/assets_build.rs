//! The build-time half of the assets (build/assets.rs, compiled in here through #[path]) and
//! what it produced: fingerprints, content types, gzip members, CSS url() rewriting, the vendor
//! manifest, and the embedded table itself.

#[path = "../build/dirs.rs"]
mod dirs;
#[allow(dead_code)]
#[path = "../build/assets.rs"]
mod builder;

use std::fs;
use std::path::PathBuf;

/// A scratch folder under target/ (unique per test), removed first if a previous run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("assets_build_{}", name));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Bit-by-bit CRC-32, independent of the table-driven one under test.
fn crc32_slow(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 { (c >> 1) ^ 0xedb8_8320 } else { c >> 1 };
        }
    }
    !c
}

/// Checks a gzip member and returns what it decompresses to.
fn gunzip(gz: &[u8]) -> Vec<u8> {
    assert_eq!(&gz[..3], &[0x1f, 0x8b, 8], "gzip magic and deflate method");
    assert_eq!(gz[3], 0, "no optional header fields");
    let (body, trailer) = gz[10..].split_at(gz.len() - 18);
    let data = miniz_oxide::inflate::decompress_to_vec(body).unwrap();
    assert_eq!(u32::from_le_bytes(trailer[..4].try_into().unwrap()), crc32_slow(&data));
    assert_eq!(u32::from_le_bytes(trailer[4..].try_into().unwrap()) as usize, data.len());
    data
}

#[test]
fn sha256_matches_the_standard_vector() {
    assert_eq!(
        builder::sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn fingerprint_keeps_folders_and_everything_after_the_first_dot() {
    let h = "0123456789abcdef";
    assert_eq!(builder::fingerprinted_url("app.css", h), "/assets/app-01234567.css");
    assert_eq!(builder::fingerprinted_url("trix.esm.min.js", h), "/assets/trix-01234567.esm.min.js");
    assert_eq!(builder::fingerprinted_url("icons/arrow-down.svg", h), "/assets/icons/arrow-down-01234567.svg");
    assert_eq!(builder::fingerprinted_url("a.b/LICENSE", h), "/assets/a.b/LICENSE-01234567");
    assert_eq!(builder::fingerprinted_url("_reset.css", h), "/assets/_reset-01234567.css");
}

#[test]
fn fingerprint_is_stable_and_follows_content() {
    let dir = scratch("stable");
    fs::write(dir.join("a.js"), "let a = 1;").unwrap();
    fs::write(dir.join("b.js"), "let a = 1;").unwrap();
    let build = || {
        let sources = builder::collect(&dir, &dir.join("no-vendor")).unwrap();
        builder::build_all(&sources).unwrap().into_iter().map(|b| b.url).collect::<Vec<_>>()
    };
    let first = build();
    assert_eq!(first, build(), "same bytes, same names");
    let hash8 = &builder::sha256_hex(b"let a = 1;")[..8];
    assert_eq!(first, vec![format!("/assets/a-{hash8}.js"), format!("/assets/b-{hash8}.js")]);
    fs::write(dir.join("a.js"), "let a = 2;").unwrap();
    let second = build();
    assert_ne!(first[0], second[0], "new bytes, new name");
    assert_eq!(first[1], second[1]);
}

#[test]
fn content_type_goes_by_the_last_extension() {
    assert_eq!(builder::content_type("x/app.css"), "text/css; charset=utf-8");
    assert_eq!(builder::content_type("trix.esm.min.js"), "text/javascript; charset=utf-8");
    assert_eq!(builder::content_type("ding.MP3"), "audio/mpeg");
    assert_eq!(builder::content_type("i.svg"), "image/svg+xml");
    assert_eq!(builder::content_type("LICENSE"), "application/octet-stream");
}

#[test]
fn gzip_round_trips_and_is_kept_only_when_smaller() {
    for data in [&b""[..], b"a", &b"campfire ".repeat(500)] {
        assert_eq!(gunzip(&builder::gzip(data)), data);
    }
    assert_eq!(builder::crc32(b"123456789"), 0xcbf4_3926);
    let dir = scratch("gzip");
    fs::write(dir.join("big.css"), "body { color: red; }\n".repeat(100)).unwrap();
    fs::write(dir.join("tiny.txt"), "x").unwrap();
    let built = builder::build_all(&builder::collect(&dir, &dir).unwrap()).unwrap();
    let big = built.iter().find(|b| b.name == "big.css").unwrap();
    assert_eq!(gunzip(big.gzip.as_ref().unwrap()), big.identity);
    assert!(built.iter().find(|b| b.name == "tiny.txt").unwrap().gzip.is_none());
}

#[test]
fn css_urls_are_rewritten_to_fingerprinted_names() {
    let resolve = |n: &str| match n {
        "icons/add.svg" => Some("/assets/icons/add-11111111.svg".to_string()),
        "trix.css" => None,
        "spinner.gif" => Some("/assets/spinner-22222222.gif".to_string()),
        _ => None,
    };
    let css = ".a { background: url(../icons/add.svg) }\n\
               .b { mask: URL( \"../icons/add.svg#x\" ) }\n\
               .c { background: url('data:image/svg+xml;utf8,<svg a=\"f(1)\"/>') }\n\
               .d { background: url(/fixed.png), url(https://x.test/a.png) }\n\
               .e { content: \"url-like\"; background-image: image-set(url(spinner.gif) 1x) }\n\
               /* old: url(gone.png) */";
    let out = builder::rewrite_css(css, "css/app.css", "public/css/app.css", &resolve).unwrap();
    assert_eq!(
        out,
        ".a { background: url(/assets/icons/add-11111111.svg) }\n\
         .b { mask: URL( \"/assets/icons/add-11111111.svg#x\" ) }\n\
         .c { background: url('data:image/svg+xml;utf8,<svg a=\"f(1)\"/>') }\n\
         .d { background: url(/fixed.png), url(https://x.test/a.png) }\n\
         .e { content: \"url-like\"; background-image: image-set(url(spinner.gif) 1x) }\n\
         /* old: url(gone.png) */"
            .replace("url(spinner.gif)", "url(/assets/spinner-22222222.gif)")
    );
    let err = builder::rewrite_css("a{}\nb { background: url(missing.png) }", "app.css", "public/app.css", &resolve)
        .unwrap_err();
    assert!(err.starts_with("public/app.css:2: url(missing.png) names no embedded asset"), "{err}");
}

#[test]
fn stylesheets_in_public_reference_fingerprinted_icons() {
    let dir = scratch("css");
    fs::create_dir_all(dir.join("icons")).unwrap();
    fs::write(dir.join("icons/add.svg"), "<svg/>").unwrap();
    fs::write(dir.join("app.css"), ".a{background:url(icons/add.svg)}").unwrap();
    let built = builder::build_all(&builder::collect(&dir, &dir).unwrap()).unwrap();
    let icon = built.iter().find(|b| b.name == "icons/add.svg").unwrap();
    let css = built.iter().find(|b| b.name == "app.css").unwrap();
    assert_eq!(css.identity, format!(".a{{background:url({})}}", icon.url).into_bytes());
    assert!(css.source_path.is_none(), "rewritten bytes are emitted, not the source file");
    assert_eq!(css.url, builder::fingerprinted_url("app.css", &builder::sha256_hex(&css.identity)));
}

#[test]
fn vendor_manifest_names_files_and_errors_point_at_the_line() {
    let dir = scratch("vendor");
    let (public, vendor) = (dir.join("public"), dir.join("vendor"));
    fs::create_dir_all(vendor.join("@hotwired/turbo")).unwrap();
    fs::create_dir_all(&public).unwrap();
    fs::write(vendor.join("@hotwired/turbo/turbo.es2017-esm.js"), "turbo").unwrap();
    fs::write(vendor.join("LICENSE"), "MIT").unwrap();
    fs::write(public.join(".hidden"), "skip me").unwrap();
    fs::write(vendor.join("manifest.txt"), "# browser files\n\n@hotwired/turbo/turbo.es2017-esm.js turbo.js\nLICENSE\n").unwrap();
    let names: Vec<String> = builder::collect(&public, &vendor).unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["turbo.js", "LICENSE"]);

    fs::write(vendor.join("manifest.txt"), "LICENSE\nnope.js nope.js\n").unwrap();
    let err = builder::collect(&public, &vendor).err().unwrap();
    assert!(err.ends_with(&format!("manifest.txt:2: no such file {}", vendor.join("nope.js").display())), "{err}");

    fs::write(vendor.join("manifest.txt"), "LICENSE a b\n").unwrap();
    assert!(builder::collect(&public, &vendor).err().unwrap().contains("manifest.txt:1: expected"));

    fs::write(public.join("turbo.js"), "ours").unwrap();
    fs::write(vendor.join("manifest.txt"), "@hotwired/turbo/turbo.es2017-esm.js turbo.js\n").unwrap();
    assert!(builder::collect(&public, &vendor).err().unwrap().contains("\"turbo.js\" is used twice"));

    fs::write(vendor.join("manifest.txt"), "LICENSE my%20file\n").unwrap();
    fs::remove_file(public.join("turbo.js")).unwrap();
    assert!(builder::collect(&public, &vendor).err().unwrap().contains("must be a relative path"));
}

#[test]
fn embedded_table_is_sorted_and_matches_its_sources() {
    let all = campfire::assets::all();
    assert!(all.windows(2).all(|w| w[0].url < w[1].url), "sorted by URL for binary search");
    for a in all {
        let hex = builder::sha256_hex(a.body);
        assert_eq!(a.url, builder::fingerprinted_url(a.name, &hex));
        assert_eq!(a.etag, format!("\"{}\"", &hex[..16]));
        assert_eq!(a.etag_gzip, format!("\"{}-gz\"", &hex[..16]));
        assert_eq!(a.content_type, builder::content_type(a.name));
        if let Some(gz) = a.gzip {
            assert!(gz.len() < a.body.len());
            assert_eq!(gunzip(gz), a.body, "{}", a.name);
        }
    }
    let robots = campfire::assets::by_name("robots.txt").unwrap();
    assert_eq!(robots.body, fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/public/robots.txt")).unwrap());
}
