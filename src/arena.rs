//! The per-request arena: scratch memory a handler uses while building one response, reset by
//! the loop after the response is written. It holds decoded strings (query and form parameters)
//! in one growing buffer; the response's own buffers are reused the same way (http::Response).
//! Nothing is freed per request; oversized buffers are dropped at reset so one large request
//! does not keep its memory.

use crate::http::form::{self, Field, Params};

const KEEP_CAPACITY: usize = 256 * 1024;

#[derive(Default)]
pub struct Arena {
    bytes: Vec<u8>,
    fields: Vec<Field>,
}

impl Arena {
    pub fn new() -> Arena {
        Arena::default()
    }

    /// Decodes the query string and, when given, a form body (pass `req.body` only if
    /// `req.is_form()`), into one parameter list, query fields first, like Rails' `params`.
    /// Earlier `params` results are invalidated (the borrow checker enforces it).
    pub fn params(&mut self, query: &[u8], form_body: &[u8]) -> Params<'_> {
        self.bytes.clear();
        self.fields.clear();
        form::decode(query, &mut self.bytes, &mut self.fields);
        form::decode(form_body, &mut self.bytes, &mut self.fields);
        Params { bytes: &self.bytes, fields: &self.fields }
    }

    /// Forgets everything; called by the loop after each response.
    pub fn reset(&mut self) {
        self.bytes.clear();
        self.fields.clear();
        if self.bytes.capacity() > KEEP_CAPACITY {
            self.bytes = Vec::new();
        }
        if self.fields.capacity() > KEEP_CAPACITY / 16 {
            self.fields = Vec::new();
        }
        debug_assert!(self.bytes.is_empty() && self.fields.is_empty(), "a reset arena holds nothing");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rails_style_params() {
        let mut a = Arena::new();
        let p = a.params(b"page=2&q=caf%C3%A9", b"message%5Bbody%5D=hi+there&user_ids[]=1&user_ids[]=2&flag&=&page=3");
        assert_eq!(p.get(b"message[body]"), Some(&b"hi there"[..]));
        assert_eq!(p.get_str("q"), Some("café"));
        assert_eq!(p.all(b"user_ids[]").collect::<Vec<_>>(), vec![&b"1"[..], b"2"]);
        assert_eq!(p.get(b"flag"), Some(&b""[..]));
        assert_eq!(p.get(b"page"), Some(&b"3"[..]));
        assert_eq!(p.get(b"missing"), None);
        a.reset();
        assert_eq!(a.params(b"", b"").iter().count(), 0);
    }
}
