//! Per-thread memos of signatures that never change: an avatar token is an HMAC of the user
//! id alone, a signed stream name an HMAC of the name, and a sidebar or a room page shows the
//! same few of them over and over. A memo belongs to one thread (one loop) and is bounded: when
//! full it is emptied, which only costs signing again.

use super::Keys;
use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};

/// Signed values by key, for the keys (`Keys::serial`) they were made with; `S` hashes the
/// keys (`crate::hash::IdHash` for database ids).
pub struct Memo<K, S = RandomState> {
    keys: u64,
    max: usize,
    map: HashMap<K, Box<str>, S>,
}

impl<K: Hash + Eq, S: BuildHasher + Default> Memo<K, S> {
    /// An empty memo of at most `max` values.
    pub fn new(max: usize) -> Memo<K, S> {
        Memo { keys: 0, max, map: HashMap::default() }
    }

    /// The value kept for `key` under `keys`, made by `make` first when there is none.
    pub fn get(&mut self, keys: &Keys, key: K, make: impl FnOnce() -> String) -> &str {
        if self.keys != keys.serial || self.map.len() >= self.max {
            self.map.clear();
            self.keys = keys.serial;
        }
        self.map.entry(key).or_insert_with(|| make().into_boxed_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_made_once_per_key_set_and_the_memo_stays_bounded() {
        let (a, b) = (Keys::derive(b"a"), Keys::derive(b"b"));
        let mut memo: Memo<_> = Memo::new(3);
        let mut made = 0;
        for _ in 0..2 {
            assert_eq!(memo.get(&a, 1, || { made += 1; "a1".into() }), "a1");
        }
        assert_eq!(made, 1);
        // Other keys: made again, never the other keys' value.
        assert_eq!(memo.get(&b, 1, || "b1".into()), "b1");
        for k in 2..10 {
            memo.get(&b, k, || k.to_string());
            assert!(memo.map.len() <= 3);
        }
    }
}
