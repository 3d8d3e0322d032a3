//! UnreadRoomsChannel (spec/06 §6.6): streams `user_<id>_unreads`, fed with `{"roomId":N}` for
//! every message created in a room the user is a member of (the messages controller
//! broadcasts it after the commit).

use super::channel::Outcome;
use super::{streams, User};

pub fn subscribe(user: &User) -> Outcome {
    Outcome::Confirm { stream: Some(streams::user_unreads(user.id).into_bytes()), room_id: 0 }
}
