//! Randomised testing of the Action Cable command JSON (`cable::protocol`), with oracles:
//! - generated commands (keys in any order, whitespace anywhere, unknown keys holding any JSON
//!   value, strings escaped every way JSON allows, identifiers and data that are JSON inside a
//!   JSON string) are read back exactly: the verb, the identifier and data as sent (still
//!   escaped), the identifier's channel, room id and signed stream name, the data's action;
//! - mutated and truncated commands never panic, and what is accepted borrows from the text.

mod fuzz_support;
use campfire::app::cable::protocol::{action, command, params, Params, Verb};
use fuzz_support::{mutate, Budget, Rng};

const TEXTS: &[&str] = &["RoomChannel", "PresenceChannel", "a\"b", "back\\slash", "sl/ash", "tab\t", "nl\n", "é", "😄", "\u{1}", "\u{7f}", "\u{2028}", "", " ", "{}", "[1]"];
const INTERESTING: &[u8] = b"{}[]\":,\\u0123456789abcdef -+.eEtrufalsn\x00\xff";

/// Appends `raw` as the inside of a JSON string, each character escaped or not at random (a
/// quote, a backslash and control characters always are).
fn escape(r: &mut Rng, raw: &[u8], out: &mut Vec<u8>) {
    let text = std::str::from_utf8(raw).expect("generated text is UTF-8");
    for c in text.chars() {
        match c {
            '"' => out.extend_from_slice(if r.one_in(4) { b"\\u0022" } else { b"\\\"" }),
            '\\' => out.extend_from_slice(b"\\\\"),
            '/' if r.one_in(2) => out.extend_from_slice(b"\\/"),
            '\n' if r.one_in(2) => out.extend_from_slice(b"\\n"),
            '\t' if r.one_in(2) => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 || r.one_in(8) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.extend_from_slice(format!("\\u{:04x}", u).as_bytes());
                }
            }
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
}

fn ws(r: &mut Rng, out: &mut Vec<u8>) {
    if r.one_in(3) {
        out.extend_from_slice(r.pick(&[&b" "[..], b"\n", b"\t", b"\r\n  "]));
    }
}

fn string(r: &mut Rng, raw: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    escape(r, raw, out);
    out.push(b'"');
}

/// Any JSON value, nested a little.
fn value(r: &mut Rng, depth: usize, out: &mut Vec<u8>) {
    match r.below(if depth > 2 { 5 } else { 7 }) {
        0 => out.extend_from_slice(r.pick(&[&b"true"[..], b"false", b"null"])),
        1 => out.extend_from_slice(r.pick(&[&b"0"[..], b"-1", b"12.5e-3", b"1E9", b"123456789012345678901234567890"])),
        2 | 3 => {
            let t = r.pick(TEXTS).as_bytes();
            string(r, t, out)
        }
        4 => out.extend_from_slice(b"\"\""),
        5 => {
            out.push(b'[');
            for i in 0..r.below(4) {
                if i > 0 {
                    out.push(b',');
                }
                ws(r, out);
                value(r, depth + 1, out);
            }
            out.push(b']');
        }
        _ => {
            out.push(b'{');
            for i in 0..r.below(4) {
                if i > 0 {
                    out.push(b',');
                }
                string(r, format!("k{i}").as_bytes(), out);
                out.push(b':');
                value(r, depth + 1, out);
            }
            out.push(b'}');
        }
    }
}

/// A JSON object of `fields` (already encoded values) and a few unknown keys, in random order.
fn object(r: &mut Rng, mut fields: Vec<(String, Vec<u8>)>) -> Vec<u8> {
    for i in 0..r.below(3) {
        let mut v = Vec::new();
        value(r, 0, &mut v);
        fields.push((format!("extra{i}"), v));
    }
    for i in (1..fields.len()).rev() {
        fields.swap(i, r.below(i + 1));
    }
    let mut out = Vec::new();
    ws(r, &mut out);
    out.push(b'{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        ws(r, &mut out);
        string(r, k.as_bytes(), &mut out);
        ws(r, &mut out);
        out.push(b':');
        ws(r, &mut out);
        out.extend_from_slice(v);
        ws(r, &mut out);
    }
    out.push(b'}');
    ws(r, &mut out);
    out
}

/// An identifier: its JSON text and the parameters it must give.
fn identifier(r: &mut Rng) -> (Vec<u8>, Params) {
    let mut want = Params::default();
    let mut fields = Vec::new();
    if !r.one_in(10) {
        want.channel = r.pick(TEXTS).as_bytes().to_vec();
        let mut v = Vec::new();
        string(r, &want.channel, &mut v);
        fields.push(("channel".to_string(), v));
    }
    match r.below(5) {
        0 => {}
        1 => {
            let n = r.next() as i64 >> r.below(64);
            want.room_id = Some(n);
            fields.push(("room_id".into(), n.to_string().into_bytes()));
        }
        2 => {
            let n = r.below(1 << 20) as i64;
            want.room_id = Some(n);
            fields.push(("room_id".into(), format!("\"{n}\"").into_bytes()));
        }
        3 => fields.push(("room_id".into(), r.pick(&[&b"1.5"[..], b"\"x\"", b"null", b"[]", b"\"\""]).to_vec())),
        _ => fields.push(("room_id".into(), b"99999999999999999999".to_vec())),
    }
    if r.one_in(2) {
        let name = [r.pick(TEXTS).as_bytes(), b"--", r.pick(TEXTS).as_bytes()].concat();
        let mut v = Vec::new();
        string(r, &name, &mut v);
        want.signed_stream_name = Some(name);
        fields.push(("signed_stream_name".into(), v));
    }
    (object(r, fields), want)
}

#[test]
fn generated_commands_read_back_mutations_never_panic() {
    let mut r = Rng::new(0xCAB1E5EED);
    let mut budget = Budget::new("cable command", 60_000);
    let mut prev = Vec::new();
    let mut accepted_mutants = 0u64;
    while budget.more() {
        let verb = r.pick(&[(Verb::Subscribe, "subscribe"), (Verb::Unsubscribe, "unsubscribe"), (Verb::Message, "message")]);
        let (ident_json, want) = identifier(&mut r);
        let mut ident = Vec::new();
        escape(&mut r, &ident_json, &mut ident);
        let mut fields = vec![
            ("command".to_string(), [&b"\""[..], verb.1.as_bytes(), b"\""].concat()),
            ("identifier".to_string(), [&b"\""[..], &ident, b"\""].concat()),
        ];
        let act = r.one_in(2).then(|| r.pick(TEXTS).as_bytes().to_vec());
        let mut data = Vec::new();
        if verb.0 == Verb::Message || r.one_in(4) {
            let mut afields = Vec::new();
            if let Some(a) = &act {
                let mut v = Vec::new();
                string(&mut r, a, &mut v);
                afields.push(("action".to_string(), v));
            }
            let data_json = object(&mut r, afields);
            escape(&mut r, &data_json, &mut data);
            fields.push(("data".to_string(), [&b"\""[..], &data, b"\""].concat()));
        }
        let text = object(&mut r, fields);

        let c = command(&text).unwrap_or_else(|| panic!("refused {:?}", String::from_utf8_lossy(&text)));
        assert_eq!((c.verb, c.ident, c.data), (verb.0, &ident[..], &data[..]), "{:?}", String::from_utf8_lossy(&text));
        assert_eq!(params(c.ident).as_ref(), Some(&want), "{:?}", String::from_utf8_lossy(&ident_json));
        if !data.is_empty() {
            assert_eq!(action(c.data), act, "{:?}", String::from_utf8_lossy(&data));
        }

        for cut in [r.below(text.len()), text.len().saturating_sub(1)] {
            // Every proper prefix that ends inside the object is refused.
            if let Some(c) = command(&text[..cut]) {
                assert!(text[cut..].iter().all(u8::is_ascii_whitespace), "prefix {cut} accepted as {c:?}");
            }
        }
        let mut m = text.clone();
        mutate(&mut r, &mut m, INTERESTING, &prev);
        if let Some(c) = command(&m) {
            accepted_mutants += 1;
            for part in [c.ident, c.data] {
                let (base, end) = (m.as_ptr() as usize, m.as_ptr() as usize + m.len());
                let p = part.as_ptr() as usize;
                assert!(part.is_empty() || (p >= base && p + part.len() <= end), "slices borrow the text");
            }
            let _ = params(c.ident);
            let _ = action(c.data);
        }
        let mut mi = ident.clone();
        mutate(&mut r, &mut mi, INTERESTING, &prev);
        let _ = params(&mi);
        let _ = action(&mi);
        prev = text;
    }
    assert!(accepted_mutants > budget.done() / 20, "mutations must reach the accepting paths ({accepted_mutants})");
}
