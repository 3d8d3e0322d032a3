//! HTML character references: decoding `&amp;`, `&#106;`, `&#x6A;`, `&Tab;` ... as a browser would.
//!
//! The sanitizer decodes every text and attribute value before it looks at it and re-escapes on
//! output, so a reference we do not know is harmless: it leaves here as `&amp;name;` and the
//! browser reads the same literal text. The table therefore holds the references people type and
//! the ones used in URL-scheme games (`&colon;`, `&Tab;`, `&NewLine;`, `&lpar;` ...).

use std::borrow::Cow;

/// Named references (without `&` and `;`), sorted only for readability.
const NAMED: &[(&str, &str)] = &[
    ("AMP", "&"), ("GT", ">"), ("LT", "<"), ("QUOT", "\""), ("COPY", "\u{a9}"), ("REG", "\u{ae}"),
    ("Hat", "^"), ("NewLine", "\n"), ("Tab", "\t"), ("acute", "\u{b4}"), ("amp", "&"),
    ("apos", "'"), ("ast", "*"), ("bdquo", "\u{201e}"), ("bsol", "\\"), ("bull", "\u{2022}"),
    ("cent", "\u{a2}"), ("clubs", "\u{2663}"), ("colon", ":"), ("comma", ","), ("commat", "@"),
    ("copy", "\u{a9}"), ("darr", "\u{2193}"), ("deg", "\u{b0}"), ("diams", "\u{2666}"),
    ("divide", "\u{f7}"), ("dollar", "$"), ("emsp", "\u{2003}"), ("ensp", "\u{2002}"),
    ("equals", "="), ("euro", "\u{20ac}"), ("excl", "!"), ("frac12", "\u{bd}"),
    ("frac14", "\u{bc}"), ("frac34", "\u{be}"), ("grave", "`"), ("gt", ">"), ("harr", "\u{2194}"),
    ("hearts", "\u{2665}"), ("hellip", "\u{2026}"), ("hyphen", "\u{2010}"), ("iexcl", "\u{a1}"),
    ("iquest", "\u{bf}"), ("laquo", "\u{ab}"), ("larr", "\u{2190}"), ("lcub", "{"),
    ("ldquo", "\u{201c}"), ("lowbar", "_"), ("lpar", "("), ("lrm", "\u{200e}"), ("lsqb", "["),
    ("lsquo", "\u{2018}"), ("lt", "<"), ("mdash", "\u{2014}"), ("micro", "\u{b5}"),
    ("middot", "\u{b7}"), ("nbsp", "\u{a0}"), ("ndash", "\u{2013}"), ("num", "#"),
    ("para", "\u{b6}"), ("percnt", "%"), ("period", "."), ("plus", "+"), ("plusmn", "\u{b1}"),
    ("pound", "\u{a3}"), ("quest", "?"), ("quot", "\""), ("raquo", "\u{bb}"), ("rarr", "\u{2192}"),
    ("rcub", "}"), ("rdquo", "\u{201d}"), ("reg", "\u{ae}"), ("rlm", "\u{200f}"), ("rpar", ")"),
    ("rsqb", "]"), ("rsquo", "\u{2019}"), ("sbquo", "\u{201a}"), ("sect", "\u{a7}"),
    ("semi", ";"), ("shy", "\u{ad}"), ("sol", "/"), ("spades", "\u{2660}"), ("sup1", "\u{b9}"),
    ("sup2", "\u{b2}"), ("sup3", "\u{b3}"), ("thinsp", "\u{2009}"), ("times", "\u{d7}"),
    ("trade", "\u{2122}"), ("uarr", "\u{2191}"), ("verbar", "|"), ("vert", "|"),
    ("yen", "\u{a5}"), ("zwj", "\u{200d}"), ("zwnj", "\u{200c}"),
];

/// Legacy references browsers also accept without the trailing `;` (a subset of HTML5's list).
const LEGACY: &[&str] = &[
    "AMP", "COPY", "GT", "LT", "QUOT", "REG", "acute", "amp", "cent", "copy", "deg", "divide",
    "frac12", "frac14", "frac34", "gt", "iexcl", "iquest", "laquo", "lt", "micro", "middot", "nbsp",
    "para", "plusmn", "pound", "quot", "raquo", "reg", "sect", "shy", "sup1", "sup2", "sup3",
    "times", "yen",
];

/// Windows-1252 meanings browsers give to `&#128;`..`&#159;`.
const C1: [u32; 32] = [
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
];

fn named(name: &str) -> Option<&'static str> {
    NAMED.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// Decodes the character references in `s`. `in_attr` applies the attribute-value rule: a
/// legacy reference without `;` followed by an alphanumeric or `=` stays literal (`?a=1&copy=2`).
/// Borrows when there is nothing to decode.
pub fn decode(s: &str, in_attr: bool) -> Cow<'_, str> {
    let b = s.as_bytes();
    let Some(first) = b.iter().position(|&c| c == b'&') else { return Cow::Borrowed(s) };
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut i = first;
    while i < b.len() {
        if b[i] != b'&' {
            let next = b[i..].iter().position(|&c| c == b'&').map_or(b.len(), |p| i + p);
            out.push_str(&s[i..next]);
            i = next;
            continue;
        }
        match reference_at(s, i + 1, in_attr) {
            Some((len, ch)) => {
                match ch {
                    Decoded::Char(c) => out.push(c),
                    Decoded::Str(t) => out.push_str(t),
                }
                i += 1 + len;
            }
            None => {
                out.push('&');
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

enum Decoded {
    Char(char),
    Str(&'static str),
}

/// Parses the reference that starts after the `&` at byte `at`; returns the bytes consumed
/// (excluding the `&`) and the replacement.
fn reference_at(s: &str, at: usize, in_attr: bool) -> Option<(usize, Decoded)> {
    let b = s.as_bytes();
    let rest = b.get(at..)?;
    if rest.first() == Some(&b'#') {
        let (hex, start) = match rest.get(1) {
            Some(b'x') | Some(b'X') => (true, 2),
            _ => (false, 1),
        };
        let mut v: u32 = 0;
        let mut n = start;
        while let Some(&c) = rest.get(n) {
            let d = match c {
                b'0'..=b'9' => (c - b'0') as u32,
                b'a'..=b'f' if hex => (c - b'a' + 10) as u32,
                b'A'..=b'F' if hex => (c - b'A' + 10) as u32,
                _ => break,
            };
            v = v.saturating_mul(if hex { 16 } else { 10 }).saturating_add(d);
            n += 1;
        }
        if n == start {
            return None;
        }
        if rest.get(n) == Some(&b';') {
            n += 1;
        }
        let v = match v {
            0x80..=0x9F => C1[(v - 0x80) as usize],
            _ => v,
        };
        let c = if v == 0 { '\u{fffd}' } else { char::from_u32(v).unwrap_or('\u{fffd}') };
        return Some((n, Decoded::Char(c)));
    }
    let run = rest.iter().take(32).take_while(|c| c.is_ascii_alphanumeric()).count();
    if run == 0 {
        return None;
    }
    // `rest[..run]` is ASCII, so slicing the str at these offsets is on char boundaries.
    let name = s.get(at..at + run)?;
    if rest.get(run) == Some(&b';') {
        if let Some(v) = named(name) {
            return Some((run + 1, Decoded::Str(v)));
        }
    }
    // Longest legacy name that prefixes the run, accepted without `;`.
    let mut best: Option<&str> = None;
    for l in LEGACY {
        if name.starts_with(l) && best.is_none_or(|b| l.len() > b.len()) {
            best = Some(l);
        }
    }
    let l = best?;
    let after = rest.get(l.len()).copied();
    if in_attr && matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == b'=') {
        return None;
    }
    named(l).map(|v| (l.len(), Decoded::Str(v)))
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_numeric_named_and_legacy() {
        assert_eq!(decode("&#x6A;ava&#115;cript&colon;", false), "javascript:");
        assert_eq!(decode("java&Tab;script&NewLine;:", false), "java\tscript\n:");
        assert_eq!(decode("a &amp b &lt;c&gt;", false), "a & b <c>");
        assert_eq!(decode("&#0;&#xD800;&#x110000;&#128;", false), "\u{fffd}\u{fffd}\u{fffd}\u{20ac}");
        assert_eq!(decode("&unknown; & &#; &#x;", false), "&unknown; & &#; &#x;");
        assert_eq!(decode("?a=1&copy=2", true), "?a=1&copy=2");
        assert_eq!(decode("?a=1&copy=2", false), "?a=1\u{a9}=2");
        assert_eq!(decode("&#0000000000000000000106;&#99999999999999999999;", false), "j\u{fffd}");
        assert!(matches!(decode("plain", false), std::borrow::Cow::Borrowed(_)));
    }
}
