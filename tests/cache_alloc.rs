//! A response-cache hit must not allocate once warm (design §4, issue 7). A counting global
//! allocator checks two things: the cache on its own (taking the data-version stamp, building
//! the key, finding the entry, filling the reused `Response` with its headers and shared
//! body), then the whole path of a signed-in room page served from the cache by a real loop
//! in this process (read, parse, route, the gates with the session cookie, the cache, the
//! writev). This file holds a single test so no other test thread allocates while it counts;
//! the client side uses only buffers made before counting starts.

mod alloc_support;
mod support;

use campfire::cache::Cache;
use campfire::db::{Conn, Mode};
use campfire::http::{Header, Request, Response};
use std::io::{Read, Write};
use std::net::TcpStream;
use support::seed;

#[global_allocator]
static GLOBAL: alloc_support::Counting = alloc_support::Counting;

#[test]
fn a_warm_hit_does_not_allocate() {
    the_cache_alone();
    a_whole_request();
}

fn the_cache_alone() {
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
    let req = Request::loopback_get(b"/rooms/7", &headers);
    let mut cache = Cache::new(1 << 20);
    let stamp = cache.stamp(&conn).expect("a stamp");
    let mut res = Response::new();
    cache.begin_request();
    assert!(!cache.lookup(stamp, 7, &req, 1, &mut res));
    res.header("Content-Type", b"text/html; charset=utf-8");
    res.body().extend_from_slice(&b"<div class=\"message\">hello</div>".repeat(1000));
    let after = cache.stamp(&conn);
    cache.admit(stamp, after, &mut res);

    let mut out = Response::new();
    let hit = |cache: &mut Cache, out: &mut Response| {
        out.reset();
        cache.begin_request();
        let s = cache.stamp(&conn).expect("a stamp");
        assert!(cache.lookup(s, 7, &req, 1, out), "a hit");
        assert_eq!(out.body_bytes().len(), 32_000);
    };
    hit(&mut cache, &mut out);
    let before = alloc_support::allocations();
    for _ in 0..100 {
        hit(&mut cache, &mut out);
    }
    assert_eq!(alloc_support::allocations() - before, 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A signed-in, gzip-accepting GET of a room page on one keep-alive connection to a loop
/// running in this process: after warming up, 100 more requests allocate nothing anywhere in
/// the process (the loop thread included).
fn a_whole_request() {
    let dir = std::env::temp_dir().join(format!("campfire-hit-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("db.sqlite3");
    let lookup = |k: &str| -> Option<String> {
        match k {
            "PORT" => Some("0".into()),
            "CAMPFIRE_LOOPS" => Some("1".into()),
            "CAMPFIRE_LOG" => Some("0".into()),
            "DISABLE_SSL" => Some("1".into()),
            "SECRET_KEY_BASE" => Some("dummy".into()),
            "DATABASE_PATH" => Some(db.to_str().unwrap().into()),
            "STORAGE_PATH" => Some(dir.to_str().unwrap().into()),
            _ => None,
        }
    };
    let mut cfg = campfire::config::Config::from_lookup(lookup).unwrap();
    cfg.prepare_storage().unwrap();
    let shared = campfire::app::Shared::start(cfg.clone(), campfire::app::Env::from_lookup(lookup)).unwrap();
    let seeder = Conn::open(db.to_str().unwrap(), Mode::ReadWrite).unwrap();
    seeder.exec(&seed::sql(campfire::db::time::now_us())).unwrap();
    drop(seeder);

    let request = format!(
        "GET /rooms/{room} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0\r\n\
         Accept: text/html\r\nAccept-Encoding: gzip, deflate, br\r\nCookie: session_token={cookie}; last_room={room}\r\n\r\n",
        room = seed::HQ,
        cookie = seed::session_cookie(support::VECTOR_TOKEN),
    )
    .into_bytes();

    let mut counted = None;
    campfire::server::serve(
        &cfg,
        None,
        |_| campfire::app::Ctx::new(&shared).unwrap(),
        |port, stop| {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            let mut buf = vec![0u8; 1 << 20];
            let exchange = |c: &mut TcpStream, buf: &mut [u8]| -> (u16, usize) {
                c.write_all(&request).unwrap();
                read_response(c, buf)
            };
            // The first views write (the room is marked read), then the page settles: warm up
            // until a round of requests leaves the database as it was (on a loaded machine the
            // writer's commit can land after any fixed number of requests, and the page after it
            // is rendered anew, allocating).
            for _ in 0..50 {
                let epoch = campfire::db::epoch();
                for _ in 0..10 {
                    assert_eq!(exchange(&mut c, &mut buf).0, 200);
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
                if campfire::db::epoch() == epoch {
                    break;
                }
            }
            assert_eq!(exchange(&mut c, &mut buf).0, 200);
            let before = alloc_support::allocations();
            let mut bytes = 0;
            for _ in 0..100 {
                let (status, n) = exchange(&mut c, &mut buf);
                assert_eq!(status, 200);
                bytes += n;
            }
            counted = Some(alloc_support::allocations() - before);
            assert!(bytes > 100 * 1000, "whole pages came back");
            stop.trigger();
        },
    )
    .unwrap();
    shared.writer.stop();
    assert_eq!(counted, Some(0), "allocations over 100 cached room pages, whole process");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads one response with a Content-Length into `buf` without allocating; (status, bytes).
fn read_response(c: &mut TcpStream, buf: &mut [u8]) -> (u16, usize) {
    let mut have = 0;
    loop {
        let n = c.read(&mut buf[have..]).unwrap();
        assert!(n > 0, "the server closed the connection");
        have += n;
        let Some(end) = buf[..have].windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = &buf[..end];
        let status = std::str::from_utf8(&head[9..12]).unwrap().parse::<u16>().unwrap();
        let len = head
            .split(|&b| b == b'\n')
            .find_map(|l| {
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                let v = l.strip_prefix(b"Content-Length: ").or_else(|| l.strip_prefix(b"content-length: "))?;
                std::str::from_utf8(v).ok()?.parse::<usize>().ok()
            })
            .unwrap_or(0);
        let total = end + 4 + len;
        while have < total {
            let n = c.read(&mut buf[have..]).unwrap();
            assert!(n > 0, "the server closed the connection");
            have += n;
        }
        assert_eq!(have, total, "one response at a time");
        return (status, total);
    }
}
