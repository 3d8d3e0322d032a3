//! Randomized robustness: 120,000 generated inputs (markup fragments, entities, attachments,
//! Trix figures, control characters, multi-byte text, random bytes) through every public
//! function. Nothing may panic, and every rendered or sanitized output is checked for
//! forbidden elements, attributes and URLs; every 50th one also through the html5ever oracle,
//! which must also build exactly the tree we wrote from the sanitizer's output.

mod richtext_common;

use campfire::richtext::tokenizer::{Token, Tokenizer};
use campfire::richtext::{canonicalize_for_save, is_emoji_only, mentions, plain_text, play_sound, render_body, sanitize, to_trix_html};
use richtext_common::*;

mod fuzz_support;
use fuzz_support::{Budget, Rng};

const PIECES: &[&str] = &[
    "<", ">", "</", "/>", "=", "\"", "'", "`", "&", "&amp;", "&#x6A;", "&#106", "&Tab;", "&colon;",
    "&#", "&#x", ";", " ", "\n", "\t", "\0", "\u{1}", "\u{7f}", "é", "😄", "\u{200d}", "\u{fe0f}",
    "a", "b", "div", "p", "li", "ul", "ol", "pre", "br", "img", "svg", "math", "style", "script",
    "template", "noscript", "textarea", "title", "table", "td", "iframe", "select", "option",
    "href", "src", "onerror", "onclick", "style", "srcdoc", "xlink:href", "formaction",
    "javascript:", "data:text/html,", "vbscript:", "https://x.example/", "www.", "@", "x.com", ".",
    "<!--", "-->", "--!>", "<!", "<![CDATA[", "]]>", "<?", "<!doctype html>", "<plaintext>",
    "<a href=", "<img src=x onerror=", "<svg><style>", "</style>", "<math><mtext>", "</p>",
    "<action-text-attachment", "</action-text-attachment>", " sgid=\"", " content-type=\"",
    "application/vnd.campfire.mention", "application/vnd.actiontext.opengraph-embed", "text/html",
    "image/png", " url=\"", " content=\"", " caption=\"", "eyJfcmFpbHMiOnsiZGF0YSI6ImdpZDovL2NhbXBmaXJlL1VzZXIvMSJ9fQ==--x",
    "<figure data-trix-attachment='{\"sgid\":\"", "\",\"contentType\":\"", "\"}'>", "</figure>",
    "{", "}", "[", "]", ":", ",", "\\", "\\u", "/play ", "tada", "<blockquote>", "<figcaption>",
];

fn generate(rng: &mut Rng) -> String {
    let mut s = String::new();
    let n = rng.below(40);
    for _ in 0..n {
        if rng.below(10) == 0 {
            // Random bytes, made valid UTF-8 the lossy way (inputs are &str everywhere).
            let bytes: Vec<u8> = (0..rng.below(6)).map(|_| rng.next() as u8).collect();
            s.push_str(&String::from_utf8_lossy(&bytes));
        } else {
            s.push_str(PIECES[rng.below(PIECES.len())]);
        }
    }
    if rng.below(50) == 0 {
        // Occasionally very deep or very long.
        let tag = ["<div>", "<ul><li>", "<b>", "<blockquote>", "<svg>"][rng.below(5)];
        s = tag.repeat(rng.below(400)) + &s;
    }
    s
}

fn token_problems(out: &str) -> Vec<String> {
    let mut p = Vec::new();
    for t in Tokenizer::new(out) {
        match t {
            Token::Start { name, attrs, .. } => {
                if !element_allowed(&name) {
                    p.push(format!("element {name}"));
                }
                for a in attrs {
                    if !attribute_allowed(&a.name) {
                        p.push(format!("attribute {}", a.name));
                    }
                    if matches!(&*a.name, "href" | "src" | "url" | "cite") && dangerous_url(&a.value) {
                        p.push(format!("url {:?}", a.value));
                    }
                }
            }
            Token::Comment(_) | Token::Doctype(_) => p.push("comment".into()),
            _ => {}
        }
    }
    p
}

#[test]
fn random_inputs_never_panic_and_never_leak() {
    let mut rng = Rng::new(0x9E3779B97F4A7C15);
    let mut budget = Budget::new("richtext", 120_000);
    while budget.more() {
        let i = budget.done() - 1;
        let input = generate(&mut rng);
        let rendered = render_body(&input, &users).into_string();
        let hostile_rendered = render_body(&input, &hostile).into_string();
        let sanitized = sanitize(&input).into_string();
        let canonical = canonicalize_for_save(&input);
        let canonical_rendered = render_body(&canonical, &users).into_string();
        let text = plain_text(&input, &users);
        let _ = is_emoji_only(&text);
        let _ = play_sound(&text);
        let _ = mentions(&input);
        let _ = to_trix_html(&input, &hostile);
        for out in [&rendered, &hostile_rendered, &sanitized, &canonical_rendered] {
            let p = token_problems(out);
            assert!(p.is_empty(), "case {i}: {input:?}\n -> {out:?}\n {p:?}");
            if i.is_multiple_of(50) {
                let p = browser_view_problems(out);
                assert!(p.is_empty(), "case {i} (browser view): {input:?}\n -> {out:?}\n {p:?}");
            }
        }
        if i.is_multiple_of(50) {
            // The sanitizer's output is exactly the tree a browser builds from it.
            assert_eq!(browser_reserialized(&sanitized), normalise_ours(&sanitized), "case {i}: {input:?}");
        }
    }
}
