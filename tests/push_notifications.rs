//! Web Push end to end (spec/04 §3, spec/09, spec/05 push tests): the real binary with a VAPID
//! pair, browsers' subscriptions pointing at a loopback fake push service, and messages
//! posted through the app. The fake service records each POST; the test decrypts the body
//! with the subscriber's private key (RFC 8291, written here from the RFC) and checks the
//! VAPID token with the server's public key.

mod support;
use support::*;

use hmac::{Hmac, KeyInit, Mac};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::elliptic_curve::sec1::ToSec1Point;
use p256::{PublicKey, SecretKey};
use sha2::Sha256;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

// The RFC 8291 Appendix A application-server pair, used here as the VAPID keys.
const VAPID_PUBLIC: &str = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8=";
const VAPID_PRIVATE: &str = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw=";

fn b64url(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    campfire::crypto::base64::encode(campfire::crypto::base64::Alphabet::UrlSafe, false, bytes, &mut out);
    String::from_utf8(out).unwrap()
}

fn unb64url(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    campfire::crypto::base64::decode(campfire::crypto::base64::Alphabet::UrlSafe, s.as_bytes(), &mut out).unwrap();
    out
}

/// One POST the fake push service received.
struct Push {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Push {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A loopback push service: `/gone/...` answers 410, `/fail/...` 500, anything else 201.
fn fake_push_service() -> (u16, Receiver<Push>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut s) = conn else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let mut raw = Vec::new();
            let mut buf = [0u8; 4096];
            let head_end = loop {
                if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                    break Some(i);
                }
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break None,
                    Ok(n) => raw.extend_from_slice(&buf[..n]),
                }
            };
            let Some(head_end) = head_end else { continue };
            let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
            let mut lines = head.split("\r\n");
            let path = lines.next().and_then(|l| l.split(' ').nth(1)).unwrap_or("").to_string();
            let headers: Vec<(String, String)> =
                lines.filter_map(|l| l.split_once(':')).map(|(n, v)| (n.trim().to_string(), v.trim().to_string())).collect();
            let len: usize = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-length")).and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
            let mut body = raw[head_end + 4..].to_vec();
            while body.len() < len {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => body.extend_from_slice(&buf[..n]),
                }
            }
            let status = if path.starts_with("/gone") { "410 Gone" } else if path.starts_with("/fail") { "500 Oops" } else { "201 Created" };
            let _ = s.write_all(format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes());
            if tx.send(Push { path, headers, body }).is_err() {
                return;
            }
        }
    });
    (port, rx)
}

/// A browser's push subscription: its key pair and auth secret.
struct Browser {
    key: SecretKey,
    auth: [u8; 16],
}

impl Browser {
    fn new(seed: u8) -> Browser {
        let mut d = [seed; 32];
        d[0] = 1;
        Browser { key: SecretKey::from_slice(&d).unwrap(), auth: [seed ^ 0x5a; 16] }
    }

    fn p256dh(&self) -> String {
        b64url(self.key.public_key().to_sec1_point(false).as_bytes())
    }

    /// RFC 8291 §3.4 and RFC 8188 §2, as a user agent decrypts a push message.
    fn decrypt(&self, body: &[u8]) -> String {
        let salt = &body[..16];
        let rs = u32::from_be_bytes(body[16..20].try_into().unwrap()) as usize;
        let idlen = body[20] as usize;
        assert_eq!(idlen, 65);
        let as_pub = &body[21..21 + idlen];
        let ct = &body[21 + idlen..];
        assert_eq!(rs, ct.len(), "the gem writes the ciphertext length as the record size");
        let sender = PublicKey::from_sec1_bytes(as_pub).unwrap();
        let shared = p256::ecdh::diffie_hellman(self.key.to_nonzero_scalar(), sender.as_affine());
        let ua_point = self.key.public_key().to_sec1_point(false);
        let ua_pub = ua_point.as_bytes();
        let ikm = hkdf(&self.auth, shared.raw_secret_bytes().as_slice(), &[b"WebPush: info\0".as_slice(), ua_pub, as_pub].concat(), 32);
        let cek: [u8; 16] = hkdf(salt, &ikm, b"Content-Encoding: aes128gcm\0", 16).try_into().unwrap();
        let nonce: [u8; 12] = hkdf(salt, &ikm, b"Content-Encoding: nonce\0", 12).try_into().unwrap();
        let (data, tag) = ct.split_at(ct.len() - 16);
        let mut plain = data.to_vec();
        campfire::crypto::gcm::Gcm::new128(&cek).open(&nonce, b"", &mut plain, tag).expect("the tag authenticates");
        assert_eq!(plain.pop(), Some(2), "one final record");
        String::from_utf8(plain).unwrap()
    }
}

fn hkdf(salt: &[u8], ikm: &[u8], info: &[u8], len: usize) -> Vec<u8> {
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(salt).unwrap();
    m.update(ikm);
    let prk = m.finalize().into_bytes();
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(&prk).unwrap();
    m.update(info);
    m.update(&[1]);
    m.finalize().into_bytes()[..len].to_vec()
}

fn subscribe(s: &Seeded, user: i64, endpoint: &str, b: &Browser) {
    s.srv.sql(&format!(
        "INSERT INTO push_subscriptions (user_id, endpoint, p256dh_key, auth_key, created_at, updated_at) \
         VALUES ({user}, '{endpoint}', '{}', '{}', '2025-01-01 00:00:00', '2025-01-01 00:00:00')",
        b.p256dh(),
        b64url(&b.auth)
    ));
}

fn post_message(s: &Seeded, user: i64, room: i64, body: &str) {
    let r = s.post(user, &format!("/rooms/{room}/messages"), &[("message[body]", body)]);
    assert!(r.status == 200 || r.status == 302, "{} {}", r.status, r.body);
}

/// Collects pushes until `n` arrived (or 10 s passed), then a short while longer for strays.
fn collect(rx: &Receiver<Push>, n: usize) -> Vec<Push> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(p) => got.push(p),
            Err(_) => break,
        }
    }
    while let Ok(p) = rx.recv_timeout(Duration::from_millis(300)) {
        got.push(p);
    }
    got.sort_by(|a, b| a.path.cmp(&b.path));
    got
}

fn start_with_vapid() -> Seeded {
    start_with(&[("VAPID_PUBLIC_KEY", VAPID_PUBLIC), ("VAPID_PRIVATE_KEY", VAPID_PRIVATE)])
}

#[test]
fn a_message_is_pushed_encrypted_and_signed_to_everyone_involved() {
    let (port, rx) = fake_push_service();
    let s = start_with_vapid();
    let (jason, jz, kevin, david) = (Browser::new(2), Browser::new(3), Browser::new(4), Browser::new(5));
    subscribe(&s, JASON, &format!("http://127.0.0.1:{port}/ok/jason"), &jason);
    subscribe(&s, JZ, &format!("http://127.0.0.1:{port}/ok/jz"), &jz);
    subscribe(&s, KEVIN, &format!("http://127.0.0.1:{port}/ok/kevin"), &kevin);
    subscribe(&s, DAVID, &format!("http://127.0.0.1:{port}/ok/david"), &david);

    // Designers: Jason and JZ follow everything, Kevin only mentions; David is the sender.
    post_message(&s, DAVID, DESIGNERS, "<div>Let's ship it & see</div>");
    let got = collect(&rx, 2);
    assert_eq!(got.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["/ok/jason", "/ok/jz"]);

    let p = &got[0];
    assert_eq!(p.header("Content-Type"), Some("application/octet-stream"));
    assert_eq!(p.header("Content-Encoding"), Some("aes128gcm"));
    assert_eq!(p.header("Ttl"), Some("2419200"));
    assert_eq!(p.header("Urgency"), Some("high"));
    assert_eq!(p.header("Content-Length").map(|l| l.parse::<usize>().unwrap()), Some(p.body.len()));
    let auth = p.header("Authorization").unwrap();
    let (jwt, k) = auth.strip_prefix("vapid t=").unwrap().split_once(",k=").unwrap();
    assert_eq!(k, VAPID_PUBLIC.trim_end_matches('='));
    let parts: Vec<&str> = jwt.split('.').collect();
    let claims = String::from_utf8(unb64url(parts[1])).unwrap();
    assert!(claims.starts_with(r#"{"aud":"http://127.0.0.1","exp":"#), "{claims}");
    assert!(claims.ends_with(r#","sub":"mailto:support@37signals.com"}"#), "{claims}");
    let key = VerifyingKey::from_sec1_bytes(&unb64url(k)).unwrap();
    key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &Signature::from_slice(&unb64url(parts[2])).unwrap()).expect("the JWT verifies");

    let expected = |badge: i64| {
        format!(r#"{{"title":"Designers","options":{{"body":"David: Let's ship it & see","icon":"/account/logo","data":{{"path":"/rooms/{DESIGNERS}","badge":{badge}}}}}}}"#)
    };
    // Both had nothing unread; the message made Designers unread for them.
    assert_eq!(jason.decrypt(&got[0].body), expected(1));
    assert_eq!(jz.decrypt(&got[1].body), expected(1));
    assert_ne!(got[0].body[..16], got[1].body[..16], "a fresh salt per push");

    // A real mention of Kevin adds him; his plain text shows the mention.
    let mut sgid = Vec::new();
    campfire::crypto::sgid::user_sgid(&campfire::crypto::Keys::derive(b"dummy"), KEVIN, &mut sgid);
    let body = format!(
        r#"<div>Hi <action-text-attachment sgid="{}" content-type="application/vnd.campfire.mention"></action-text-attachment></div>"#,
        String::from_utf8(sgid).unwrap()
    );
    post_message(&s, DAVID, DESIGNERS, &body);
    let got = collect(&rx, 3);
    assert_eq!(got.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["/ok/jason", "/ok/jz", "/ok/kevin"]);
    let to_kevin = kevin.decrypt(&got[2].body);
    assert!(to_kevin.contains(r#""body":"David: Hi @Kevin""#), "{to_kevin}");

    // A forged sgid is no mention: Kevin hears nothing.
    post_message(&s, DAVID, DESIGNERS, r#"<div>Hi <action-text-attachment sgid="forged--0000" content-type="application/vnd.campfire.mention"></action-text-attachment></div>"#);
    assert_eq!(collect(&rx, 2).len(), 2);

    // Kevin present in Designers (presence within 60 s): skipped even when mentioned.
    s.srv.sql(&format!(
        "UPDATE memberships SET connected_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), connections = 1 WHERE room_id = {DESIGNERS} AND user_id = {KEVIN}"
    ));
    post_message(&s, DAVID, DESIGNERS, &body);
    assert_eq!(collect(&rx, 2).iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["/ok/jason", "/ok/jz"]);

    // A direct room: the title is the sender, the body the bare text; the badge counts rooms.
    post_message(&s, DAVID, DAVID_AND_JASON, "<div>psst</div>");
    let got = collect(&rx, 1);
    assert_eq!(got.len(), 1);
    let json = jason.decrypt(&got[0].body);
    assert_eq!(
        json,
        format!(r#"{{"title":"David","options":{{"body":"psst","icon":"/account/logo","data":{{"path":"/rooms/{DAVID_AND_JASON}","badge":2}}}}}}"#)
    );
}

#[test]
fn a_gone_subscription_is_deleted_and_others_are_kept() {
    let (port, rx) = fake_push_service();
    let s = start_with_vapid();
    subscribe(&s, JASON, &format!("http://127.0.0.1:{port}/gone/jason"), &Browser::new(2));
    subscribe(&s, JZ, &format!("http://127.0.0.1:{port}/fail/jz"), &Browser::new(3));
    s.srv.sql(&format!(
        "INSERT INTO push_subscriptions (user_id, endpoint, p256dh_key, auth_key, created_at, updated_at) \
         VALUES ({KEVIN}, 'http://127.0.0.1:{port}/ok/kevin', 'not-a-key', 'x', '2025-01-01', '2025-01-01')"
    ));
    post_message(&s, DAVID, HQ, "<div>anyone?</div>");
    let got = collect(&rx, 2);
    assert_eq!(got.iter().map(|p| p.path.as_str()).collect::<Vec<_>>(), ["/fail/jz", "/gone/jason"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let count = |who: i64| s.query_int(&format!("SELECT count(*) FROM push_subscriptions WHERE user_id = {who}"));
    while (count(JASON) != 0 || count(KEVIN) != 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(count(JASON), 0, "410: the subscription is forgotten");
    assert_eq!(count(KEVIN), 0, "unusable keys: forgotten without a request");
    assert_eq!(count(JZ), 1, "a 500 is a passing failure");
    assert!(s.srv.stderr().contains("Destroying push subscription"), "{}", s.srv.stderr());
}

#[test]
fn no_vapid_keys_no_pushes() {
    let (port, rx) = fake_push_service();
    let s = start();
    subscribe(&s, JASON, &format!("http://127.0.0.1:{port}/ok/jason"), &Browser::new(2));
    post_message(&s, DAVID, HQ, "<div>quiet</div>");
    assert!(rx.recv_timeout(Duration::from_millis(700)).is_err());
    let page = s.get(JASON, &format!("/rooms/{HQ}"));
    assert!(page.body.contains(r#"<meta name="vapid-public-key" content="">"#));
}

#[test]
fn subscriptions_are_registered_listed_tested_and_deleted() {
    let (port, rx) = fake_push_service();
    let s = start_with_vapid();
    let b = Browser::new(7);
    let endpoint = format!("http://127.0.0.1:{port}/ok/david-phone");
    let json = format!(r#"{{"push_subscription":{{"endpoint":"{endpoint}","p256dh_key":"{}","auth_key":"{}"}}}}"#, b.p256dh(), b64url(&b.auth));
    let register = || {
        let mut req = Request::post_form("/users/me/push_subscriptions", &[]).cookies(&s.jar(DAVID));
        req = req.header("Content-Type", "application/json").header("User-Agent", "Mozilla/5.0 (Macintosh) Firefox/121.0");
        req.body = json.clone().into_bytes();
        s.srv.send(&req)
    };
    let r = register();
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM push_subscriptions WHERE user_id = {DAVID}")), 1);
    let id = s.query_int(&format!("SELECT id FROM push_subscriptions WHERE user_id = {DAVID}"));
    assert_eq!(s.query_text(&format!("SELECT user_agent FROM push_subscriptions WHERE id = {id}")), "Mozilla/5.0 (Macintosh) Firefox/121.0");
    s.srv.sql(&format!("UPDATE push_subscriptions SET updated_at = '2020-01-01 00:00:00' WHERE id = {id}"));
    assert_eq!(register().status, 200);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM push_subscriptions WHERE user_id = {DAVID}")), 1, "the same triple is touched");
    assert_ne!(s.query_text(&format!("SELECT updated_at FROM push_subscriptions WHERE id = {id}")), "2020-01-01 00:00:00");
    // form fields work too; a missing group is a 400
    let r = s.post(DAVID, "/users/me/push_subscriptions", &[("push_subscription[endpoint]", "https://e/x"), ("push_subscription[p256dh_key]", "k"), ("push_subscription[auth_key]", "a")]);
    assert_eq!(r.status, 200);
    assert_eq!(s.post(DAVID, "/users/me/push_subscriptions", &[("x", "y")]).status, 400);

    let page = s.get(DAVID, "/users/me/push_subscriptions");
    assert_eq!(page.status, 200);
    assert!(page.body.contains(r#"<div id="push_subscriptions">"#));
    assert!(page.body.contains("Firefox 121.0 on Macintosh"));
    assert!(page.body.contains(&format!(r#"action="/users/me/push_subscriptions/{id}/test_notifications""#)));

    // The test notification waits for the push service.
    let r = s.post(DAVID, &format!("/users/me/push_subscriptions/{id}/test_notifications"), &[]);
    assert_eq!(r.status, 302, "{}", r.body);
    assert_eq!(r.location(), Some("/users/me/push_subscriptions"));
    let got = collect(&rx, 1);
    assert_eq!(got.len(), 1);
    let json = b.decrypt(&got[0].body);
    assert!(json.starts_with(r#"{"title":"Campfire Test","options":{"body":""#), "{json}");
    assert!(json.ends_with(&format!(r#""icon":"/account/logo","data":{{"path":"http://127.0.0.1:{}/users/me/push_subscriptions","badge":0}}}}}}"#, s.srv.port)), "{json}");
    // Someone else's subscription is a 404; a refused push is a 500 and keeps the row.
    assert_eq!(s.post(JASON, &format!("/users/me/push_subscriptions/{id}/test_notifications"), &[]).status, 404);
    s.srv.sql(&format!("UPDATE push_subscriptions SET endpoint = 'http://127.0.0.1:{port}/gone/x' WHERE id = {id}"));
    assert_eq!(s.post(DAVID, &format!("/users/me/push_subscriptions/{id}/test_notifications"), &[]).status, 500);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM push_subscriptions WHERE id = {id}")), 1);

    // Deleting: someone else's id is quietly ignored; one's own goes.
    let mut del = Request::post_form(&format!("/users/me/push_subscriptions/{id}"), &[("_method", "delete")]);
    del = del.cookies(&s.jar(JASON));
    assert_eq!(s.srv.send(&del).status, 302);
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM push_subscriptions WHERE id = {id}")), 1);
    let r = s.post(DAVID, &format!("/users/me/push_subscriptions/{id}"), &[("_method", "delete")]);
    assert_eq!(r.status, 302);
    assert_eq!(r.location(), Some("/users/me/push_subscriptions"));
    assert_eq!(s.query_int(&format!("SELECT count(*) FROM push_subscriptions WHERE id = {id}")), 0);
}

#[test]
fn a_bots_webhook_reply_is_pushed_like_any_new_message() {
    let (port, rx) = fake_push_service();
    // Bender's webhook: one delivery, answered with a text reply.
    let bot = TcpListener::bind("127.0.0.1:0").unwrap();
    let bot_port = bot.local_addr().unwrap().port();
    std::thread::spawn(move || {
        if let Ok((mut c, _)) = bot.accept() {
            let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let _ = c.write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbeep");
        }
    });
    let s = start_with_vapid();
    s.srv.sql(&format!("UPDATE webhooks SET url = 'http://127.0.0.1:{bot_port}/bender' WHERE user_id = {BENDER}"));
    let kevin = Browser::new(4);
    subscribe(&s, KEVIN, &format!("http://127.0.0.1:{port}/ok/kevin"), &kevin);

    // Kevin's own message is not pushed to him; Bender's reply, written off the loops, is.
    post_message(&s, KEVIN, BENDER_AND_KEVIN, "<div>Hi Bender</div>");
    let got = collect(&rx, 1);
    assert_eq!(got.len(), 1, "one push: the reply");
    let json = kevin.decrypt(&got[0].body);
    assert!(json.starts_with(r#"{"title":"Bender Bot","options":{"body":"beep""#), "{json}");
    assert!(json.contains(&format!(r#""path":"/rooms/{BENDER_AND_KEVIN}""#)), "{json}");
}
