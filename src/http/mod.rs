//! HTTP/1.1, hand-rolled: the request parser (in place, no allocation), the response writer,
//! URL / form / cookie decoding, and the limits that bound all of it.
//!
//! The parser is strict on purpose: anything two parsers could read differently (both chunked
//! and Content-Length, bare LF, obs-fold, whitespace before a colon, ...) is a 400, so no proxy
//! in front of us can be made to see a different request boundary than we do.

pub mod chunked;
pub mod cookies;
pub mod form;
pub mod limits;
pub mod parse;
pub mod request;
pub mod response;
pub mod scan;
pub mod spool;
pub mod status;
pub mod trusted;
pub mod url;
pub mod websocket;

pub use limits::Limits;
pub use parse::{parse_head, Framing, Head, ParseError};
pub use request::{Header, Method, Request};
pub use response::Response;
