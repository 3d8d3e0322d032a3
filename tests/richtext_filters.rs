//! Counterparts of the Rails tests test/helpers/content_filters_test.rb and
//! test/helpers/messages_helper_test.rb (spec/05): the presentation of a text message.

mod richtext_common;

use campfire::richtext::render_body;
use richtext_common::*;

const BASECAMP_EMBED: &str = r#"<action-text-attachment content-type="application/vnd.actiontext.opengraph-embed" url="https://basecamp.com/assets/general/opengraph.png" href="https://basecamp.com/" filename="Project management software, online collaboration" caption="Trusted by millions, Basecamp puts everything you need to get work done in one place." content="<actiontext-opengraph-embed><div class=&quot;og-embed&quot;></div></actiontext-opengraph-embed>"></action-text-attachment>"#;

fn tweet_embed(image: &str, href: &str) -> String {
    format!(
        r#"<action-text-attachment content-type="application/vnd.actiontext.opengraph-embed" url="{image}" href="{href}" filename="DHH (@dhh)" caption="We pay homage to the glorious MIT License." content="&lt;actiontext-opengraph-embed&gt;&lt;/actiontext-opengraph-embed&gt;"><figure class="attachment">stale rendering</figure></action-text-attachment>"#
    )
}

fn render(body: &str) -> String {
    render_body(body, &users).into_string()
}

#[test]
fn entire_message_is_an_unfurled_url() {
    let body = format!("<div>https://basecamp.com/{BASECAMP_EMBED}</div>");
    let out = render(&body);
    assert!(out.starts_with("<div class=\"trix-content\"><div><action-text-attachment content-type=\"application/vnd.actiontext.opengraph-embed\""), "{out}");
    assert!(!out.contains(">https://basecamp.com/<"), "URL text must be gone: {out}");
    // The preview itself (spec/07 §5.3).
    assert!(out.contains(r#"<figure class="attachment attachment--content attachment--og"><actiontext-opengraph-embed><div class="og-embed gap"><div class="og-embed__content"><div class="og-embed__title"><a href="https://basecamp.com/" rel="noreferrer" target="_blank">Project management software, online collaboration</a></div><div class="og-embed__description">Trusted by millions, Basecamp puts everything you need to get work done in one place.</div></div><div class="og-embed__image"><img src="https://basecamp.com/assets/general/opengraph.png" class="image center" alt=""></div></div></actiontext-opengraph-embed></figure>"#), "{out}");
}

#[test]
fn additional_text_besides_an_unfurled_url_is_kept() {
    let body = format!("<div>Hello https://basecamp.com/{BASECAMP_EMBED}</div>");
    let out = render(&body);
    assert!(out.starts_with(r#"<div class="trix-content"><div>Hello <a href="https://basecamp.com/" target="_blank">https://basecamp.com/</a><action-text-attachment"#), "{out}");
}

#[test]
fn unfurled_tweet_with_an_avatar_image_is_styled() {
    let body = format!(
        "<div>https://twitter.com/37signals/status/1750290547908952568{}</div>",
        tweet_embed("https://pbs.twimg.com/profile_images/1671940407633010689/9P5gi6LF_200x200.jpg", "https://twitter.com/37signals/status/1750290547908952568")
    );
    let out = render(&body);
    assert!(out.contains(r#"<div class="cf-twitter-avatar">"#), "{out}");
    assert!(!out.contains("stale rendering"), "stored inner HTML is replaced by the rendering: {out}");
}

#[test]
fn unfurled_tweet_with_a_media_image_is_not_styled() {
    let body = format!(
        "<div>https://twitter.com/dhh/status/1748445489648050505{}</div>",
        tweet_embed("https://pbs.twimg.com/media/GEO5l04bsAA9f6H.jpg", "https://twitter.com/dhh/status/1748445489648050505")
    );
    assert!(!render(&body).contains("cf-twitter-avatar"));
}

#[test]
fn lone_x_com_url_unfurled_to_twitter_com_is_removed() {
    for text in ["https://x.com/dhh/status/1752476663303323939", "https://x.com/dhh/status/1752476663303323939?s=20"] {
        let body = format!(
            "<div>{text}{}</div>",
            tweet_embed("https://pbs.twimg.com/ext_tw_video_thumb/1/pu/img/W.jpg", "https://twitter.com/dhh/status/1752476663303323939")
        );
        let out = render(&body);
        assert!(out.starts_with("<div class=\"trix-content\"><div><action-text-attachment"), "{text}: {out}");
        assert!(!out.contains("x.com"), "{out}");
    }
}

#[test]
fn a_forbidden_tag_is_removed_entirely() {
    let out = render(r#"Hello <img src="https://ssecurityrise.com/tests/billionlaughs-cache.svg">World"#);
    assert_eq!(out, r#"<div class="trix-content">Hello World</div>"#);
}

#[test]
fn unsafe_uri_schemes_are_stripped_from_links() {
    assert_eq!(render(r#"<div><a href="javascript:alert(1)">x</a></div>"#), r#"<div class="trix-content"><div><a>x</a></div></div>"#);
    let out = render(r#"<div><a href="data:text/html,pwned">x</a></div>"#);
    assert!(!out.contains("data:"));
    assert!(out.contains("<a>x</a>"));
}

#[test]
fn event_handlers_are_stripped_and_safe_hrefs_kept() {
    let out = render(r#"<div><a href="/x" onmouseover="alert(1)">x</a> <span onclick="alert(2)">y</span></div>"#);
    assert!(!out.contains("onmouseover") && !out.contains("onclick"), "{out}");
    assert!(out.contains(r#"<a href="/x">x</a>"#), "{out}");
    assert!(out.contains("<span>y</span>"), "{out}");
}

#[test]
fn safe_links_and_formatting_are_preserved() {
    let out = render(r#"<div><a href="https://example.com">example</a> <strong>bold</strong> <code>code</code><ul><li>one</li><li>two</li></ul></div>"#);
    assert!(out.contains(r#"<a href="https://example.com">example</a>"#), "{out}");
    assert!(out.contains("<strong>bold</strong>"));
    assert!(out.contains("<code>code</code>"));
    assert!(out.contains("<ul><li>one</li><li>two</li></ul>"));
}

#[test]
fn sanitizing_has_no_shared_state_between_concurrent_calls() {
    // Rails needed a fresh sanitizer per call; ours is a pure function. Run the strict message
    // policy and the looser Action Text policy side by side and compare with sequential runs.
    let inputs: Vec<String> = (0..50).map(|i| format!(r#"<div><img src="/{i}.png"><font>f{i}</font><a href="/{i}" onclick="x">l{i}</a></div>"#)).collect();
    let expected: Vec<(String, String)> = inputs.iter().map(|s| (render(s), campfire::richtext::sanitize(s).into_string())).collect();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let inputs = inputs.clone();
            std::thread::spawn(move || inputs.iter().map(|s| (render(s), campfire::richtext::sanitize(s).into_string())).collect::<Vec<_>>())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().expect("thread"), expected);
    }
    assert_eq!(expected[3].0, r#"<div class="trix-content"><div><a href="/3">l3</a></div></div>"#);
    assert_eq!(expected[3].1, r#"<div><img src="/3.png">f3<a href="/3">l3</a></div>"#);
}

#[test]
fn attribute_sanitizer_neutralizes_unsafe_input_and_keeps_benign_content() {
    let mention = format!(
        r#"<action-text-attachment sgid="{}" content-type="application/vnd.campfire.mention" content="<div class=&quot;mention&quot;>David</div>"></action-text-attachment>"#,
        sgid_for(1)
    );
    let body = format!(
        r#"<div><a href="javascript:alert(1)" onclick="x()">link</a> <a href="data:text/html,pwned">data</a> <span class="cf-twitter-avatar" onmouseover="y()">avatar</span> <img src="https://evil.example/x.svg"> Hey {mention}</div>"#
    );
    let out = render(&body);
    for bad in ["javascript:", "data:text/html", "onclick", "onmouseover", "evil.example"] {
        assert!(!out.contains(bad), "{bad} in {out}");
    }
    assert!(out.contains(r#"<span class="cf-twitter-avatar">avatar</span>"#), "{out}");
    assert!(out.contains(">link<"));
    assert!(out.contains(&format!(r#"<action-text-attachment sgid="{}""#, sgid_for(1))), "{out}");
}

#[test]
fn a_mention_attachment_survives_and_is_rendered() {
    let sgid = sgid_for(1);
    let body = format!(r#"<div>Hey <action-text-attachment sgid="{sgid}" content-type="application/vnd.campfire.mention" content="<div class=&quot;mention&quot;>David</div>"></action-text-attachment></div>"#);
    let out = render(&body);
    let expected = format!(
        r#"<div class="trix-content"><div>Hey <action-text-attachment sgid="{sgid}" content-type="application/vnd.campfire.mention" content="&lt;div class=&quot;mention&quot;&gt;David&lt;/div&gt;"><div class="mention" sgid="{sgid}" data-user-id="1"><a href="/users/1" title="David – Founder" class="btn avatar" data-turbo-frame="_top"><img aria-hidden="true" width="48" height="48" src="/users/tok1/avatar?v=1"></a> David</div></action-text-attachment></div></div>"#
    );
    assert_eq!(out, expected);
}

// test/helpers/messages_helper_test.rb

#[test]
fn message_presentation_neutralizes_unsafe_uri_schemes() {
    let out = render(r#"<div><a href="javascript:alert(1)">x</a></div>"#);
    assert!(!out.contains("javascript:"));
    assert!(out.contains("<a>x</a>"));
}

#[test]
fn message_presentation_strips_event_handlers() {
    let out = render(r#"<div><a href="/x" onmouseover="alert(1)">x</a></div>"#);
    assert!(!out.contains("onmouseover"));
    assert!(out.contains(r#"<a href="/x">x</a>"#));
}

#[test]
fn message_presentation_preserves_safe_links_and_formatting() {
    let out = render(r#"<div><a href="https://example.com">example</a> <strong>bold</strong></div>"#);
    assert!(out.contains(r#"<a href="https://example.com">example</a>"#));
    assert!(out.contains("<strong>bold</strong>"));
}

#[test]
fn bare_urls_and_emails_are_auto_linked_but_not_inside_links() {
    let out = render(r#"<div>see www.example.com/a, or <a href="https://x.example/">https://x.example/</a> or mail me@example.com.</div>"#);
    assert_eq!(
        out,
        r#"<div class="trix-content"><div>see <a href="http://www.example.com/a" target="_blank">www.example.com/a</a>, or <a href="https://x.example/">https://x.example/</a> or mail <a href="mailto:me@example.com" target="_blank">me@example.com</a>.</div></div>"#
    );
}
