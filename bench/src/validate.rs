//! The response contract and its checks (workloads.md §4.1): every warm-up and timed response is
//! validated as strictly as the shared harness does, so a fast wrong answer never counts.

use crate::gzip;

/// What kind of body a route must return.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A complete HTML document: starts with `<!doctype html>`, ends with `</html>`.
    Document,
    /// An HTML fragment (the messages page).
    Fragment,
    /// A Turbo Stream answering a post.
    Post,
    /// Exactly the bytes captured at preflight (avatar, static CSS).
    Exact,
    /// Any text containing the required markers (`/up`).
    Text,
}

/// The contract of one route, built at preflight from independent SQL and one fetched response.
#[derive(Clone, Debug)]
pub struct Contract {
    pub kind: Kind,
    /// The main type (before `;`) the Content-Type must have.
    pub content_type: String,
    /// Substrings the decoded body must contain.
    pub required: Vec<String>,
    /// When `Some`, the exact sequence of `data-message-id` values the page must carry.
    pub message_ids: Option<Vec<i64>>,
    /// Per expected id, a token of its text that must appear inside that message's slice.
    pub message_content: Vec<String>,
    /// For `Kind::Exact`: the decoded bytes.
    pub exact_body: Option<Vec<u8>>,
}

/// A response as the client read it.
pub struct Response<'a> {
    pub status: u16,
    /// Header names in lowercase.
    pub headers: &'a [(String, String)],
    /// The body as it came over the wire (still encoded).
    pub wire: &'a [u8],
}

impl Response<'_> {
    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// What a valid response told us.
#[derive(Debug, Default)]
pub struct Checked {
    pub decoded_len: usize,
    /// The message id a post answered with.
    pub message_id: Option<i64>,
}

/// Checks `r` against `c`. `posted` is the exact text of a post (`bench write <nonce>`).
/// Returns the reason for the first failed rule.
pub fn check(c: &Contract, r: &Response, posted: Option<&str>) -> Result<Checked, String> {
    if r.status != 200 {
        return Err(format!("status {}", r.status));
    }
    if r.wire.is_empty() {
        return Err("empty body".into());
    }
    let ct = r.header("content-type").unwrap_or("");
    let main = ct.split(';').next().unwrap_or("").trim();
    if !main.eq_ignore_ascii_case(&c.content_type) {
        return Err(format!("content-type {main:?}, expected {:?}", c.content_type));
    }
    if let Some(cl) = r.header("content-length") {
        if cl.trim().parse::<usize>().ok() != Some(r.wire.len()) {
            return Err(format!("content-length {cl} but {} bytes on the wire", r.wire.len()));
        }
    }
    let decoded_owned;
    let body: &[u8] = match r.header("content-encoding").map(|v| v.trim().to_ascii_lowercase()) {
        None => r.wire,
        Some(e) if e.is_empty() || e == "identity" => r.wire,
        Some(e) if e == "gzip" => {
            decoded_owned = gzip::decode(r.wire)?;
            &decoded_owned
        }
        Some(e) => return Err(format!("content-encoding {e:?}")),
    };
    let checked = Checked { decoded_len: body.len(), message_id: None };
    if c.kind == Kind::Exact {
        return if c.exact_body.as_deref() == Some(body) { Ok(checked) } else { Err("body differs from preflight".into()) };
    }
    let text = std::str::from_utf8(body).map_err(|_| "body is not UTF-8".to_string())?;
    for m in &c.required {
        if !text.contains(m.as_str()) {
            return Err(format!("missing {m:?}"));
        }
    }
    match c.kind {
        Kind::Document => {
            let t = text.trim();
            let head = t.get(..15).unwrap_or("");
            if !head.eq_ignore_ascii_case("<!doctype html>") || !t.ends_with("</html>") {
                return Err("not a complete HTML document".into());
            }
        }
        Kind::Post => return check_post(text, posted).map(|id| Checked { message_id: Some(id), ..checked }),
        _ => {}
    }
    if let Some(expected) = &c.message_ids {
        check_messages(text, expected, &c.message_content)?;
    }
    Ok(checked)
}

/// Every `data-message-id="N"` in `text`, with the byte offset where each attribute starts.
pub fn message_ids(text: &str) -> Result<Vec<(usize, i64)>, String> {
    const ATTR: &str = "data-message-id=\"";
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(ATTR) {
        let at = from + i;
        let rest = &text[at + ATTR.len()..];
        let end = rest.find('"').ok_or("unterminated data-message-id")?;
        let id = rest[..end].parse::<i64>().map_err(|_| format!("bad data-message-id {:?}", &rest[..end]))?;
        out.push((at, id));
        from = at + ATTR.len() + end;
    }
    Ok(out)
}

fn check_messages(text: &str, expected: &[i64], content: &[String]) -> Result<(), String> {
    let found = message_ids(text)?;
    let ids: Vec<i64> = found.iter().map(|(_, id)| *id).collect();
    if ids != expected {
        let first_diff = ids.iter().zip(expected).position(|(a, b)| a != b).unwrap_or(ids.len().min(expected.len()));
        return Err(format!(
            "message ids differ at position {first_diff}: got {} ids, expected {} (got {:?}, expected {:?})",
            ids.len(),
            expected.len(),
            ids.get(first_diff),
            expected.get(first_diff)
        ));
    }
    for (i, token) in content.iter().enumerate() {
        let (Some((start, id)), end) = (found.get(i), found.get(i + 1).map_or(text.len(), |(e, _)| *e)) else { break };
        if !token.is_empty() && !text[*start..end].contains(token.as_str()) {
            return Err(format!("message {id} lacks its text {token:?}"));
        }
    }
    Ok(())
}

fn check_post(text: &str, posted: Option<&str>) -> Result<i64, String> {
    let t = text.trim_start();
    if !t.starts_with("<turbo-stream") || !t.trim_end().ends_with("</turbo-stream>") {
        return Err("not a turbo stream".into());
    }
    if !t.contains("<template>") || !t.contains("</template>") {
        return Err("turbo stream without <template>".into());
    }
    let ids = message_ids(t)?;
    let [(_, id)] = ids.as_slice() else {
        return Err(format!("{} data-message-id attributes in a post response", ids.len()));
    };
    if *id <= 0 {
        return Err(format!("message id {id}"));
    }
    match posted {
        Some(p) if t.contains(p) => Ok(*id),
        Some(_) => Err("posted text missing from the response".into()),
        None => Err("no posted text to check".into()),
    }
}

/// The longest `[A-Za-z0-9_]{3,}` token of `plain` (the first of equal length), or "" if none.
pub fn longest_token(plain: &str) -> String {
    let mut best = "";
    for tok in plain.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if tok.len() >= 3 && tok.len() > best.len() {
            best = tok;
        }
    }
    best.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(ids: &[i64]) -> String {
        let mut s = String::from("<!DOCTYPE html>\n<html><body>");
        for id in ids {
            s.push_str(&format!("<div id=\"message_{id}\" data-message-id=\"{id}\"><p>text{id} words</p></div>"));
        }
        s.push_str("</body></html>\n");
        s
    }

    fn contract(ids: &[i64]) -> Contract {
        Contract {
            kind: Kind::Document,
            content_type: "text/html".into(),
            required: ids.iter().map(|id| format!("id=\"message_{id}\"")).collect(),
            message_ids: Some(ids.to_vec()),
            message_content: ids.iter().map(|id| format!("text{id}")).collect(),
            exact_body: None,
        }
    }

    fn headers(ct: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut h = vec![("content-type".to_string(), ct.to_string())];
        h.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        h
    }

    fn run(c: &Contract, status: u16, h: &[(String, String)], wire: &[u8], posted: Option<&str>) -> Result<Checked, String> {
        check(c, &Response { status, headers: h, wire }, posted)
    }

    #[test]
    fn accepts_a_good_page_plain_and_gzipped() {
        let c = contract(&[1, 2, 3]);
        let body = page(&[1, 2, 3]);
        let h = headers("text/html; charset=utf-8", &[("content-length", &body.len().to_string())]);
        assert!(run(&c, 200, &h, body.as_bytes(), None).is_ok());
        let gz = gzip::encode(body.as_bytes());
        let h = headers("text/html", &[("content-encoding", "gzip"), ("content-length", &gz.len().to_string())]);
        assert_eq!(run(&c, 200, &h, &gz, None).unwrap().decoded_len, body.len());
    }

    #[test]
    fn rejects_a_missing_or_reordered_message() {
        let c = contract(&[1, 2, 3]);
        let h = headers("text/html", &[]);
        let mut missing = contract(&[1, 3]);
        missing.required.clear();
        assert!(run(&c, 200, &h, page(&[1, 3]).as_bytes(), None).is_err());
        // Even with the markers satisfied, the id sequence must be exact.
        let mut relaxed = c.clone();
        relaxed.required.clear();
        relaxed.message_content.clear();
        assert!(run(&relaxed, 200, &h, page(&[1, 3]).as_bytes(), None).unwrap_err().contains("message ids"));
        assert!(run(&relaxed, 200, &h, page(&[1, 3, 2]).as_bytes(), None).unwrap_err().contains("message ids"));
        assert!(run(&relaxed, 200, &h, page(&[1, 2, 3, 4]).as_bytes(), None).is_err());
        assert!(run(&missing, 200, &h, page(&[1, 3]).as_bytes(), None).is_ok());
    }

    #[test]
    fn rejects_a_message_without_its_text() {
        let c = contract(&[1, 2]);
        let body = page(&[1, 2]).replace("text2 words", "other words");
        assert!(run(&c, 200, &headers("text/html", &[]), body.as_bytes(), None).unwrap_err().contains("lacks its text"));
    }

    #[test]
    fn rejects_gzip_with_a_trailing_byte() {
        let c = contract(&[1]);
        let mut gz = gzip::encode(page(&[1]).as_bytes());
        gz.push(b'\n');
        let h = headers("text/html", &[("content-encoding", "gzip")]);
        assert!(run(&c, 200, &h, &gz, None).unwrap_err().contains("trailing"));
        let h = headers("text/html", &[("content-encoding", "br")]);
        assert!(run(&c, 200, &h, &gz, None).is_err());
    }

    #[test]
    fn rejects_a_wrong_content_length() {
        let c = contract(&[1]);
        let body = page(&[1]);
        let h = headers("text/html", &[("content-length", &(body.len() + 1).to_string())]);
        assert!(run(&c, 200, &h, body.as_bytes(), None).unwrap_err().contains("content-length"));
    }

    #[test]
    fn rejects_an_error_page_served_with_200() {
        let c = contract(&[1, 2]);
        let h = headers("text/html", &[]);
        let err = "<!doctype html><html><body><h1>We're sorry, but something went wrong.</h1></body></html>";
        assert!(run(&c, 200, &h, err.as_bytes(), None).is_err());
        assert!(run(&c, 500, &h, page(&[1, 2]).as_bytes(), None).unwrap_err().contains("status"));
        assert!(run(&c, 200, &headers("application/json", &[]), page(&[1, 2]).as_bytes(), None).is_err());
        let truncated = page(&[1, 2]).replace("</html>", "");
        assert!(run(&c, 200, &h, truncated.as_bytes(), None).unwrap_err().contains("document"));
    }

    fn post_contract() -> Contract {
        Contract {
            kind: Kind::Post,
            content_type: "text/vnd.turbo-stream.html".into(),
            required: vec!["action=\"append\"".into(), "target=\"messages_rooms_open_7\"".into()],
            message_ids: None,
            message_content: vec![],
            exact_body: None,
        }
    }

    fn stream(id: &str, text: &str) -> String {
        format!("<turbo-stream action=\"append\" target=\"messages_rooms_open_7\"><template><div data-message-id=\"{id}\">{text}</div></template></turbo-stream>\n")
    }

    #[test]
    fn checks_posts() {
        let c = post_contract();
        let h = headers("text/vnd.turbo-stream.html; charset=utf-8", &[]);
        let ok = stream("42", "<p>bench write abc1</p>");
        assert_eq!(run(&c, 200, &h, ok.as_bytes(), Some("bench write abc1")).unwrap().message_id, Some(42));
        assert!(run(&c, 200, &h, ok.as_bytes(), Some("bench write abc2")).unwrap_err().contains("posted text"));
        assert!(run(&c, 200, &h, stream("0", "bench write abc1").as_bytes(), Some("bench write abc1")).is_err());
        let two = stream("42", "bench write abc1 <i data-message-id=\"43\"></i>");
        assert!(run(&c, 200, &h, two.as_bytes(), Some("bench write abc1")).is_err());
        assert!(run(&c, 200, &h, b"<html>redirected</html>", Some("bench write abc1")).is_err());
    }

    #[test]
    fn exact_bodies() {
        let c = Contract { kind: Kind::Exact, content_type: "text/css".into(), required: vec![], message_ids: None, message_content: vec![], exact_body: Some(b"a{}".to_vec()) };
        let h = headers("text/css", &[]);
        assert!(run(&c, 200, &h, b"a{}", None).is_ok());
        assert!(run(&c, 200, &h, b"a{ }", None).is_err());
    }

    #[test]
    fn tokens() {
        assert_eq!(longest_token("060. Did anyone see the game last night?"), "anyone");
        assert_eq!(longest_token("Back in 5."), "Back");
        assert_eq!(longest_token("a b"), "");
    }
}
