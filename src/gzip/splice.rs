//! Spliced gzip: a body built from cached parts is compressed by stitching together deflate
//! pieces made once, instead of deflating the whole body on every response (design §6, "never
//! compress the same bytes twice").
//!
//! A `Part` is a run of bytes that recurs across responses (a rendered message, kept by the
//! fragment cache). Whoever appends a part's bytes to a body calls `mark` with the offset; when
//! the response is compressed, `splice` walks the marks in order and emits for each stretch of
//! the body either
//! - a part's piece: raw deflate of its bytes, ended by a sync flush (an empty stored block,
//!   so the piece ends byte aligned and not final). A piece is made with the part that came
//!   right before it as preset dictionary (so the markup two messages share compresses to
//!   back-references), and is only used again right after that same predecessor (parts have
//!   serial numbers; an edited message is a new part). A part keeps a few such pieces, one
//!   per predecessor seen; a part after glue is compressed with a fresh window.
//! - glue: the bytes between parts (layout, page head and tail), compressed with a fresh window
//!   and kept, with its CRC-32, in a small per-loop cache found by a fingerprint of its ends
//!   (bytes compared in full), since the same user loading the same room gets the same glue.
//!
//! then a final empty block, the CRC-32 combined from the pieces' CRCs (`crc32::combine`), and
//! the length. Marks are verified against the body bytes before use, so a mark that does not
//! describe the body (the caller rendered into a scratch buffer and copied it elsewhere) only
//! costs its comparison: that stretch is compressed as glue.
//!
//! Everything here is per thread (each loop compresses its own responses): `Part` is an `Rc`.

use super::crc32::{combine, combine_shifted, crc32, shift};
use super::{Gzip, HEADER, LEVEL, PIECE_LEVEL};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

/// How many pieces (one per predecessor) a part keeps: a message is usually seen after the
/// same message on the room page, and first on a page of older messages.
const PIECES_PER_PART: usize = 2;

/// Per-loop budget of the glue cache (glue bytes plus pieces). When exceeded it is emptied.
pub const GLUE_CACHE_BYTES: usize = 256 << 10;

/// Glue longer than this is compressed on each response at `LEVEL` and not kept.
const GLUE_MAX: usize = GLUE_CACHE_BYTES / 4;

/// A run of bytes that recurs across response bodies, with its CRC-32 and the deflate pieces
/// made for it so far.
pub struct Part {
    bytes: Box<[u8]>,
    /// The CRC-32 of `bytes` and `crc32::shift(bytes.len())` (combining this part's CRC is then
    /// one multiplication), made by the first gzip response that uses the part: a posted
    /// message's part is made for the room page's fragment cache, and many are never sent
    /// compressed.
    crc: Cell<Option<(u32, u32)>>,
    /// Unique among this thread's parts; names the predecessor a piece was compressed after.
    serial: u64,
    /// (predecessor's serial or 0 for a fresh window, piece); oldest first.
    pieces: RefCell<Vec<(u64, Box<[u8]>)>>,
}

impl Part {
    /// A part holding `bytes`. Its CRC and pieces are made when first needed.
    pub fn new(bytes: Box<[u8]>) -> Rc<Part> {
        let serial = SERIAL.with(|s| {
            let n = s.get() + 1;
            s.set(n);
            n
        });
        Rc::new(Part { crc: Cell::new(None), bytes, serial, pieces: RefCell::new(Vec::new()) })
    }

    /// The CRC-32 of the part's bytes and its shift, computed once.
    fn crc(&self) -> (u32, u32) {
        match self.crc.get() {
            Some(c) => c,
            None => {
                let c = (crc32(0, &self.bytes), shift(self.bytes.len() as u64));
                self.crc.set(Some(c));
                c
            }
        }
    }

    /// The part's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Appends the piece that follows the part `after` (None: after glue or at the start),
    /// making and keeping it first when it is not kept yet.
    fn append_piece(&self, after: Option<&Part>, enc: &mut Gzip, out: &mut Vec<u8>) {
        let key = after.map_or(0, |p| p.serial);
        let mut pieces = self.pieces.borrow_mut();
        if let Some((_, piece)) = pieces.iter().find(|(k, _)| *k == key) {
            out.extend_from_slice(piece);
            return;
        }
        let mut piece = Vec::with_capacity(self.bytes.len() / 4 + 16);
        enc.piece(PIECE_LEVEL, after.map_or(&[][..], |p| &p.bytes[..]), &self.bytes, &mut piece);
        out.extend_from_slice(&piece);
        if pieces.len() >= PIECES_PER_PART {
            pieces.remove(0);
        }
        pieces.push((key, piece.into_boxed_slice()));
    }
}

thread_local! {
    static SERIAL: Cell<u64> = const { Cell::new(0) };
    /// The current response's marks, in the order they were made.
    static MARKS: RefCell<Vec<(usize, Rc<Part>)>> = const { RefCell::new(Vec::new()) };
    static GLUE: RefCell<Glue> = RefCell::new(Glue { map: HashMap::new(), bytes: 0 });
}

/// Forgets the marks of the previous response; call before rendering a new one.
pub fn begin_response() {
    MARKS.with(|m| m.borrow_mut().clear());
}

/// Notes that `part`'s bytes were appended to the body being rendered at `offset`.
pub fn mark(offset: usize, part: &Rc<Part>) {
    MARKS.with(|m| m.borrow_mut().push((offset, Rc::clone(part))));
}

/// How many marks the current response has. Note it before rendering parts into a scratch
/// buffer, and give it to `moved` when that buffer is copied into the body.
pub fn marks() -> usize {
    MARKS.with(|m| m.borrow().len())
}

/// The marks made since `since` (a `marks()` value) were made in a scratch buffer that has now
/// been appended to the body at offset `at`: their offsets move there.
pub fn moved(since: usize, at: usize) {
    MARKS.with(|m| {
        for (offset, _) in m.borrow_mut().iter_mut().skip(since) {
            *offset = offset.saturating_add(at);
        }
    });
}

/// Runs `f` on the current response's marks, then forgets them.
pub(super) fn with_marks<R>(f: impl FnOnce(&[(usize, Rc<Part>)]) -> R) -> R {
    MARKS.with(|m| {
        let r = f(&m.borrow());
        m.borrow_mut().clear();
        r
    })
}

/// Appends the gzip member of `body` to `out`, splicing the pieces of the parts `marks` name.
/// Returns false, with `out` unchanged, when no mark matches the body (compress it whole).
pub(super) fn splice(body: &[u8], marks: &[(usize, Rc<Part>)], enc: &mut Gzip, out: &mut Vec<u8>) -> bool {
    let start = out.len();
    out.reserve(body.len() / 5 + 64);
    out.extend_from_slice(&HEADER);
    let mut crc = 0u32;
    let mut cursor = 0usize;
    let mut prev: Option<&Part> = None;
    let mut spliced = 0usize;
    for (offset, part) in marks {
        let end = offset.saturating_add(part.bytes.len());
        if *offset < cursor || body.get(*offset..end) != Some(&part.bytes[..]) {
            continue;
        }
        if *offset > cursor {
            crc = glue(body.get(cursor..*offset).unwrap_or_default(), crc, enc, out);
            prev = None;
        }
        part.append_piece(prev, enc, out);
        let (part_crc, part_shift) = part.crc();
        crc = combine_shifted(crc, part_crc, part_shift);
        cursor = end;
        prev = Some(part);
        spliced += 1;
    }
    if spliced == 0 {
        out.truncate(start);
        return false;
    }
    if cursor < body.len() {
        crc = glue(body.get(cursor..).unwrap_or_default(), crc, enc, out);
    }
    // The final block: fixed Huffman, BFINAL set, nothing but end-of-block.
    out.extend_from_slice(&[0x03, 0x00]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    true
}

/// Appends the piece of the glue `g` (from the glue cache when it is there) and returns the
/// running CRC `crc` extended by `g`. A cached glue is found by a fingerprint of its ends and
/// confirmed by comparing all its bytes, so a hit costs no CRC pass.
fn glue(g: &[u8], crc: u32, enc: &mut Gzip, out: &mut Vec<u8>) -> u32 {
    if g.len() > GLUE_MAX {
        enc.piece(LEVEL, &[], g, out);
        return combine(crc, crc32(0, g), g.len() as u64);
    }
    let key = fingerprint(g);
    GLUE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(e) = cache.map.get(&key) {
            if *e.bytes == *g {
                out.extend_from_slice(&e.piece);
                return combine_shifted(crc, e.crc, e.shift);
            }
        }
        let mut piece = Vec::with_capacity(g.len() / 4 + 16);
        enc.piece(PIECE_LEVEL, &[], g, &mut piece);
        out.extend_from_slice(&piece);
        let e = GlueEntry { bytes: g.into(), piece: piece.into_boxed_slice(), crc: crc32(0, g), shift: shift(g.len() as u64) };
        let whole = combine_shifted(crc, e.crc, e.shift);
        cache.insert(key, e);
        whole
    })
}

/// FNV-1a over the length and up to 64 bytes at each end: enough to tell apart the glues one
/// loop sees (a collision only costs a miss, as hits are confirmed byte for byte).
fn fingerprint(g: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ g.len() as u64;
    let head = g.get(..64).unwrap_or(g);
    let tail = g.get(g.len().saturating_sub(64)..).unwrap_or(g);
    for &b in head.iter().chain(tail) {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The glue cache of one loop.
struct Glue {
    map: HashMap<u64, GlueEntry>,
    bytes: usize,
}

struct GlueEntry {
    bytes: Box<[u8]>,
    piece: Box<[u8]>,
    crc: u32,
    shift: u32,
}

impl Glue {
    fn insert(&mut self, key: u64, e: GlueEntry) {
        let size = e.bytes.len() + e.piece.len() + 64;
        if self.bytes + size > GLUE_CACHE_BYTES {
            self.map.clear();
            self.bytes = 0;
        }
        if let Some(old) = self.map.insert(key, e) {
            self.bytes = self.bytes.saturating_sub(old.bytes.len() + old.piece.len() + 64);
        }
        self.bytes += size;
    }
}

#[cfg(test)]
mod tests {
    use crate::gzip::crc32::tests::noise;
    use super::*;
    use crate::http::Response;
    use miniz_oxide::inflate::stream::{inflate, InflateState};
    use miniz_oxide::{DataFormat, MZFlush, MZStatus};

    /// Decodes one gzip member strictly (as the benchmark's validator does): the deflate
    /// stream must end exactly 8 bytes before the end, and CRC-32 and length must match.
    fn gunzip(wire: &[u8]) -> Vec<u8> {
        assert_eq!(&wire[..10], &HEADER);
        let mut state = InflateState::new_boxed(DataFormat::Raw);
        let mut out = Vec::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut pos = 10;
        loop {
            let r = inflate(&mut state, &wire[pos..], &mut buf, MZFlush::None);
            pos += r.bytes_consumed;
            out.extend_from_slice(&buf[..r.bytes_written]);
            match r.status {
                Ok(MZStatus::StreamEnd) => break,
                Ok(_) => assert!(r.bytes_consumed + r.bytes_written > 0, "truncated stream"),
                Err(e) => panic!("corrupt deflate stream: {e:?}"),
            }
        }
        assert_eq!(wire.len(), pos + 8, "trailing bytes after the deflate stream");
        assert_eq!(&wire[pos..pos + 4], &crc32(0, &out).to_le_bytes(), "CRC-32");
        assert_eq!(&wire[pos + 4..], &(out.len() as u32).to_le_bytes(), "ISIZE");
        out
    }

    /// A message-like partial (about 1.6 KB, like the real one): shared markup around a
    /// varying body.
    fn message(i: usize) -> Vec<u8> {
        let words: String = noise(300, i as u32 + 1).iter().map(|b| if b % 6 == 0 { ' ' } else { (b'a' + b % 26) as char }).collect();
        format!(
            "<div id=\"message_{i}\" class=\"message \" data-controller=\"reply\" data-user-id=\"{u}\" data-message-id=\"{i}\" \
             data-message-timestamp=\"17{i:08}\" data-messages-target=\"message\" data-search-results-target=\"message\" \
             data-refresh-room-target=\"message\" data-reply-composer-outlet=\"#composer\">\n<h2 class=\"message__day-separator\">\
             <time datetime=\"2026-03-02T16:{m:02}:00Z\" data-local-time-target=\"date\"></time></h2>\n<figure class=\"avatar message__avatar\">\
             <img src=\"/users/{u}/avatar?v=20260302160000\" alt=\"\" title=\"Person {u}\"></figure>\n<turbo-frame id=\"edit_message_{i}\">\
             <div class=\"message__body\"><div class=\"message__body-content\">\n<div class=\"message__meta\"><h3 class=\"message__heading\">\
             <span class=\"message__author\" title=\"Person {u}\"><strong data-reply-target=\"author\">Person {u}</strong></span> \
             <a class=\"message__permalink\" href=\"/rooms/4/@{i}\" target=\"_top\"><time class=\"message__timestamp\" \
             datetime=\"2026-03-02T16:{m:02}:00Z\" data-local-time-target=\"time\"></time></a></h3>\n<div class=\"message__actions\" \
             data-controller=\"soft-keyboard\"><details class=\"position-relative\" data-controller=\"popup message-actions\" \
             data-action=\"toggle->message-actions#fill keydown.esc->popup#close toggle->popup#toggle click@document->popup#closeOnClickOutside\">\
             <summary class=\"btn message__action-btn message__options-btn\"><span class=\"icon icon--ellipsis\"></span></summary></details></div></div>\n\
             <div id=\"presentation_message_{i}\" class=\"message__presentation\" dir=\"auto\"><div class=\"trix-content\"><div>{words}</div></div></div>\n\
             <turbo-frame id=\"boosting_message_{i}\"></turbo-frame>\n</div></div></turbo-frame>\n</div>",
            u = i % 7,
            m = i % 60,
        )
        .into_bytes()
    }

    /// Renders glue + parts + glue into a response body the way the message renderer does
    /// (mark, then append), compresses it through `finish`, and returns (body, wire).
    fn page(head: &[u8], parts: &[Rc<Part>], tail: &[u8], enc: &mut Gzip) -> (Vec<u8>, Vec<u8>) {
        begin_response();
        let mut res = Response::new();
        res.header("Content-Type", b"text/html; charset=utf-8");
        res.body().extend_from_slice(head);
        for p in parts {
            mark(res.body_bytes().len(), p);
            res.body().extend_from_slice(p.bytes());
        }
        res.body().extend_from_slice(tail);
        let body = res.body_bytes().to_vec();
        let mut scratch = Vec::new();
        assert!(super::super::finish(&mut res, true, enc, &mut scratch));
        (body, res.body_bytes().to_vec())
    }

    #[test]
    fn spliced_pages_decode_to_the_body() {
        let mut enc = Gzip::new(LEVEL);
        let parts: Vec<Rc<Part>> = (0..60).map(|i| Part::new(message(i).into_boxed_slice())).collect();
        let head = b"<!DOCTYPE html><html><head><title>Room</title></head><body>".repeat(20);
        let tail = b"</body></html>\n";
        let (body, first) = page(&head, &parts[10..50], tail, &mut enc);
        assert_eq!(gunzip(&first), body);
        // Again: every piece now comes from the caches, and the bytes are the same.
        let (_, again) = page(&head, &parts[10..50], tail, &mut enc);
        assert_eq!(again, first, "byte-stable");
        // An older page: the first part now follows glue, the rest their usual predecessors.
        let (older, wire) = page(b"", &parts[0..40], b"", &mut enc);
        assert_eq!(gunzip(&wire), older);
        // Parts out of their usual order (a part deleted between two others) and repeated.
        let shuffled = [&parts[3], &parts[5], &parts[4], &parts[4], &parts[59]].map(Rc::clone);
        let (body, wire) = page(b"x", &shuffled, b"y", &mut enc);
        assert_eq!(gunzip(&wire), body);
        // Random bytes in every role, including a part right at the start and end.
        let random: Vec<Rc<Part>> = (0..5).map(|i| Part::new(noise(1000 + i * 977, 40 + i as u32).into_boxed_slice())).collect();
        let (body, wire) = page(b"", &random, b"", &mut enc);
        assert_eq!(gunzip(&wire), body);
        let (body, wire) = page(&noise(70_000, 3), &random[1..3], &noise(300, 4), &mut enc);
        assert_eq!(gunzip(&wire), body);
    }

    #[test]
    fn parts_longer_than_the_window_use_only_its_last_32_kib_as_dictionary() {
        let mut enc = Gzip::new(LEVEL);
        let big = |seed: usize| -> Vec<u8> { (0..30).flat_map(|k| message(seed * 100 + k)).collect() };
        let parts: Vec<Rc<Part>> = (0..3).map(|i| Part::new(big(i).into_boxed_slice())).collect();
        assert!(parts[0].bytes().len() > 40_000);
        let (body, wire) = page(b"<main>", &parts, b"</main>", &mut enc);
        assert_eq!(gunzip(&wire), body);
        assert!(wire.len() < body.len() / 3);
    }

    #[test]
    fn marks_that_do_not_describe_the_body_are_compressed_as_glue() {
        let mut enc = Gzip::new(LEVEL);
        let a = Part::new(message(1).into_boxed_slice());
        let b = Part::new(message(2).into_boxed_slice());
        begin_response();
        let mut res = Response::new();
        res.header("Content-Type", b"text/html");
        // Rendered into a scratch buffer, then copied after a header: the offsets are wrong.
        let mut scratch = Vec::new();
        mark(scratch.len(), &a);
        scratch.extend_from_slice(a.bytes());
        mark(scratch.len(), &b);
        scratch.extend_from_slice(b.bytes());
        res.body().extend_from_slice(b"<header>moved along</header>");
        res.body().extend_from_slice(&scratch);
        // and a mark past the end of the body
        mark(1 << 20, &a);
        let body = res.body_bytes().to_vec();
        let mut out = Vec::new();
        assert!(super::super::finish(&mut res, true, &mut enc, &mut out));
        assert_eq!(gunzip(res.body_bytes()), body);
        // The marks were used up: the next response starts clean.
        MARKS.with(|m| assert!(m.borrow().is_empty()));
    }

    #[test]
    fn marks_made_in_a_scratch_buffer_move_with_it() {
        let mut enc = Gzip::new(LEVEL);
        let parts: Vec<Rc<Part>> = (0..5).map(|i| Part::new(message(i).into_boxed_slice())).collect();
        begin_response();
        let since = marks();
        let mut scratch = Vec::new();
        for p in &parts {
            mark(scratch.len(), p);
            scratch.extend_from_slice(p.bytes());
        }
        let mut res = Response::new();
        res.header("Content-Type", b"text/html");
        res.body().extend_from_slice(b"<header>search results</header>");
        moved(since, res.body_bytes().len());
        res.body().extend_from_slice(&scratch);
        let body = res.body_bytes().to_vec();
        let whole = {
            let mut w = Vec::new();
            enc.encode(&body, &mut w);
            w
        };
        let mut out = Vec::new();
        assert!(super::super::finish(&mut res, true, &mut enc, &mut out));
        assert_eq!(gunzip(res.body_bytes()), body);
        assert_ne!(res.body_bytes(), &whole[..], "spliced");
    }

    #[test]
    fn an_edited_part_is_a_new_part() {
        let mut enc = Gzip::new(LEVEL);
        let a = Part::new(message(1).into_boxed_slice());
        let b = Part::new(message(2).into_boxed_slice());
        let (body, wire) = page(b"<h1>", &[Rc::clone(&a), Rc::clone(&b)], b"</h1>", &mut enc);
        assert_eq!(gunzip(&wire), body);
        // `a` edited: a new part with new bytes; `b`'s piece after the old `a` must not be used.
        let edited = Part::new(b"<div>edited, and much shorter</div>".to_vec().into_boxed_slice());
        assert_ne!(edited.serial, a.serial);
        let (body, wire) = page(b"<h1>", &[edited, Rc::clone(&b)], b"</h1>", &mut enc);
        assert_eq!(gunzip(&wire), body);
        assert!(b.pieces.borrow().len() <= PIECES_PER_PART);
    }

    #[test]
    fn spliced_size_stays_near_whole_page_compression() {
        let mut enc = Gzip::new(LEVEL);
        let parts: Vec<Rc<Part>> = (0..40).map(|i| Part::new(message(i).into_boxed_slice())).collect();
        let head = b"<!DOCTYPE html><html><body>";
        let (body, wire) = page(head, &parts, b"</body></html>", &mut enc);
        let mut whole = Vec::new();
        enc.encode(&body, &mut whole);
        assert!(wire.len() * 2 <= whole.len() * 3, "spliced {} vs whole {}", wire.len(), whole.len());
    }

    #[test]
    fn glue_cache_is_bounded() {
        let mut enc = Gzip::new(LEVEL);
        let p = Part::new(message(1).into_boxed_slice());
        for i in 0..40 {
            let glue = noise(20_000, i);
            let (body, wire) = page(&glue, &[Rc::clone(&p)], b"", &mut enc);
            assert_eq!(gunzip(&wire), body);
            GLUE.with(|g| assert!(g.borrow().bytes <= GLUE_CACHE_BYTES));
        }
    }
}
