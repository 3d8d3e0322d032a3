//! The browser gate (spec/02 §1.2 step 1, spec/03 §10): old browsers get the
//! "unsupported browser" page instead of the app.
//!
//! Minimum versions: Safari 17.2, Chrome 120, Firefox 121, Opera 104; Internet Explorer never.
//! Everything else passes: unknown browsers, Edge, crawlers, curl, a missing User-Agent, and a
//! User-Agent that reports no version. Safari's version comes from `Version/x.y`, as the
//! `useragent` gem reads it. This is a small hand-written classifier, not a general parser: it
//! looks for the product tokens in the order that disambiguates them (Edge and Opera carry
//! `Chrome/`, Chrome carries `Safari/`).

/// User agents whose verdict a loop remembers (a power of two).
const REMEMBERED: usize = 16;
/// Longer user agents are classified on every request.
const MAX_REMEMBERED_UA: usize = 256;

/// A loop's memo of `blocked` verdicts, keyed by the exact User-Agent bytes: a browser sends
/// the same one on every request, and classifying a real one (a dozen substring searches over
/// ~120 bytes) costs tens of thousands of instructions, more than the rest of a cached hit.
/// Fixed size, allocated once; a new user agent replaces the one in its slot.
pub struct Verdicts {
    slots: Box<[(usize, [u8; MAX_REMEMBERED_UA], bool)]>,
}

impl Verdicts {
    pub fn new() -> Verdicts {
        Verdicts { slots: vec![(0, [0; MAX_REMEMBERED_UA], false); REMEMBERED].into_boxed_slice() }
    }

    /// `blocked(user_agent)`, from the memo when this exact user agent was seen before.
    pub fn blocked(&mut self, user_agent: Option<&[u8]>) -> bool {
        let ua = match user_agent {
            Some(ua) if !ua.is_empty() && ua.len() <= MAX_REMEMBERED_UA => ua,
            other => return blocked(other),
        };
        let Some(slot) = self.slots.get_mut(slot_of(ua)) else { return blocked(user_agent) };
        if slot.0 == ua.len() && slot.1.get(..ua.len()) == Some(ua) {
            return slot.2;
        }
        let verdict = blocked(user_agent);
        if let Some(dst) = slot.1.get_mut(..ua.len()) {
            dst.copy_from_slice(ua);
            slot.0 = ua.len();
            slot.2 = verdict;
        }
        verdict
    }
}

impl Default for Verdicts {
    fn default() -> Self {
        Verdicts::new()
    }
}

/// The memo slot of a user agent: its length and a few bytes where versions differ.
fn slot_of(ua: &[u8]) -> usize {
    let mut h = ua.len();
    for i in [ua.len() / 2, ua.len() * 3 / 4, ua.len().saturating_sub(9), ua.len().saturating_sub(1)] {
        h = h.wrapping_mul(31).wrapping_add(ua.get(i).copied().unwrap_or(0) as usize);
    }
    h & (REMEMBERED - 1)
}

/// True when the request must be answered with the unsupported-browser page.
pub fn blocked(user_agent: Option<&[u8]>) -> bool {
    let Some(ua) = user_agent else { return false };
    if ua.is_empty() || is_bot(ua) {
        return false;
    }
    if contains(ua, b"MSIE ") || contains(ua, b"Trident/") {
        return true;
    }
    // Edge (legacy and Chromium) is not on the list: allowed whatever its version.
    if contains(ua, b"Edg/") || contains(ua, b"Edge/") || contains(ua, b"EdgA/") || contains(ua, b"EdgiOS/") {
        return false;
    }
    if let Some(v) = version_after(ua, b"OPR/") {
        return v < (104, 0);
    }
    if contains(ua, b"Opera") {
        return match version_after(ua, b"Version/").or_else(|| version_after(ua, b"Opera/")) {
            Some(v) => v < (104, 0),
            None => false,
        };
    }
    if let Some(v) = version_after(ua, b"Firefox/").or_else(|| version_after(ua, b"FxiOS/")) {
        return v < (121, 0);
    }
    if let Some(v) = version_after(ua, b"Chrome/").or_else(|| version_after(ua, b"CriOS/")) {
        return v < (120, 0);
    }
    if contains(ua, b"Safari/") || contains(ua, b"AppleWebKit/") {
        return match version_after(ua, b"Version/") {
            Some(v) => v < (17, 2),
            None => false,
        };
    }
    false
}

/// Apple Messages link previews announce themselves as both Facebook's and Twitter's crawler;
/// the incompatible-browser page titles itself "Campfire" for them.
pub fn is_link_preview(user_agent: Option<&[u8]>) -> bool {
    user_agent.is_some_and(|ua| contains(ua, b"facebookexternalhit") && contains(ua, b"Twitterbot"))
}

/// Crawlers are never blocked, whatever engine they claim.
fn is_bot(ua: &[u8]) -> bool {
    const MARKS: [&[u8]; 6] = [b"bot", b"crawl", b"spider", b"slurp", b"facebookexternalhit", b"headlesschrome-bot"];
    MARKS.iter().any(|m| contains_ignore_case(ua, m))
}

/// The `major.minor` that follows `token` (e.g. `Chrome/` → `(120, 0)`), when it starts with a digit.
fn version_after(ua: &[u8], token: &[u8]) -> Option<(u32, u32)> {
    let at = find(ua, token)? + token.len();
    let rest = ua.get(at..)?;
    let (major, n) = number(rest)?;
    let minor = match rest.get(n) {
        Some(b'.') => rest.get(n + 1..).and_then(number).map_or(0, |(m, _)| m),
        _ => 0,
    };
    Some((major, minor))
}

/// Leading decimal digits as a number (saturating) and how many bytes they took.
fn number(s: &[u8]) -> Option<(u32, usize)> {
    let n = s.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let v = s[..n].iter().fold(0u32, |acc, d| acc.saturating_mul(10).saturating_add(u32::from(d - b'0')));
    Some((v, n))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

fn contains_ignore_case(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(ua: &str) -> bool {
        blocked(Some(ua.as_bytes()))
    }

    #[test]
    fn missing_or_versionless_user_agents_pass() {
        assert!(!blocked(None));
        assert!(!b(""));
        assert!(!b("curl/8.5.0"));
        assert!(!b("Mozilla/5.0"));
        assert!(!b("Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"));
    }

    #[test]
    fn firefox() {
        assert!(b("Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/114.0"));
        assert!(!b("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0"));
    }

    #[test]
    fn safari_uses_version_token() {
        let old = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15";
        let ok = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15";
        assert!(b(old));
        assert!(!b(ok));
    }

    #[test]
    fn chrome_opera_edge() {
        assert!(b("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36"));
        assert!(!b("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"));
        assert!(!b("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36"));
        assert!(b("Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Safari/537.36 OPR/103.0"));
        assert!(!b("Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/100.0 Safari/537.36 Edg/100.0"));
    }

    #[test]
    fn internet_explorer_always_blocked_bots_never() {
        assert!(b("Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko"));
        assert!(b("Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1)"));
        assert!(!b("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/41.0 Safari/537.36"));
    }

    #[test]
    fn link_preview() {
        assert!(is_link_preview(Some(b"Mozilla/5.0 (Macintosh) facebookexternalhit/1.1 Facebot Twitterbot/1.0")));
        assert!(!is_link_preview(Some(b"Twitterbot/1.0")));
    }

    #[test]
    fn remembered_verdicts_match_fresh_ones() {
        let agents: [&[u8]; 6] = [
            b"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
            b"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Safari/537.36",
            b"Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko",
            b"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15",
            b"curl/8.5.0",
            b"",
        ];
        let mut memo = Verdicts::new();
        for _ in 0..3 {
            for ua in agents {
                assert_eq!(memo.blocked(Some(ua)), blocked(Some(ua)), "{}", String::from_utf8_lossy(ua));
            }
            assert!(!memo.blocked(None));
        }
        assert!(memo.blocked(Some(agents[1])), "old Chrome stays blocked when remembered");
        let long = [b'a'; MAX_REMEMBERED_UA + 1];
        assert_eq!(memo.blocked(Some(&long)), blocked(Some(&long)));
    }
}
