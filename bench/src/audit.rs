//! The write audit after a run (workloads.md §4.1): every acknowledged post must be in the write
//! room exactly once, with its rich-text body and search-index row, and nothing else may appear.

use crate::db::{Conn, Val};

/// The write room's state before any load.
#[derive(Clone, Copy, Debug)]
pub struct Baseline {
    pub max_id: i64,
    pub room_count: i64,
}

/// Reads the baseline for `room`.
pub fn baseline(db: &Conn, room: i64) -> Result<Baseline, String> {
    Ok(Baseline {
        max_id: db.int("SELECT COALESCE(MAX(id), 0) FROM messages", &[])?,
        room_count: db.int("SELECT COUNT(*) FROM messages WHERE room_id = ?", &[Val::Int(room)])?,
    })
}

/// Checks the database against the acknowledged `(message id, posted text)` pairs; every posted
/// text starts with `marker` ("bench write "). Returns the failures (empty when the audit passes).
pub fn audit(db: &Conn, room: i64, base: Baseline, marker: &str, acks: &[(i64, String)]) -> Result<Vec<String>, String> {
    let mut fails = Vec::new();
    let n = acks.len() as i64;
    let added = db.int("SELECT COUNT(*) FROM messages WHERE room_id = ?", &[Val::Int(room)])? - base.room_count;
    if added != n {
        fails.push(format!("write room grew by {added} messages, {n} posts were acknowledged"));
    }
    let unindexed = db.int("SELECT COUNT(*) FROM messages m LEFT JOIN message_search_index i ON i.rowid = m.id WHERE i.rowid IS NULL", &[])?;
    if unindexed != 0 {
        fails.push(format!("{unindexed} messages lack a search-index row"));
    }
    let bodiless = db.int(
        "SELECT COUNT(*) FROM messages m LEFT JOIN action_text_rich_texts r ON r.record_type = 'Message' AND r.record_id = m.id AND r.name = 'body' WHERE m.room_id = ? AND m.id > ? AND r.id IS NULL",
        &[Val::Int(room), Val::Int(base.max_id)],
    )?;
    if bodiless != 0 {
        fails.push(format!("{bodiless} new messages lack a rich-text body"));
    }
    let bench_bodies = db.int(
        "SELECT COUNT(*) FROM messages m JOIN action_text_rich_texts r ON r.record_type = 'Message' AND r.record_id = m.id WHERE m.room_id = ? AND m.id > ? AND instr(r.body, ?) > 0",
        &[Val::Int(room), Val::Int(base.max_id), Val::Text(marker)],
    )?;
    if bench_bodies != n {
        fails.push(format!("{bench_bodies} new rich texts carry {marker:?}, {n} posts were acknowledged"));
    }
    let integrity = db.text("PRAGMA integrity_check", &[])?.unwrap_or_default();
    if integrity != "ok" {
        fails.push(format!("integrity_check: {integrity}"));
    }
    let mut ids: Vec<i64> = acks.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() != acks.len() {
        fails.push(format!("{} acknowledgements share a message id", acks.len() - ids.len()));
    }
    let mut st = db.prepare(
        "SELECT m.room_id, COALESCE(r.body, ''), COALESCE(i.body, '') FROM messages m LEFT JOIN action_text_rich_texts r ON r.record_type = 'Message' AND r.record_id = m.id LEFT JOIN message_search_index i ON i.rowid = m.id WHERE m.id = ?",
    )?;
    let mut bad = 0;
    for (id, text) in acks {
        st.bind_all(&[Val::Int(*id)])?;
        let ok = st.step()? && st.int(0) == room && st.text(1).contains(text.as_str()) && st.text(2).contains(text.as_str());
        while st.step()? {}
        if !ok {
            bad += 1;
            if bad <= 3 {
                fails.push(format!("acknowledged message {id} ({text}) is missing or differs"));
            }
        }
        st.reset();
    }
    if bad > 3 {
        fails.push(format!("... {bad} acknowledged messages missing or different in all"));
    }
    Ok(fails)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catches_missing_extra_and_duplicate_writes() {
        let dir = std::env::temp_dir().join(format!("campfire-bench-audit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        crate::seed_c::run(&dir).unwrap();
        let path = dir.join("db/production.sqlite3").to_string_lossy().into_owned();
        let db = Conn::open(&path, false, false).unwrap();
        let base = baseline(&db, 2).unwrap();
        let post = |nonce: &str| -> i64 {
            let id = db.run("INSERT INTO messages (room_id, creator_id, client_message_id, created_at, updated_at) VALUES (2, 1, ?, '2026-03-03 00:00:00', '2026-03-03 00:00:00')", &[Val::Text(nonce)]).unwrap();
            let body = format!("<p>bench write {nonce}</p>");
            db.run("INSERT INTO action_text_rich_texts (record_type, record_id, name, body, created_at, updated_at) VALUES ('Message', ?, 'body', ?, '2026-03-03 00:00:00', '2026-03-03 00:00:00')", &[Val::Int(id), Val::Text(&body)]).unwrap();
            db.run("INSERT INTO message_search_index (rowid, body) VALUES (?, ?)", &[Val::Int(id), Val::Text(&format!("bench write {nonce}"))]).unwrap();
            id
        };
        let a = post("aa1");
        let b = post("bb2");
        let w = |n: &str| format!("bench write {n}");
        let m = "bench write ";
        let acks = vec![(a, w("aa1")), (b, w("bb2"))];
        assert_eq!(audit(&db, 2, base, m, &acks).unwrap(), Vec::<String>::new());
        // One acknowledged write missing from the acks list means an extra write in the room.
        assert!(!audit(&db, 2, base, m, &acks[..1]).unwrap().is_empty());
        // A duplicate acknowledgement.
        let dup = vec![(a, w("aa1")), (a, w("aa1"))];
        assert!(audit(&db, 2, base, m, &dup).unwrap().iter().any(|f| f.contains("share")));
        // A wrong nonce.
        let wrong = vec![(a, w("aa1")), (b, w("zz9"))];
        assert!(audit(&db, 2, base, m, &wrong).unwrap().iter().any(|f| f.contains("differs")));
        drop(db);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
