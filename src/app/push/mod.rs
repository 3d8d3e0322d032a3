//! Web Push (spec/04 §3, spec/09): who is notified of a new message, the notification
//! payload, its RFC 8291 encryption, the VAPID token, and delivery through the outbound
//! HTTP client on its own threads.
//!
//! `ece` and `vapid` are the cryptography; `payload` builds the JSON the service worker reads;
//! `deliver` posts one notification and forgets subscriptions the push service says are gone.

pub mod deliver;
pub mod ece;
pub mod message_pusher;
pub mod payload;
pub mod vapid;

pub use message_pusher::message_posted;
pub use vapid::Vapid;
