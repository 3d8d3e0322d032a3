//! Spliced gzip against the real binary, with the whole-response cache off so every page is a
//! miss (issue 7): the room page, the messages page and search results are built from cached
//! message pieces,
//! must decode (strictly: one member, final block, CRC-32, length, nothing after) to exactly
//! the identity body, stay byte-stable, and follow edits and deletions of a message.

mod support;
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZFlush, MZStatus};
use std::io::{Read, Write};
use std::net::TcpStream;
use support::*;

struct Raw {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.split("\r\n").skip(1).filter_map(|l| l.split_once(": ")).find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v)
    }
}

fn raw_get(s: &Seeded, jar: &Jar, path: &str, gzip: bool) -> Raw {
    let mut cookie: Vec<String> = jar.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    cookie.push(format!("last_room={WATERCOOLER}"));
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nCookie: {}\r\n", s.srv.port, cookie.join("; "));
    if gzip {
        req.push_str("Accept-Encoding: gzip\r\n");
    }
    req.push_str("\r\n");
    let mut c = TcpStream::connect(("127.0.0.1", s.srv.port)).unwrap();
    c.write_all(req.as_bytes()).unwrap();
    let mut all = Vec::new();
    c.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").expect("a head");
    let head = String::from_utf8(all[..split].to_vec()).unwrap();
    let status = head.split(' ').nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
    Raw { status, head, body: all[split + 4..].to_vec() }
}

/// Decodes one gzip member as strictly as the benchmark's validator.
fn gunzip(wire: &[u8]) -> Vec<u8> {
    assert_eq!(&wire[..4], &[0x1f, 0x8b, 8, 0], "gzip header without optional fields");
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut pos = 10;
    loop {
        let r = inflate(&mut state, &wire[pos..], &mut buf, MZFlush::None);
        pos += r.bytes_consumed;
        out.extend_from_slice(&buf[..r.bytes_written]);
        match r.status {
            Ok(MZStatus::StreamEnd) => break,
            Ok(_) => assert!(r.bytes_consumed + r.bytes_written > 0, "truncated deflate stream"),
            Err(e) => panic!("corrupt deflate stream: {e:?}"),
        }
    }
    assert_eq!(wire.len(), pos + 8, "bytes after the deflate stream");
    assert_eq!(&wire[pos..pos + 4], &campfire::gzip::crc32(0, &out).to_le_bytes(), "CRC-32");
    assert_eq!(&wire[pos + 4..], &(out.len() as u32).to_le_bytes(), "ISIZE");
    out
}

/// Adds `n` messages with distinct, page-sized bodies to the watercooler (ids from 1000).
fn add_messages(s: &Seeded, n: i64) {
    let mut sql = String::from("BEGIN;");
    for k in 0..n {
        let id = 1000 + k;
        let body = format!("<div>Message {id}: {}</div>", "the quick brown fox jumps over the lazy dog and keeps going ".repeat(1 + (k % 5) as usize));
        sql += &format!(
            "INSERT INTO messages (id, room_id, creator_id, client_message_id, created_at, updated_at) VALUES ({id}, {WATERCOOLER}, {}, 'bulk-{id}', datetime('now', '+{k} seconds'), datetime('now', '+{k} seconds'));\
             INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) VALUES ('Message', {id}, 'body', '{body}', datetime('now'), datetime('now'));\
             INSERT INTO message_search_index (rowid, body) VALUES ({id}, 'Message {id} the quick brown fox');",
            if k % 3 == 0 { DAVID } else { JASON }
        );
    }
    sql += "COMMIT;";
    s.srv.sql(&sql);
}

/// The identity page, and its gzip form checked against it; returns (identity, wire).
fn both(s: &Seeded, jar: &Jar, path: &str) -> (Vec<u8>, Vec<u8>) {
    let plain = raw_get(s, jar, path, false);
    assert_eq!(plain.status, 200, "{path}: {}", s.srv.stderr());
    let gz = raw_get(s, jar, path, true);
    assert_eq!(gz.status, 200);
    assert_eq!(gz.header("Content-Encoding"), Some("gzip"));
    assert_eq!(gz.header("Content-Length").and_then(|v| v.parse::<usize>().ok()), Some(gz.body.len()), "framing");
    assert_eq!(gunzip(&gz.body), plain.body, "{path}: the gzip body decodes to the identity body");
    (plain.body, gz.body)
}

fn cache_off() -> Seeded {
    start_with(&[("CAMPFIRE_LOOPS", "1"), ("CAMPFIRE_CACHE_BYTES", "0")])
}

#[test]
fn room_and_messages_pages_splice_to_exactly_the_identity_body() {
    let s = cache_off();
    add_messages(&s, 70);
    let jar = s.jar(DAVID);
    let room = format!("/rooms/{WATERCOOLER}");
    // The first view renders every message and marks the room read; from the second on the
    // page is made of cached pieces.
    let (_, _) = both(&s, &jar, &room);
    let (plain, wire) = both(&s, &jar, &room);
    assert!(String::from_utf8_lossy(&plain).contains("Message 1069:"), "the newest message is on the page");
    let (plain_again, wire_again) = both(&s, &jar, &room);
    assert_eq!(plain_again, plain);
    assert_eq!(wire_again, wire, "byte-stable gzip form");
    // Close to compressing the whole page at once (pieces are compressed independently).
    let mut whole = Vec::new();
    campfire::gzip::Gzip::new(campfire::gzip::LEVEL).encode(&plain, &mut whole);
    assert_ne!(wire, whole, "spliced from pieces, not compressed whole");
    assert!(wire.len() * 2 <= whole.len() * 3, "spliced {} B vs whole {} B", wire.len(), whole.len());
    eprintln!("room page: identity {} B, spliced gzip {} B, whole-page gzip level {} {} B", plain.len(), wire.len(), campfire::gzip::LEVEL, whole.len());

    // The messages page (paging): the first message of it now follows nothing.
    let older = format!("/rooms/{WATERCOOLER}/messages?before=1040");
    let (plain, wire) = both(&s, &jar, &older);
    assert!(String::from_utf8_lossy(&plain).contains("Message 1039:"));
    let again = raw_get(&s, &jar, &older, true);
    assert_eq!(again.body, wire, "byte-stable");
    let etag = again.header("ETag").expect("the messages page has an ETag").to_string();
    let first = raw_get(&s, &jar, &older, true);
    assert_eq!(first.header("ETag"), Some(etag.as_str()), "ETag stable");
    // The room page again after paging: its pieces are still right.
    let (_, _) = both(&s, &jar, &room);

    // Search results are rendered aside and copied into the page; their pieces still splice.
    let search = "/searches?q=fox";
    both(&s, &jar, search);
    let (plain, wire) = both(&s, &jar, search);
    assert!(String::from_utf8_lossy(&plain).contains("Message 1069:"), "search finds the new messages");
    let mut whole = Vec::new();
    campfire::gzip::Gzip::new(campfire::gzip::LEVEL).encode(&plain, &mut whole);
    assert_ne!(wire, whole, "spliced from pieces, not compressed whole");
    assert_eq!(raw_get(&s, &jar, search, true).body, wire, "byte-stable");
}

#[test]
fn edits_and_deletions_replace_the_pieces() {
    let s = cache_off();
    add_messages(&s, 50);
    let jar = s.jar(DAVID);
    let room = format!("/rooms/{WATERCOOLER}");
    both(&s, &jar, &room);
    both(&s, &jar, &room);
    // Edit a message in the middle of the page (David wrote 1030: 30 % 3 == 0).
    let edit = s.post(DAVID, &format!("/rooms/{WATERCOOLER}/messages/1030"), &[("_method", "patch"), ("message[body]", "<div>Edited in the middle</div>")]);
    assert!(edit.status < 400, "edit: {}", edit.status);
    let (plain, _) = both(&s, &jar, &room);
    let page = String::from_utf8_lossy(&plain);
    assert!(page.contains("Edited in the middle") && !page.contains("Message 1030:"), "the edit shows");
    // Delete the message right after it: 1031's successor now follows 1030's new piece.
    let del = s.srv.send(
        &Request::post_form(&format!("/rooms/{WATERCOOLER}/messages/1031"), &[("_method", "delete")])
            .cookies(&s.jar(JASON))
            .header("Accept", "text/vnd.turbo-stream.html, text/html"),
    );
    assert_eq!(del.status, 200);
    let (plain, wire) = both(&s, &jar, &room);
    let page = String::from_utf8_lossy(&plain);
    assert!(!page.contains("Message 1031:") && page.contains("Message 1032:"));
    assert_eq!(raw_get(&s, &jar, &room, true).body, wire, "byte-stable after the changes");
    // An edit by SQL from another process (a new updated_at) is seen too.
    s.srv.sql("UPDATE action_text_rich_texts SET body = '<div>Changed behind its back</div>' WHERE record_id = 1040; UPDATE messages SET updated_at = datetime('now', '+1 hour') WHERE id = 1040;");
    let (plain, _) = both(&s, &jar, &room);
    assert!(String::from_utf8_lossy(&plain).contains("Changed behind its back"));
}

/// Gives David `n` more closed rooms (ids from 5000, names that sort among the seed's) and
/// `n / 4` more pings with Jason, Kevin or both; every seventh of the new rooms unread.
fn add_rooms(s: &Seeded, n: i64) {
    let mut sql = String::from("BEGIN;");
    for k in 0..n {
        let id = 5000 + k;
        let (kind, name) = if k % 4 == 3 { ("Rooms::Direct", "NULL".to_string()) } else { ("Rooms::Closed", format!("'Project {k:03} & co'")) };
        let unread = if k % 7 == 0 { "datetime('now')" } else { "NULL" };
        sql += &format!(
            "INSERT INTO rooms (id, created_at, creator_id, name, type, updated_at) VALUES ({id}, datetime('now'), {DAVID}, {name}, '{kind}', datetime('now', '-{k} minutes'));\
             INSERT INTO memberships (created_at, involvement, room_id, unread_at, updated_at, user_id) VALUES (datetime('now'), 'everything', {id}, {unread}, datetime('now'), {DAVID});\
             INSERT INTO memberships (created_at, involvement, room_id, updated_at, user_id) VALUES (datetime('now'), 'everything', {id}, datetime('now'), {});",
            if k % 2 == 0 { JASON } else { KEVIN }
        );
        if k % 8 == 7 {
            sql += &format!("INSERT INTO memberships (created_at, involvement, room_id, updated_at, user_id) VALUES (datetime('now'), 'everything', {id}, datetime('now'), {JZ});");
        }
    }
    sql += "COMMIT;";
    s.srv.sql(&sql);
}

#[test]
fn the_sidebar_splices_its_room_links_and_follows_changes() {
    let s = cache_off();
    add_rooms(&s, 240);
    let jar = s.jar(DAVID);
    let path = "/users/me/sidebar";
    let (plain, wire) = both(&s, &jar, path);
    let page = String::from_utf8_lossy(&plain).into_owned();
    assert!(page.contains("Project 238 &amp; co"), "the new rooms are listed");
    assert!(page.contains("id=\"list_rooms_direct_5003\""), "the new pings are listed");
    // Again: the links' runs are found by their bytes and their pieces spliced.
    let (plain_again, wire_again) = both(&s, &jar, path);
    assert_eq!(plain_again, plain);
    assert_eq!(wire_again, wire, "byte-stable gzip form");
    let mut whole = Vec::new();
    campfire::gzip::Gzip::new(campfire::gzip::LEVEL).encode(&plain, &mut whole);
    assert_ne!(wire, whole, "spliced from pieces, not compressed whole");
    assert!(wire.len() * 4 <= whole.len() * 5, "spliced {} B vs whole {} B", wire.len(), whole.len());
    eprintln!("sidebar: identity {} B, spliced gzip {} B, whole-page gzip level {} {} B", plain.len(), wire.len(), campfire::gzip::LEVEL, whole.len());

    // A room read, another made unread, one renamed, one left, a ping touched (it moves to
    // the top): each shows, and the spliced form still decodes to the identity body.
    s.srv.sql(&format!(
        "UPDATE memberships SET unread_at = NULL WHERE room_id = 5000 AND user_id = {DAVID};\
         UPDATE memberships SET unread_at = datetime('now') WHERE room_id = 5101 AND user_id = {DAVID};\
         UPDATE rooms SET name = 'Renamed & moved' WHERE id = 5102;\
         DELETE FROM memberships WHERE room_id = 5200 AND user_id = {DAVID};\
         UPDATE rooms SET updated_at = datetime('now', '+1 hour') WHERE id = 5203;"
    ));
    let (plain, wire) = both(&s, &jar, path);
    let page = String::from_utf8_lossy(&plain).into_owned();
    assert!(page.contains("id=\"list_rooms_closed_5000\" class=\"room btn\""), "read");
    assert!(page.contains("id=\"list_rooms_closed_5101\" class=\"room btn unread\""), "unread");
    assert!(page.contains("Renamed &amp; moved") && !page.contains("Project 102 &amp;"), "renamed");
    assert!(!page.contains("list_rooms_closed_5200"), "left");
    let directs = page.find("id=\"direct_rooms\"").unwrap();
    assert!(page[directs..].find("list_rooms_direct_5203") < page[directs..].find("list_rooms_direct_5003"), "the touched ping first");
    assert_eq!(raw_get(&s, &jar, path, true).body, wire, "byte-stable after the changes");

    // Another viewer with some of the same rooms gets their own sidebar, and David's is intact.
    let (kevin, _) = both(&s, &s.jar(KEVIN), path);
    assert!(String::from_utf8_lossy(&kevin).contains("Project 001 &amp; co"));
    assert_eq!(both(&s, &jar, path).0, plain);
}
