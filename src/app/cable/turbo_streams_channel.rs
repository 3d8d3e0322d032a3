//! Turbo::StreamsChannel (spec/06 §6.8): streams from whatever name the signature vouches for
//! (`rooms`, `<user gid>:rooms`), except room message streams, which only RoomMessagesChannel
//! may serve (the app's guard).

use super::channel::Outcome;
use super::protocol::Params;
use crate::app::Ctx;
use crate::crypto::{time::now_ms, turbo};

pub fn subscribe(cx: &mut Ctx, params: &Params) -> Outcome {
    let Some(name) = verified_name(cx, params) else { return Outcome::Reject };
    if let Some(colon) = name.iter().position(|&b| b == b':') {
        if &name[colon + 1..] == b"messages" {
            return Outcome::Reject;
        }
    }
    Outcome::Confirm { stream: Some(name), room_id: 0 }
}

/// The stream name of a valid `signed_stream_name` parameter.
pub fn verified_name(cx: &mut Ctx, params: &Params) -> Option<Vec<u8>> {
    let signed = params.signed_stream_name.as_deref()?;
    let mut name = Vec::with_capacity(signed.len());
    turbo::verify_stream_name(&cx.keys, signed, now_ms(), &mut cx.scratch, &mut name).then_some(name)
}
