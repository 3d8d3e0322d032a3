//! The XSS corpus (tests/data/xss/cases.html): every case goes through the message renderer
//! (with a hostile mention resolver too) and the generic sanitizer, and NOTHING executable may
//! survive — checked on our own tokens and on what html5ever (a browser-grade parser) builds.

mod richtext_common;

use campfire::richtext::tokenizer::{Token, Tokenizer};
use campfire::richtext::{canonicalize_for_save, render_body, sanitize};
use richtext_common::*;

fn cases() -> Vec<&'static str> {
    include_str!("data/xss/cases.html").split("\n====\n").collect()
}

/// Checks one output; returns the problems found.
fn problems(out: &str) -> Vec<String> {
    let mut p = browser_view_problems(out);
    let lower = out.to_ascii_lowercase();
    for bad in ["<script", "<style", "<iframe", "<svg", "<math", "<template", "<noscript", "<base", "<meta", "<link", "<object", "<embed", "<form", "<input", "<!--", "<![cdata", "<?"] {
        if lower.contains(bad) {
            p.push(format!("contains {bad}"));
        }
    }
    for t in Tokenizer::new(out) {
        if let Token::Start { name, attrs, .. } = t {
            if !element_allowed(&name) {
                p.push(format!("token element {name}"));
            }
            for a in attrs {
                if a.name.starts_with("on") || a.name == "style" || a.name == "srcdoc" || !attribute_allowed(&a.name) {
                    p.push(format!("token attribute {}", a.name));
                }
                if matches!(&*a.name, "href" | "src" | "url" | "cite") && dangerous_url(&a.value) {
                    p.push(format!("token url {}={:?}", a.name, a.value));
                }
            }
        }
    }
    p
}

#[test]
fn corpus_is_loaded() {
    assert!(cases().len() >= 120, "corpus has {} cases", cases().len());
}

#[test]
fn nothing_survives_the_message_renderer() {
    let mut failures = Vec::new();
    for case in cases() {
        for (label, out) in [
            ("render", render_body(case, &users).into_string()),
            ("render/hostile", render_body(case, &hostile).into_string()),
            ("render/canonical", render_body(&canonicalize_for_save(case), &hostile).into_string()),
        ] {
            let p = problems(&out);
            if !p.is_empty() {
                failures.push(format!("{label}: {case:?}\n  -> {out:?}\n  {p:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn nothing_survives_the_generic_sanitizer() {
    let mut failures = Vec::new();
    for case in cases() {
        let out = sanitize(case).into_string();
        let p = problems(&out);
        if !p.is_empty() {
            failures.push(format!("{case:?}\n  -> {out:?}\n  {p:?}"));
        }
        // Sanitizing our own output changes nothing: what we emit parses back as emitted.
        let again = sanitize(&out).into_string();
        if again != out {
            failures.push(format!("not idempotent: {case:?}\n  1: {out:?}\n  2: {again:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hostile_user_data_is_escaped_in_mentions() {
    let body = format!(r#"<div>Hi <action-text-attachment sgid="{}" content-type="application/vnd.campfire.mention"></action-text-attachment></div>"#, sgid_for(1));
    let out = render_body(&body, &hostile).into_string();
    assert!(out.contains("&lt;img src=x onerror=alert(1)&gt;\"'</div>"), "{out}");
    assert!(out.contains(r#"title="&lt;img src=x onerror=alert(1)&gt;&quot;' – &quot; onclick=&quot;alert(2)""#), "{out}");
    assert!(!out.contains("javascript:"), "{out}");
    assert!(problems(&out).is_empty());
}

#[test]
fn script_text_is_dropped_not_shown() {
    let out = sanitize("a<script>alert(1)</script><style>b{}</style>c").into_string();
    assert_eq!(out, "ac");
    let out = render_body("<div>a<script>alert(1)</script>c</div>", &users).into_string();
    assert_eq!(out, "<div class=\"trix-content\"><div>ac</div></div>");
}

#[test]
fn the_checks_catch_what_they_look_for() {
    assert!(!problems("<a href=\"java&#x09;script:x\">x</a>").is_empty());
    assert!(!problems("<p onclick=\"x\">x</p>").is_empty());
    assert!(!problems("<svg><g></g></svg>").is_empty());
    assert!(!problems("<p>a<!-- c --></p>").is_empty());
    assert!(!problems("<a href=\"data:text/html,x\">x</a>").is_empty());
    assert!(!problems("<p style=\"x\">x</p>").is_empty());
    assert!(problems("<p><a href=\"/x\">x</a></p>").is_empty());
}
