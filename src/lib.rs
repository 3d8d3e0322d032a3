//! campfire-room: ONCE Campfire as one small static binary.
//!
//! The folders are the architecture (docs/architecture.md): `sys` holds every libc call,
//! `http` parses and writes HTTP/1.1, `server` runs the epoll loops, `db` wraps SQLite,
//! `crypto` is Rails-compatible cryptography, `richtext` the HTML sanitizer, `views` the
//! templates compiled by build.rs, `assets` the embedded static files, `app` the controllers,
//! `tls` HTTPS on the loops (certificates, the HTTP_PORT redirect) and `acme` its certificates,
//! `cli` the operator's commands.

pub mod sys;
pub mod hash;
pub mod words;
pub mod arena;
pub mod http;
pub mod server;
pub mod db;
pub mod crypto;
pub mod richtext;
pub mod images;
pub mod views;
pub mod assets;
pub mod app;
pub mod cache;
pub mod gzip;
pub mod qr;
pub mod outbound;
pub mod config;
pub mod tls;
pub mod acme;
pub mod cli;

/// This build's version (Cargo.toml), printed by `--version` and sent as `X-Version` unless
/// `APP_VERSION` says otherwise.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
