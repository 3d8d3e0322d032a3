//! The upload workload (workloads.md §9): as the signed-in user, post `black_hole.jpg` as a
//! message attachment (multipart, the composer's XHR fields and headers), then follow the
//! attachment's `<img src>` through up to 5 redirects to the thumbnail bytes. (The harness
//! says "the first `<img src>`"; in our partial the creator's avatar comes first, so the
//! attachment's image — class `message__attachment` — is looked for.) Reports
//! post, thumbnail and total milliseconds per repetition and the median total.

use crate::http::{request, Client};
use crate::login;
use crate::run::read_labels;
use crate::stream::Endpoint;
use std::path::PathBuf;
use std::time::Instant;

pub struct Options {
    pub url: String,
    /// The PEM root to trust for an https:// URL.
    pub cacert: Option<PathBuf>,
    pub labels: PathBuf,
    /// The file to upload; the seed's stand-in `black_hole.jpg` when None.
    pub file: Option<PathBuf>,
    pub reps: usize,
}

const BOUNDARY: &str = "----campfireBenchUpload5e7f";

/// Runs the workload and prints one line per repetition plus the median.
pub fn run(o: &Options) -> Result<(), String> {
    let endpoint = Endpoint::parse(&o.url, o.cacert.as_deref())?;
    let host = endpoint.host.clone();
    let (labels, password) = read_labels(&o.labels)?;
    let data = match &o.file {
        Some(p) => std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?,
        None => crate::media::stand_in("black_hole.jpg").ok_or("no stand-in black_hole.jpg")?,
    };
    let session = login::sign_in(&endpoint, &labels.email, &password, labels.watercooler)?;
    let mut c = Client::new(&endpoint);
    let mut totals = Vec::new();
    println!("upload: {} bytes of black_hole.jpg, {} repetitions", data.len(), o.reps);
    for rep in 0..o.reps {
        let cmid = format!("bench-upload-{}-{rep}", std::process::id());
        let mut body = Vec::with_capacity(data.len() + 1024);
        for (name, value) in [("authenticity_token", session.csrf.as_str()), ("message[client_message_id]", cmid.as_str())] {
            body.extend_from_slice(format!("--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes());
        }
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\ncontent-disposition: form-data; name=\"message[attachment]\"; filename=\"black_hole.jpg\"\r\ncontent-type: image/jpeg\r\n\r\n").as_bytes(),
        );
        body.extend_from_slice(&data);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
        let headers = [
            ("cookie", session.jar.as_str()),
            ("accept", "text/vnd.turbo-stream.html, text/html"),
            ("x-csrf-token", session.csrf.as_str()),
            ("sec-fetch-site", "same-origin"),
            ("content-type", content_type.as_str()),
        ];
        let started = Instant::now();
        let r = c.send(&request("POST", &format!("/rooms/{}/messages", labels.hq), &host, &headers, &body))?;
        let post_ms = started.elapsed().as_secs_f64() * 1000.0;
        if r.status != 200 {
            return Err(format!("upload: status {} (want 200)", r.status));
        }
        let html = String::from_utf8_lossy(&r.body);
        let mut src = attachment_src(&html).ok_or("upload: no attachment <img src> in the answer")?;
        let thumb_started = Instant::now();
        let mut thumb = None;
        for _ in 0..=5 {
            let t = c.send(&request("GET", &src, &host, &[("cookie", session.jar.as_str())], b""))?;
            match (t.status, t.header("location")) {
                (301 | 302 | 303 | 307 | 308, Some(l)) => src = l.to_string(),
                (200, _) => {
                    thumb = Some(t);
                    break;
                }
                (s, _) => return Err(format!("thumbnail {src}: status {s}")),
            }
        }
        let thumb = thumb.ok_or("thumbnail: more than 5 redirects")?;
        let thumb_ms = thumb_started.elapsed().as_secs_f64() * 1000.0;
        let total = post_ms + thumb_ms;
        totals.push(total);
        println!(
            "  rep {rep}: post {post_ms:.1} ms, thumbnail {thumb_ms:.1} ms ({} bytes, {}), total {total:.1} ms",
            thumb.body.len(),
            thumb.header("content-type").unwrap_or("?")
        );
    }
    if let Some(m) = crate::report::median(totals) {
        println!("upload: median total {m:.1} ms");
    }
    Ok(())
}

/// The `src` of the first attachment `<img>` of an HTML text, with `&amp;` decoded.
fn attachment_src(html: &str) -> Option<String> {
    let img = html.find("<img class=\"message__attachment\"")?;
    let rest = &html[img..];
    let at = rest.find(" src=\"")? + 6;
    let end = rest[at..].find('"')?;
    Some(rest[at..at + end].replace("&amp;", "&"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_the_first_image() {
        let html = r#"<template><img src="/avatar"><img class="message__attachment" src="/a?b=1&amp;c=2" width="1"></template>"#;
        assert_eq!(super::attachment_src(html).as_deref(), Some("/a?b=1&c=2"));
        assert_eq!(super::attachment_src("<p>none</p>"), None);
    }
}
