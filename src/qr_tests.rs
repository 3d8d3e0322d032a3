//! Tests of the QR encoder against symbols from segno, an independent encoder
//! (tests/data/qr/*.txt, written by tests/interop/qr_reference.py).

use super::*;

const TRANSFER: &[u8] = b"https://chat.example.com/session/transfers/eyJfcmFpbHMiOnsiZGF0YSI6MSwiZXhwIjoiMjAyNi0xMS0zMFQwMzoxMjowNS4wMDBaIiwicHVyIjoiVXNlclxudHJhbnNmZXJcbjE0NDAwcyJ9fQ==--0123456789abcdef0123456789abcdef01234567";

fn v20_input() -> Vec<u8> {
    let mut v: Vec<u8> = (0..=255u8).collect();
    v.extend_from_slice(&[b'x'; 100]);
    v
}

/// The reference symbols in `text`: (mask or None for segno's own choice, version, rows).
fn references(text: &str) -> Vec<(Option<u8>, usize, Vec<String>)> {
    let mut out: Vec<(Option<u8>, usize, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if line.starts_with(['0', '1']) && line.len() > 8 {
            out.last_mut().unwrap().2.push(line.to_owned());
        } else {
            let (mask, version) = line.split_once(' ').unwrap();
            out.push((mask.parse().ok(), version.parse().unwrap(), Vec::new()));
        }
    }
    out
}

fn rows(code: &Code) -> Vec<String> {
    (0..code.size())
        .map(|y| (0..code.size()).map(|x| if code.is_dark(x, y) { '1' } else { '0' }).collect())
        .collect()
}

fn check(data: &[u8], text: &str) {
    let refs = references(text);
    assert_eq!(refs.len(), 9);
    for (mask, version, expected) in refs {
        let code = encode_with_mask(data, mask).unwrap();
        assert_eq!(code.size(), 4 * version + 17, "mask {mask:?}");
        assert_eq!(rows(&code), expected, "mask {mask:?}");
    }
}

#[test]
fn matches_reference_for_a_short_url() {
    check(b"http://example.com", include_str!("../tests/data/qr/example.txt"));
}

#[test]
fn matches_reference_for_a_transfer_link() {
    check(TRANSFER, include_str!("../tests/data/qr/transfer.txt"));
}

#[test]
fn matches_reference_at_version_20_with_every_byte_value() {
    check(&v20_input(), include_str!("../tests/data/qr/v20.txt"));
}

#[test]
fn matches_reference_for_empty_input() {
    check(b"", include_str!("../tests/data/qr/empty.txt"));
}

#[test]
fn capacity_ends_at_version_20() {
    assert_eq!(encode(&[b'a'; 382]).map(|c| c.size()), Some(97));
    assert!(encode(&[b'a'; 383]).is_none());
    // Version boundaries of level H in byte mode: 7 bytes fit version 1, 8 need version 2.
    assert_eq!(encode(&[0; 7]).map(|c| c.size()), Some(21));
    assert_eq!(encode(&[0; 8]).map(|c| c.size()), Some(25));
}

#[test]
fn known_generator_polynomial() {
    // Degree 7 generator from ISO/IEC 18004 Annex A, as coefficients: α^0 α^87 α^229 α^146 α^149 α^238 α^102 α^21.
    let mut alpha = [0u8; 256];
    let mut a = 1u8;
    for e in alpha.iter_mut() {
        *e = a;
        a = gf_mul(a, 2);
    }
    let expected: Vec<u8> = [0, 87, 229, 146, 149, 238, 102, 21].iter().map(|&e| alpha[e]).collect();
    assert_eq!(rs_generator(7), expected);
}

#[test]
fn svg_draws_every_dark_module_once() {
    let code = encode(b"http://example.com").unwrap();
    let mut svg = Vec::new();
    code.svg(&mut svg);
    let svg = String::from_utf8(svg).unwrap();
    assert!(svg.starts_with("<?xml"));
    assert!(svg.contains("viewBox=\"0 0 37 37\""));
    assert!(svg.contains("<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>"));
    // Sum the run lengths in the path: they cover exactly the dark modules.
    let d = svg.split(" d=\"").nth(1).unwrap().split('"').next().unwrap();
    let covered: usize = d.split('h').skip(1).step_by(2).map(|s| s.split('v').next().unwrap().parse::<usize>().unwrap()).sum();
    let dark = (0..29).flat_map(|y| (0..29).map(move |x| (x, y))).filter(|&(x, y)| code.is_dark(x, y)).count();
    assert_eq!(covered, dark);
    assert!(svg.contains("M4 4h7v1h-7z"), "top-left finder row starts the path");
}
