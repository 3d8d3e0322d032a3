//! Counterparts of test/models/action_text_attachment_test.rb,
//! test/lib/rails_ext/action_text_attachables_test.rb and the body parts of
//! test/models/message_test.rb (spec/05), plus canonicalisation on save (spec/01 §8.2).

mod richtext_common;

use campfire::richtext::sgid::unverified_user_id;
use campfire::richtext::{canonicalize_for_save, is_emoji_only, mentions, plain_text, play_sound, render_body};
use richtext_common::*;

fn mention(sgid: &str) -> String {
    format!(r#"<action-text-attachment sgid="{sgid}" content-type="application/vnd.campfire.mention"></action-text-attachment>"#)
}

fn legacy_sgid(id: i64) -> String {
    // Rails 7: {"_rails":{"message":<base64 Marshal of the gid string>,"exp":null,"pur":"attachable"}}
    let gid = format!("gid://campfire/User/{id}");
    let mut marshal = vec![0x04, 0x08, b'I', b'"', (gid.len() + 5) as u8];
    marshal.extend_from_slice(gid.as_bytes());
    marshal.extend_from_slice(b"\x06:\x06ET");
    let json = format!(r#"{{"_rails":{{"message":"{}","exp":null,"pur":"attachable"}}}}"#, b64(&marshal));
    format!("{}--0123456789abcdef", b64(json.as_bytes()))
}

fn room_sgid() -> String {
    let json = r#"{"_rails":{"data":"gid://campfire/Rooms::Open/1","pur":"attachable"}}"#;
    format!("{}--invalid", b64(json.as_bytes()))
}

#[test]
fn user_sgid_with_an_invalid_signature_still_resolves() {
    assert_eq!(unverified_user_id(&sgid_for(1)), Some(1));
    let out = render_body(&mention(&sgid_for(1)), &users).into_string();
    assert!(out.contains(r#"<div class="mention""#) && out.contains("> David</div>"), "{out}");
    assert_eq!(plain_text(&mention(&sgid_for(1)), &users), "@David");
}

#[test]
fn attachment_without_sgid_is_a_missing_attachable() {
    let body = r#"<action-text-attachment content-type="application/vnd.campfire.mention"></action-text-attachment>"#;
    assert_eq!(
        render_body(body, &users).as_str(),
        r#"<div class="trix-content"><action-text-attachment content-type="application/vnd.campfire.mention">☒</action-text-attachment></div>"#
    );
    assert_eq!(plain_text(body, &users), "");
    let captioned = r#"<action-text-attachment caption="a file"></action-text-attachment>"#;
    assert_eq!(plain_text(captioned, &users), "a file");
}

#[test]
fn tampered_sgid_for_a_non_user_model_is_missing() {
    assert_eq!(unverified_user_id(&room_sgid()), None);
    let out = render_body(&mention(&room_sgid()), &users).into_string();
    assert!(out.contains("☒") && !out.contains("class=\"mention\""), "{out}");
}

#[test]
fn rails7_legacy_sgid_resolves_to_the_user() {
    assert_eq!(unverified_user_id(&legacy_sgid(2)), Some(2));
    assert_eq!(plain_text(&format!("<div>Hi {}</div>", mention(&legacy_sgid(2))), &users), "Hi @Jason");
}

#[test]
fn unknown_user_is_missing() {
    assert_eq!(plain_text(&mention(&sgid_for(99)), &users), "");
    assert!(render_body(&mention(&sgid_for(99)), &users).as_str().contains("☒"));
}

#[test]
fn remote_image_and_inline_content_attachments() {
    let img = r#"<action-text-attachment content-type="image/png" url="https://x.example/a.png" width="10" height="20" caption="A cat"></action-text-attachment>"#;
    assert_eq!(
        render_body(img, &users).as_str(),
        r#"<div class="trix-content"><action-text-attachment content-type="image/png" url="https://x.example/a.png" width="10" height="20" caption="A cat"><figure class="attachment attachment--preview"><img src="https://x.example/a.png" width="10" height="20"><figcaption class="attachment__caption">A cat</figcaption></figure></action-text-attachment></div>"#
    );
    assert_eq!(plain_text(img, &users), "[A cat]");
    assert_eq!(plain_text(r#"<action-text-attachment content-type="image/png" url="/a.png"></action-text-attachment>"#, &users), "[Image]");
    let html = r#"<action-text-attachment content-type="text/html" content="<b>bold</b><script>x</script>"></action-text-attachment>"#;
    assert!(render_body(html, &users).as_str().contains(r#"<figure class="attachment attachment--content"><b>bold</b></figure>"#));
    assert_eq!(plain_text(html, &users), "bold");
}

#[test]
fn open_graph_embed_plain_text_is_empty_and_long_titles_truncate() {
    let title = "t".repeat(300);
    let body = format!(r#"<div>Look <action-text-attachment content-type="application/vnd.actiontext.opengraph-embed" href="https://a.example/" filename="{title}"></action-text-attachment></div>"#);
    assert_eq!(plain_text(&body, &users), "Look ");
    let out = render_body(&body, &users).into_string();
    assert!(out.contains(&format!("{}…</a>", "t".repeat(279))), "{out}");
    assert!(!out.contains("og-embed__image"), "no image without url");
}

// test/models/message_test.rb

#[test]
fn emoji_only_detection() {
    assert!(is_emoji_only("😄🤘"));
    assert!(!is_emoji_only("Haha! 😄🤘"));
    assert!(!is_emoji_only("🔥\nmultiple lines\n💯"));
    assert!(!is_emoji_only("🔥 💯"));
    assert!(is_emoji_only("❤️"));
    assert!(!is_emoji_only("👨‍👩‍👧"));
}

#[test]
fn mentions_lists_each_sgid_once_in_order() {
    let david = sgid_for(1);
    let kevin = sgid_for(3);
    let body = format!("<div>{} and {} and {}</div>", mention(&david), mention(&kevin), mention(&david));
    assert_eq!(mentions(&body), vec![david.clone(), kevin]);
    assert_eq!(mentions(&format!("<div>{}</div>", mention(&david))), vec![david]);
    assert!(mentions("<div>no one</div>").is_empty());
}

#[test]
fn play_sound_from_plain_text() {
    let s = play_sound(&plain_text("<div>/play tada</div>", &users)).expect("tada");
    assert_eq!((s.name, s.text), ("tada", "plays a fanfare 🎏"));
    assert!(play_sound(&plain_text("<div>/play tada</div><div>again</div>", &users)).is_none());
}

// Canonicalisation on save (spec/01 §8.2).

#[test]
fn trix_figures_become_attachments_with_rails_attribute_order() {
    let sgid = sgid_for(1);
    let trix = format!(
        r#"  <div>Hey <figure data-trix-attachment="{{&quot;content&quot;:&quot;<span class=\&quot;mention\&quot;>David</span>&quot;,&quot;contentType&quot;:&quot;application/vnd.campfire.mention&quot;,&quot;sgid&quot;:&quot;{sgid}&quot;,&quot;extra&quot;:1}}" data-trix-content-type="application/vnd.campfire.mention" data-trix-attributes="{{&quot;caption&quot;:&quot;cap&quot;}}"><span class="mention">David</span></figure> &amp; you</div>  "#
    );
    assert_eq!(
        canonicalize_for_save(&trix),
        format!(r#"<div>Hey <action-text-attachment sgid="{sgid}" content-type="application/vnd.campfire.mention" caption="cap" content="&lt;span class=&quot;mention&quot;&gt;David&lt;/span&gt;"></action-text-attachment> &amp; you</div>"#)
    );
}

#[test]
fn typed_trix_attributes() {
    let trix = r#"<figure data-trix-attachment='{"url":"/a.png","contentType":"image/png","width":640,"height":"x","filesize":12,"previewable":true,"filename":"a.png"}'></figure>"#;
    assert_eq!(
        canonicalize_for_save(trix),
        r#"<action-text-attachment content-type="image/png" url="/a.png" filename="a.png" filesize="12" width="640" previewable="true"></action-text-attachment>"#
    );
}

#[test]
fn unusable_trix_figures_are_removed_and_attachments_emptied() {
    assert_eq!(canonicalize_for_save(r#"a<figure data-trix-attachment="not json">x</figure>b"#), "ab");
    assert_eq!(canonicalize_for_save(r#"a<figure data-trix-attachment='{"foo":1}'>x</figure>b"#), "ab");
    assert_eq!(
        canonicalize_for_save(r#"<action-text-attachment sgid="s"><div>old rendering</div></action-text-attachment>"#),
        r#"<action-text-attachment sgid="s"></action-text-attachment>"#
    );
}

#[test]
fn plain_text_bodies_are_kept_as_text_and_markup_is_normalised() {
    assert_eq!(canonicalize_for_save("  Hello back! & <3\n"), "Hello back! &amp; &lt;3");
    assert_eq!(canonicalize_for_save("<DIV CLASS=x>a<br/>b<p>c"), r#"<div class="x">a<br>b<p>c</p></div>"#);
    assert_eq!(canonicalize_for_save("<!-- keep -->x"), "<!-- keep -->x");
    // Stored unsanitized: sanitizing is the renderer's job.
    assert_eq!(canonicalize_for_save("<script>a<b</script>"), "<script>a<b</script>");
}

#[test]
fn nested_inline_content_is_not_expanded_recursively() {
    // Each level hides the next one in its `content` attribute; only the first is expanded.
    let mut body = String::from("<b>deepest</b>");
    for level in 0..40 {
        let escaped = body.replace('&', "&amp;").replace('"', "&quot;");
        body = format!(r#"L{level} <action-text-attachment content-type="text/html" content="{escaped}"></action-text-attachment>"#);
    }
    assert_eq!(plain_text(&body, &users), "L39 L38 ");
    let out = render_body(&body, &users).into_string();
    assert!(out.starts_with(r#"<div class="trix-content">L39 <action-text-attachment content-type="text/html" content=""#), "{out}");
    assert!(out.contains(r#"<figure class="attachment attachment--content">L38 <action-text-attachment content-type="text/html" content=""#));
}
