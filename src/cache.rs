//! The whole-response cache (design §6): finished 200 responses to signed-in GETs, kept per
//! loop thread and served again while the data has not changed.
//!
//! - **Key**: the user, the full request target and every request header that can change the
//!   bytes (gzip or not, Turbo-Frame, Accept, Host and the forwarding headers, User-Agent, and
//!   the whole Cookie header: a pending flash or another `last_room` gives another key).
//!   Stored in full and compared exactly, so no hash collision can show one user another's page.
//! - **Value**: status, header lines and the body exactly as sent (the gzip body for a gzip
//!   key), shared through an `Arc` and never copied on a hit.
//! - **Stamp**: `db::epoch()` (our writer's commits) and the loop connection's
//!   `PRAGMA data_version` generation (anyone's commits, the `sqlite3` CLI's included). It is
//!   taken as the first read of the request's read transaction, before authentication, so it
//!   names the snapshot everything after reads; a response is admitted only if the stamp is
//!   still the same after the transaction ended (nothing, not even a write this request set
//!   off, committed meanwhile), and an entry is served only under the stamp it was made with. A response
//!   setting a cookie other than `last_room` is never stored. Sign-out,
//!   bans, deactivation and membership changes are all commits, so they end every entry; the
//!   caller still authenticates every hit.
//! - **Validator**: entries carry a strong ETag (unless the action set its own) made of the
//!   cache's identity, the stamp and the key's hash; `If-None-Match` on a hit gets a 304.
//! - **Budget**: `CAMPFIRE_CACHE_BYTES` for the whole process (default `DEFAULT_BYTES`),
//!   divided among the loops; 0 turns the cache off. When full, the least recently used
//!   entries go.

use crate::hash::WordHasher;
use crate::db::wal_index::{self, Header};
use crate::db::{self, Conn, DataVersion};
use crate::http::{Request, Response};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Default byte budget for the whole process: a few room pages per user for a handful of
/// users. The benchmark's working set takes about 250 KB; 2 MiB keeps the worst case (cache
/// full, 1,000 WebSockets, the code resident) under the 12 MB peak goal (issue 7).
pub const DEFAULT_BYTES: usize = 2 << 20;

/// Entries larger than this part of a loop's budget are not admitted (one page must not
/// flush everything else).
const MAX_ENTRY_SHARE: usize = 4;

/// Bytes counted per entry beyond key, headers and body (map slot, Arc header, bookkeeping).
const ENTRY_OVERHEAD: usize = 96;

/// The request headers whose values are part of the key (lowercase).
const KEY_HEADERS: [&[u8]; 9] = [
    b"turbo-frame",
    b"accept",
    b"host",
    b"x-forwarded-host",
    b"x-forwarded-proto",
    b"forwarded",
    b"user-agent",
    b"cookie",
    b"origin",
];

/// The data version a response was rendered under.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Stamp {
    ours: u64,
    theirs: u64,
}

impl Stamp {
    /// A stamp made directly, for tests of code that keys on stamps.
    #[cfg(test)]
    pub(crate) const fn for_tests(ours: u64, theirs: u64) -> Stamp {
        Stamp { ours, theirs }
    }
}

struct Entry {
    stamp: Stamp,
    status: u16,
    headers: Box<[u8]>,
    body: Arc<[u8]>,
    /// The ETag as it appears in `headers` (quotes included), compared with `If-None-Match`.
    etag: Box<[u8]>,
    last_used: u64,
    size: usize,
}

/// One loop's response cache.
pub struct Cache {
    map: HashMap<Box<[u8]>, Entry, KeyHash>,
    data_version: Option<DataVersion>,
    /// The last stamp asked of SQLite and the header seen just before asking.
    last: Option<(Stamp, Header)>,
    budget: usize,
    used: usize,
    clock: u64,
    /// The key of the current request, built by `lookup` and used by `admit`.
    key: Vec<u8>,
    key_ready: bool,
    served: bool,
    /// Distinguishes this cache's ETags from another loop's or another run's.
    identity: u64,
    hits: u64,
    misses: u64,
}

static NEXT_IDENTITY: AtomicU64 = AtomicU64::new(0);

impl Cache {
    /// A cache holding at most `budget` bytes (0 = off).
    pub fn new(budget: usize) -> Cache {
        let start = crate::crypto::time::now_ms() as u64;
        let identity = start.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed);
        Cache {
            map: HashMap::with_hasher(KeyHash { seed: u64::from_le_bytes(crate::sys::random::bytes::<8>()) }),
            data_version: None,
            last: None,
            budget,
            used: 0,
            clock: 0,
            key: Vec::new(),
            key_ready: false,
            served: false,
            identity,
            hits: 0,
            misses: 0,
        }
    }

    /// The per-loop budget from `CAMPFIRE_CACHE_BYTES` (bytes for the whole process,
    /// default `DEFAULT_BYTES`) shared among `loops` loops.
    pub fn budget_from_env(loops: usize) -> usize {
        let total = match std::env::var("CAMPFIRE_CACHE_BYTES") {
            Ok(v) => v.trim().parse::<usize>().unwrap_or_else(|_| {
                eprintln!("cache: CAMPFIRE_CACHE_BYTES={v:?} is not a number; using {DEFAULT_BYTES}");
                DEFAULT_BYTES
            }),
            Err(_) => DEFAULT_BYTES,
        };
        total / loops.max(1)
    }

    /// Whether the cache can hold anything.
    pub fn enabled(&self) -> bool {
        self.budget > 0
    }

    /// The data version now, as seen by `conn` (the loop's read connection; inside a read
    /// transaction, the version of its snapshot). `None` when off or when SQLite cannot tell, and then nothing is cached.
    ///
    /// When neither our writer's epoch nor the wal-index header (db/wal_index.rs) moved since
    /// the previous stamp, nothing was committed by anyone, and that stamp is returned without
    /// asking SQLite: no statement, so no read lock (the request's transaction then starts at
    /// its first real query, if any — a cache hit with a remembered session has none). A
    /// commit landing after this check is seen by that query, but never under this stamp:
    /// the next stamp taken (`admit`'s, the next request's) sees the header move and asks
    /// SQLite, whose data version has moved too.
    pub fn stamp(&mut self, conn: &Conn) -> Option<Stamp> {
        if !self.enabled() {
            return None;
        }
        let ours = db::epoch();
        // Read before the data version: a commit in between makes the next comparison fail
        // (the header seen is older than the version), never the reverse.
        let header = wal_index::header(conn);
        if let (Some(h), Some((last, last_h))) = (header, &self.last) {
            if last.ours == ours && h == *last_h {
                return Some(*last);
            }
        }
        let dv = match &mut self.data_version {
            Some(dv) => dv,
            None => self.data_version.insert(DataVersion::new(conn).ok()?),
        };
        let theirs = dv.check(conn).ok()?;
        let stamp = Stamp { ours, theirs };
        self.last = header.map(|h| (stamp, h));
        Some(stamp)
    }

    /// Builds the key of `req` for `user_id` and `variant` (bits the caller renders by that the
    /// request's bytes do not show: gzip, the scheme), and when an entry made under `stamp` exists,
    /// fills `res` from it (a 304 when `If-None-Match` names its ETag) and returns true.
    /// A stale entry is dropped. After a false return, `admit` may store the response.
    pub fn lookup(&mut self, stamp: Stamp, user_id: i64, req: &Request, variant: u8, res: &mut Response) -> bool {
        self.key.clear();
        self.key.extend_from_slice(&user_id.to_le_bytes());
        self.key.push(variant);
        push_part(&mut self.key, req.target);
        // Every line of a key header counts (two Cookie lines are two parts of the key).
        for h in req.headers {
            if let Some(i) = KEY_HEADERS.iter().position(|n| h.name.eq_ignore_ascii_case(n)) {
                self.key.push(i as u8);
                push_part(&mut self.key, h.value);
            }
        }
        self.key_ready = true;
        let Some(entry) = self.map.get_mut(self.key.as_slice()) else {
            self.misses += 1;
            return false;
        };
        if entry.stamp != stamp {
            let size = entry.size;
            self.map.remove(self.key.as_slice());
            self.used -= size;
            self.misses += 1;
            return false;
        }
        self.clock += 1;
        entry.last_used = self.clock;
        self.hits += 1;
        self.key_ready = false;
        self.served = true;
        let not_modified = req.header(b"if-none-match").is_some_and(|inm| etag_listed(inm, &entry.etag));
        res.extend_headers_raw(&entry.headers);
        if not_modified {
            res.status(304);
        } else {
            res.status(entry.status);
            res.set_shared_body(Arc::clone(&entry.body));
        }
        true
    }

    /// Stores the finished response `res` under the key `lookup` built, if it was rendered
    /// entirely under `before` (`after` is the stamp taken once rendering was over), is a 200
    /// without `Set-Cookie`, and fits the budget. Adds the entry's ETag to `res` first when
    /// the action set none.
    pub fn admit(&mut self, before: Stamp, after: Option<Stamp>, res: &mut Response) {
        if !std::mem::take(&mut self.key_ready) || after != Some(before) || res.code() != 200 {
            return;
        }
        if !cookies_replayable(res.headers_raw()) {
            return;
        }
        let size = self.key.len() + res.headers_raw().len() + res.body_bytes().len() + 64 + ENTRY_OVERHEAD;
        if size > self.budget / MAX_ENTRY_SHARE {
            return;
        }
        let etag: Box<[u8]> = match res.header_value("etag") {
            Some(t) => t.into(),
            None => {
                let t = self.make_etag(before);
                res.header("ETag", &t);
                t.into()
            }
        };
        while self.used + size > self.budget {
            let Some(oldest) = self.map.iter().min_by_key(|(_, e)| e.last_used).map(|(k, _)| k.clone()) else { break };
            if let Some(e) = self.map.remove(&oldest) {
                self.used -= e.size;
            }
        }
        self.clock += 1;
        let entry = Entry {
            stamp: before,
            status: res.code(),
            headers: res.headers_raw().into(),
            body: Arc::from(res.body_bytes()),
            etag,
            last_used: self.clock,
            size,
        };
        if let Some(old) = self.map.insert(self.key.as_slice().into(), entry) {
            self.used -= old.size;
        }
        self.used += size;
        debug_assert!(self.used <= self.budget, "the cache holds more than its budget");
        debug_assert_eq!(self.used, self.map.values().map(|e| e.size).sum::<usize>(), "the byte count drifted from the entries");
    }

    /// Starts a request: forgets the previous request's key (a request that was not looked up
    /// must not be admitted under it) and whether it was served from here.
    pub fn begin_request(&mut self) {
        self.key_ready = false;
        self.served = false;
    }

    /// Whether `lookup` answered the current request.
    pub fn served(&self) -> bool {
        self.served
    }

    /// (hits, misses, entries, bytes used) since start.
    pub fn stats(&self) -> (u64, u64, usize, usize) {
        (self.hits, self.misses, self.map.len(), self.used)
    }

    fn make_etag(&self, stamp: Stamp) -> Vec<u8> {
        // FNV-1a over the key: the ETag must differ between keys under the same stamp.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &self.key {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mut t = Vec::with_capacity(72);
        t.push(b'"');
        for (i, v) in [self.identity, stamp.ours, stamp.theirs, h].into_iter().enumerate() {
            if i > 0 {
                t.push(b'-');
            }
            push_hex(&mut t, v);
        }
        t.push(b'"');
        t
    }
}

/// Whether every `Set-Cookie` of a response may be sent again to the same request: only
/// `last_room`, whose value is the room in the path. A replayed one carries the expiry
/// computed when the entry was made, 20 years out, which a few minutes do not change in any way
/// that matters. Session cookies are never replayed.
fn cookies_replayable(headers: &[u8]) -> bool {
    headers.split(|&b| b == b'\n').all(|line| {
        let is_set_cookie = line.len() > 11 && line[..11].eq_ignore_ascii_case(b"set-cookie:");
        !is_set_cookie || line[11..].trim_ascii_start().starts_with(b"last_room=")
    })
}

/// Hashes cache keys (a few hundred bytes: target, cookie, user agent ...) eight bytes at a
/// time from a random per-cache seed: a quarter of what the default SipHash costs on every hit.
/// Not a keyed PRF like SipHash: a signed-in user who could see hash values might line up
/// collisions, but nobody sees them, and the byte budget bounds how many entries could collide.
#[derive(Clone)]
struct KeyHash {
    seed: u64,
}

impl std::hash::BuildHasher for KeyHash {
    type Hasher = WordHasher;
    fn build_hasher(&self) -> WordHasher {
        WordHasher(self.seed)
    }
}

/// Appends `part` with its length in front, so two different keys never concatenate alike.
fn push_part(key: &mut Vec<u8>, part: &[u8]) {
    key.extend_from_slice(&(part.len() as u32).to_le_bytes());
    key.extend_from_slice(part);
}

fn push_hex(out: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..16).rev() {
        out.push(HEX[((v >> (shift * 4)) & 15) as usize]);
    }
}

/// Whether an `If-None-Match` list names `etag` (weak comparison, RFC 9110 §13.1.2) or is `*`.
fn etag_listed(inm: &[u8], etag: &[u8]) -> bool {
    let bare = etag.strip_prefix(b"W/").unwrap_or(etag);
    inm.split(|&b| b == b',').map(<[u8]>::trim_ascii).any(|t| t == b"*" || t.strip_prefix(b"W/").unwrap_or(t) == bare)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Header;

    fn page(body: &[u8]) -> Response {
        let mut r = Response::new();
        r.header("Content-Type", b"text/html; charset=utf-8");
        r.body().extend_from_slice(body);
        r
    }

    const S1: Stamp = Stamp { ours: 1, theirs: 0 };
    const S2: Stamp = Stamp { ours: 2, theirs: 0 };

    #[test]
    fn hit_miss_stale_and_304() {
        let mut c = Cache::new(1 << 20);
        let h = [Header { name: b"Cookie", value: b"session_token=a" }];
        let req = Request::loopback_get(b"/rooms/1", &h);
        let mut res = Response::new();
        assert!(!c.lookup(S1, 7, &req, 1, &mut res));
        let mut res = page(b"<p>room</p>");
        c.admit(S1, Some(S1), &mut res);
        let etag = res.header_value("etag").unwrap().to_vec();

        let mut hit = Response::new();
        assert!(c.lookup(S1, 7, &req, 1, &mut hit));
        assert_eq!(hit.body_bytes(), b"<p>room</p>");
        assert_eq!(hit.header_value("etag"), Some(&etag[..]));

        // another user, another encoding, another cookie: other keys
        assert!(!c.lookup(S1, 8, &req, 1, &mut Response::new()));
        assert!(!c.lookup(S1, 7, &req, 0, &mut Response::new()));
        let h2 = [Header { name: b"Cookie", value: b"session_token=a; _campfire_session=flash" }];
        assert!(!c.lookup(S1, 7, &Request::loopback_get(b"/rooms/1", &h2), 1, &mut Response::new()));

        let inm = [h[0], Header { name: b"If-None-Match", value: &etag }];
        let mut nm = Response::new();
        assert!(c.lookup(S1, 7, &Request::loopback_get(b"/rooms/1", &inm), 1, &mut nm));
        assert_eq!(nm.code(), 304);

        // a newer data version: the entry is gone
        assert!(!c.lookup(S2, 7, &req, 1, &mut Response::new()));
        assert_eq!(c.stats().2, 0);
    }

    #[test]
    fn admission_rules() {
        let mut c = Cache::new(1 << 20);
        let req = Request::loopback_get(b"/rooms/1", &[]);
        // the data changed while rendering
        c.lookup(S1, 1, &req, 1, &mut Response::new());
        c.admit(S1, Some(S2), &mut page(b"x"));
        // a session cookie was set
        c.lookup(S1, 1, &req, 1, &mut Response::new());
        let mut r = page(b"x");
        r.header("Set-Cookie", b"last_room=1; path=/");
        r.header("Set-Cookie", b"_campfire_session=abc; path=/");
        c.admit(S1, Some(S1), &mut r);
        // not a 200
        c.lookup(S1, 1, &req, 1, &mut Response::new());
        let mut r = page(b"x");
        r.status(404);
        c.admit(S1, Some(S1), &mut r);
        // never looked up
        c.admit(S1, Some(S1), &mut page(b"x"));
        assert_eq!(c.stats().2, 0);
        // the action's own ETag is kept
        c.lookup(S1, 1, &req, 1, &mut Response::new());
        let mut r = page(b"x");
        r.header("ETag", b"W/\"abc\"");
        c.admit(S1, Some(S1), &mut r);
        let inm = [Header { name: b"if-none-match", value: b"\"abc\"" }];
        let mut nm = Response::new();
        assert!(c.lookup(S1, 1, &Request::loopback_get(b"/rooms/1", &inm), 1, &mut nm));
        assert_eq!(nm.code(), 304);
        // last_room alone is replayed with the page
        let other = Request::loopback_get(b"/rooms/2", &[]);
        c.lookup(S1, 1, &other, 1, &mut Response::new());
        let mut r = page(b"y");
        r.header("Set-Cookie", b"last_room=2; path=/");
        c.admit(S1, Some(S1), &mut r);
        let mut hit = Response::new();
        assert!(c.lookup(S1, 1, &other, 1, &mut hit));
        assert_eq!(hit.header_value("set-cookie"), Some(&b"last_room=2; path=/"[..]));
    }

    #[test]
    fn key_hashes_spread() {
        use std::hash::{BuildHasher, Hasher};
        let kh = KeyHash { seed: 7 };
        let hash = |b: &[u8]| {
            let mut h = kh.build_hasher();
            h.write(b);
            h.finish()
        };
        assert_ne!(hash(b"ab"), hash(b"ab\0"));
        assert_ne!(hash(b"/rooms/1"), hash(b"/rooms/2"));
        let mut seen: Vec<u64> = (0..1000u32).map(|i| hash(format!("/rooms/{i}?x").as_bytes()) >> 57).collect();
        seen.sort_unstable();
        seen.dedup();
        assert!(seen.len() > 100, "the top seven bits vary: {}", seen.len());
    }

    #[test]
    fn evicts_least_recently_used_within_budget() {
        let mut c = Cache::new(40_000);
        let body = vec![b'x'; 2_000];
        for i in 0..30u8 {
            let t = [b'/', b'a' + i % 26, b'0' + i / 26];
            c.lookup(S1, 1, &Request::loopback_get(&t, &[]), 1, &mut Response::new());
            c.admit(S1, Some(S1), &mut page(&body));
            // keep the first one warm
            assert!(c.lookup(S1, 1, &Request::loopback_get(b"/a0", &[]), 1, &mut Response::new()));
            c.begin_request();
        }
        let (_, _, entries, used) = c.stats();
        assert!(used <= 40_000);
        assert!(entries < 30 && entries > 5);
        assert!(c.lookup(S1, 1, &Request::loopback_get(b"/a0", &[]), 1, &mut Response::new()));
        assert!(!c.lookup(S1, 1, &Request::loopback_get(b"/b0", &[]), 1, &mut Response::new()));
        // too large for one entry
        let mut off = Cache::new(1000);
        off.lookup(S1, 1, &Request::loopback_get(b"/a", &[]), 1, &mut Response::new());
        off.admit(S1, Some(S1), &mut page(&body));
        assert_eq!(off.stats().2, 0);
    }
}
