//! `campfire-bench seed --synthetic-c`: the C port's lighter synthetic seed (workloads.md §2.8),
//! for like-for-like comparison with its published CPU figures: 5 users, 3 open rooms, 15
//! memberships, sequential ids (busy_060 is message 70), no attachments.

use crate::clock::{self, DAY, HOUR, MIN};
use crate::db::{Conn, Val};
use crate::json::Scalar;
use crate::rails;
use crate::seed::{now, plain_text, write_labels, PASSWORD, PASSWORD_DIGEST, SECRET_KEY_BASE};
use std::path::Path;

/// Builds the synthetic seed into `out` (db/production.sqlite3 and labels.json).
pub fn run(out: &Path) -> Result<(), String> {
    let db_dir = out.join("db");
    std::fs::create_dir_all(&db_dir).map_err(|e| format!("{}: {e}", db_dir.display()))?;
    std::fs::create_dir_all(out.join("files")).map_err(|e| format!("{}: {e}", out.display()))?;
    let path = db_dir.join("production.sqlite3");
    if path.exists() {
        return Err(format!("{} exists; seed into a fresh directory", path.display()));
    }
    let c = Conn::open(&path.to_string_lossy(), true, false)?;
    c.exec("PRAGMA journal_mode=WAL")?;
    c.exec(include_str!("schema.sql"))?;
    c.exec("BEGIN")?;
    let now = now();
    let t = clock::db;
    let mut labels: Vec<(String, Scalar)> = vec![("clock.now".into(), Scalar::Str(clock::iso(now)))];

    c.run(
        "INSERT INTO accounts (id, name, join_code, created_at, updated_at) VALUES (1, '37signals', 'seedjoin', ?, ?)",
        &[Val::Text(&t(now - 60 * DAY)), Val::Text(&t(now - 60 * DAY))],
    )?;
    let users = ["David", "Jason", "Kevin", "JZ", "Bender"];
    for (i, name) in users.iter().enumerate() {
        let id = i as i64 + 1;
        let email = format!("{}@37signals.com", name.to_ascii_lowercase());
        let at = t(now - 59 * DAY + i as i64 * HOUR);
        c.run(
            "INSERT INTO users (id, name, email_address, password_digest, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            &[Val::Int(id), Val::Text(name), Val::Text(&email), Val::Text(PASSWORD_DIGEST), Val::Text(&at), Val::Text(&at)],
        )?;
        labels.push((format!("users.{}", name.to_ascii_lowercase()), Scalar::Num(id)));
        labels.push((format!("emails.{}", name.to_ascii_lowercase()), Scalar::Str(email)));
    }
    for (i, (label, name)) in [("watercooler", "Watercooler"), ("hq", "HQ"), ("designers", "Designers")].iter().enumerate() {
        let id = i as i64 + 1;
        let at = t(now - 58 * DAY + i as i64 * HOUR);
        c.run(
            "INSERT INTO rooms (id, name, type, creator_id, created_at, updated_at) VALUES (?, ?, 'Rooms::Open', 1, ?, ?)",
            &[Val::Int(id), Val::Text(name), Val::Text(&at), Val::Text(&at)],
        )?;
        labels.push((format!("rooms.{label}"), Scalar::Num(id)));
    }
    // (user, room, involvement), as the C port's importer lists them.
    let memberships = [
        (1, 1, "everything"), (1, 2, "nothing"), (1, 3, "mentions"),
        (2, 1, "mentions"), (2, 2, "mentions"), (2, 3, "everything"),
        (3, 1, "mentions"), (3, 2, "everything"), (3, 3, "mentions"),
        (4, 1, "mentions"), (4, 2, "mentions"), (4, 3, "mentions"),
        (5, 1, "mentions"), (5, 2, "mentions"), (5, 3, "mentions"),
    ];
    for (i, (user, room, inv)) in memberships.iter().enumerate() {
        let at = t(now - 57 * DAY + (i as i64 + 1) * MIN);
        c.run(
            "INSERT INTO memberships (room_id, user_id, involvement, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
            &[Val::Int(*room), Val::Int(*user), Val::Text(inv), Val::Text(&at), Val::Text(&at)],
        )?;
    }

    let mut n = 0i64;
    let mut post = |room: i64, creator: i64, at: i64, text: &str, label: Option<String>| -> Result<(), String> {
        n += 1;
        let ts = t(at);
        let body = format!("<p>{text}</p>");
        c.run(
            "INSERT INTO messages (id, room_id, creator_id, client_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            &[Val::Int(n), Val::Int(room), Val::Int(creator), Val::Text(&format!("seed-message-{n:04}")), Val::Text(&ts), Val::Text(&ts)],
        )?;
        c.run(
            "INSERT INTO action_text_rich_texts (id, record_type, record_id, name, body, created_at, updated_at) VALUES (?, 'Message', ?, 'body', ?, ?, ?)",
            &[Val::Int(n), Val::Int(n), Val::Text(&body), Val::Text(&ts), Val::Text(&ts)],
        )?;
        c.run("INSERT INTO message_search_index (rowid, body) VALUES (?, ?)", &[Val::Int(n), Val::Text(&plain_text(&body))])?;
        if let Some(l) = label {
            labels.push((format!("messages.{l}"), Scalar::Num(n)));
        }
        Ok(())
    };
    let fixtures = [
        "Standup notes are in the doc.", "Welcome aboard, everyone!", "The build is green again.",
        "Coffee beans are on the counter.", "Reminder: retro at 10.", "New laptop stickers arrived.",
        "Who is on support this week?", "The office plants survived.", "Sprint review moved to Thursday.", "Let's ship it.",
    ];
    for (i, body) in fixtures.iter().enumerate() {
        post(1, i as i64 % 5 + 1, now - 20 * DAY + i as i64 * HOUR, body, None)?;
    }
    let lines = [
        "Did anyone see the game last night?", "Coffee machine is fixed!", "I'm heading out for lunch.",
        "New plants in the kitchen.", "Who took my stapler?", "Friday demo is at 3pm.",
        "The wifi is flaky again.", "Congrats on the launch!", "Anyone up for a walk?", "Back in 5.",
    ];
    let busy_start = clock::utc(2026, 2, 28, 8, 0, 0);
    for i in 1..=120i64 {
        let text = format!("{i:03}. {}", lines[(i % 10) as usize]);
        post(1, i % 5 + 1, busy_start + 7 * i * MIN, &text, Some(format!("busy_{i:03}")))?;
    }
    post(1, 5, now - 20 * MIN, "Build 1043 passed.", Some("bot_in_watercooler".into()))?;
    for (i, body) in ["Welcome to HQ.", "Launch checklist is pinned.", "Status update: on track."].iter().enumerate() {
        post(2, 1, now - 10 * DAY + i as i64 * HOUR, body, None)?;
    }
    let designers = [
        "Coffee first, then the launch plan.", "Morning! Anyone around?",
        "Here's the plan for the <strong>spring launch</strong>.",
        "The helper we talked about: <code>def greet(name)</code>", "Who is reviewing the copy?",
    ];
    for (i, body) in designers.iter().enumerate() {
        post(3, (i as i64 + 1) % 5 + 1, now - 5 * DAY + 10 * i as i64 * MIN, body, None)?;
    }
    c.run(
        "UPDATE rooms SET updated_at = (SELECT MAX(created_at) FROM messages WHERE room_id = rooms.id) WHERE EXISTS (SELECT 1 FROM messages WHERE room_id = rooms.id)",
        &[],
    )?;
    c.run(
        "INSERT INTO ar_internal_metadata (key, value, created_at, updated_at) VALUES ('environment', 'production', ?, ?)",
        &[Val::Text(&t(now)), Val::Text(&t(now))],
    )?;
    c.exec("COMMIT")?;
    c.exec("PRAGMA wal_checkpoint(TRUNCATE)")?;
    drop(c);
    labels.push(("passwords.all".into(), Scalar::Str(PASSWORD.into())));
    labels.push(("avatar_tokens.jason".into(), Scalar::Str(rails::signed_id(SECRET_KEY_BASE, 2, "user/avatar", None))));
    labels.push(("bench.secret_key_base".into(), Scalar::Str(SECRET_KEY_BASE.into())));
    labels.push(("bench.synthetic_c".into(), Scalar::Num(1)));
    write_labels(out, &labels)
}
