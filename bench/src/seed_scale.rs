//! `campfire-bench seed --scale N` (N ≥ 2): the harness's seed plus an account grown N times, for
//! measuring how the cost of a request grows with the data (issue 18, `make bench-growth`).
//! Everything the harness seed holds stays as it is (ids, rooms, the watercooler's messages), so the
//! same workloads and contracts run unchanged; what is added, deterministically (a fixed-seed
//! splitmix64), on top of it:
//! - 50·N people (`person00001@scale.campfire.test`, the seed's password), each granted the Open
//!   rooms as `User.create!` does: HQ, All Pets and Archive grow to ~50·N members (5,004 at ×100);
//! - 10·N rooms for David: 70% Closed ("Project 0001", David plus 3–8 people), 30% Direct (David
//!   and one person), plus "Crew", a Closed room of David, Jason, JZ and Kevin (`rooms.crew`): the
//!   4-member room posts are compared against;
//! - 10,000·N messages (rich text and FTS row each), 5% in HQ, the rest over the new rooms with a
//!   skew (room k gets a share ∝ 1/√k, like an account where a few rooms carry most talk), dated
//!   over the year before the seed's day, so the seed's messages stay the newest;
//! - words of known frequency in the bodies: `coffee` in every 50th message, `lunch` in every 10th,
//!   `deploy` in every 1,000th (labels `scale.words.*` give the counts); the rest of each body is
//!   drawn from a vocabulary that holds none of them;
//! - David's unread flag on every 10th new room.

use crate::clock::{self, DAY, MIN};
use crate::db::{Conn, Stmt, Val};
use crate::json;
use crate::rails;
use crate::seed::PASSWORD_DIGEST;

const VOCABULARY: [&str; 32] = [
    "the", "plan", "looks", "good", "ship", "review", "copy", "design", "meeting", "tomorrow", "today", "draft",
    "notes", "budget", "customer", "ticket", "fixed", "broken", "thanks", "later", "call", "page", "button",
    "report", "numbers", "week", "launch", "ready", "update", "question", "idea", "maybe",
];

// splitmix64: a tiny deterministic generator, the same stream on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

// Runs a prepared INSERT and returns the new row's id.
fn insert(conn: &Conn, st: &mut Stmt, params: &[Val]) -> Result<i64, String> {
    st.bind_all(params)?;
    while st.step()? {}
    st.reset();
    Ok(conn.last_insert_rowid())
}

/// A grown room: id and the people in it (David first).
struct Room {
    id: i64,
    members: Vec<i64>,
    last_at: i64,
}

/// Adds the ×`scale` data to the open transaction on `conn` (the seed already built) and returns
/// the labels it defines. `now` is the seed clock.
pub fn grow(conn: &Conn, scale: u32, now: i64, labels: &[(String, json::Scalar)]) -> Result<Vec<(String, json::Scalar)>, String> {
    let label = |k: &str| match labels.iter().find(|(key, _)| key == k) {
        Some((_, json::Scalar::Num(n))) => Ok(*n),
        _ => Err(format!("seed --scale: no label {k}")),
    };
    let (david, jason, jz, kevin, hq) = (label("users.david")?, label("users.jason")?, label("users.jz")?, label("users.kevin")?, label("rooms.hq")?);
    let n = i64::from(scale);
    let mut rng = Rng(0x5EED_0000 + u64::from(scale));
    let mut out = Vec::new();
    let insert = |st: &mut Stmt, params: &[Val]| insert(conn, st, params);

    // People, each granted the Open rooms.
    let open = {
        let mut st = conn.prepare("SELECT id FROM rooms WHERE type = 'Rooms::Open' ORDER BY id")?;
        let mut v = vec![];
        while st.step()? {
            v.push(st.int(0));
        }
        v
    };
    let mut user_st = conn.prepare(
        "INSERT INTO users (name, email_address, password_digest, role, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?)",
    )?;
    let mut member_st = conn.prepare(
        "INSERT OR IGNORE INTO memberships (room_id, user_id, involvement, unread_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    )?;
    let mut people = Vec::new();
    for i in 1..=50 * n {
        let at = clock::db(now - 50 * DAY + i * 13);
        let id = insert(
            &mut user_st,
            &[Val::Text(&format!("Person {i:05}")), Val::Text(&format!("person{i:05}@scale.campfire.test")), Val::Text(PASSWORD_DIGEST), Val::Text(&at), Val::Text(&at)],
        )?;
        for room in &open {
            insert(&mut member_st, &[Val::Int(*room), Val::Int(id), Val::Text("mentions"), Val::Null, Val::Text(&at), Val::Text(&at)])?;
        }
        people.push(id);
    }
    out.push(("scale.people".into(), json::Scalar::Num(people.len() as i64)));

    // David's rooms.
    let mut room_st = conn.prepare("INSERT INTO rooms (name, type, creator_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")?;
    let mut rooms: Vec<Room> = Vec::new();
    let crew_at = now - 45 * DAY;
    let crew_ts = clock::db(crew_at);
    let crew = insert(&mut room_st, &[Val::Text("Crew"), Val::Text("Rooms::Closed"), Val::Int(david), Val::Text(&crew_ts), Val::Text(&crew_ts)])?;
    for u in [david, jason, jz, kevin] {
        insert(&mut member_st, &[Val::Int(crew), Val::Int(u), Val::Text("mentions"), Val::Null, Val::Text(&crew_ts), Val::Text(&crew_ts)])?;
    }
    out.push(("rooms.crew".into(), json::Scalar::Num(crew)));
    for k in 1..=10 * n {
        let at = now - 45 * DAY + k * MIN;
        let ts = clock::db(at);
        let direct = rng.below(10) < 3;
        let name = format!("Project {k:04}");
        let (kind, name) = if direct { ("Rooms::Direct", None) } else { ("Rooms::Closed", Some(name.as_str())) };
        let id = insert(&mut room_st, &[name.map_or(Val::Null, Val::Text), Val::Text(kind), Val::Int(david), Val::Text(&ts), Val::Text(&ts)])?;
        let mut members = vec![david];
        let extra = if direct { 1 } else { 3 + rng.below(6) as usize };
        while members.len() < 1 + extra {
            let p = people[rng.below(people.len() as u64) as usize];
            if !members.contains(&p) {
                members.push(p);
            }
        }
        let involvement = if direct { "everything" } else { "mentions" };
        for u in &members {
            insert(&mut member_st, &[Val::Int(id), Val::Int(*u), Val::Text(involvement), Val::Null, Val::Text(&ts), Val::Text(&ts)])?;
        }
        rooms.push(Room { id, members, last_at: at });
    }
    out.push(("scale.rooms".into(), json::Scalar::Num(rooms.len() as i64)));
    let hq_people: Vec<i64> = {
        let mut st = conn.prepare("SELECT user_id FROM memberships WHERE room_id = ? ORDER BY user_id")?;
        st.bind_all(&[Val::Int(hq)])?;
        let mut v = vec![];
        while st.step()? {
            v.push(st.int(0));
        }
        v
    };

    // Messages, in time order.
    let mut msg_st = conn.prepare("INSERT INTO messages (room_id, creator_id, client_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")?;
    let mut text_st = conn.prepare(
        "INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) VALUES ('Message', ?, 'body', ?, ?, ?)",
    )?;
    let mut fts_st = conn.prepare("INSERT INTO message_search_index (rowid, body) VALUES (?, ?)")?;
    let total = 10_000 * n;
    let first = now - 366 * DAY;
    let span = 365 * DAY;
    let (mut coffee, mut lunch, mut deploy, mut in_hq) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..total {
        let at = first + span * i / total;
        let ts = clock::db(at);
        let (room, creator) = if rng.below(20) == 0 {
            in_hq += 1;
            (hq, hq_people[rng.below(hq_people.len() as u64) as usize])
        } else {
            // Room index ⌊R·u²⌋ for u uniform in [0, 1): density ∝ 1/√k.
            let u = rng.below(1 << 20) as f64 / f64::from(1u32 << 20);
            let k = ((u * u) * rooms.len() as f64) as usize;
            let r = &mut rooms[k];
            r.last_at = at;
            (r.id, r.members[rng.below(r.members.len() as u64) as usize])
        };
        let mut words: Vec<&str> = (0..6 + rng.below(7)).map(|_| VOCABULARY[rng.below(VOCABULARY.len() as u64) as usize]).collect();
        if i % 50 == 7 {
            words.push("coffee");
            coffee += 1;
        }
        if i % 10 == 3 {
            words.insert(0, "lunch");
            lunch += 1;
        }
        if i % 1000 == 501 {
            words.push("deploy");
            deploy += 1;
        }
        let plain = words.join(" ");
        let body = format!("<p>{plain}</p>");
        let cmid = rails::uuid_v5_url(&format!("https://parity.campfire.test/scale/{scale}/messages/{i}"));
        let id = insert(&mut msg_st, &[Val::Int(room), Val::Int(creator), Val::Text(&cmid), Val::Text(&ts), Val::Text(&ts)])?;
        insert(&mut text_st, &[Val::Int(id), Val::Text(&body), Val::Text(&ts), Val::Text(&ts)])?;
        insert(&mut fts_st, &[Val::Int(id), Val::Text(&plain)])?;
    }
    for r in &rooms {
        conn.run("UPDATE rooms SET updated_at = ? WHERE id = ?", &[Val::Text(&clock::db(r.last_at)), Val::Int(r.id)])?;
    }
    for r in rooms.iter().step_by(10) {
        conn.run("UPDATE memberships SET unread_at = ? WHERE room_id = ? AND user_id = ?", &[Val::Text(&clock::db(r.last_at)), Val::Int(r.id), Val::Int(david)])?;
    }
    for (k, v) in [("messages", total), ("messages_in_hq", in_hq), ("words.coffee", coffee), ("words.lunch", lunch), ("words.deploy", deploy)] {
        out.push((format!("scale.{k}"), json::Scalar::Num(v)));
    }
    out.push(("scale.factor".into(), json::Scalar::Num(n)));
    Ok(out)
}
