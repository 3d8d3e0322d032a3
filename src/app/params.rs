//! Request parameters: the query string and the form body (`application/x-www-form-urlencoded`
//! or `multipart/form-data`), decoded once into buffers the loop reuses.
//!
//! Names keep Rails' bracket syntax as sent (`user[name]`, `user_ids[]`). As in Rails, a body
//! value overrides a query value of the same name. Multipart text fields join the same table;
//! file parts are kept as ranges of the request body (no copy) for the controllers that take
//! uploads. A body spooled to disk (a large upload) is parsed from its file a piece at a time:
//! only part heads and text fields are read into memory, never a file part. The core's `http::form` decodes url-encoded pairs the same way; this table exists
//! because multipart fields must land next to them.

use crate::http::spool::SpooledBody;
use crate::http::url::percent_decode_into;
use std::borrow::Cow;

/// Most bytes of part heads and text fields read from a spooled body (its files stay on
/// disk): what a form beside an upload needs, many times over.
const SPOOLED_TEXT_MAX: usize = 1024 * 1024;

/// Decoded parameters of one request. Reused: `clear` keeps the capacity.
#[derive(Default)]
pub struct Params {
    bytes: Vec<u8>,
    fields: Vec<Field>,
    files: Vec<FilePart>,
}

#[derive(Clone, Copy)]
struct Field {
    name: (usize, usize),
    value: (usize, usize),
}

/// One uploaded file of a multipart body: its field name, file name and content type are in
/// the decoded buffer, the data is a range of the request body.
#[derive(Clone, Copy)]
struct FilePart {
    name: (usize, usize),
    filename: (usize, usize),
    content_type: (usize, usize),
    data: (usize, usize),
}

/// A file as handlers see it.
pub struct Upload<'a> {
    pub filename: &'a [u8],
    pub content_type: &'a [u8],
    /// The file's bytes when the body is in memory; empty when it was spooled (see `bytes`).
    pub data: &'a [u8],
    /// Where the file lies in the request body (its length is the file's).
    pub range: std::ops::Range<usize>,
}

impl<'a> Upload<'a> {
    /// The file's bytes: borrowed from a body in memory, read from a spooled one (callers
    /// check `range.len()` against their own bound first).
    pub fn bytes(&self, spooled: Option<&SpooledBody>) -> std::io::Result<Cow<'a, [u8]>> {
        match spooled {
            Some(body) => body.read_range(self.range.clone()).map(Cow::Owned),
            None => Ok(Cow::Borrowed(self.data)),
        }
    }
}

/// Where a multipart body's bytes are: in memory, or in a spool file read a piece at a time.
enum Source<'b> {
    Memory(&'b [u8]),
    Spooled(&'b SpooledBody),
}

impl Source<'_> {
    fn find(&self, pat: &[u8], from: usize) -> Result<Option<usize>, Malformed> {
        match self {
            Source::Memory(b) => Ok(find(b, pat, from)),
            Source::Spooled(b) => b.find(pat, from).map_err(spool_error),
        }
    }

    /// The bytes in `r`; `budget` counts what may still be read from a spooled body.
    fn get(&self, r: (usize, usize), budget: &mut usize) -> Result<Cow<'_, [u8]>, Malformed> {
        match self {
            Source::Memory(b) => b.get(r.0..r.1).map(Cow::Borrowed).ok_or(Malformed),
            Source::Spooled(b) => {
                let len = r.1.checked_sub(r.0).ok_or(Malformed)?;
                *budget = budget.checked_sub(len).ok_or(Malformed)?;
                b.read_range(r.0..r.1).map(Cow::Owned).map_err(spool_error)
            }
        }
    }
}

fn spool_error(e: std::io::Error) -> Malformed {
    eprintln!("params: reading a spooled body failed: {e}");
    Malformed
}

/// The multipart body could not be read: a 400.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed;

impl Params {
    /// Forgets the previous request's parameters, keeping buffers of ordinary size (one huge
    /// form does not pin its memory for the life of the loop).
    pub fn clear(&mut self) {
        const KEEP: usize = 256 * 1024;
        self.bytes.clear();
        self.fields.clear();
        self.files.clear();
        if self.bytes.capacity() > KEEP {
            self.bytes = Vec::new();
        }
        if self.fields.capacity() > KEEP / 32 {
            self.fields = Vec::new();
        }
    }

    /// Adds every `name=value` pair of a url-encoded string (query or body).
    pub fn add_urlencoded(&mut self, src: &[u8]) {
        for pair in src.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
            let (n, v) = match pair.iter().position(|&b| b == b'=') {
                Some(eq) => (&pair[..eq], &pair[eq + 1..]),
                None => (pair, &b""[..]),
            };
            let name = self.push_decoded(n);
            let value = self.push_decoded(v);
            self.fields.push(Field { name, value });
        }
    }

    /// Adds the parts of a `multipart/form-data` body delimited by `boundary`.
    pub fn add_multipart(&mut self, body: &[u8], boundary: &[u8]) -> Result<(), Malformed> {
        self.add_parts(&Source::Memory(body), boundary)
    }

    /// The same for a body spooled to disk: file parts are found, not read.
    pub fn add_multipart_spooled(&mut self, body: &SpooledBody, boundary: &[u8]) -> Result<(), Malformed> {
        self.add_parts(&Source::Spooled(body), boundary)
    }

    fn add_parts(&mut self, body: &Source<'_>, boundary: &[u8]) -> Result<(), Malformed> {
        let mut budget = SPOOLED_TEXT_MAX;
        let mut delim = Vec::with_capacity(boundary.len() + 4);
        delim.extend_from_slice(b"--");
        delim.extend_from_slice(boundary);
        let mut next = Vec::with_capacity(delim.len() + 2);
        next.extend_from_slice(b"\r\n");
        next.extend_from_slice(&delim);
        let mut at = body.find(&delim, 0)?.ok_or(Malformed)? + delim.len();
        loop {
            // After a delimiter: "--" ends the body, CRLF starts a part.
            match &*body.get((at, at + 2), &mut budget)? {
                b"--" => return Ok(()),
                b"\r\n" => at += 2,
                _ => return Err(Malformed),
            }
            let head_end = body.find(b"\r\n\r\n", at)?.ok_or(Malformed)?;
            let head = body.get((at, head_end), &mut budget)?;
            let data_start = head_end + 4;
            let data_end = body.find(&next, data_start)?.ok_or(Malformed)?;
            self.add_part(&head, body, (data_start, data_end), &mut budget)?;
            at = data_end + next.len();
        }
    }

    fn add_part(&mut self, head: &[u8], body: &Source<'_>, data: (usize, usize), budget: &mut usize) -> Result<(), Malformed> {
        let mut name = None;
        let mut filename = None;
        let mut content_type: &[u8] = b"";
        for line in head.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let Some(colon) = line.iter().position(|&b| b == b':') else { continue };
            let (hname, hvalue) = (&line[..colon], line[colon + 1..].trim_ascii());
            if hname.eq_ignore_ascii_case(b"content-disposition") {
                name = disposition_param(hvalue, b"name");
                filename = disposition_param(hvalue, b"filename");
            } else if hname.eq_ignore_ascii_case(b"content-type") {
                content_type = hvalue;
            }
        }
        let name = name.ok_or(Malformed)?;
        let n = self.push_raw(name);
        match filename {
            // A file input left empty is sent with an empty file name: Rails drops it.
            Some(b"") => {}
            Some(f) => {
                let filename = self.push_raw(f);
                let content_type = self.push_raw(content_type);
                self.files.push(FilePart { name: n, filename, content_type, data });
            }
            None => {
                let v = body.get(data, budget)?;
                let value = self.push_raw(&v);
                self.fields.push(Field { name: n, value });
            }
        }
        Ok(())
    }

    fn push_decoded(&mut self, src: &[u8]) -> (usize, usize) {
        let start = self.bytes.len();
        percent_decode_into(src, true, &mut self.bytes);
        (start, self.bytes.len())
    }

    fn push_raw(&mut self, src: &[u8]) -> (usize, usize) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(src);
        (start, self.bytes.len())
    }

    fn slice(&self, r: (usize, usize)) -> &[u8] {
        self.bytes.get(r.0..r.1).unwrap_or(b"")
    }

    /// The last value sent for `name` (query first, then body, so the body wins).
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.fields.iter().rev().find(|f| self.slice(f.name) == name.as_bytes()).map(|f| self.slice(f.value))
    }

    /// Like `get`, but `None` unless the value is valid UTF-8.
    pub fn get_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Whether any parameter's name is `name` or starts with `name[` (Rails' `params.require`
    /// on a nested hash such as `user`).
    pub fn has_group(&self, name: &str) -> bool {
        let names = self.fields.iter().map(|f| f.name).chain(self.files.iter().map(|f| f.name));
        names.map(|r| self.slice(r)).any(|n| {
            n == name.as_bytes() || (n.starts_with(name.as_bytes()) && n.get(name.len()) == Some(&b'['))
        })
    }

    /// Every value sent for `name` (array names such as `user_ids[]`), in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.fields.iter().filter(move |f| self.slice(f.name) == name.as_bytes()).map(|f| self.slice(f.value))
    }

    /// The file uploaded as `name`, its data borrowed from `body` (the request body the
    /// parameters were decoded from; empty for a spooled body, whose files stay on disk).
    pub fn file<'a>(&'a self, name: &str, body: &'a [u8]) -> Option<Upload<'a>> {
        let f = self.files.iter().rev().find(|f| self.slice(f.name) == name.as_bytes())?;
        Some(Upload {
            filename: self.slice(f.filename),
            content_type: self.slice(f.content_type),
            data: if body.is_empty() { b"" } else { body.get(f.data.0..f.data.1)? },
            range: f.data.0..f.data.1,
        })
    }
}

/// The `boundary` parameter of a `multipart/form-data` Content-Type, or `None` when the type
/// is something else.
pub fn multipart_boundary(content_type: &[u8]) -> Option<&[u8]> {
    let mut parts = content_type.split(|&b| b == b';');
    if !parts.next()?.trim_ascii().eq_ignore_ascii_case(b"multipart/form-data") {
        return None;
    }
    parts.find_map(|p| {
        let p = p.trim_ascii();
        let eq = p.iter().position(|&b| b == b'=')?;
        if !p[..eq].trim_ascii().eq_ignore_ascii_case(b"boundary") {
            return None;
        }
        let v = p[eq + 1..].trim_ascii();
        let v = v.strip_prefix(b"\"").and_then(|x| x.strip_suffix(b"\"")).unwrap_or(v);
        (!v.is_empty() && v.len() <= 70).then_some(v)
    })
}

/// A `name="value"` parameter of a Content-Disposition value (quoted values may hold `;`).
/// Browsers escape `"` in names as `%22` and CR/LF as `%0D%0A`; those stay as sent, as in Rack.
fn disposition_param<'a>(v: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let mut i = 0;
    while i < v.len() {
        while v.get(i).is_some_and(|&b| b == b';' || b == b' ' || b == b'\t') {
            i += 1;
        }
        let name_start = i;
        while v.get(i).is_some_and(|&b| b != b'=' && b != b';') {
            i += 1;
        }
        let name = v.get(name_start..i)?.trim_ascii();
        if v.get(i) != Some(&b'=') {
            continue; // a bare token such as `form-data`
        }
        i += 1;
        let (value, next) = if v.get(i) == Some(&b'"') {
            let start = i + 1;
            let len = v.get(start..)?.iter().position(|&b| b == b'"')?;
            (v.get(start..start + len)?, start + len + 1)
        } else {
            let end = v.get(i..)?.iter().position(|&b| b == b';').map_or(v.len(), |p| i + p);
            (v.get(i..end)?.trim_ascii(), end)
        };
        if name.eq_ignore_ascii_case(key) {
            return Some(value);
        }
        i = next;
    }
    None
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    let tail = hay.get(from..)?;
    if needle.is_empty() || tail.len() < needle.len() {
        return None;
    }
    tail.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
}

/// A decimal record id from a path segment (`/rooms/12`): the one parser every controller uses.
pub fn parse_id(seg: &[u8]) -> Option<i64> {
    if seg.is_empty() || seg.len() > 18 || !seg.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(seg).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlencoded_body_overrides_query() {
        let mut p = Params::default();
        p.add_urlencoded(b"email_address=a%40b.c&x=1");
        p.add_urlencoded(b"x=2&user%5Bname%5D=J+Doe&user_ids[]=1&user_ids[]=2&flag");
        assert_eq!(p.get("x"), Some(&b"2"[..]));
        assert_eq!(p.get_str("email_address"), Some("a@b.c"));
        assert_eq!(p.get_str("user[name]"), Some("J Doe"));
        assert_eq!(p.all("user_ids[]").collect::<Vec<_>>(), vec![&b"1"[..], b"2"]);
        assert_eq!(p.get("flag"), Some(&b""[..]));
        assert!(p.has_group("user"));
        assert!(!p.has_group("use"));
        assert_eq!(p.get("missing"), None);
        p.clear();
        assert_eq!(p.get("x"), None);
    }

    #[test]
    fn multipart_fields_and_files() {
        let body = b"--XyZ\r\nContent-Disposition: form-data; name=\"user[name]\"\r\n\r\nAda; L\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"user[avatar]\"; filename=\"a;b.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n--Xy\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"empty\"; filename=\"\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\n\
--XyZ--\r\n";
        let ct = b"multipart/form-data; boundary=XyZ";
        let boundary = multipart_boundary(ct).unwrap();
        let mut p = Params::default();
        p.add_multipart(body, boundary).unwrap();
        assert_eq!(p.get_str("user[name]"), Some("Ada; L"));
        let f = p.file("user[avatar]", body).unwrap();
        assert_eq!(f.filename, b"a;b.png");
        assert_eq!(f.content_type, b"image/png");
        assert_eq!(f.data, b"\x89PNG\r\n--Xy");
        assert!(p.file("empty", body).is_none());
        assert!(p.has_group("user"));
    }

    #[test]
    fn malformed_multipart() {
        let mut p = Params::default();
        assert_eq!(p.add_multipart(b"no boundary here", b"XyZ"), Err(Malformed));
        assert_eq!(p.add_multipart(b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated", b"XyZ"), Err(Malformed));
        assert_eq!(p.add_multipart(b"--XyZ\r\nX: y\r\n\r\nv\r\n--XyZ--", b"XyZ"), Err(Malformed));
        assert_eq!(multipart_boundary(b"application/x-www-form-urlencoded"), None);
        assert_eq!(multipart_boundary(b"multipart/form-data; boundary=\"q r\""), Some(&b"q r"[..]));
    }
}
