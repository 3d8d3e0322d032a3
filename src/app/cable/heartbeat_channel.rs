//! HeartbeatChannel (spec/06 §6.1): always confirmed, no streams, no actions. The page uses its
//! confirm/disconnect callbacks as a connection-health signal.

use super::channel::Outcome;

pub fn subscribe() -> Outcome {
    Outcome::Confirm { stream: None, room_id: 0 }
}
