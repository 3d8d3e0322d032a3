//! Campfire's presentation filters for message bodies (spec/07 §5.3, `ContentFilters`) and the
//! small text predicates the message views need.
//!
//! - `remove_solo_unfurled_link_text`: a body that is just a URL plus its link preview keeps
//!   only the preview (x.com and twitter.com URLs compare equal, queries ignored).
//! - `style_unfurled_twitter_avatars`: a preview whose image is a Twitter profile picture gets
//!   `cf-twitter-avatar` on the body's first `div`.
//! - `AutoLink`: bare URLs (`http://`, `https://`, `www.`, ...) and e-mail addresses in text
//!   become links with `target="_blank"`, trailing punctuation and unbalanced brackets left out.
//! - `is_emoji_only`: the `message--emoji` test.

use super::attachments::{self, Mention, OPENGRAPH_CONTENT_TYPE, TAG};
use super::dom::{self, Dom, NodeId};
use super::plain_text;
use super::sanitizer::Hooks;

/// The link-preview attachments, in document order. Scans the node arena directly (no tree
/// walk): before `remove_solo_unfurled_link_text` changes anything every node is reachable, and
/// after it the single preview it kept is the only one, so the arena tells the same story.
fn unfurled_links(dom: &Dom) -> Vec<NodeId> {
    (0..dom.nodes.len())
        .filter(|&id| dom.name(id) == Some(TAG) && dom.attr(id, "content-type") == Some(OPENGRAPH_CONTENT_TYPE))
        .collect()
}

/// x.com → twitter.com and no query, for URLs mentioning either domain; others unchanged.
fn normalize_tweet_url(url: &str) -> String {
    let trimmed = url.trim();
    if !(trimmed.contains("x.com") || trimmed.contains("twitter.com")) {
        return url.to_string();
    }
    let (before_frag, frag) = match url.find('#') {
        Some(i) => (&url[..i], &url[i..]),
        None => (url, ""),
    };
    let without_query = before_frag.split('?').next().unwrap_or(before_frag);
    let mut out = without_query.to_string();
    if let Some(scheme_end) = without_query.find("://") {
        let auth_start = scheme_end + 3;
        let auth_end = without_query[auth_start..].find('/').map_or(without_query.len(), |i| auth_start + i);
        let authority = &without_query[auth_start..auth_end];
        let (userinfo, hostport) = match authority.rfind('@') {
            Some(i) => (&authority[..=i], &authority[i + 1..]),
            None => ("", authority),
        };
        let (host, port) = match hostport.find(':') {
            Some(i) => (&hostport[..i], &hostport[i..]),
            None => (hostport, ""),
        };
        if host.eq_ignore_ascii_case("x.com") {
            out = format!("{}{}twitter.com{}{}", &without_query[..auth_start], userinfo, port, &without_query[auth_end..]);
        }
    }
    out.push_str(frag);
    out
}

/// If the body's plain text is exactly the URL of its only link preview, every `div` is
/// emptied down to that preview.
pub fn remove_solo_unfurled_link_text(dom: &mut Dom, resolve: &dyn Fn(&str) -> Option<Mention>) {
    let links = unfurled_links(dom);
    let [embed] = links[..] else { return };
    let Some(href) = dom.attr(embed, "href") else { return };
    let text = plain_text::of_dom(dom, resolve);
    if normalize_tweet_url(href) != normalize_tweet_url(&text) {
        return;
    }
    // Rails empties every div down to the preview; the first div is the one that matters
    // (nested ones vanish with it, and a body that is only a URL has no other text).
    let Some(div) = dom.elements().into_iter().find(|&id| dom.name(id) == Some("div")) else { return };
    dom.detach(embed);
    dom.clear_children(div);
    dom.adopt(div, embed);
}

/// Marks the first `div` with `cf-twitter-avatar` when a preview shows a Twitter avatar.
pub fn style_unfurled_twitter_avatars(dom: &mut Dom) {
    let avatar = unfurled_links(dom)
        .into_iter()
        .any(|id| dom.attr(id, "url").is_some_and(|u| u.contains("https://pbs.twimg.com/profile_images")));
    if !avatar {
        return;
    }
    if let Some(div) = dom.elements().into_iter().find(|&id| dom.name(id) == Some("div")) {
        dom.set_attr(div, "class", "cf-twitter-avatar".to_string());
    }
}

/// The renderer's hooks: attachments rendered through the resolver, text auto-linked.
pub struct MessageHooks<'r> {
    pub resolve: &'r dyn Fn(&str) -> Option<Mention>,
}

impl Hooks for MessageHooks<'_> {
    fn attachment(&mut self, dom: &Dom, id: NodeId, out: &mut String) {
        let a = attachments::resolve(dom, id, self.resolve);
        attachments::render(&a, dom.attr(id, "sgid"), out);
    }

    fn text(&mut self, text: &str, out: &mut String) {
        auto_link(text, out);
    }
}

const SCHEMES: &[&str] = &[
    "ed2k", "ftp", "http", "https", "irc", "mailto", "news", "gopher", "nntp", "telnet", "webcal",
    "xmpp", "callto", "feed", "svn", "urn", "aim", "rsync", "tag", "ssh", "sftp", "rtsp", "afs", "file",
];

/// The URL prefix (`scheme://` or `www.`) found while scanning at byte `i`: returns its start
/// and length, and whether it had a scheme. Schemes are found from their `://` looking back
/// (the longest name ending there, like the leftmost regex match), so the scan stays linear.
fn url_prefix(b: &[u8], i: usize, floor: usize) -> Option<(usize, usize, bool)> {
    match b[i] {
        b'w' | b'W' if b.len() >= i + 4 && b[i..i + 4].eq_ignore_ascii_case(b"www.") => Some((i, 4, false)),
        b':' if b.get(i + 1..i + 3) == Some(b"//") => {
            let mut best: Option<usize> = None;
            for s in SCHEMES {
                let n = s.len();
                if i >= floor + n && b[i - n..i].eq_ignore_ascii_case(s.as_bytes()) && best.is_none_or(|m| n > m) {
                    best = Some(n);
                }
            }
            best.map(|n| (i - n, n + 3, true))
        }
        _ => None,
    }
}

fn url_char(c: char) -> bool {
    !(c.is_whitespace() || c == '<' || c == '>' || c == '"' || c == '\u{a0}')
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Writes `text` escaped, with bare URLs and e-mail addresses turned into links.
pub fn auto_link(text: &str, out: &mut String) {
    let b = text.as_bytes();
    let mut plain_from = 0;
    let mut i = 0;
    while i < b.len() {
        if !text.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let Some((start, plen, has_scheme)) = url_prefix(b, i, plain_from) else {
            i += 1;
            continue;
        };
        i = start;
        let body_len: usize = text[i + plen..].chars().take_while(|&c| url_char(c)).map(char::len_utf8).sum();
        if body_len == 0 {
            i += plen;
            continue;
        }
        let mut href = &text[i..i + plen + body_len];
        // Peel trailing punctuation, but keep a closing bracket that balances an opening one.
        while let Some(c) = href.chars().last() {
            if word_char(c) || matches!(c, '/' | '-' | '=' | ';') {
                break;
            }
            let shorter = &href[..href.len() - c.len_utf8()];
            let open = match c {
                ')' => Some('('),
                ']' => Some('['),
                '}' => Some('{'),
                _ => None,
            };
            if let Some(o) = open {
                if shorter.matches(o).count() > shorter.matches(c).count() {
                    break;
                }
            }
            href = shorter;
        }
        auto_link_emails(&text[plain_from..i], out);
        out.push_str("<a href=\"");
        if !has_scheme {
            out.push_str("http://");
        }
        dom::escape_attr(out, href);
        out.push_str("\" target=\"_blank\">");
        dom::escape_text(out, href);
        out.push_str("</a>");
        i += href.len().max(1);
        plain_from = i;
    }
    auto_link_emails(&text[plain_from..], out);
}

fn email_local(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_.!#$%&'*/=?^`{|}~+-".contains(&c)
}

fn email_first(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_.!#$%+-".contains(&c)
}

fn domain_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Writes `text` escaped with e-mail addresses linked (`mailto:`).
fn auto_link_emails(text: &str, out: &mut String) {
    let b = text.as_bytes();
    let mut plain_from = 0;
    let mut search = 0;
    while let Some(p) = b[search..].iter().position(|&c| c == b'@') {
        let at = search + p;
        search = at + 1;
        let mut start = at;
        while start > plain_from && email_local(b[start - 1]) {
            start -= 1;
        }
        // The address must start a run of local characters, with an allowed first character.
        if start == at || !email_first(b[start]) || (start > 0 && email_local(b[start - 1])) {
            continue;
        }
        // Domain: labels of [\w-]+ joined by dots, at least two labels.
        let mut end = at + 1;
        let mut labels = 0;
        loop {
            let l = b[end..].iter().take_while(|&&c| domain_char(c)).count();
            if l == 0 {
                break;
            }
            end += l;
            labels += 1;
            if b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(|&c| domain_char(c)) {
                end += 1;
            } else {
                break;
            }
        }
        if labels < 2 {
            continue;
        }
        dom::escape_text(out, &text[plain_from..start]);
        let addr = &text[start..end];
        out.push_str("<a href=\"mailto:");
        dom::escape_attr(out, addr);
        out.push_str("\" target=\"_blank\">");
        dom::escape_text(out, addr);
        out.push_str("</a>");
        plain_from = end;
        search = end;
    }
    dom::escape_text(out, &text[plain_from..]);
}

/// Unicode `Extended_Pictographic` (emoji-data.txt, Unicode 15.1), plus the
/// `Emoji_Presentation` characters outside it (regional indicators, skin-tone modifiers).
const EMOJI: &[(u32, u32)] = &[
    (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
    (0x2139, 0x2139), (0x2194, 0x2199), (0x21A9, 0x21AA), (0x231A, 0x231B), (0x2328, 0x2328),
    (0x2388, 0x2388), (0x23CF, 0x23CF), (0x23E9, 0x23F3), (0x23F8, 0x23FA), (0x24C2, 0x24C2),
    (0x25AA, 0x25AB), (0x25B6, 0x25B6), (0x25C0, 0x25C0), (0x25FB, 0x25FE), (0x2600, 0x2605),
    (0x2607, 0x2612), (0x2614, 0x2685), (0x2690, 0x2705), (0x2708, 0x2712), (0x2714, 0x2714),
    (0x2716, 0x2716), (0x271D, 0x271D), (0x2721, 0x2721), (0x2728, 0x2728), (0x2733, 0x2734),
    (0x2744, 0x2744), (0x2747, 0x2747), (0x274C, 0x274C), (0x274E, 0x274E), (0x2753, 0x2755),
    (0x2757, 0x2757), (0x2763, 0x2767), (0x2795, 0x2797), (0x27A1, 0x27A1), (0x27B0, 0x27B0),
    (0x27BF, 0x27BF), (0x2934, 0x2935), (0x2B05, 0x2B07), (0x2B1B, 0x2B1C), (0x2B50, 0x2B50),
    (0x2B55, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3297), (0x3299, 0x3299),
    (0x1F000, 0x1F0FF), (0x1F10D, 0x1F10F), (0x1F12F, 0x1F12F), (0x1F16C, 0x1F171),
    (0x1F17E, 0x1F17F), (0x1F18E, 0x1F18E), (0x1F191, 0x1F19A), (0x1F1AD, 0x1F1FF),
    (0x1F201, 0x1F20F), (0x1F21A, 0x1F21A), (0x1F22F, 0x1F22F), (0x1F232, 0x1F23A),
    (0x1F23C, 0x1F23F), (0x1F249, 0x1F53D), (0x1F546, 0x1F64F), (0x1F680, 0x1F6FF),
    (0x1F774, 0x1F77F), (0x1F7D5, 0x1F7FF), (0x1F80C, 0x1F80F), (0x1F848, 0x1F84F),
    (0x1F85A, 0x1F85F), (0x1F888, 0x1F88F), (0x1F8AE, 0x1F8FF), (0x1F90C, 0x1F93A),
    (0x1F93C, 0x1F945), (0x1F947, 0x1FAFF), (0x1FC00, 0x1FFFD),
];

fn is_emoji(c: char) -> bool {
    let c = c as u32;
    c == 0xFE0F
        || EMOJI
            .binary_search_by(|&(lo, hi)| {
                if hi < c {
                    std::cmp::Ordering::Less
                } else if lo > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

/// True when `plain_text` is one or more emoji characters (or U+FE0F) and nothing else — no
/// spaces, newlines, ZWJ or keycap digits.
pub fn is_emoji_only(plain_text: &str) -> bool {
    !plain_text.is_empty() && plain_text.chars().all(is_emoji)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(s: &str) -> String {
        let mut out = String::new();
        auto_link(s, &mut out);
        out
    }

    #[test]
    fn emoji_only() {
        assert!(is_emoji_only("😄🤘"));
        assert!(is_emoji_only("❤️"));
        assert!(is_emoji_only("🇩🇰"));
        assert!(!is_emoji_only("Haha! 😄🤘"));
        assert!(!is_emoji_only("🔥\nmultiple lines\n💯"));
        assert!(!is_emoji_only("🔥 💯"));
        assert!(!is_emoji_only("👨\u{200d}👩\u{200d}👧"));
        assert!(!is_emoji_only("1\u{fe0f}\u{20e3}"));
        assert!(!is_emoji_only(""));
        assert!(EMOJI.windows(2).all(|w| w[0].1 < w[1].0));
    }

    #[test]
    fn tweet_urls() {
        assert_eq!(normalize_tweet_url("https://x.com/dhh/status/1?s=20"), "https://twitter.com/dhh/status/1");
        assert_eq!(normalize_tweet_url("https://twitter.com/a?b"), "https://twitter.com/a");
        assert_eq!(normalize_tweet_url("https://basecamp.com/?a"), "https://basecamp.com/?a");
    }

    #[test]
    fn links_urls_and_emails() {
        assert_eq!(link("see https://example.com/a."), "see <a href=\"https://example.com/a\" target=\"_blank\">https://example.com/a</a>.");
        assert_eq!(link("(www.x.com/a_(b))"), "(<a href=\"http://www.x.com/a_(b)\" target=\"_blank\">www.x.com/a_(b)</a>)");
        assert_eq!(link("a <b> & c"), "a &lt;b&gt; &amp; c");
        assert_eq!(link("mail a.b@c.example.org!"), "mail <a href=\"mailto:a.b@c.example.org\" target=\"_blank\">a.b@c.example.org</a>!");
        assert_eq!(link("x@y"), "x@y");
        assert_eq!(link("xhttps://a.b c"), "x<a href=\"https://a.b\" target=\"_blank\">https://a.b</a> c");
        assert_eq!(link("SFTP://h/x"), "<a href=\"SFTP://h/x\" target=\"_blank\">SFTP://h/x</a>");
        assert_eq!(link("://x www. http://"), "://x www. http://");
        assert_eq!(link("https://"), "https://");
        assert_eq!(link(r#"https://a.com/?q="x""#), r#"<a href="https://a.com/?q=" target="_blank">https://a.com/?q=</a>"x""#);
    }
}
