//! Rails-compatible cryptography: the keys, cookies, signed ids and passwords that let a
//! Rails Campfire install switch to campfire-room without logging anyone out.
//!
//! `Keys::derive` runs once at start (PBKDF2 from SECRET_KEY_BASE); everything else is
//! cheap enough to run on the loops, except `bcrypt`, which belongs on the worker thread.
//! Formats and test vectors: spec/03-auth-and-crypto.md.

pub mod base64;
pub mod cookies;
pub mod encryptor;
pub mod gcm;
pub mod json;
pub mod pbkdf2;
pub mod time;
pub mod token;
pub mod verifier;

pub use token::ct_eq;
pub use pbkdf2::Keys;
