//! Randomised testing of the multipart/form-data reader (`app::params`), with oracles:
//! - a generated body (random boundary of every allowed character, fields and files with
//!   bytes that come close to the delimiter, quoted names holding `;`, headers in any case,
//!   a preamble and an epilogue) reads back exactly the fields and files it was made from;
//! - every prefix of it (truncation at every offset) is refused, until the closing delimiter;
//! - mutated bodies never panic, and whatever is accepted keeps the reader's invariants: file
//!   data lies inside the body and no value or file holds the delimiter line;
//! - `multipart_boundary` finds the boundary in Content-Types spelt every way.

mod fuzz_support;
use campfire::app::params::{multipart_boundary, Params};
use fuzz_support::{mutate, Budget, Rng};

/// Characters RFC 2046 allows in a boundary (space only inside, and only quoted).
const BCHARS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'()+_,-./:=?";
const NAMES: &[&str] = &["message[body]", "message[attachment]", "user[name]", "user_ids[]", "a", "x;y", "caf\u{e9}", "_method", "%22q%22", "a b"];
const INTERESTING: &[u8] = b"\r\n-\";=:\x00\xff \t";

struct Part {
    name: String,
    /// Some: a file part with this file name.
    filename: Option<Vec<u8>>,
    content_type: Option<Vec<u8>>,
    data: Vec<u8>,
}

struct Body {
    boundary: Vec<u8>,
    bytes: Vec<u8>,
    parts: Vec<Part>,
    /// Length up to and including the closing delimiter's `--`.
    closed_at: usize,
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn boundary(r: &mut Rng) -> Vec<u8> {
    let len = 1 + r.below(70);
    let mut b: Vec<u8> = (0..len).map(|_| r.pick(BCHARS)).collect();
    if len > 2 && r.one_in(8) {
        b[1 + r.below(len - 2)] = b' ';
    }
    b
}

/// Bytes for a part: noise, text, and pieces of the delimiter that must not end the part.
fn data(r: &mut Rng, boundary: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for _ in 0..r.below(8) {
        match r.below(6) {
            0 => v.extend(r.some_bytes(64)),
            1 => v.extend_from_slice(b"\r\n"),
            2 => v.extend_from_slice(b"--"),
            3 => v.extend_from_slice(&boundary[..r.below(boundary.len() + 1)]),
            4 => v.extend_from_slice("héllo wörld ".as_bytes()),
            _ => v.extend_from_slice(b"\r\n\r\n"),
        }
    }
    v
}

fn generate(r: &mut Rng) -> Body {
    let boundary = boundary(r);
    let delim: Vec<u8> = [&b"\r\n--"[..], &boundary].concat();
    let mut bytes = Vec::new();
    if r.one_in(4) {
        // A preamble, which readers ignore (without the delimiter in it).
        bytes.extend_from_slice(b"This is a preamble.\r\n");
    }
    let mut parts = Vec::new();
    for _ in 0..r.below(6) {
        let name = r.pick(NAMES).to_string();
        let filename = r.one_in(2).then(|| (r.pick(&[&b"a.png"[..], b"r\xc3\xa9sum\xc3\xa9.pdf", b"x;y.txt", b"", b"a b", b"..\\..\\etc"])).to_vec());
        let content_type = r.one_in(2).then(|| (r.pick(&[&b"image/png"[..], b"text/plain; charset=utf-8", b"application/octet-stream"])).to_vec());
        let mut d = data(r, &boundary);
        // A part ends at the first delimiter line: keep it out of the data, also where the
        // data's end and the delimiter we write after it would make one early.
        while contains(&[&d[..], &delim[..delim.len() - 1]].concat(), &delim) {
            d.pop();
        }
        parts.push(Part { name, filename, content_type, data: d });
    }
    for p in &parts {
        bytes.extend_from_slice(b"--");
        bytes.extend_from_slice(&boundary);
        bytes.extend_from_slice(b"\r\n");
        let disposition = r.pick(&["Content-Disposition", "content-disposition", "CONTENT-DISPOSITION"]);
        bytes.extend_from_slice(format!("{disposition}:{}form-data; name=\"{}\"", r.pick(&[" ", "", "  "]), p.name).as_bytes());
        if let Some(f) = &p.filename {
            bytes.extend_from_slice(b"; filename=\"");
            bytes.extend_from_slice(f);
            bytes.push(b'"');
        }
        bytes.extend_from_slice(b"\r\n");
        if let Some(ct) = &p.content_type {
            bytes.extend_from_slice(b"Content-Type: ");
            bytes.extend_from_slice(ct);
            bytes.extend_from_slice(b"\r\n");
        }
        if r.one_in(4) {
            bytes.extend_from_slice(b"X-Extra: ignored\r\n");
        }
        bytes.extend_from_slice(b"\r\n");
        bytes.extend_from_slice(&p.data);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"--");
    bytes.extend_from_slice(&boundary);
    bytes.extend_from_slice(b"--");
    let closed_at = bytes.len();
    if r.one_in(2) {
        bytes.extend_from_slice(b"\r\n");
    }
    if r.one_in(4) {
        bytes.extend_from_slice(b"epilogue, ignored");
    }
    Body { boundary, bytes, parts, closed_at }
}

/// The reader's invariants on anything it accepted.
fn check_accepted(p: &Params, body: &[u8], boundary: &[u8], names: &[&str]) {
    let delim: Vec<u8> = [&b"\r\n--"[..], boundary].concat();
    for name in names {
        for v in p.all(name) {
            assert!(!contains(v, &delim), "a field value holds the delimiter");
        }
        if let Some(f) = p.file(name, body) {
            assert!(f.range.end <= body.len() && f.range.start <= f.range.end);
            assert_eq!(f.data, &body[f.range.clone()]);
            assert!(!contains(f.data, &delim), "file data holds the delimiter");
            assert!(!f.filename.is_empty(), "an empty file name is no file");
        }
    }
}

#[test]
fn generated_bodies_read_back_truncations_are_refused_mutations_hold() {
    let mut r = Rng::new(0x5EED0FF0A4D47A);
    let mut budget = Budget::new("multipart", 300).share(90);
    let mut prev = Vec::new();
    let mut accepted_mutants = 0u64;
    while budget.more() {
        let b = generate(&mut r);
        let mut p = Params::default();
        p.add_multipart(&b.bytes, &b.boundary).unwrap_or_else(|_| panic!("refused {:?}", String::from_utf8_lossy(&b.bytes)));
        for name in NAMES {
            let fields: Vec<&[u8]> = b.parts.iter().filter(|q| q.name == *name && q.filename.is_none()).map(|q| &q.data[..]).collect();
            assert_eq!(p.all(name).collect::<Vec<_>>(), fields, "fields {name} of {:?}", String::from_utf8_lossy(&b.bytes));
            let file = b.parts.iter().rev().find(|q| q.name == *name && q.filename.as_ref().is_some_and(|f| !f.is_empty()));
            match (p.file(name, &b.bytes), file) {
                (None, None) => {}
                (Some(got), Some(want)) => {
                    assert_eq!(got.filename, &want.filename.as_ref().unwrap()[..]);
                    assert_eq!(got.content_type, want.content_type.as_deref().unwrap_or(b""));
                    assert_eq!(got.data, &want.data[..]);
                }
                (got, want) => panic!("file {name}: got {} want {}", got.is_some(), want.is_some()),
            }
        }
        check_accepted(&p, &b.bytes, &b.boundary, NAMES);

        // Truncation at every offset: refused until the closing delimiter is complete, then
        // the same parts.
        for cut in 0..b.bytes.len() {
            let mut q = Params::default();
            let ok = q.add_multipart(&b.bytes[..cut], &b.boundary).is_ok();
            assert_eq!(ok, cut >= b.closed_at, "cut at {cut} of {}", b.bytes.len());
        }

        // Mutations: never a panic; whatever is accepted keeps the invariants.
        for _ in 0..4 {
            let mut m = b.bytes.clone();
            mutate(&mut r, &mut m, INTERESTING, &prev);
            let mut q = Params::default();
            if q.add_multipart(&m, &b.boundary).is_ok() {
                accepted_mutants += 1;
                check_accepted(&q, &m, &b.boundary, NAMES);
            }
            // The boundary is attacker input too.
            let mut bad = b.boundary.clone();
            mutate(&mut r, &mut bad, INTERESTING, b"");
            if !bad.is_empty() {
                let mut q = Params::default();
                if q.add_multipart(&m, &bad).is_ok() {
                    check_accepted(&q, &m, &bad, NAMES);
                }
            }
        }
        // Noise of every length.
        let noise = r.some_bytes(200);
        let _ = Params::default().add_multipart(&noise, &b.boundary);
        prev = b.bytes;
    }
    assert!(accepted_mutants > budget.done() / 10, "mutations must reach the accepting paths too ({accepted_mutants})");
}

#[test]
fn boundaries_are_found_in_content_types_spelt_every_way() {
    let mut r = Rng::new(0xB00DA21E5);
    let mut budget = Budget::new("multipart boundary", 20_000).share(10);
    while budget.more() {
        let b = boundary(&mut r);
        let quoted = b.contains(&b' ') || r.one_in(2);
        let value = if quoted { [&b"\""[..], &b, b"\""].concat() } else { b.clone() };
        let mut ct = r.pick(&[&b"multipart/form-data"[..], b"Multipart/Form-Data", b"MULTIPART/FORM-DATA"]).to_vec();
        if r.one_in(2) {
            ct.extend_from_slice(b"; charset=utf-8");
        }
        ct.extend_from_slice(r.pick(&[&b"; "[..], b";", b" ;  "]));
        ct.extend_from_slice(r.pick(&[&b"boundary="[..], b"Boundary=", b"BOUNDARY = "]));
        ct.extend_from_slice(&value);
        if r.one_in(3) {
            ct.extend_from_slice(b"; x=y");
        }
        assert_eq!(multipart_boundary(&ct), Some(&b[..]), "{:?}", String::from_utf8_lossy(&ct));
        let mut m = ct.clone();
        mutate(&mut r, &mut m, b";= \"-", b"multipart/mixed");
        if let Some(found) = multipart_boundary(&m) {
            assert!(!found.is_empty() && found.len() <= 70);
        }
    }
}
