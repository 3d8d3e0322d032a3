//! What kind of file an upload is (spec/01 §12.2): the content type recorded in
//! `active_storage_blobs.content_type`, worked out the way Rails' Marcel does it, from the
//! first bytes of the file and from its name.
//!
//! The order: the bytes' signature ("magic") first; when the name names a more specific type
//! of the same container (a `.docx` is a zip, a `.m4a` an MP4) the name's type; when the bytes
//! say nothing (text files: CSV, Markdown, JSON) the name's type; last the type the browser
//! declared, if it is one we know. Types a browser would show inline (images, PDF) are never
//! taken from a name or a declaration alone, only from bytes that agree, so a renamed file
//! cannot turn into something the page embeds. Active types (HTML, SVG, XML, JavaScript) are
//! recognised so that serving can turn them into downloads (`active_storage_blobs.rs`).

/// The generic type when nothing is known.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// File name extensions (lower case) and the type each means, as Marcel names them.
const BY_EXTENSION: [(&str, &str); 34] = [
    ("csv", "text/csv"),
    ("txt", "text/plain"),
    ("text", "text/plain"),
    ("log", "text/plain"),
    ("md", "text/markdown"),
    ("markdown", "text/markdown"),
    ("json", "application/json"),
    ("pdf", "application/pdf"),
    ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    ("zip", "application/zip"),
    ("mp3", "audio/mpeg"),
    ("m4a", "audio/mp4"),
    ("ogg", "audio/ogg"),
    ("oga", "audio/ogg"),
    ("wav", "audio/x-wav"),
    ("mp4", "video/mp4"),
    ("m4v", "video/mp4"),
    ("mov", "video/quicktime"),
    ("webm", "video/webm"),
    ("heic", "image/heic"),
    ("heif", "image/heif"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("png", "image/png"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("html", "text/html"),
    ("htm", "text/html"),
    ("svg", "image/svg+xml"),
    ("xml", "application/xml"),
    ("js", "text/javascript"),
    ("mjs", "text/javascript"),
];

/// Types whose bytes are a container that more specific types share: the name may refine
/// them (`(container, refined)`).
const REFINES: [(&str, &str); 6] = [
    ("application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("application/zip", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("application/zip", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    ("video/mp4", "audio/mp4"),
    ("video/mp4", "video/quicktime"),
    ("video/webm", "audio/webm"),
];

/// The content type of a file with these first bytes (`data`, the whole file or its start),
/// this `filename`, and the `declared` type the client sent.
pub fn detect(data: &[u8], filename: &str, declared: &[u8]) -> &'static str {
    let named = by_name(filename);
    if let Some(magic) = by_magic(data) {
        return match named {
            Some(n) if REFINES.contains(&(magic, n)) => n,
            _ => magic,
        };
    }
    let embeddable = |t: &str| t.starts_with("image/") || t == "application/pdf";
    if let Some(n) = named.filter(|n| !embeddable(n)) {
        return n;
    }
    let declared = declared.split(|&b| b == b';').next().unwrap_or(b"").trim_ascii();
    BY_EXTENSION
        .iter()
        .map(|&(_, t)| t)
        .find(|t| t.as_bytes().eq_ignore_ascii_case(declared) && !embeddable(t))
        .unwrap_or(OCTET_STREAM)
}

/// The type the file name's extension means, if it is in the table.
pub fn by_name(filename: &str) -> Option<&'static str> {
    let (_, ext) = filename.rsplit_once('.')?;
    BY_EXTENSION.iter().find(|(e, _)| e.eq_ignore_ascii_case(ext)).map(|&(_, t)| t)
}

/// The type the file's signature shows, if it has one we know.
pub fn by_magic(d: &[u8]) -> Option<&'static str> {
    let at = |i: usize, sig: &[u8]| d.get(i..i + sig.len()) == Some(sig);
    let t = if at(0, b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if at(0, b"\xff\xd8\xff") {
        "image/jpeg"
    } else if at(0, b"GIF87a") || at(0, b"GIF89a") {
        "image/gif"
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        "image/webp"
    } else if at(0, b"RIFF") && at(8, b"WAVE") {
        "audio/x-wav"
    } else if at(0, b"II*\0") || at(0, b"MM\0*") {
        "image/tiff"
    } else if at(0, b"%PDF-") {
        "application/pdf"
    } else if at(0, b"PK\x03\x04") || at(0, b"PK\x05\x06") {
        "application/zip"
    } else if at(0, b"OggS") {
        "audio/ogg"
    } else if at(0, b"ID3") || mp3_frame(d) {
        "audio/mpeg"
    } else if at(4, b"ftyp") {
        iso_media(d.get(8..12)?)
    } else if at(0, b"\x1a\x45\xdf\xa3") {
        // Matroska's EBML header names its doctype near the start.
        let head = d.get(..64.min(d.len()))?;
        if head.windows(4).any(|w| w == b"webm") {
            "video/webm"
        } else {
            "video/x-matroska"
        }
    } else {
        markup(d)?
    };
    Some(t)
}

/// An MPEG audio layer III frame header without an ID3 tag (`FF FB`, `FF F3`, …).
fn mp3_frame(d: &[u8]) -> bool {
    matches!(d, [0xff, b, ..] if b & 0xe6 == 0xe2 && (b >> 3) & 3 != 1)
}

/// The type of an ISO base media file (`ftyp` box) by its major brand.
fn iso_media(brand: &[u8]) -> &'static str {
    match brand {
        b"heic" | b"heix" | b"heim" | b"heis" | b"hevc" | b"hevx" => "image/heic",
        b"mif1" | b"msf1" => "image/heif",
        b"avif" | b"avis" => "image/avif",
        b"M4A " | b"M4B " => "audio/mp4",
        b"qt  " => "video/quicktime",
        _ => "video/mp4",
    }
}

/// HTML, SVG and XML by their opening tag (after a byte order mark and white space): the
/// active types that must never be served as themselves.
fn markup(d: &[u8]) -> Option<&'static str> {
    let d = d.strip_prefix(b"\xef\xbb\xbf").unwrap_or(d);
    let start = d.iter().position(|b| !b.is_ascii_whitespace())?;
    let head = d.get(start..(start + 1024).min(d.len()))?;
    let opens = |tag: &[u8]| head.len() >= tag.len() && head[..tag.len()].eq_ignore_ascii_case(tag);
    let has = |tag: &[u8]| head.windows(tag.len()).any(|w| w.eq_ignore_ascii_case(tag));
    if [&b"<!doctype html"[..], b"<html", b"<head", b"<body", b"<script", b"<iframe", b"<!--"].iter().any(|t| opens(t)) {
        Some("text/html")
    } else if opens(b"<svg") || (opens(b"<?xml") && has(b"<svg")) {
        Some("image/svg+xml")
    } else if opens(b"<?xml") {
        Some("application/xml")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_files_take_the_type_of_their_name() {
        assert_eq!(detect(b"a,b\n1,2\n", "data.csv", b"application/octet-stream"), "text/csv");
        assert_eq!(detect(b"a,b\n", "DATA.CSV", b""), "text/csv");
        assert_eq!(detect(b"# Notes", "notes.md", b""), "text/markdown");
        assert_eq!(detect(b"{\"a\":1}", "a.json", b""), "application/json");
        assert_eq!(detect(b"hello", "hello.txt", b""), "text/plain");
        assert_eq!(detect(b"hello", "noext", b"text/plain"), "text/plain", "a known declared type is kept");
        assert_eq!(detect(b"hello", "noext", b"application/x-made-up"), OCTET_STREAM);
    }

    #[test]
    fn containers_are_refined_by_the_name() {
        let zip = b"PK\x03\x04\x14\0\0\0";
        assert_eq!(detect(zip, "report.docx", b""), "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
        assert_eq!(detect(zip, "sheet.XLSX", b""), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
        assert_eq!(detect(zip, "deck.pptx", b""), "application/vnd.openxmlformats-officedocument.presentationml.presentation");
        assert_eq!(detect(zip, "a.zip", b""), "application/zip");
        assert_eq!(detect(zip, "a.csv", b""), "application/zip", "bytes beat a name that is not a refinement");
        let mp4 = b"\0\0\0\x20ftypisom\0\0\x02\0";
        assert_eq!(detect(mp4, "clip.mp4", b""), "video/mp4");
        assert_eq!(detect(mp4, "song.m4a", b""), "audio/mp4");
        assert_eq!(detect(b"\0\0\0\x14ftypqt  ", "x", b""), "video/quicktime");
        assert_eq!(detect(b"\0\0\0\x18ftypheic", "IMG_1.HEIC", b""), "image/heic");
    }

    #[test]
    fn media_by_signature() {
        assert_eq!(detect(b"ID3\x04\0", "x", b""), "audio/mpeg");
        assert_eq!(detect(&[0xff, 0xfb, 0x90, 0x44], "x", b""), "audio/mpeg");
        assert_eq!(detect(b"OggS\0\x02", "x", b""), "audio/ogg");
        assert_eq!(detect(b"RIFF\x24\0\0\0WAVEfmt ", "x", b""), "audio/x-wav");
        assert_eq!(detect(b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm", "x", b""), "video/webm");
        assert_eq!(detect(b"%PDF-1.7", "x", b""), "application/pdf");
        assert_eq!(detect(b"\xff\xd8\xff\xe0", "a.png", b"image/png"), "image/jpeg");
    }

    #[test]
    fn embeddable_types_need_their_bytes() {
        assert_eq!(detect(b"<b>hi</b>", "x.png", b"image/png"), OCTET_STREAM);
        assert_eq!(detect(b"not a pdf", "x.pdf", b"application/pdf"), OCTET_STREAM);
        assert_eq!(detect(b"not heic", "x.heic", b""), OCTET_STREAM);
    }

    #[test]
    fn active_types_are_recognised_by_bytes_or_name() {
        assert_eq!(detect(b"\xef\xbb\xbf  <!DOCTYPE html><p>", "notes.csv", b"text/csv"), "text/html");
        assert_eq!(detect(b"<svg xmlns='http://www.w3.org/2000/svg'/>", "a.txt", b""), "image/svg+xml");
        assert_eq!(detect(b"<?xml version='1.0'?>\n<svg/>", "a", b""), "image/svg+xml");
        assert_eq!(detect(b"<?xml version='1.0'?><feed/>", "a", b""), "application/xml");
        assert_eq!(detect(b"alert(1)", "x.js", b""), "text/javascript");
        assert_eq!(detect(b"plain", "page.htm", b""), "text/html");
        assert_eq!(detect(b"", "", b""), OCTET_STREAM);
    }
}
