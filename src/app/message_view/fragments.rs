//! The per-loop fragment cache of rendered message partials (module comment of `message_view`).

use crate::gzip;
use crate::hash::IdHash;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Default byte budget of one loop's fragment cache; `CAMPFIRE_FRAGMENT_CACHE_BYTES`
/// overrides (0 turns the cache off). About 300 typical messages with their deflate pieces, a
/// few rooms' last pages: 2 MiB filled up with messages long scrolled off the pages under a stream of posts and was
/// the largest part of the heap after the benchmark (issue 7).
pub const FRAGMENT_CACHE_BYTES: usize = 512 << 10;

/// One cached message: its partial as last rendered (a gzip part, so it carries its CRC-32 and
/// deflate pieces), and where the room name sits in it.
pub(super) struct Entry {
    pub(super) updated_at: i64,
    pub(super) creator_updated_at: i64,
    /// Guards against a reused id (SQLite may hand out a deleted highest rowid again).
    pub(super) cmid: Box<str>,
    pub(super) room_at: usize,
    pub(super) name_len: usize,
    pub(super) part: Rc<gzip::Part>,
}

impl Entry {
    /// What the entry is charged against the budget: the partial, and half again for the
    /// deflate pieces made for it later (each is about a fifth to a quarter of the partial).
    fn size(&self) -> usize {
        self.part.bytes().len() * 3 / 2 + self.cmid.len() + 96
    }
}

/// A loop's fragment cache. Each loop is one thread, so a thread-local needs no lock. When
/// the budget is exceeded the whole cache is dropped: simple, and a room page refills it in
/// one render.
pub(super) struct Fragments {
    pub(super) map: HashMap<i64, Entry, IdHash>,
    pub(super) bytes: usize,
    pub(super) budget: usize,
}

impl Fragments {
    /// Keeps `e` as message `id`'s partial; false when it does not fit the budget at all.
    pub(super) fn insert(&mut self, id: i64, e: Entry) -> bool {
        let size = e.size();
        if size > self.budget {
            if let Some(old) = self.map.remove(&id) {
                self.bytes = self.bytes.saturating_sub(old.size());
            }
            return false;
        }
        if self.bytes + size > self.budget {
            self.map.clear();
            self.bytes = 0;
        }
        if let Some(old) = self.map.insert(id, e) {
            self.bytes = self.bytes.saturating_sub(old.size());
        }
        self.bytes += size;
        true
    }
}

thread_local! {
    pub(super) static FRAGMENTS: RefCell<Fragments> = RefCell::new(Fragments {
        map: HashMap::default(),
        bytes: 0,
        budget: std::env::var("CAMPFIRE_FRAGMENT_CACHE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(FRAGMENT_CACHE_BYTES),
    });
}
