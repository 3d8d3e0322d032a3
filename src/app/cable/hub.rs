//! The in-process pub/sub: which sockets (on which loop) listen to which stream, and which
//! sockets belong to which user.
//!
//! One process-wide table behind a mutex. Subscribing and unsubscribing happen on the loops
//! (a few per page view); broadcasting happens after a commit (on a loop or the writer). A
//! broadcast frames the message once per distinct subscription identifier (in practice once:
//! every subscriber of a stream subscribed with the same identifier, which the stream keeps one
//! shared copy of), then hands the same `Arc` bytes to every subscriber's loop, one mailbox
//! post per loop. The loops queue them on the sockets as they are.
//!
//! Revocation goes through here too: `drop_room` and `disconnect_user` remove the subscriptions
//! under the lock, so no broadcast after they return can reach the sockets concerned, then post
//! the Action Cable `disconnect` frame that closes them.
//!
//! Design §11: this is the one module to replace if the pub/sub ever moves to a broker.

use crate::server::{Address, Mail};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// One subscription of one socket to one stream.
struct Sub {
    addr: Address,
    /// The identifier exactly as the client sent it (still JSON-escaped).
    ident: Arc<[u8]>,
    user_id: i64,
    /// The room the subscription concerns (0 for none), so removal from a room can find it.
    room_id: i64,
}

/// A stream's subscribers, and the distinct identifiers they subscribed with (in practice
/// one): every `Sub` holds the shared `Arc` from `idents`, so a broadcast tells identifiers
/// apart by pointer instead of comparing each subscriber's bytes.
#[derive(Default)]
struct Stream {
    subs: Vec<Sub>,
    idents: Vec<Arc<[u8]>>,
}

impl Stream {
    /// The shared copy of `ident` for this stream.
    fn intern(&mut self, ident: &[u8]) -> Arc<[u8]> {
        if let Some(i) = self.idents.iter().find(|i| ***i == *ident) {
            return i.clone();
        }
        let own: Arc<[u8]> = Arc::from(ident);
        self.idents.push(own.clone());
        own
    }

    /// Keeps the subscriptions `keep` accepts and forgets identifiers no subscription uses any
    /// more (sockets hold clones of them too, so counting holders would not tell).
    fn retain(&mut self, keep: impl FnMut(&Sub) -> bool) {
        let Stream { subs, idents } = self;
        subs.retain(keep);
        idents.retain(|i| subs.iter().any(|s| Arc::ptr_eq(&s.ident, i)));
    }
}

#[derive(Default)]
struct Table {
    /// Keyed by the stream name, which the subscribed sockets share (`subscribe`).
    streams: HashMap<Arc<[u8]>, Stream>,
    users: HashMap<i64, Vec<Address>>,
}

/// A subscription identifier and the data frames built for it during one broadcast: plain, and
/// compressed once the first subscriber that negotiated permessage-deflate needs it.
struct Framed {
    ident: Arc<[u8]>,
    plain: Arc<[u8]>,
    deflated: Option<Arc<[u8]>>,
}

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(Mutex::default)
}

fn with<T>(f: impl FnOnce(&mut Table) -> T) -> Option<T> {
    // Poisoned only if a holder panicked, which aborts release builds.
    table().lock().ok().map(|mut t| f(&mut t))
}

/// Registers a socket of `user_id`, so `disconnect_user` can reach it.
pub fn add_user(user_id: i64, addr: &Address) {
    with(|t| t.users.entry(user_id).or_default().push(addr.clone()));
}

/// Forgets a socket of `user_id` and every stream subscription it still holds.
pub fn remove_socket(user_id: i64, addr: &Address, streams: &[Arc<[u8]>]) {
    with(|t| {
        if let Some(list) = t.users.get_mut(&user_id) {
            list.retain(|a| !(a.token == addr.token && a.same_loop(addr)));
            if list.is_empty() {
                t.users.remove(&user_id);
            }
        }
        for s in streams {
            remove_from(t, s, addr, None);
        }
    });
}

/// Starts delivering `stream` to the socket at `addr` under `ident`. Returns once the
/// subscription is live (a broadcast that starts after this reaches the socket), with the
/// table's shared copies of the stream name and the identifier for the socket to keep: ten
/// thousand sockets subscribed to the same streams hold one copy of each name.
pub fn subscribe(stream: &[u8], addr: &Address, ident: &[u8], user_id: i64, room_id: i64) -> Option<(Arc<[u8]>, Arc<[u8]>)> {
    with(|t| {
        let name = match t.streams.get_key_value(stream) {
            Some((name, _)) => name.clone(),
            None => {
                let name: Arc<[u8]> = Arc::from(stream);
                t.streams.insert(name.clone(), Stream::default());
                name
            }
        };
        let st = t.streams.get_mut(stream)?;
        let ident = st.intern(ident);
        st.subs.push(Sub { addr: addr.clone(), ident: ident.clone(), user_id, room_id });
        Some((name, ident))
    })
    .flatten()
}

/// Stops delivering `stream` under `ident` to the socket at `addr`.
pub fn unsubscribe(stream: &[u8], addr: &Address, ident: &[u8]) {
    with(|t| remove_from(t, stream, addr, Some(ident)));
}

fn remove_from(t: &mut Table, stream: &[u8], addr: &Address, ident: Option<&[u8]>) {
    let Some(st) = t.streams.get_mut(stream) else { return };
    st.retain(|s| !(s.addr.token == addr.token && s.addr.same_loop(addr) && ident.is_none_or(|i| *s.ident == *i)));
    if st.subs.is_empty() {
        t.streams.remove(stream);
    }
}

/// Sends `message_json` to every subscriber of `stream` as
/// `{"identifier":"<their identifier>","message":<message_json>}`. Returns how many sockets
/// it was queued for.
pub fn broadcast(stream: &[u8], message_json: &[u8]) -> usize {
    let mut posts: Vec<(Address, Vec<Mail>)> = Vec::new();
    let n = with(|t| t.streams.get(stream).map_or(0, |st| queue(st, message_json, &mut posts))).unwrap_or(0);
    for (addr, mut mails) in posts {
        addr.mailbox.post(&mut mails);
    }
    n
}

/// `broadcast` of one message to the stream `name(user, buf)` of each of `user_ids` (ascending),
/// under one lock and with one mailbox post per loop. Only users with a socket here can
/// listen, so it walks the smaller of the two sets (the members, probing the users with
/// sockets; or those users, binary-searching the members): a post to a room of 5,000 with a
/// few clients online costs a few probes, not 5,000 stream names. Returns how many sockets
/// it was queued for.
pub fn broadcast_to_users(user_ids: &[i64], name: impl Fn(i64, &mut Vec<u8>), message_json: &[u8]) -> usize {
    let mut posts: Vec<(Address, Vec<Mail>)> = Vec::new();
    let mut buf = Vec::with_capacity(32);
    let n = with(|t| {
        let Table { streams, users } = t;
        let mut n = 0;
        let mut send = |u: i64| {
            buf.clear();
            name(u, &mut buf);
            if let Some(st) = streams.get(buf.as_slice()) {
                n += queue(st, message_json, &mut posts);
            }
        };
        if users.len() < user_ids.len() {
            for &u in users.keys() {
                if user_ids.binary_search(&u).is_ok() {
                    send(u);
                }
            }
        } else {
            for &u in user_ids {
                if users.contains_key(&u) {
                    send(u);
                }
            }
        }
        n
    })
    .unwrap_or(0);
    for (addr, mut mails) in posts {
        addr.mailbox.post(&mut mails);
    }
    n
}

// Frames `message_json` once per identifier of `st` and adds a mail per subscriber to its
// loop's list in `posts`. Returns the subscriber count.
fn queue(st: &Stream, message_json: &[u8], posts: &mut Vec<(Address, Vec<Mail>)>) -> usize {
    let mut frames: Vec<Framed> = Vec::new();
    let subs = &st.subs;
    for s in subs {
        let at = match frames.iter().position(|f| Arc::ptr_eq(&f.ident, &s.ident)) {
            Some(at) => at,
            None => {
                let plain = super::protocol::data_frame(&s.ident, message_json).into();
                frames.push(Framed { ident: s.ident.clone(), plain, deflated: None });
                frames.len() - 1
            }
        };
        let Some(f) = frames.get_mut(at) else { continue };
        let frame = if s.addr.deflate {
            f.deflated.get_or_insert_with(|| super::protocol::deflated_data_frame(&s.ident, message_json).into()).clone()
        } else {
            f.plain.clone()
        };
        let mail = Mail { token: s.addr.token, frame, then_close: false };
        match posts.iter_mut().find(|(a, _)| a.same_loop(&s.addr)) {
            Some((_, list)) => list.push(mail),
            None => {
                // Sized for the whole stream at once: no regrowth while the lock is held.
                let mut list = Vec::with_capacity(subs.len());
                list.push(mail);
                posts.push((s.addr.clone(), list));
            }
        }
    }
    subs.len()
}

/// Removes every subscription `user_id` holds that concerns `room_id` (its message, presence
/// and typing streams), on every socket. Returns the user's sockets.
pub fn drop_room(user_id: i64, room_id: i64) -> Vec<Address> {
    with(|t| {
        t.streams.retain(|_, st| {
            st.retain(|s| !(s.user_id == user_id && s.room_id == room_id));
            !st.subs.is_empty()
        });
        t.users.get(&user_id).cloned().unwrap_or_default()
    })
    .unwrap_or_default()
}

/// Removes every subscription of `user_id` and returns the user's sockets.
pub fn drop_user(user_id: i64) -> Vec<Address> {
    with(|t| {
        t.streams.retain(|_, st| {
            st.retain(|s| s.user_id != user_id);
            !st.subs.is_empty()
        });
        t.users.get(&user_id).cloned().unwrap_or_default()
    })
    .unwrap_or_default()
}

/// Sends `frame` to each of `sockets` and closes them after it.
pub fn close_all(sockets: Vec<Address>, frame: &[u8]) {
    let frame: Arc<[u8]> = frame.into();
    let mut posts: Vec<(Address, Vec<Mail>)> = Vec::new();
    for a in sockets {
        let mail = Mail { token: a.token, frame: frame.clone(), then_close: true };
        match posts.iter_mut().find(|(p, _)| p.same_loop(&a)) {
            Some((_, list)) => list.push(mail),
            None => posts.push((a, vec![mail])),
        }
    }
    for (addr, mut mails) in posts {
        addr.mailbox.post(&mut mails);
    }
}

/// Subscriptions and sockets in the table (for tests and the log).
pub fn counts() -> (usize, usize) {
    with(|t| (t.streams.values().map(|s| s.subs.len()).sum(), t.users.values().map(Vec::len).sum())).unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Mailbox;
    use crate::sys::eventfd::EventFd;

    fn mailbox() -> Arc<Mailbox> {
        Arc::new(Mailbox::new(Arc::new(EventFd::new().unwrap())))
    }

    fn taken(m: &Mailbox) -> Vec<Mail> {
        let mut v = Vec::new();
        m.take(&mut v);
        v
    }

    #[test]
    fn one_frame_shared_by_every_subscriber_on_every_loop() {
        let (a, b) = (mailbox(), mailbox());
        let addrs = [
            Address { mailbox: a.clone(), token: 1, deflate: false },
            Address { mailbox: a.clone(), token: 2, deflate: false },
            Address { mailbox: b.clone(), token: 1, deflate: false },
            Address { mailbox: b.clone(), token: 2, deflate: true },
        ];
        for (i, addr) in addrs.iter().enumerate() {
            // Each socket has its own copy of the identifier, as parsed from its command.
            let ident: Arc<[u8]> = Arc::from(&br#"{\"channel\":\"UnreadRoomsChannel\"}"#[..]);
            subscribe(b"hub_test_shared", addr, &ident, 100 + i as i64, 0);
        }
        assert_eq!(broadcast(b"hub_test_shared", br#"{"roomId":1}"#), 4);
        let (ma, mb) = (taken(&a), taken(&b));
        assert_eq!((ma.len(), mb.len()), (2, 2));
        assert!(Arc::ptr_eq(&ma[0].frame, &ma[1].frame) && Arc::ptr_eq(&ma[0].frame, &mb[0].frame));
        assert_eq!(&ma[0].frame[2..], br#"{"identifier":"{\"channel\":\"UnreadRoomsChannel\"}","message":{"roomId":1}}"#);
        assert_eq!(ma[0].frame[0], 0x81);
        assert_eq!(mb[1].frame[0], 0xC1, "compressed for the deflate socket");
        assert!(!ma.iter().chain(&mb).any(|m| m.then_close));

        unsubscribe(b"hub_test_shared", &addrs[0], br#"{\"channel\":\"UnreadRoomsChannel\"}"#);
        assert_eq!(broadcast(b"hub_test_shared", b"1"), 3);
        assert_eq!(taken(&a).iter().map(|m| m.token).collect::<Vec<_>>(), [2]);
        remove_socket(101, &addrs[1], &[Arc::from(&b"hub_test_shared"[..])]);
        assert_eq!(broadcast(b"hub_test_shared", b"1"), 2);
        assert!(taken(&a).is_empty());
    }

    #[test]
    fn a_stream_keeps_one_copy_of_each_identifier() {
        let m = mailbox();
        let ident = |s: &str| -> Arc<[u8]> { Arc::from(s.as_bytes()) };
        let a = Address { mailbox: m.clone(), token: 21, deflate: false };
        let b = Address { mailbox: m.clone(), token: 22, deflate: false };
        subscribe(b"hub_test_intern", &a, &ident("same"), 1, 0);
        subscribe(b"hub_test_intern", &b, &ident("same"), 2, 0);
        subscribe(b"hub_test_intern", &b, &ident("other"), 2, 0);
        let idents = |s: &[u8]| with(|t| t.streams.get(s).map_or(0, |st| st.idents.len())).unwrap_or(0);
        assert_eq!(idents(b"hub_test_intern"), 2);
        assert_eq!(broadcast(b"hub_test_intern", b"1"), 3);
        let mails = taken(&m);
        assert!(Arc::ptr_eq(&mails[0].frame, &mails[1].frame), "one frame for the shared identifier");
        assert!(!Arc::ptr_eq(&mails[0].frame, &mails[2].frame));
        unsubscribe(b"hub_test_intern", &b, b"other");
        assert_eq!(idents(b"hub_test_intern"), 1, "an identifier nobody uses is forgotten");
        unsubscribe(b"hub_test_intern", &a, b"same");
        unsubscribe(b"hub_test_intern", &b, b"same");
        assert_eq!(broadcast(b"hub_test_intern", b"1"), 0);
    }

    #[test]
    fn revocation_removes_only_what_it_names() {
        let m = mailbox();
        let user = 7_001;
        let s1 = Address { mailbox: m.clone(), token: 11, deflate: false };
        let s2 = Address { mailbox: m.clone(), token: 12, deflate: false };
        add_user(user, &s1);
        add_user(user, &s2);
        let ident: Arc<[u8]> = Arc::from(&b"i"[..]);
        subscribe(b"hub_test_room_5", &s1, &ident, user, 5);
        subscribe(b"hub_test_room_6", &s1, &ident, user, 6);
        subscribe(b"hub_test_room_5", &s2, &ident, user + 1, 5);
        let sockets = drop_room(user, 5);
        assert_eq!(sockets.iter().map(|a| a.token).collect::<Vec<_>>(), [11, 12]);
        assert_eq!(broadcast(b"hub_test_room_5", b"1"), 1, "the other user's subscription stays");
        assert_eq!(broadcast(b"hub_test_room_6", b"1"), 1);
        taken(&m);
        close_all(sockets, b"bye");
        let mails = taken(&m);
        assert_eq!(mails.len(), 2);
        assert!(mails.iter().all(|m| m.then_close && &*m.frame == b"bye"));
        assert_eq!(drop_user(user).len(), 2);
        assert_eq!(broadcast(b"hub_test_room_6", b"1"), 0);
    }
}
