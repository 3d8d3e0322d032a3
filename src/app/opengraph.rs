//! Link previews (spec/02 §4.30): fetch a page a user pasted, read its OpenGraph `<meta>`
//! tags, and check the image, all under the SSRF policy of `outbound::ssrf`. Runs on an
//! outbound job thread (`controllers::unfurl_links` parks the request meanwhile).
//!
//! Every address is resolved by us, checked, and pinned: the connection goes to the checked
//! address, never to whatever a second lookup would say (DNS rebinding). Redirects are
//! followed by hand (at most 10 requests), each target resolved, checked and pinned again.
//!
//! Deliberate differences from Rails: connect and read time out after `TIMEOUT` (Rails uses
//! Net::HTTP's 60 s defaults) and a whole preview gets `BUDGET`, one document fetch at a time (`DOCUMENT_LOCK`) so two 5 MiB pages
//! never sit in memory together, and a Twitter/X page that cannot be fetched is "no preview"
//! (204) rather than Rails' 500.

use crate::outbound::{self, ssrf, url};
use crate::richtext::tokenizer::{Token, Tokenizer};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The largest page read (Content-Length or streamed).
pub const MAX_BODY: usize = 5 * 1024 * 1024;
/// Requests per fetch, redirects included.
pub const MAX_REQUESTS: usize = 10;
/// Connect and each read.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// All lookups and requests of one preview together (the poster's request waits for it).
pub const BUDGET: Duration = Duration::from_secs(30);
/// Image types a preview may show (SVG is refused: it can carry script).
pub const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

const TWITTER_HOSTS: [&str; 4] = ["twitter.com", "www.twitter.com", "x.com", "www.x.com"];
const FX_TWITTER_HOST: &str = "fxtwitter.com";
/// URL endings that are files, not pages: nothing is fetched for them.
const FILE_EXTENSIONS: [&str; 36] = [
    "zip", "tar", "tar.gz", "tar.bz2", "tar.xz", "gz", "bz2", "rar", "7z", "dmg", "exe", "msi", "pkg", "deb", "iso", "jpg",
    "jpeg", "png", "gif", "bmp", "mp4", "mov", "avi", "mkv", "wmv", "flv", "heic", "heif", "mp3", "wav", "ogg", "aac", "wma",
    "webm", "ogv", "mpg",
];
/// `mpeg` too (kept apart so the array above stays a readable width).
const FILE_EXTENSION_MPEG: &str = "mpeg";

static DOCUMENT_LOCK: Mutex<()> = Mutex::new(());

/// A valid preview: title, url and description present; image checked or None.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    pub title: String,
    pub url: String,
    pub image: Option<String>,
    pub description: String,
}

impl Metadata {
    /// The JSON the composer reads: `{"title","url","image","description"}`.
    pub fn to_json(&self, out: &mut Vec<u8>) {
        use crate::crypto::json::write_string as s;
        out.extend_from_slice(b"{\"title\":");
        s(self.title.as_bytes(), out);
        out.extend_from_slice(b",\"url\":");
        s(self.url.as_bytes(), out);
        out.extend_from_slice(b",\"image\":");
        match &self.image {
            Some(i) => s(i.as_bytes(), out),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"description\":");
        s(self.description.as_bytes(), out);
        out.push(b'}');
    }
}

/// The preview of `url`, or None when there is none to show (invalid, private, not HTML,
/// too large, missing title/description, any failure).
pub fn from_url(url: &str) -> Option<Metadata> {
    let deadline = Instant::now() + BUDGET;
    let (fetch_url, force_utf8) = match twitter_rewrite(url) {
        Some(fx) => (fx, true),
        None => (url.to_owned(), false),
    };
    let tags = {
        let _one_at_a_time = DOCUMENT_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let html = read_html(&fetch_url, deadline)?;
        tags_of(html, force_utf8)
    };
    let og_url = tags.url.filter(|u| public_location(u, deadline).is_some()).unwrap_or_else(|| url.to_owned());
    let image = tags.image.filter(|i| image_type_allowed(i, deadline));
    let title = strip_and_escape(tags.title.as_deref().unwrap_or(""));
    let description = strip_and_escape(tags.description.as_deref().unwrap_or(""));
    if title.trim().is_empty() || description.trim().is_empty() {
        return None;
    }
    Some(Metadata { title, url: og_url, image, description })
}

/// A tweet URL (`twitter.com`/`x.com` host, a path other than `/`) rewritten to fxtwitter.com,
/// which serves OpenGraph tags for tweets.
pub fn twitter_rewrite(raw: &str) -> Option<String> {
    let (scheme, rest) = raw.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    let (host, port) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.contains(']') || h.ends_with(']') => (h, Some(p)),
        _ => (hostport, None),
    };
    let path = tail.split(['?', '#']).next().unwrap_or("");
    if !TWITTER_HOSTS.iter().any(|t| t.eq_ignore_ascii_case(host)) || path.is_empty() || path == "/" {
        return None;
    }
    let mut out = format!("{scheme}://");
    if let Some(u) = userinfo {
        out.push_str(u);
        out.push('@');
    }
    out.push_str(FX_TWITTER_HOST);
    if let Some(p) = port {
        out.push(':');
        out.push_str(p);
    }
    out.push_str(tail);
    Some(out)
}

/// True when `url` names a file or media type by its extension (nothing to unfurl).
pub fn looks_like_file(url: &str) -> bool {
    let b = url.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut from = 0;
    while let Some(rel) = url.get(from..).and_then(|s| s.find("http")) {
        let at = from + rel;
        from = at + 4;
        if at > 0 && b.get(at - 1).copied().is_some_and(word) {
            continue;
        }
        let rest = &url[at + 4..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let Some(run) = rest.strip_prefix("://") else { continue };
        let run = run.split(|c: char| c.is_whitespace()).next().unwrap_or("");
        let rb = run.as_bytes();
        // `\S+\.ext\b`: a dot after at least one character, then an extension and a boundary.
        for (i, _) in run.match_indices('.').filter(|(i, _)| *i >= 1) {
            let after = &run[i + 1..];
            let hit = FILE_EXTENSIONS.iter().chain(std::iter::once(&FILE_EXTENSION_MPEG)).any(|ext| {
                after.starts_with(ext) && !rb.get(i + 1 + ext.len()).copied().is_some_and(word)
            });
            if hit {
                return true;
            }
        }
    }
    false
}

/// What is left of `deadline`, at most `TIMEOUT`; None when it has passed.
fn time_left(deadline: Instant) -> Option<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    (!left.is_zero()).then(|| left.min(TIMEOUT))
}

/// The first address of `host` the policy allows (IPv4 first, resolver order kept).
fn allowed_address(host: &str, deadline: Instant) -> Option<IpAddr> {
    let ips = outbound::dns::resolve(host, time_left(deadline)?).ok()?;
    ips.into_iter().find(|&ip| !ssrf::blocked(ip) || ssrf::overridden(ip))
}

/// A URL that is an absolute http(s) URL (no spaces or other bytes a strict parser refuses)
/// whose host has an allowed address: (parsed, pinned address).
fn public_location(raw: &str, deadline: Instant) -> Option<(url::Url, IpAddr)> {
    if raw.bytes().any(|b| b <= b' ' || b >= 0x7f) {
        return None;
    }
    let u = url::parse(raw).ok()?;
    let ip = allowed_address(&u.host, deadline)?;
    Some((u, ip))
}

/// GET (or HEAD) `raw` with pinning and hand-followed redirects; the first non-redirect
/// response.
fn request(raw: &str, method: &str, max_body: usize, deadline: Instant) -> Option<outbound::Response> {
    let (_, mut ip) = public_location(raw, deadline)?;
    let mut current = raw.to_owned();
    for _ in 0..MAX_REQUESTS {
        let req = outbound::Request { method, url: &current, headers: &[], body: b"", timeout: time_left(deadline)?, max_body };
        let res = match outbound::send_pinned(&req, ip) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("unfurl: {method} {current} at {ip}: {e}");
                return None;
            }
        };
        if !(300..400).contains(&res.status) {
            return Some(res);
        }
        // Only absolute http(s) locations are followed; each is checked and pinned anew.
        let next = res.header("location")?.trim().to_owned();
        let (_, next_ip) = public_location(&next, deadline)?;
        current = next;
        ip = next_ip;
    }
    eprintln!("unfurl: {raw}: too many redirects");
    None
}

/// The page at `raw` if it is an acceptable HTML document (status 200, `text/html`, ≤ 5 MiB).
fn read_html(raw: &str, deadline: Instant) -> Option<Vec<u8>> {
    public_location(raw, deadline)?;
    if looks_like_file(raw) {
        return None;
    }
    let res = request(raw, "GET", MAX_BODY, deadline)?;
    let media = res.header("content-type").map(|t| t.split(';').next().unwrap_or("").trim().to_ascii_lowercase());
    (res.status == 200 && media.as_deref() == Some("text/html")).then_some(res.body)
}

/// True when a HEAD of `image` answers an allowed image type exactly.
fn image_type_allowed(image: &str, deadline: Instant) -> bool {
    match request(image, "HEAD", 0, deadline) {
        Some(res) => res.header("content-type").is_some_and(|t| IMAGE_TYPES.contains(&t.to_ascii_lowercase().as_str())),
        None => false,
    }
}

/// The OpenGraph values of a document (last occurrence of each wins).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tags {
    pub title: Option<String>,
    pub url: Option<String>,
    pub image: Option<String>,
    pub description: Option<String>,
}

/// Reads the `og:` meta tags of `html`. Without a declared charset (and without
/// `force_utf8`), non-ASCII characters are dropped from the values, as Rails does.
pub fn tags_of(mut html: Vec<u8>, force_utf8: bool) -> Tags {
    drop_invalid_utf8(&mut html);
    let text = String::from_utf8(html).unwrap_or_default();
    let mut tags = Tags::default();
    let mut declared = false;
    for token in Tokenizer::new(&text) {
        let Token::Start { name, attrs, .. } = token else { continue };
        if name != "meta" {
            continue;
        }
        let attr = |n: &str| attrs.iter().find(|a| a.name == n).map(|a| a.value.as_ref());
        if attr("charset").is_some()
            || (attr("http-equiv").is_some_and(|h| h.eq_ignore_ascii_case("content-type"))
                && attr("content").is_some_and(|c| c.to_ascii_lowercase().contains("charset=")))
        {
            declared = true;
        }
        let (property, name_attr) = (attr("property"), attr("name"));
        let og = |v: Option<&str>| v.is_some_and(|v| v.starts_with("og:"));
        if !og(property) && !og(name_attr) {
            continue;
        }
        let Some(content) = attr("content").filter(|c| !c.trim().is_empty()) else { continue };
        let key = property.or(name_attr).unwrap_or("").replace("og:", "");
        let slot = match key.as_str() {
            "title" => &mut tags.title,
            "url" => &mut tags.url,
            "image" => &mut tags.image,
            "description" => &mut tags.description,
            _ => continue,
        };
        *slot = Some(content.to_owned());
    }
    if !declared && !force_utf8 {
        for v in [&mut tags.title, &mut tags.url, &mut tags.image, &mut tags.description].into_iter().flatten() {
            v.retain(|c| c.is_ascii());
        }
    }
    tags
}

/// Removes the bytes that are not valid UTF-8, in place (no copy of a 5 MiB page).
fn drop_invalid_utf8(v: &mut Vec<u8>) {
    let mut read = 0;
    let mut write = 0;
    while read < v.len() {
        let rest = v.get(read..).unwrap_or(&[]);
        let (good, skip) = match std::str::from_utf8(rest) {
            Ok(_) => (rest.len(), 0),
            Err(e) => (e.valid_up_to(), e.error_len().unwrap_or(rest.len() - e.valid_up_to())),
        };
        v.copy_within(read..read + good, write);
        write += good;
        read += good + skip;
    }
    v.truncate(write);
}

/// Rails' `sanitize(strip_tags(s))`: the text with every tag removed (script text kept as
/// text), then escaped so it is safe as HTML.
pub fn strip_and_escape(s: &str) -> String {
    let mut text = String::with_capacity(s.len());
    for token in Tokenizer::new(s) {
        if let Token::Text(t) = token {
            text.push_str(&t);
        }
    }
    let mut out = String::with_capacity(text.len());
    crate::richtext::dom::escape_text(&mut out, &text);
    out
}

#[cfg(test)]
#[path = "opengraph_tests.rs"]
mod tests;
