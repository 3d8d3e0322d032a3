//! The database: a thin safe wrapper over SQLite (`libsqlite3-sys`, bundled), the Rails
//! schema, the single writer thread, and one file of queries per model.
//!
//! Threads and connections (design.md §2, docs/architecture.md "Database"):
//! - the writer thread owns the only read-write `Conn` and commits queued jobs in groups
//!   (`writer.rs`); a checkpointer thread keeps the WAL short;
//! - every loop owns one read-only `Conn` (`Conn::open(path, Mode::ReadOnly)`);
//! - `epoch()` counts our commits; `DataVersion` (PRAGMA data_version on a read connection)
//!   notices every other connection's commits, other processes' included;
//! - model files (`users.rs`, `rooms.rs`, `messages.rs`, ...) are plain functions over a
//!   `&Conn`: reads on a loop's connection, writes inside a writer `Job`.
//!
//! Notes on the schema and on the `Job` design: docs/database.md.
//!
//! `unsafe` is allowed here (and in `src/sys/`) only; each block has a `// SAFETY:` line.

pub mod error;
pub mod conn;
pub mod stmt;
pub mod time;
pub mod schema;
pub mod writer;
pub mod wal_index;
pub mod fault;
mod keep_map;

pub mod accounts;
pub mod auth;
pub mod bans;
pub mod blobs;
pub mod layout;
pub mod boosts;
pub mod bots;
pub mod memberships;
pub mod messages;
pub mod push_subscriptions;
pub mod rooms;
pub mod searches;
pub mod sessions;
pub mod users;

#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests_conn;
#[cfg(test)]
mod tests_schema;
#[cfg(test)]
mod tests_writer;

pub use conn::{Conn, Mode};
pub use error::{Error, Result};
pub use stmt::{Bind, Null, Step, Stmt};
pub use writer::{epoch, DataVersion, Job, Outbox, Writer};
