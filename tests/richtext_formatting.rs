//! The formatting corpus: everything Trix and bots produce survives the message renderer
//! intact (spec/07 §5.3), byte for byte.

mod richtext_common;

use campfire::richtext::{render_body, sanitize};
use richtext_common::*;

/// (stored body, rendered inner HTML) pairs.
const CORPUS: &[(&str, &str)] = &[
    ("<div><strong>bold</strong> <em>italic</em> <del>strike</del> <b>b</b> <i>i</i> <u>u</u></div>",
     "<div><strong>bold</strong> <em>italic</em> <del>strike</del> <b>b</b> <i>i</i> </div>"),
    (r#"<div><a href="https://a.example/x?y=1&amp;z=2" title="T">link</a></div>"#,
     r#"<div><a href="https://a.example/x?y=1&amp;z=2" title="T">link</a></div>"#),
    (r##"<a href="/rooms/1/@2">relative</a> <a href="mailto:a@b.example">mail</a> <a href="#top">anchor</a>"##,
     r##"<a href="/rooms/1/@2">relative</a> <a href="mailto:a@b.example">mail</a> <a href="#top">anchor</a>"##),
    ("<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul><ol><li>first</li><li>second</li></ol>",
     "<ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul><ol><li>first</li><li>second</li></ol>"),
    ("<blockquote>quoted<br>text</blockquote><cite>Author <a href=\"/rooms/1/@5\">#</a></cite><br>",
     "<blockquote>quoted<br>text</blockquote><cite>Author <a href=\"/rooms/1/@5\">#</a></cite><br>"),
    ("<pre language=\"ruby\">def x\n  1 &lt; 2 &amp;&amp; y\nend</pre>",
     "<pre language=\"ruby\">def x\n  1 &lt; 2 &amp;&amp; y\nend</pre>"),
    ("<pre>\n\nleading blank line</pre>", "<pre>\n\nleading blank line</pre>"),
    ("<div><code>inline()</code> and <kbd>Ctrl</kbd> <sub>2</sub><sup>3</sup> <small>s</small></div>",
     "<div><code>inline()</code> and <kbd>Ctrl</kbd> <sub>2</sub><sup>3</sup> <small>s</small></div>"),
    ("<h1>Heading</h1><h2>Two</h2><h3>Three</h3><h4>4</h4><h5>5</h5><h6>6</h6>",
     "<h1>Heading</h1><h2>Two</h2><h3>Three</h3><h4>4</h4><h5>5</h5><h6>6</h6>"),
    ("<div>line one<br>line two<br><br>after a blank</div>", "<div>line one<br>line two<br><br>after a blank</div>"),
    ("<p>para</p><hr><dl><dt>term</dt><dd>def</dd></dl>", "<p>para</p><hr><dl><dt>term</dt><dd>def</dd></dl>"),
    ("<div><abbr title=\"HyperText\">HTML</abbr> <time datetime=\"2024-01-01\">new year</time> <span class=\"x\" lang=\"fr\">oui</span></div>",
     "<div><abbr title=\"HyperText\">HTML</abbr> <time datetime=\"2024-01-01\">new year</time> <span class=\"x\" lang=\"fr\">oui</span></div>"),
    ("<div>Ünïcödé — “quotes” 😄🤘 a&nbsp;b</div>", "<div>Ünïcödé — “quotes” 😄🤘 a\u{a0}b</div>"),
    ("<figure><figcaption>Caption</figcaption></figure>", "<figure><figcaption>Caption</figcaption></figure>"),
    ("plain text from a bot & <friends>", "plain text from a bot &amp; "),
    ("Hello back!", "Hello back!"),
    // Tables are not in Campfire's list (spec/07 §5.3 step 3): removed with their content.
    ("<table><tr><td>cell</td></tr></table>after", "after"),
];

#[test]
fn formatting_survives_rendering_intact() {
    for (input, expected) in CORPUS {
        let out = render_body(input, &users).into_string();
        assert_eq!(out, format!("<div class=\"trix-content\">{expected}</div>"), "input: {input:?}");
        assert!(browser_view_problems(&out).is_empty(), "{out}");
    }
}

#[test]
fn formatting_survives_the_generic_sanitizer() {
    // The looser Action Text policy keeps the same markup (and unwraps unknown elements).
    let (input, _) = CORPUS[3];
    assert_eq!(sanitize(input).as_str(), input);
    assert_eq!(sanitize("<u>x</u><table><tr><td>c</td></tr></table>").as_str(), "xc");
    assert_eq!(sanitize(r#"<img src="/a.png" alt="A" width="5" onerror="x">"#).as_str(), r#"<img src="/a.png" alt="A" width="5">"#);
}

#[test]
fn attachments_render_inside_formatting() {
    let sgid = sgid_for(2);
    let body = format!(r#"<div><strong>Hi <action-text-attachment sgid="{sgid}" content-type="application/vnd.campfire.mention"></action-text-attachment></strong>!</div>"#);
    let out = render_body(&body, &users).into_string();
    assert_eq!(
        out,
        format!(r#"<div class="trix-content"><div><strong>Hi <action-text-attachment sgid="{sgid}" content-type="application/vnd.campfire.mention"><div class="mention" sgid="{sgid}" data-user-id="2"><a href="/users/2" title="Jason" class="btn avatar" data-turbo-frame="_top"><img aria-hidden="true" width="48" height="48" src="/users/tok2/avatar?v=2"></a> Jason</div></action-text-attachment></strong>!</div></div>"#)
    );
}
