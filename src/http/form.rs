//! `application/x-www-form-urlencoded` decoding (query strings and form bodies). Names keep
//! Rails' bracket syntax as sent: look up `message[body]`, or every `user_ids[]`.
//! Decoded bytes go into one buffer owned by the per-request arena; fields are offsets into it.

/// One decoded field: `name` and `value` as byte ranges of the arena buffer.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    name: (u32, u32),
    value: (u32, u32),
}

/// Decodes every `name=value` pair of `src` (separated by '&'), appending decoded bytes to
/// `bytes` and one `Field` per pair to `fields`. Empty pairs are skipped; a pair without '='
/// has an empty value. Inputs above 4 GiB are not possible (body limits are far smaller).
pub fn decode(src: &[u8], bytes: &mut Vec<u8>, fields: &mut Vec<Field>) {
    for pair in src.split(|&b| b == b'&').filter(|p| !p.is_empty()) {
        let (n, v) = match pair.iter().position(|&b| b == b'=') {
            Some(eq) => (&pair[..eq], &pair[eq + 1..]),
            None => (pair, &b""[..]),
        };
        let n0 = bytes.len() as u32;
        super::url::percent_decode_into(n, true, bytes);
        let n1 = bytes.len() as u32;
        super::url::percent_decode_into(v, true, bytes);
        let v1 = bytes.len() as u32;
        debug_assert!(n0 <= n1 && n1 <= v1, "a field's ranges run backwards");
        fields.push(Field { name: (n0, n1), value: (n1, v1) });
    }
}

/// Decoded parameters, borrowed from the arena.
pub struct Params<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) fields: &'a [Field],
}

impl<'a> Params<'a> {
    fn slice(&self, r: (u32, u32)) -> &'a [u8] {
        self.bytes.get(r.0 as usize..r.1 as usize).unwrap_or(b"")
    }

    /// Every `(name, value)` in the order sent (query first, then body).
    pub fn iter(&self) -> impl Iterator<Item = (&'a [u8], &'a [u8])> + '_ {
        self.fields.iter().map(|f| (self.slice(f.name), self.slice(f.value)))
    }

    /// The last value sent for `name` (Rack's rule when a name repeats), as bytes.
    pub fn get(&self, name: &[u8]) -> Option<&'a [u8]> {
        self.iter().filter(|(n, _)| *n == name).last().map(|(_, v)| v)
    }

    /// Like `get`, but only valid UTF-8.
    pub fn get_str(&self, name: &str) -> Option<&'a str> {
        self.get(name.as_bytes()).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// All values sent for `name` (for array names such as `user_ids[]`).
    pub fn all<'n>(&'n self, name: &'n [u8]) -> impl Iterator<Item = &'a [u8]> + 'n {
        self.iter().filter(move |(n, _)| *n == name).map(|(_, v)| v)
    }
}
