//! Action Cable (issue 5): the in-process pub/sub that carries broadcasts to WebSocket
//! subscribers. This branch holds only the interface the controllers call; the cable branch
//! replaces this file with the real channel code at merge.

/// Sends `message_json` (the JSON value that goes out as `"message"`) to every subscriber of
/// the Turbo stream `stream` (`<room gid param>:messages`, `user_<id>_unreads`, ...).
pub fn broadcast(stream: &str, message_json: &[u8]) {
    // TODO(cable): the cable helper's pub/sub goes here.
    let _ = (stream, message_json);
}
