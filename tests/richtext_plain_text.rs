//! Plain-text conversion (spec/01 §8.4): the text that goes to the search index, pushes,
//! webhooks and JSON.

mod richtext_common;

use campfire::richtext::plain_text;
use richtext_common::*;

fn pt(html: &str) -> String {
    plain_text(html, &users)
}

#[test]
fn spec_examples() {
    assert_eq!(pt("<div>Hello</div>"), "Hello");
    assert_eq!(pt("<span>My hovercraft is full of eels</span>"), "My hovercraft is full of eels");
    let m = format!(r#"<action-text-attachment sgid="{}" content-type="application/vnd.campfire.mention"></action-text-attachment>"#, sgid_for(1));
    assert_eq!(pt(&format!("<div>Hey {m}</div>")), "Hey @David");
    assert_eq!(pt("First post!"), "First post!");
}

#[test]
fn blocks_and_breaks() {
    assert_eq!(pt("<p>a</p><p>b</p>"), "a\n\nb");
    assert_eq!(pt("<div>a<br>b</div>"), "a\nb");
    assert_eq!(pt("<div>line1</div><div>line2</div>"), "line1\nline2");
    assert_eq!(pt("<h1>Title</h1>text"), "Title\n\ntext");
    assert_eq!(pt("<div>a\n\n</div>"), "a");
    assert_eq!(pt("<div><br></div>"), "");
}

#[test]
fn lists() {
    assert_eq!(pt("<ul><li>one</li><li>two</li></ul>"), "\u{2022} one\n\u{2022} two");
    assert_eq!(pt("<ol><li>one</li><li>two</li></ol>"), "1. one\n2. two");
    assert_eq!(pt("<ul><li>a<ul><li>b</li></ul></li></ul>"), "\u{2022} a\n  \u{2022} b");
    assert_eq!(pt("<ol><li>a<ol><li>b</li><li>c</li></ol></li></ol>after"), "1. a\n  1. b\n  2. c\n\nafter");
    // Rails numbers an item by its position among all child nodes, whitespace text included.
    assert_eq!(pt("<ol>\n<li>one</li></ol>"), "2. one");
}

#[test]
fn quotes_captions_scripts_entities() {
    assert_eq!(pt("<blockquote>quote</blockquote>"), "\u{201c}quote\u{201d}");
    assert_eq!(pt("<blockquote> spaced </blockquote>"), " \u{201c}spaced\u{201d} ");
    assert_eq!(pt("<blockquote></blockquote>"), "\u{201c}\u{201d}");
    assert_eq!(pt("<figure><img src=x><figcaption>cap</figcaption></figure>"), "[cap]");
    assert_eq!(pt("<script>x</script>a<style>y</style>"), "a");
    assert_eq!(pt("a &amp; b &lt;c&gt; &#x1F600;"), "a & b <c> \u{1f600}");
    assert_eq!(pt("<!-- c -->x"), "x");
}

#[test]
fn attachments_in_plain_text() {
    let og = r#"<div>https://basecamp.com/<action-text-attachment content-type="application/vnd.actiontext.opengraph-embed" href="https://basecamp.com/" caption="c"></action-text-attachment></div>"#;
    assert_eq!(pt(og), "https://basecamp.com/");
    let m = format!(r#"<action-text-attachment sgid="{}" content-type="application/vnd.campfire.mention"></action-text-attachment>"#, sgid_for(2));
    assert_eq!(pt(&format!("<ul><li>{m}</li></ul>")), "\u{2022} @Jason");
}
