//! A photo chosen on the sign-up card (spec/02 §4.2 first run, §4.11 join) is stored as the
//! profile page stores an avatar, and the user's avatar URL serves those bytes.

mod auth_support;
use auth_support::*;

fn avatar_path(user_id: i64) -> String {
    let keys = campfire::crypto::Keys::derive(b"dummy");
    let mut t = Vec::new();
    campfire::crypto::signed_id::avatar_token(&keys, user_id, &mut t);
    format!("/users/{}/avatar", String::from_utf8(t).unwrap())
}

/// A small PNG header (40×30) and some body bytes: enough for the sniffer and the size.
fn png(tail: &str) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend_from_slice(&[0, 0, 0, 40, 0, 0, 0, 30, 8, 2, 0, 0, 0]);
    png.extend_from_slice(tail.as_bytes());
    png
}

/// The user's avatar blob as Rails records it, and its file in the Rails disk layout.
fn assert_avatar_stored(srv: &Server, jar: &mut Jar, email: &str, filename: &str, data: &[u8]) {
    let id = srv.query_int(&format!("SELECT id FROM users WHERE email_address = '{email}'"));
    let row = srv.query_text(&format!(
        "SELECT b.filename || '|' || b.content_type || '|' || b.byte_size || '|' || b.metadata || '|' || b.key \
         FROM active_storage_attachments a JOIN active_storage_blobs b ON b.id = a.blob_id \
         WHERE a.record_type = 'User' AND a.name = 'avatar' AND a.record_id = {id}"
    ));
    let (described, key) = row.rsplit_once('|').unwrap();
    assert_eq!(
        described,
        format!("{filename}|image/png|{}|{{\"identified\":true,\"width\":40,\"height\":30,\"analyzed\":true}}", data.len())
    );
    let file = srv.dir.join("storage/files").join(&key[0..2]).join(&key[2..4]).join(key);
    assert_eq!(std::fs::read(file).unwrap(), data);
    let r = jar.send(srv, Request::get(&avatar_path(id)));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.header("Content-Type"), Some("image/png"));
    assert_eq!(r.raw_body, data, "the avatar URL serves the uploaded bytes");
}

#[test]
fn first_run_stores_the_administrators_avatar() {
    let srv = Server::start(&[]);
    let data = png("first-run-photo");
    let fields = [("user[name]", "Ada"), ("user[email_address]", "ada@example.com"), ("user[password]", "secret123456")];
    let mut jar = Jar::default();
    let r = jar.send(&srv, Request::multipart("/first_run", &fields, Some(("user[avatar]", "ada.png", "image/png", &data))));
    assert_eq!((r.status, r.location()), (302, Some("/")), "{r:?}\n{}", srv.stderr());
    assert!(jar.get("session_token").is_some());
    assert_avatar_stored(&srv, &mut jar, "ada@example.com", "ada.png", &data);
}

#[test]
fn join_stores_the_members_avatar_and_a_taken_email_keeps_no_file() {
    let srv = Server::start(&[]);
    first_run(&srv);
    let code = srv.query_text("SELECT join_code FROM accounts");
    let page = srv.send(&Request::get(&format!("/join/{code}")));
    assert!(page.body.contains(r#"enctype="multipart/form-data""#));
    assert!(page.body.contains(r#"type="file" name="user[avatar]""#), "the card offers a photo");

    let data = png("join-photo");
    let fields = [("user[name]", "Kevin"), ("user[email_address]", "kevin@example.com"), ("user[password]", "secret123456")];
    let mut kevin = Jar::default();
    let r = kevin.send(&srv, Request::multipart(&format!("/join/{code}"), &fields, Some(("user[avatar]", "kevin.png", "image/png", &data))));
    assert_eq!((r.status, r.location()), (302, Some("/")), "{r:?}\n{}", srv.stderr());
    assert_avatar_stored(&srv, &mut kevin, "kevin@example.com", "kevin.png", &data);

    // The same e-mail again: sent to sign in, no second user, blob or file.
    let again = srv.send(&Request::multipart(&format!("/join/{code}"), &fields, Some(("user[avatar]", "k2.png", "image/png", &png("again")))));
    assert_eq!(again.location(), Some("/session/new?email_address=kevin%40example.com"));
    assert_eq!(srv.query_int("SELECT count(*) FROM users WHERE email_address = 'kevin@example.com'"), 1);
    assert_eq!(srv.query_int("SELECT count(*) FROM active_storage_blobs"), 1);
    let files = walk(&srv.dir.join("storage/files"));
    assert_eq!(files.len(), 1, "the refused upload's file is deleted: {files:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_photo_that_cannot_be_stored_is_a_500_with_nothing_created() {
    let srv = Server::start(&[]);
    // A plain file where the blob folders would go: writing the photo fails.
    let files = srv.dir.join("storage/files");
    let _ = std::fs::remove_dir_all(&files);
    std::fs::write(&files, b"in the way").unwrap();
    let fields = [("user[name]", "Ada"), ("user[email_address]", "ada@example.com"), ("user[password]", "secret123456")];
    let r = srv.send(&Request::multipart("/first_run", &fields, Some(("user[avatar]", "ada.png", "image/png", &png("x")))));
    assert_eq!(r.status, 500, "{r:?}");
    assert!(r.header("Set-Cookie").is_none(), "not signed in");
    assert_eq!(srv.query_int("SELECT count(*) FROM users"), 0);
    assert!(srv.stderr().contains("first_runs#create: cannot store the uploaded file"), "{}", srv.stderr());
}
