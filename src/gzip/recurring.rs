//! Recurring runs: stretches of a body that come back byte for byte in later responses but
//! have no cache of their own (the sidebar's room links), made into parts found by their
//! bytes, so that a gzip response splices their kept deflate pieces instead of compressing
//! them again (splice.rs).
//!
//! A list of items is cut into runs where an item's id says so (about one item in
//! `RUN_ITEMS`, or once a run reaches `RUN_MAX` bytes): the cuts depend on the items, not on
//! their positions, so a room added, removed or moved changes the runs around it only. A run
//! is looked up by a hash of all its bytes and confirmed byte for byte; a miss makes a new
//! part (one CRC pass; its pieces are made when first spliced).
//!
//! The cache is per loop thread, with a byte budget (`RECURRING_BYTES`); over it, it is
//! emptied. Against thrash (a working set larger than the budget would empty it on every
//! response and pay the slower piece level each time): when it overflows again within
//! `THRASH_LISTS` lists of the last time, nothing new is kept for the next `BYPASS_LISTS`
//! lists (runs already kept are still used); the bytes that are not kept are compressed with
//! the rest of the body, as they were before this cache. The clock counts lists (`Runs::new`),
//! so a response that renders none, a cached hit, pays nothing here.

use super::splice::{mark, Part};
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hasher;
use std::rc::Rc;

/// Per-loop budget: a sidebar of 1,000 rooms is about 400 KB of links.
pub const RECURRING_BYTES: usize = 1 << 20;

/// One item in this many ends a run, on average.
const RUN_ITEMS: u64 = 16;

/// A run this long ends at the next item whatever its id.
const RUN_MAX: usize = 8 << 10;

/// An overflow this soon (in lists rendered) after the previous one means the working set
/// does not fit.
const THRASH_LISTS: u64 = 32;

/// How long (in lists rendered) nothing new is kept after thrash was seen.
const BYPASS_LISTS: u64 = 512;

/// Cuts the items appended to a body into runs (module comment). Make one before the first
/// item, call `item` after each, and `end` after the last.
pub struct Runs {
    start: usize,
}

impl Runs {
    /// Runs starting at the body's current end.
    pub fn new(body: &[u8]) -> Runs {
        RECURRING.with(|c| c.borrow_mut().lists += 1);
        Runs { start: body.len() }
    }

    /// The item `id` was just appended to `body`: ends the run here when the id or the run's
    /// length says so.
    pub fn item(&mut self, body: &[u8], id: i64) {
        let cut = cuts(id);
        if cut || body.len().saturating_sub(self.start) >= RUN_MAX {
            self.end_run(body);
        }
    }

    /// The last item was appended: the run in progress ends.
    pub fn end(mut self, body: &[u8]) {
        self.end_run(body);
    }

    fn end_run(&mut self, body: &[u8]) {
        let start = std::mem::replace(&mut self.start, body.len());
        if let Some(run) = body.get(start..).filter(|r| !r.is_empty()) {
            if let Some(part) = RECURRING.with(|c| c.borrow_mut().find_or_keep(run)) {
                mark(start, &part);
            }
        }
    }
}

/// Whether item `id` ends a run: a multiplicative hash of the id, so room ids made in a row
/// do not all fall on the same side.
fn cuts(id: i64) -> bool {
    ((id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) & (RUN_ITEMS - 1) == 0
}

thread_local! {
    static RECURRING: RefCell<Recurring> = RefCell::new(Recurring {
        map: HashMap::new(),
        bytes: 0,
        budget: RECURRING_BYTES,
        lists: 0,
        overflowed_at: None,
        bypass_until: 0,
    });
}

struct Recurring {
    /// Content hash → parts with that hash (a collision keeps both).
    map: HashMap<u64, Vec<Rc<Part>>>,
    bytes: usize,
    budget: usize,
    /// Lists rendered so far: the clock of the thrash guard.
    lists: u64,
    overflowed_at: Option<u64>,
    bypass_until: u64,
}

impl Recurring {
    /// The kept part holding exactly `run`, else a new one kept for next time; None when it
    /// is not to be kept (too large for the budget, or thrash seen).
    fn find_or_keep(&mut self, run: &[u8]) -> Option<Rc<Part>> {
        let mut h = crate::hash::WordHasher(0x5851_f42d_4c95_7f2d);
        h.write(run);
        let key = h.finish();
        if let Some(part) = self.map.get(&key).and_then(|v| v.iter().find(|p| p.bytes() == run)) {
            return Some(Rc::clone(part));
        }
        let size = charge(run.len());
        if size > self.budget / 2 || self.lists < self.bypass_until {
            return None;
        }
        if self.bytes + size > self.budget {
            if self.overflowed_at.is_some_and(|at| self.lists - at < THRASH_LISTS) {
                self.bypass_until = self.lists + BYPASS_LISTS;
                self.overflowed_at = None;
                return None;
            }
            self.overflowed_at = Some(self.lists);
            self.map.clear();
            self.bytes = 0;
        }
        let part = Part::new(run.into());
        self.map.entry(key).or_default().push(Rc::clone(&part));
        self.bytes += size;
        Some(part)
    }
}

/// What a run is charged: its bytes, a quarter again for its pieces (markup this repetitive
/// deflates about eightfold, and a part keeps up to two pieces), and the bookkeeping.
fn charge(len: usize) -> usize {
    len + len / 4 + 96
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gzip::splice::{begin_response, marks};

    fn link(id: i64, unread: bool) -> Vec<u8> {
        format!("<a id=\"list_rooms_open_{id}\" class=\"room btn{}\" href=\"/rooms/{id}\">Room {id}</a>", if unread { " unread" } else { "" })
            .into_bytes()
    }

    fn render(ids: &[(i64, bool)]) -> (Vec<u8>, usize) {
        begin_response();
        let mut body = b"<div id=\"shared_rooms\">".to_vec();
        let mut runs = Runs::new(&body);
        for &(id, unread) in ids {
            body.extend_from_slice(&link(id, unread));
            runs.item(&body, id);
        }
        runs.end(&body);
        body.extend_from_slice(b"</div>");
        (body, marks())
    }

    fn kept() -> usize {
        RECURRING.with(|c| c.borrow().map.values().map(Vec::len).sum())
    }

    #[test]
    fn runs_recur_and_a_change_touches_only_its_run() {
        let ids: Vec<(i64, bool)> = (1..=400).map(|i| (i, false)).collect();
        let (_, n) = render(&ids);
        assert!(n > 10 && n < 60, "{n} runs");
        let before = kept();
        let (_, again) = render(&ids);
        assert_eq!(again, n);
        assert_eq!(kept(), before, "all found again");
        // One room unread and one removed: at most three runs are new.
        let mut changed = ids.clone();
        changed[100].1 = true;
        changed.remove(300);
        render(&changed);
        assert!(kept() - before <= 3, "{} new runs", kept() - before);
    }

    #[test]
    fn a_long_run_is_cut_and_thrash_stops_keeping() {
        // Every id in one run by the hash would still be cut at RUN_MAX.
        let uncut: Vec<(i64, bool)> = (1..100_000).filter(|&i| !cuts(i)).take(500).map(|i| (i, false)).collect();
        let (_, n) = render(&uncut);
        assert!(n >= 500 * 60 / RUN_MAX, "{n}");
        // Two working sets that each fill most of the budget, alternating.
        RECURRING.with(|c| c.borrow_mut().budget = 64 << 10);
        let a: Vec<(i64, bool)> = (1..=600).map(|i| (i, false)).collect();
        let b: Vec<(i64, bool)> = (1..=600).map(|i| (i, true)).collect();
        for _ in 0..4 {
            render(&a);
            render(&b);
        }
        RECURRING.with(|c| {
            let c = c.borrow();
            assert!(c.lists < c.bypass_until, "bypassing");
            assert!(c.bytes <= c.budget);
        });
        let before = kept();
        render(&a);
        assert_eq!(kept(), before, "nothing new kept while bypassing");
        RECURRING.with(|c| c.borrow_mut().budget = RECURRING_BYTES);
    }
}
