//! Posting one notification to one subscription (spec/04 §3.5): encrypt, sign, POST, and
//! read the push service's answer. Runs on the outbound job threads (or a worker, for the
//! synchronous test notification), never on a loop: it does P-256 work and blocks on the
//! network.
//!
//! Deliberate deviation from Rails: a 404 or 410 answer deletes the subscription row. Rails'
//! persistent-connection patch skips the gem's status check, so its handler for gone
//! subscriptions never runs on them and dead endpoints are pushed to forever; the handler's
//! intent (and spec/04's recommendation) is to forget them. Rows whose keys cannot be used
//! are deleted as Rails deletes them (its OpenSSL-error path).

use std::time::Duration;

use super::ece::{self, Receiver};
use super::vapid::Vapid;
use crate::db::push_subscriptions::Subscription;
use crate::outbound;

/// `Ttl` header: four weeks, in seconds (the gem's default).
pub const TTL_S: &str = "2419200";

/// Connect and read timeout for one push.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The most of a push service's answer we read (it is only ever a short error text).
pub const MAX_ANSWER: usize = 16 * 1024;

/// What became of one push.
#[derive(Debug)]
pub enum Outcome {
    /// The push service took it (2xx).
    Delivered,
    /// 404 (invalid) or 410 (expired): the subscription is gone.
    Gone(u16),
    /// The stored keys are unusable: the subscription can never receive a push.
    BadKeys(ece::Error),
    /// The payload would not fit one encrypted record (not sent).
    TooLarge,
    /// Any other status: unauthorized (401/403, or 400 UnauthorizedRegistration), payload too
    /// large (413), too many requests (429), push service error (5xx), or another error.
    Refused(u16, String),
    /// No answer: bad endpoint URL, DNS, connect, TLS, timeout.
    Unreachable(String),
}

impl Outcome {
    /// True when the subscription should be deleted.
    pub fn forget(&self) -> bool {
        matches!(self, Outcome::Gone(_) | Outcome::BadKeys(ece::Error::BadP256dh | ece::Error::BadAuth))
    }

    /// One line for the log (the gem's error names).
    pub fn describe(&self) -> String {
        match self {
            Outcome::Delivered => "delivered".into(),
            Outcome::Gone(410) => "expired subscription (410)".into(),
            Outcome::Gone(s) => format!("invalid subscription ({s})"),
            Outcome::BadKeys(e) => format!("unusable subscription keys ({e:?})"),
            Outcome::TooLarge => "payload too large to encrypt (over 4096 bytes)".into(),
            Outcome::Refused(s, why) => format!("{} ({s}){}", refusal(*s, why), if why.is_empty() { String::new() } else { format!(": {why}") }),
            Outcome::Unreachable(e) => format!("unreachable: {e}"),
        }
    }
}

fn refusal(status: u16, body: &str) -> &'static str {
    match status {
        401 | 403 => "unauthorized",
        400 if body.contains("UnauthorizedRegistration") => "unauthorized",
        413 => "payload too large",
        429 => "too many requests",
        500..=599 => "push service error",
        _ => "push error",
    }
}

/// Encrypts `payload` for `sub`, signs a VAPID token for its push service, and POSTs it.
/// `now_s` is the Unix time the token's expiry counts from.
pub fn deliver(vapid: &Vapid, sub: &Subscription, payload: &[u8], now_s: i64) -> Outcome {
    let to = match Receiver::parse(&sub.p256dh_key, &sub.auth_key) {
        Ok(to) => to,
        Err(e) => return Outcome::BadKeys(e),
    };
    let body = match ece::encrypt(&to, payload) {
        Ok(b) => b,
        Err(ece::Error::TooLarge) => return Outcome::TooLarge,
        Err(e) => return Outcome::BadKeys(e),
    };
    let Some(authorization) = vapid.authorization(&sub.endpoint, now_s) else {
        return Outcome::Unreachable(format!("not an absolute URL: {:?}", sub.endpoint));
    };
    let headers = [
        ("Content-Type", "application/octet-stream"),
        ("Content-Encoding", "aes128gcm"),
        ("Ttl", TTL_S),
        ("Urgency", "high"),
        ("Authorization", authorization.as_str()),
    ];
    let req = outbound::Request { method: "POST", url: &sub.endpoint, headers: &headers, body: &body, timeout: TIMEOUT, max_body: MAX_ANSWER };
    match outbound::send(&req) {
        Ok(r) if (200..300).contains(&r.status) => Outcome::Delivered,
        Ok(r) if r.status == 404 || r.status == 410 => Outcome::Gone(r.status),
        Ok(r) => {
            let text = String::from_utf8_lossy(&r.body[..r.body.len().min(200)]).trim().to_string();
            Outcome::Refused(r.status, text)
        }
        Err(e) => Outcome::Unreachable(e.to_string()),
    }
}
