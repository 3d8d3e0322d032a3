//! Shared by the chat integration tests (`rooms_*`, `sidebar_*`, `messages_*`, ...): the HTTP
//! client and server harness of the auth tests, and the seeded fixture database.

#![allow(dead_code, unused_imports)]

#[path = "../auth_support/mod.rs"]
pub mod client;
pub mod seed;

pub use client::*;
pub use seed::*;
