//! UnfurlLinksController (spec/02 §4.30): `POST /unfurl_link` with `url` (JSON body, as the
//! composer sends it, or a form field). The page is fetched on an outbound job thread while
//! the connection is parked; 200 with the preview JSON, or 204 when there is none.

use crate::app::{opengraph, AppError, Ctx, Flow, Req};
use crate::http::Response;
use crate::outbound;

/// `POST /unfurl_link`: 400 when `url` is missing or blank; 503 when the outbound queue is full.
pub fn create(_cx: &mut Ctx, rq: &mut Req<'_, '_>, _res: &mut Response) -> Result<Flow, AppError> {
    let url = url_param(rq)?;
    let ticket = rq.ticket();
    // A full queue drops the job and with it the ticket, which answers 503.
    outbound::spawn(Box::new(move || {
        let preview = opengraph::from_url(&url);
        ticket.finish(move |_, res| {
            match preview {
                Some(m) => {
                    res.status(200);
                    res.header("Content-Type", b"application/json; charset=utf-8");
                    m.to_json(res.body());
                }
                None => res.status(204),
            }
            Ok(())
        });
    }));
    Ok(Flow::Parked)
}

/// `url` from a JSON object body (`{"url": "…"}`) or the form/query parameters.
fn url_param(rq: &Req<'_, '_>) -> Result<String, AppError> {
    let json = rq.header(b"content-type").is_some_and(|t| {
        t.split(|&b| b == b';').next().is_some_and(|m| m.trim_ascii().eq_ignore_ascii_case(b"application/json"))
    });
    let url = if json { json_url(rq.http.body)? } else { rq.params.get_str("url").map(str::to_owned) };
    url.filter(|u| !u.trim().is_empty()).ok_or(AppError::BadRequest("param is missing or the value is empty: url"))
}

/// The top-level `"url"` string of a JSON object; 400 when the body is not a JSON object.
fn json_url(body: &[u8]) -> Result<Option<String>, AppError> {
    let bad = |_| AppError::BadRequest("body declared as JSON does not parse");
    let mut r = crate::crypto::json::Reader::new(body);
    r.begin_object().map_err(bad)?;
    let mut found = None;
    while let Some(key) = r.next_key().map_err(bad)? {
        if key == b"url" && r.peek() == Some(b'"') {
            let raw = r.string().map_err(bad)?;
            let mut out = Vec::with_capacity(raw.len());
            crate::crypto::json::unescape(raw, &mut out).map_err(bad)?;
            found = Some(String::from_utf8_lossy(&out).into_owned());
        } else {
            r.value().map_err(bad)?;
        }
    }
    Ok(found)
}
