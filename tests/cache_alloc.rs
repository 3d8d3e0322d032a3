//! A response-cache hit must not allocate once warm (design §4): taking the data-version stamp,
//! building the key, finding the entry and filling the reused `Response` with its headers and
//! shared body. A counting global allocator checks it; this file holds a single test so no
//! other test thread allocates while it counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use campfire::cache::Cache;
use campfire::db::{Conn, Mode};
use campfire::http::{Header, Method, Request, Response};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; we only count.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warm_hit_does_not_allocate() {
    let dir = std::env::temp_dir().join(format!("campfire-cache-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("db.sqlite3");
    let path = path.to_str().unwrap();
    Conn::open(path, Mode::ReadWrite).unwrap().exec("CREATE TABLE t (x); INSERT INTO t VALUES (1);").unwrap();
    let conn = Conn::open(path, Mode::ReadOnly).unwrap();

    let headers = [
        Header { name: b"Host", value: b"chat.example.com" },
        Header { name: b"Cookie", value: b"session_token=abcdefghijklmnopqrstuvwxyz; last_room=7" },
        Header { name: b"Accept-Encoding", value: b"gzip" },
        Header { name: b"User-Agent", value: b"Mozilla/5.0" },
    ];
    let req = Request {
        method: Method::Get,
        target: b"/rooms/7",
        path: b"/rooms/7",
        query: b"",
        http10: false,
        headers: &headers,
        body: b"",
        spooled: None,
        peer: std::net::IpAddr::from([127, 0, 0, 1]),
    };
    let mut cache = Cache::new(1 << 20);
    let stamp = cache.stamp(&conn).expect("a stamp");
    let mut res = Response::new();
    cache.begin_request();
    assert!(!cache.lookup(stamp, 7, &req, true, &mut res));
    res.header("Content-Type", b"text/html; charset=utf-8");
    res.body().extend_from_slice(&b"<div class=\"message\">hello</div>".repeat(1000));
    let after = cache.stamp(&conn);
    cache.admit(stamp, after, &mut res);

    let mut out = Response::new();
    let hit = |cache: &mut Cache, out: &mut Response| {
        out.reset();
        cache.begin_request();
        let s = cache.stamp(&conn).expect("a stamp");
        assert!(cache.lookup(s, 7, &req, true, out), "a hit");
        assert_eq!(out.body_bytes().len(), 32_000);
    };
    hit(&mut cache, &mut out);
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..100 {
        hit(&mut cache, &mut out);
    }
    assert_eq!(ALLOCATIONS.load(Ordering::Relaxed) - before, 0);
    let _ = std::fs::remove_dir_all(&dir);
}
