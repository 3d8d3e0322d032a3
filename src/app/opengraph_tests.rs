//! Unit tests of the OpenGraph reader (spec/05 opengraph document/location/metadata tests).

use super::*;

fn page(head: &str) -> Vec<u8> {
    format!("<!DOCTYPE html><html><head>{head}</head><body><p>text</p></body></html>").into_bytes()
}

#[test]
fn reads_property_and_name_attributes() {
    let t = tags_of(
        page(r#"<meta property="og:url" content="https://example.com"><meta property="og:title" content="Hey!">
                <meta property="og:description" content="Hello"><meta property="og:image" content="https://example.com/image.png">"#),
        false,
    );
    assert_eq!(
        t,
        Tags {
            title: Some("Hey!".into()),
            url: Some("https://example.com".into()),
            image: Some("https://example.com/image.png".into()),
            description: Some("Hello".into())
        }
    );
    let t = tags_of(page(r#"<meta name="og:title" content="By name"><meta name="og:description" content="D">"#), false);
    assert_eq!((t.title.as_deref(), t.description.as_deref()), (Some("By name"), Some("D")));
}

#[test]
fn last_wins_blank_is_skipped_and_property_is_the_key() {
    let t = tags_of(
        page(r#"<meta property="og:title" content="first"><meta property="og:title" content="second">
                <meta property="og:title" content="  "><meta property="og:type" content="website">
                <meta property="description" name="og:title" content="keyed by property">
                <meta name="description" content="not og"><meta property="twitter:title" content="no">"#),
        false,
    );
    assert_eq!(t.title.as_deref(), Some("second"));
    assert_eq!(t.description.as_deref(), Some("keyed by property"), "Rails keys on `property` when it is present");
}

#[test]
fn without_a_charset_non_ascii_is_dropped() {
    let doc = "<meta property=\"og:title\" content=\"Hello \u{e2}\u{80a6}World\">".as_bytes().to_vec();
    assert_eq!(tags_of(doc.clone(), false).title.as_deref(), Some("Hello World"));
    assert_eq!(tags_of(doc.clone(), true).title.as_deref(), Some("Hello \u{e2}\u{80a6}World"), "fxtwitter pages are read as UTF-8");
    let declared = [b"<meta charset=\"utf-8\">".to_vec(), doc.clone()].concat();
    assert_eq!(tags_of(declared, false).title.as_deref(), Some("Hello \u{e2}\u{80a6}World"));
    let http_equiv = [b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">".to_vec(), doc].concat();
    assert_eq!(tags_of(http_equiv, false).title.as_deref(), Some("Hello \u{e2}\u{80a6}World"));
    // Bytes that are not UTF-8 at all never reach a value.
    let latin1 = b"<meta charset=\"iso-8859-1\"><meta property=\"og:title\" content=\"caf\xe9!\">".to_vec();
    assert_eq!(tags_of(latin1, false).title.as_deref(), Some("caf!"));
}

#[test]
fn drops_invalid_utf8_in_place() {
    let mut v = b"a\xffb\xe2\x82c\xe2\x82\xacd\xf0".to_vec();
    drop_invalid_utf8(&mut v);
    assert_eq!(v, "abc\u{20ac}d".as_bytes());
}

#[test]
fn titles_lose_tags_and_stay_html_safe() {
    assert_eq!(strip_and_escape("Hey!<script>alert('hi')</script>"), "Hey!alert('hi')");
    assert_eq!(strip_and_escape("Hey!</script><img src=a onerror=prompt(1)>"), "Hey!");
    assert_eq!(strip_and_escape("Fish & chips <3"), "Fish &amp; chips &lt;3");
}

#[test]
fn skips_file_urls() {
    for u in ["https://example.com/a.mp4", "https://example.com/a.tar", "http://example.com/a.heic?x=1", "https://example.com/a.jpeg",
        "https://example.com/setup.exe", "https://example.com/disk.iso", "https://x.com/a.tar.gz", "https://example.com/v.mpeg"] {
        assert!(looks_like_file(u), "{u}");
    }
    for u in ["https://example.com/", "https://example.com/page.html", "https://example.com/a.gzip", "https://example.com/mp4",
        "ftp://example.com/a.mp4", "https://.mp4"] {
        assert!(!looks_like_file(u), "{u}");
    }
}

#[test]
fn rewrites_tweets_to_fxtwitter() {
    assert_eq!(twitter_rewrite("https://twitter.com/dhh/status/1"), Some("https://fxtwitter.com/dhh/status/1".into()));
    assert_eq!(twitter_rewrite("https://x.com/dhh/status/1?s=20#top"), Some("https://fxtwitter.com/dhh/status/1?s=20#top".into()));
    assert_eq!(twitter_rewrite("https://www.x.com:443/a"), Some("https://fxtwitter.com:443/a".into()));
    assert_eq!(twitter_rewrite("https://twitter.com/"), None, "the home page is not a tweet");
    assert_eq!(twitter_rewrite("https://twitter.com"), None);
    assert_eq!(twitter_rewrite("https://nottwitter.com/a"), None);
}

#[test]
fn private_and_malformed_locations_are_refused() {
    for u in ["http://127.0.0.1/", "http://10.1.2.3/", "http://[::1]/", "http://169.254.169.254/latest", "http://[::ffff:192.168.1.1]/",
        "ftp://example.com/", "~/etc/password", "https/incorrect", "https://exa mple.com/"] {
        assert!(public_location(u, Instant::now() + BUDGET).is_none(), "{u}");
    }
    assert!(from_url("http://127.0.0.1:9/").is_none());
}

#[test]
fn json_shape() {
    let m = Metadata { title: "Hey &amp; <".into(), url: "https://e.com/?a=1&b=2".into(), image: None, description: "d".into() };
    let mut out = Vec::new();
    m.to_json(&mut out);
    assert_eq!(String::from_utf8(out).unwrap(), r#"{"title":"Hey \u0026amp; \u003c","url":"https://e.com/?a=1\u0026b=2","image":null,"description":"d"}"#);
}
