//! campfire-room: ONCE Campfire as one small static binary.
//!
//! The folders are the architecture (docs/architecture.md): `sys` holds every libc call,
//! `http` parses and writes HTTP/1.1, `server` runs the epoll loops, `db` wraps SQLite,
//! `crypto` is Rails-compatible cryptography, `richtext` the HTML sanitizer, `views` the
//! templates compiled by build.rs, `assets` the embedded static files, `app` the controllers,
//! `tls` HTTPS on the loops (certificates, the HTTP_PORT redirect) and `acme` its certificates.

pub mod sys;
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
pub mod cable;
pub mod qr;
pub mod outbound;
pub mod push;
pub mod config;
pub mod tls;
pub mod acme;
