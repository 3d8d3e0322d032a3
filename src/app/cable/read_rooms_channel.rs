//! ReadRoomsChannel (spec/06 §6.5): streams `user_<id>_reads`, which PresenceChannel's
//! `present` feeds with `{"room_id":N}` so every tab of the user marks the room read.

use super::channel::Outcome;
use super::{streams, User};

pub fn subscribe(user: &User) -> Outcome {
    Outcome::Confirm { stream: Some(streams::user_reads(user.id).into_bytes()), room_id: 0 }
}
