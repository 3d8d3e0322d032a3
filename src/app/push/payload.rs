//! The notification JSON the service worker reads (spec/09 §3):
//! `{"title":…,"options":{"body":…,"icon":"/account/logo","data":{"path":…,"badge":n}}}`,
//! written as Ruby's plain `JSON.generate` writes it (UTF-8 as is, no HTML escaping), so a
//! message uses as few of the 4096 encrypted bytes as it can.

/// The account logo path, without a version: the notification's icon.
pub const ICON: &str = "/account/logo";

/// Title, body and path of a notification; the badge is added per recipient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
    pub path: String,
}

impl Notice {
    /// The JSON for one recipient whose unread-room count is `badge`.
    pub fn json(&self, badge: i64) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.title.len() + self.body.len() + self.path.len() + 96);
        out.extend_from_slice(b"{\"title\":");
        string(&self.title, &mut out);
        out.extend_from_slice(b",\"options\":{\"body\":");
        string(&self.body, &mut out);
        out.extend_from_slice(b",\"icon\":");
        string(ICON, &mut out);
        out.extend_from_slice(b",\"data\":{\"path\":");
        string(&self.path, &mut out);
        out.extend_from_slice(format!(",\"badge\":{badge}}}}}}}").as_bytes());
        out
    }
}

/// A JSON string: `"` and `\` escaped, control characters as `\n`-style or `\u00XX`.
fn string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s.as_bytes() {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            c if c < 0x20 => {
                out.extend_from_slice(b"\\u00");
                out.extend_from_slice(&crate::crypto::token::hex_byte(c));
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_the_service_worker_reads() {
        let n = Notice { title: "Designers".into(), body: "Kevin McConnell: Let's ship it".into(), path: "/rooms/12".into() };
        assert_eq!(
            String::from_utf8(n.json(3)).unwrap(),
            r#"{"title":"Designers","options":{"body":"Kevin McConnell: Let's ship it","icon":"/account/logo","data":{"path":"/rooms/12","badge":3}}}"#
        );
    }

    #[test]
    fn escapes_like_json_generate() {
        let n = Notice { title: "a \"b\" \\ <c> & é".into(), body: "line\nnext\u{1}".into(), path: "/rooms/1".into() };
        let json = String::from_utf8(n.json(0)).unwrap();
        assert!(json.starts_with(r#"{"title":"a \"b\" \\ <c> & é","options":{"body":"line\nnext\u0001""#), "{json}");
    }
}
