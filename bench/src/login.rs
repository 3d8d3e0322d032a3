//! Establishing the signed-in user the way the harness does (workloads.md §3): fetch the login
//! form, post the credentials, keep the cookie jar, then scrape the room page and sidebar for the
//! CSRF token, Turbo stream sources and asset paths.

use crate::http::{form_encode, request, Client};
use crate::stream::Endpoint;

/// A signed-in user and what was scraped from their pages.
#[derive(Clone, Debug, Default)]
pub struct Session {
    /// `name=value; name2=value2`, sent unchanged on every later request.
    pub jar: String,
    /// The `csrf-token` meta content, or empty.
    pub csrf: String,
    /// `(channel, signed-stream-name)` of every `<turbo-cable-stream-source>`.
    pub stream_sources: Vec<(String, String)>,
    /// The first `/assets/….css` path.
    pub css: Option<String>,
}

/// Signs in as `email`/`password` and scrapes `/rooms/<room>` and `/users/me/sidebar`.
pub fn sign_in(endpoint: &Endpoint, email: &str, password: &str, room: i64) -> Result<Session, String> {
    let host = endpoint.host.as_str();
    let mut jar: Vec<(String, String)> = Vec::new();
    let form = Client::new(endpoint).send(&request("GET", "/session/new", host, &[], b""))?;
    merge(&mut jar, form.cookies());
    let csrf = meta_csrf(&String::from_utf8_lossy(&form.body)).unwrap_or_default();
    let body = format!(
        "email_address={}&password={}&authenticity_token={}",
        form_encode(email),
        form_encode(password),
        form_encode(&csrf)
    );
    let cookie = jar_string(&jar);
    let resp = Client::new(endpoint).send(&request(
        "POST",
        "/session",
        host,
        &[("cookie", &cookie), ("content-type", "application/x-www-form-urlencoded"), ("sec-fetch-site", "same-origin")],
        body.as_bytes(),
    ))?;
    let new = resp.cookies();
    if resp.status != 302 || !new.iter().any(|(n, _)| n == "session_token") {
        return Err(format!("sign-in failed: status {} (want 302 setting session_token)", resp.status));
    }
    merge(&mut jar, new);
    let jar = jar_string(&jar);
    let mut c = Client::new(endpoint);
    let mut text = String::new();
    for path in [format!("/rooms/{room}"), "/users/me/sidebar".to_string()] {
        let r = c.send(&request("GET", &path, host, &[("cookie", &jar)], b""))?;
        if r.status != 200 {
            return Err(format!("scrape {path}: status {}", r.status));
        }
        text.push_str(&String::from_utf8_lossy(&r.body));
    }
    Ok(Session {
        jar,
        csrf: meta_csrf(&text).or(Some(csrf)).unwrap_or_default(),
        stream_sources: stream_sources(&text),
        css: asset(&text, "href=\"/assets/", ".css"),
    })
}

fn merge(jar: &mut Vec<(String, String)>, new: Vec<(String, String)>) {
    for (n, v) in new {
        match jar.iter_mut().find(|(k, _)| *k == n) {
            Some(slot) => slot.1 = v,
            None => jar.push((n, v)),
        }
    }
}

fn jar_string(jar: &[(String, String)]) -> String {
    jar.iter().map(|(n, v)| format!("{n}={v}")).collect::<Vec<_>>().join("; ")
}

fn meta_csrf(html: &str) -> Option<String> {
    let i = html.find("<meta name=\"csrf-token\" content=\"")?;
    let rest = &html[i + 33..];
    Some(rest[..rest.find('"')?].to_string())
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// `(channel, signed-stream-name)` pairs of `<turbo-cable-stream-source channel="X" signed-stream-name="Y"`.
pub fn stream_sources(html: &str) -> Vec<(String, String)> {
    const TAG: &str = "<turbo-cable-stream-source channel=\"";
    const NAME: &str = "\" signed-stream-name=\"";
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(TAG) {
        rest = &rest[i + TAG.len()..];
        let Some(q) = rest.find('"') else { break };
        let channel = &rest[..q];
        if rest[q..].starts_with(NAME) {
            let after = &rest[q + NAME.len()..];
            if let Some(e) = after.find('"') {
                out.push((unescape(channel), unescape(&after[..e])));
            }
        }
    }
    out
}

fn asset(html: &str, prefix: &str, ext: &str) -> Option<String> {
    let mut rest = html;
    while let Some(i) = rest.find(prefix) {
        let start = i + prefix.find("/assets/").unwrap_or(0);
        let tail = &rest[start..];
        let end = tail.find(['"', '\'', ' ', '>']).unwrap_or(tail.len());
        let path = &tail[..end];
        if path.ends_with(ext) {
            return Some(path.to_string());
        }
        rest = &rest[i + prefix.len()..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrapes() {
        let html = r#"<meta name="csrf-token" content="tok"><link href="/assets/app-1.css"><script src="/assets/app-2.js"></script>
<turbo-cable-stream-source channel="Turbo::StreamsChannel" signed-stream-name="abc&quot;--x"></turbo-cable-stream-source>"#;
        assert_eq!(meta_csrf(html).as_deref(), Some("tok"));
        assert_eq!(asset(html, "href=\"/assets/", ".css").as_deref(), Some("/assets/app-1.css"));
        assert_eq!(asset(html, "/assets/", ".js").as_deref(), Some("/assets/app-2.js"));
        assert_eq!(stream_sources(html), vec![("Turbo::StreamsChannel".to_string(), "abc\"--x".to_string())]);
    }
}
