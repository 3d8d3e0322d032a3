//! A stored body in the form the Trix editor loads (Action Text's `to_trix_html`), for the
//! message edit form (spec/07 §5.7): every `<action-text-attachment>` becomes
//! `<figure data-trix-attachment="{json}" data-trix-attributes="{json}">`, with the rendered
//! mention chip or link preview as the attachment's `content` so the editor can show it. The
//! result goes into the hidden input's value (escaped by the template) and is not sanitized:
//! it is the user's own stored body, and Trix sanitizes what it loads.

use std::borrow::Cow;

use super::attachments::{self, Attachable, Mention, TAG};
use super::dom::{self, Dom, Kind, ROOT};
use super::tokenizer::Attr;

/// Stored attachment attributes → Trix keys, in Action Text's order.
const KEYS: [(&str, &str); 12] = [
    ("sgid", "sgid"), ("content-type", "contentType"), ("url", "url"), ("href", "href"),
    ("filename", "filename"), ("filesize", "filesize"), ("width", "width"), ("height", "height"),
    ("previewable", "previewable"), ("presentation", "presentation"), ("caption", "caption"),
    ("content", "content"),
];

/// The Trix editor form of a stored body; `resolve` as for rendering.
pub fn to_trix_html(stored_body: &str, resolve: &dyn Fn(&str) -> Option<Mention>) -> String {
    let mut dom = Dom::parse(stored_body);
    for id in dom.find_all(TAG) {
        let a = attachments::resolve(&dom, id, resolve);
        let rendered = match a {
            Attachable::User(_) | Attachable::Embed { .. } => {
                let mut html = String::new();
                attachments::render(&a, dom.attr(id, "sgid"), &mut html);
                Some(html)
            }
            _ => None,
        };
        let mut attachment = String::from("{");
        let mut composed = String::from("{");
        for (stored, key) in KEYS {
            let value = if key == "content" { rendered.as_deref().or(dom.attr(id, stored)) } else { dom.attr(id, stored) };
            let Some(value) = value else { continue };
            let target = if matches!(key, "caption" | "presentation") { &mut composed } else { &mut attachment };
            if target.len() > 1 {
                target.push(',');
            }
            json_string(target, key);
            target.push(':');
            match key {
                "previewable" => target.push_str(if value == "true" { "true" } else { "false" }),
                "width" | "height" | "filesize" if !value.is_empty() && value.len() < 16 && value.bytes().all(|b| b.is_ascii_digit()) => {
                    target.push_str(value)
                }
                _ => json_string(target, value),
            }
        }
        attachment.push('}');
        composed.push('}');
        let mut attrs = vec![Attr { name: Cow::Borrowed("data-trix-attachment"), value: Cow::Owned(attachment) }];
        if composed.len() > 2 {
            attrs.push(Attr { name: Cow::Borrowed("data-trix-attributes"), value: Cow::Owned(composed) });
        }
        dom.nodes[id].kind = Kind::Element { name: Cow::Borrowed("figure"), attrs };
        dom.clear_children(id);
    }
    let mut out = String::with_capacity(stored_body.len() * 2);
    dom::serialize_children(&dom, ROOT, &mut out);
    out
}

/// Appends `s` as a JSON string literal.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::richtext::canonicalize_for_save;

    fn david(_: &str) -> Option<Mention> {
        Some(Mention { id: 1, name: "David".into(), bio: String::new(), avatar_url: "/a".into() })
    }

    #[test]
    fn mentions_become_trix_figures_with_rendered_content() {
        let out = to_trix_html(r#"<div>Hi <action-text-attachment sgid="s1" content-type="application/vnd.campfire.mention" caption="c"></action-text-attachment></div>"#, &david);
        assert_eq!(
            out,
            r#"<div>Hi <figure data-trix-attachment="{&quot;sgid&quot;:&quot;s1&quot;,&quot;contentType&quot;:&quot;application/vnd.campfire.mention&quot;,&quot;content&quot;:&quot;&lt;div class=\&quot;mention\&quot; sgid=\&quot;s1\&quot; data-user-id=\&quot;1\&quot;&gt;&lt;a href=\&quot;/users/1\&quot; title=\&quot;David\&quot; class=\&quot;btn avatar\&quot; data-turbo-frame=\&quot;_top\&quot;&gt;&lt;img aria-hidden=\&quot;true\&quot; width=\&quot;48\&quot; height=\&quot;48\&quot; src=\&quot;/a\&quot;&gt;&lt;/a&gt; David&lt;/div&gt;&quot;}" data-trix-attributes="{&quot;caption&quot;:&quot;c&quot;}"></figure></div>"#
        );
    }

    #[test]
    fn round_trips_through_canonicalisation() {
        let stored = r#"<div>x <action-text-attachment sgid="s1" content-type="image/png" url="/p.png" width="10" previewable="true" caption="cap"></action-text-attachment></div>"#;
        let trix = to_trix_html(stored, &|_| None);
        assert!(trix.contains(r#"&quot;width&quot;:10"#) && trix.contains(r#"&quot;previewable&quot;:true"#), "{trix}");
        assert_eq!(canonicalize_for_save(&trix), stored);
    }
}
