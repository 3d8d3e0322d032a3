//! The loop's memo of verified `session_token` cookies (issue 7): the same browser sends the
//! same cookie bytes on every request, so the HMAC, the form-unescaping and the envelope
//! parsing are done once per cookie, not once per request; and the session lookup that
//! follows is done once per data version, not once per request.
//!
//! - **Key**: the cookie value exactly as sent, stored in full and compared byte for byte (a
//!   hash only picks the slot), so no collision can lend one browser another's session.
//! - **Verified part**: the token the signature check yielded and the envelope's expiry; a
//!   cookie past its expiry is verified afresh (and refused). Keys never change while the
//!   process runs, so a signature once good stays good.
//! - **Session part**: the result of the session lookup (session id, last activity, user, or
//!   "no such session") and the data stamp (`cache::Stamp`) of the snapshot it was read from.
//!   It is used only under that very stamp: sign-out, bans, deactivation and anything else
//!   that could change the answer are commits, and any commit moves the stamp, so revocation
//!   is seen by the next request, exactly as with the lookup itself. Without a stamp (cache
//!   off, or a write request) the lookup runs every time.
//!
//! Fixed size, allocated once per loop: `SLOTS` slots, two-way set associative; a miss
//! replaces the older slot of its pair. Cookies longer than `MAX_COOKIE` are not remembered.
//! Failed verifications are not remembered either (a flood of forged cookies costs what it
//! did before, and cannot evict anything but the pair it lands on).

use crate::cache::Stamp;
use crate::crypto::cookies::Token;
use crate::db::users::User;
use std::rc::Rc;

/// Slots per loop (a power of two). 64 × ~0.5 KiB.
const SLOTS: usize = 64;
/// The longest cookie value remembered (ours are about 230 bytes form-escaped).
pub const MAX_COOKIE: usize = 384;

/// A login session as the authentication gate needs it, shared with the request (`Current`)
/// without copying the user.
#[derive(Clone, Debug)]
pub struct Found {
    pub session_id: i64,
    /// µs since the epoch.
    pub last_active_at: i64,
    pub user: Rc<User>,
}

struct Slot {
    hash: u64,
    cookie_len: usize,
    cookie: [u8; MAX_COOKIE],
    token: Option<Token>,
    /// Unix ms; `None`: the signed envelope never expires.
    expires_ms: Option<i64>,
    /// The session lookup's answer and the stamp it was read under.
    session: Option<(Stamp, Option<Found>)>,
    last_used: u64,
}

/// One loop's memo.
pub struct SessionMemo {
    slots: Box<[Slot]>,
    clock: u64,
}

/// A remembered, verified cookie (borrowed from the memo for one request).
pub struct Verified<'m> {
    slot: &'m mut Slot,
}

impl SessionMemo {
    /// An empty memo; the only allocation it ever makes.
    pub fn new() -> SessionMemo {
        let slots = (0..SLOTS)
            .map(|_| Slot {
                hash: 0,
                cookie_len: 0,
                cookie: [0; MAX_COOKIE],
                token: None,
                expires_ms: None,
                session: None,
                last_used: 0,
            })
            .collect();
        SessionMemo { slots, clock: 0 }
    }

    /// The verified cookie `cookie` (the `session_token` value as sent), from the memo when
    /// it holds these exact bytes unexpired at `now_ms`, else from `verify` (which returns
    /// the token and the expiry, `crypto::cookies::read_session_token_until`), remembered
    /// when it succeeds. `None`: the cookie does not verify.
    pub fn verified(
        &mut self,
        cookie: &[u8],
        now_ms: i64,
        verify: impl FnOnce(&[u8]) -> Option<(Token, Option<i64>)>,
    ) -> Option<Verified<'_>> {
        self.clock += 1;
        let hash = hash(cookie);
        let pair = (hash as usize) & (SLOTS - 1) & !1;
        let held = (pair..pair + 2).find(|&i| self.slots.get(i).is_some_and(|s| s.holds(hash, cookie)));
        let index = match held {
            Some(i) if self.slots.get(i).is_some_and(|s| s.expires_ms.is_none_or(|e| now_ms < e)) => i,
            _ => {
                let (token, expires_ms) = verify(cookie)?;
                let i = held.unwrap_or_else(|| {
                    let older = self.slots.get(pair + 1).map_or(0, |s| s.last_used) < self.slots.get(pair).map_or(0, |s| s.last_used);
                    pair + older as usize
                });
                let slot = self.slots.get_mut(i)?;
                if cookie.len() > MAX_COOKIE {
                    // Too long to remember: hand back the verification in a slot that no
                    // cookie can match (length 0 is never a valid cookie).
                    slot.cookie_len = 0;
                } else {
                    slot.cookie_len = cookie.len();
                    slot.cookie.get_mut(..cookie.len())?.copy_from_slice(cookie);
                }
                slot.hash = hash;
                slot.token = Some(token);
                slot.expires_ms = expires_ms;
                slot.session = None;
                i
            }
        };
        let slot = self.slots.get_mut(index)?;
        slot.last_used = self.clock;
        Some(Verified { slot })
    }
}

impl Default for SessionMemo {
    fn default() -> Self {
        SessionMemo::new()
    }
}

impl Slot {
    fn holds(&self, hash: u64, cookie: &[u8]) -> bool {
        self.hash == hash && self.cookie_len != 0 && self.cookie.get(..self.cookie_len) == Some(cookie) && self.token.is_some()
    }
}

impl Verified<'_> {
    /// The session token the cookie carries.
    pub fn token(&self) -> &[u8] {
        self.slot.token.as_ref().map_or(&[], |t| t.as_bytes())
    }

    /// The remembered session lookup, if it was read under `stamp` (the current request's
    /// snapshot): `Some(None)` means "no such session" then.
    pub fn session(&self, stamp: Stamp) -> Option<Option<Found>> {
        match &self.slot.session {
            Some((s, found)) if *s == stamp => Some(found.clone()),
            _ => None,
        }
    }

    /// Remembers the session lookup read under `stamp`.
    pub fn remember(&mut self, stamp: Stamp, found: Option<Found>) {
        self.slot.session = Some((stamp, found));
    }
}

/// FNV-1a over the length and the last 32 bytes: a signed cookie ends in its digest, which
/// differs between any two cookies, and a weak spread only costs a re-verification.
fn hash(cookie: &[u8]) -> u64 {
    let tail = cookie.get(cookie.len().saturating_sub(32)..).unwrap_or(cookie);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ cookie.len() as u64;
    for &b in tail {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h ^ (h >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(s: &[u8]) -> Token {
        Token::from_bytes(s).unwrap()
    }

    fn user(id: i64) -> Rc<User> {
        Rc::new(User {
            id,
            name: "Someone".into(),
            email_address: None,
            password_digest: None,
            bio: None,
            bot_token: None,
            role: 0,
            status: 0,
            created_at: 0,
            updated_at: 0,
        })
    }

    const S1: Stamp = Stamp::for_tests(1, 0);
    const S2: Stamp = Stamp::for_tests(1, 1);

    #[test]
    fn verifies_once_per_cookie_until_it_expires() {
        let mut m = SessionMemo::new();
        let mut calls = 0;
        for _ in 0..3 {
            let v = m.verified(b"cookie-a--sig", 1_000, |_| {
                calls += 1;
                Some((token(b"tokA"), Some(2_000)))
            });
            assert_eq!(v.unwrap().token(), b"tokA");
        }
        assert_eq!(calls, 1);
        // past the signed expiry the cookie is verified again (and here refused)
        assert!(m.verified(b"cookie-a--sig", 2_000, |_| None).is_none());
        // a different cookie, even one byte apart, is its own entry
        let v = m.verified(b"cookie-a--siG", 1_000, |_| Some((token(b"other"), None))).unwrap();
        assert_eq!(v.token(), b"other");
    }

    #[test]
    fn refusals_are_not_remembered() {
        let mut m = SessionMemo::new();
        assert!(m.verified(b"forged", 0, |_| None).is_none());
        let mut calls = 0;
        assert!(m.verified(b"forged", 0, |_| { calls += 1; None }).is_none());
        assert_eq!(calls, 1);
    }

    #[test]
    fn the_session_is_remembered_under_its_stamp_only() {
        let mut m = SessionMemo::new();
        let mut v = m.verified(b"c", 0, |_| Some((token(b"t"), None))).unwrap();
        assert!(v.session(S1).is_none(), "nothing looked up yet");
        v.remember(S1, Some(Found { session_id: 7, last_active_at: 0, user: user(3) }));
        let v = m.verified(b"c", 0, |_| unreachable!()).unwrap();
        assert_eq!(v.session(S1).unwrap().unwrap().user.id, 3);
        assert!(v.session(S2).is_none(), "another snapshot: look it up again");
        let mut v = m.verified(b"c", 0, |_| unreachable!()).unwrap();
        v.remember(S2, None);
        assert!(v.session(S2).unwrap().is_none(), "signed out under S2");
    }

    #[test]
    fn a_full_memo_keeps_working() {
        let mut m = SessionMemo::new();
        for i in 0..1000u32 {
            let c = format!("cookie-{i}--{:08x}", i.wrapping_mul(2_654_435_761));
            let t = format!("t{i}");
            assert_eq!(m.verified(c.as_bytes(), 0, |_| Some((token(t.as_bytes()), None))).unwrap().token(), t.as_bytes());
        }
        // the most recent cookie is still there
        let c = format!("cookie-999--{:08x}", 999u32.wrapping_mul(2_654_435_761));
        assert_eq!(m.verified(c.as_bytes(), 0, |_| unreachable!()).unwrap().token(), b"t999");
        // an over-long cookie verifies every time but still answers
        let long = vec![b'x'; MAX_COOKIE + 1];
        let mut calls = 0;
        for _ in 0..2 {
            let v = m.verified(&long, 0, |_| { calls += 1; Some((token(b"L"), None)) }).unwrap();
            assert_eq!(v.token(), b"L");
        }
        assert_eq!(calls, 2);
    }
}
