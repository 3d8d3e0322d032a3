//! Cross-checks our Rails cookies against an independent implementation
//! (tests/interop/rails_cookies.py: Python's `cryptography`, hashlib and hmac, written
//! from spec/03): cookies we issue must verify and decrypt there, and cookies it issues
//! must sign in here. Needs `python3` with `cryptography` installed; fails loudly without.

use std::process::Command;

use campfire::crypto::cookies::{self, Session};
use campfire::crypto::{time, Keys, Scratch};

const SECRET: &str = "a-long-secret-key-base-0123456789abcdef-for-interop-tests";
const TOKEN: &str = "AxJs94fteQ5Autv2VrKsH68c";

fn python(args: &[&str]) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/rails_cookies.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}): the interop test needs Python 3 with `cryptography`")
        });
    assert!(
        out.status.success(),
        "rails_cookies.py {} failed ({}):\n{}{}",
        args.first().copied().unwrap_or(""),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn session() -> Session {
    Session {
        session_id: Some("5b1c6f0f0c0ad4f8b6b1e3f4a7d9c2e18f3a6b5c4d2e1f0a9b8c7d6e5f4a3b2c".into()),
        csrf_token: Some("kY7s3Qe0x9bVt2LmN4pR6uW8zA1cE3gI5kM7oQ9sU0w".into()),
        return_to: Some("https://chat.example.com/rooms/7?q=a+b&x=<y>".into()),
        flash: vec![("notice".into(), "Welcome back ✓ \"friend\"".into())],
        other: Vec::new(),
    }
}

fn session_json(s: &Session) -> String {
    let mut v = Vec::new();
    s.write_json(&mut v);
    String::from_utf8(v).expect("utf-8 json")
}

#[test]
fn cookies_we_issue_verify_in_python() {
    let keys = Keys::derive(SECRET.as_bytes());
    let now = time::now_ms();
    let s = session();
    let (mut token_cookie, mut session_cookie) = (Vec::new(), Vec::new());
    cookies::set_session_token(&keys, TOKEN.as_bytes(), now, true, &mut token_cookie);
    cookies::set_session(&keys, &s, now, true, &mut session_cookie);
    let token_cookie = String::from_utf8(token_cookie).unwrap();
    let session_cookie = String::from_utf8(session_cookie).unwrap();
    let json = session_json(&s);
    let now_s = now.to_string();
    let out = python(&[
        "verify",
        "--secret",
        SECRET,
        "--token",
        TOKEN,
        "--session-json",
        &json,
        "--now-ms",
        &now_s,
        &token_cookie,
        &session_cookie,
    ]);
    assert_eq!(out.trim(), "ok");
}

#[test]
fn python_can_tell_a_forgery() {
    let keys = Keys::derive(b"some other secret entirely");
    let now = time::now_ms();
    let mut token_cookie = Vec::new();
    cookies::set_session_token(&keys, TOKEN.as_bytes(), now, true, &mut token_cookie);
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/rails_cookies.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .args([
            "verify",
            "--secret",
            SECRET,
            "--token",
            TOKEN,
            "--session-json",
            "{}",
            "--now-ms",
            &now.to_string(),
        ])
        .arg(String::from_utf8(token_cookie).unwrap())
        .output()
        .expect("python3 runs");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("HMAC-SHA1 mismatch"));
}

#[test]
fn cookies_python_issues_sign_in_here() {
    let keys = Keys::derive(SECRET.as_bytes());
    let s = session();
    let out = python(&[
        "issue",
        "--secret",
        SECRET,
        "--token",
        TOKEN,
        "--session-json",
        &session_json(&s),
        "--exp",
        "2045-01-01T00:00:00.000Z",
    ]);
    let mut lines = out.lines();
    let (token_value, session_value) = (lines.next().unwrap(), lines.next().unwrap());
    let mut scratch = Scratch::default();
    let now = time::now_ms();
    let token = cookies::read_session_token(&keys, token_value.as_bytes(), now, &mut scratch)
        .expect("python-issued session_token verifies");
    assert_eq!(token.as_bytes(), TOKEN.as_bytes());
    assert_eq!(
        cookies::read_session(&keys, session_value.as_bytes(), now, &mut scratch),
        s
    );

    let after = time::parse_iso8601(b"2045-01-01T00:00:00.000Z").unwrap();
    assert!(
        cookies::read_session_token(&keys, token_value.as_bytes(), after, &mut scratch).is_none()
    );
}
