//! The database schema: the Rails schema exactly as `rails db:prepare` creates it from
//! `db/schema.rb` (version 2025_12_12_154340), plus the indexes campfire-room adds.
//!
//! The DDL below is the text SQLite stores in `sqlite_master` for a database made by
//! Rails: Rails' SQLite adapter quotes every name, writes `varchar`, `datetime(6)`,
//! `integer PRIMARY KEY AUTOINCREMENT NOT NULL`, and adds foreign keys by rebuilding the
//! table (so those tables come after the others and carry `CONSTRAINT "fk_rails_…"`
//! clauses with Rails' line breaks). Keeping the text identical means Rails (and its
//! `db:schema:dump`) sees no difference between its database and ours.
//!
//! `ensure` creates all of it on an empty database. On a non-empty one it never alters
//! anything; it only adds our own indexes with `CREATE INDEX IF NOT EXISTS` (on start-up the
//! writer thread builds them after the loops are up: `ensure_tables`, then `build_indexes`).

use super::conn::Conn;
use super::error::{Error, Result};
use super::time;
use libsqlite3_sys as ffi;

/// Tables, indexes and the FTS5 table, in the order Rails' schema load leaves them.
const RAILS_DDL: &[&str] = &[
    r#"CREATE TABLE "accounts" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "created_at" datetime(6) NOT NULL, "custom_styles" text, "join_code" varchar NOT NULL, "name" varchar NOT NULL, "settings" json, "singleton_guard" integer DEFAULT 0 NOT NULL, "updated_at" datetime(6) NOT NULL)"#,
    r#"CREATE UNIQUE INDEX "index_accounts_on_singleton_guard" ON "accounts" ("singleton_guard")"#,
    r#"CREATE TABLE "action_text_rich_texts" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "body" text, "created_at" datetime(6) NOT NULL, "name" varchar NOT NULL, "record_id" bigint NOT NULL, "record_type" varchar NOT NULL, "updated_at" datetime(6) NOT NULL)"#,
    r#"CREATE UNIQUE INDEX "index_action_text_rich_texts_uniqueness" ON "action_text_rich_texts" ("record_type", "record_id", "name")"#,
    r#"CREATE TABLE "active_storage_blobs" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "byte_size" bigint NOT NULL, "checksum" varchar, "content_type" varchar, "created_at" datetime(6) NOT NULL, "filename" varchar NOT NULL, "key" varchar NOT NULL, "metadata" text, "service_name" varchar NOT NULL)"#,
    r#"CREATE UNIQUE INDEX "index_active_storage_blobs_on_key" ON "active_storage_blobs" ("key")"#,
    r#"CREATE TABLE "memberships" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "connected_at" datetime(6), "connections" integer DEFAULT 0 NOT NULL, "created_at" datetime(6) NOT NULL, "involvement" varchar DEFAULT 'mentions', "room_id" integer NOT NULL, "unread_at" datetime(6), "updated_at" datetime(6) NOT NULL, "user_id" integer NOT NULL)"#,
    r#"CREATE INDEX "index_memberships_on_room_id_and_created_at" ON "memberships" ("room_id", "created_at")"#,
    r#"CREATE UNIQUE INDEX "index_memberships_on_room_id_and_user_id" ON "memberships" ("room_id", "user_id")"#,
    r#"CREATE INDEX "index_memberships_on_room_id" ON "memberships" ("room_id")"#,
    r#"CREATE INDEX "index_memberships_on_user_id" ON "memberships" ("user_id")"#,
    r#"CREATE TABLE "rooms" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "created_at" datetime(6) NOT NULL, "creator_id" bigint NOT NULL, "name" varchar, "type" varchar NOT NULL, "updated_at" datetime(6) NOT NULL)"#,
    r#"CREATE TABLE "users" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "bio" text, "bot_token" varchar, "created_at" datetime(6) NOT NULL, "email_address" varchar, "name" varchar NOT NULL, "password_digest" varchar, "role" integer DEFAULT 0 NOT NULL, "status" integer DEFAULT 0 NOT NULL, "updated_at" datetime(6) NOT NULL)"#,
    r#"CREATE UNIQUE INDEX "index_users_on_bot_token" ON "users" ("bot_token")"#,
    r#"CREATE UNIQUE INDEX "index_users_on_email_address" ON "users" ("email_address")"#,
    "CREATE TABLE \"active_storage_attachments\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"blob_id\" bigint NOT NULL, \"created_at\" datetime(6) NOT NULL, \"name\" varchar NOT NULL, \"record_id\" bigint NOT NULL, \"record_type\" varchar NOT NULL, CONSTRAINT \"fk_rails_c3b3935057\"\nFOREIGN KEY (\"blob_id\")\n  REFERENCES \"active_storage_blobs\" (\"id\")\n)",
    r#"CREATE INDEX "index_active_storage_attachments_on_blob_id" ON "active_storage_attachments" ("blob_id")"#,
    r#"CREATE UNIQUE INDEX "index_active_storage_attachments_uniqueness" ON "active_storage_attachments" ("record_type", "record_id", "name", "blob_id")"#,
    "CREATE TABLE \"active_storage_variant_records\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"blob_id\" bigint NOT NULL, \"variation_digest\" varchar NOT NULL, CONSTRAINT \"fk_rails_993965df05\"\nFOREIGN KEY (\"blob_id\")\n  REFERENCES \"active_storage_blobs\" (\"id\")\n)",
    r#"CREATE UNIQUE INDEX "index_active_storage_variant_records_uniqueness" ON "active_storage_variant_records" ("blob_id", "variation_digest")"#,
    "CREATE TABLE \"bans\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"created_at\" datetime(6) NOT NULL, \"ip_address\" varchar NOT NULL, \"updated_at\" datetime(6) NOT NULL, \"user_id\" integer NOT NULL, CONSTRAINT \"fk_rails_070022cd76\"\nFOREIGN KEY (\"user_id\")\n  REFERENCES \"users\" (\"id\")\n)",
    r#"CREATE INDEX "index_bans_on_ip_address" ON "bans" ("ip_address")"#,
    r#"CREATE INDEX "index_bans_on_user_id" ON "bans" ("user_id")"#,
    "CREATE TABLE \"boosts\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"booster_id\" integer NOT NULL, \"content\" varchar(16) NOT NULL, \"created_at\" datetime(6) NOT NULL, \"message_id\" integer NOT NULL, \"updated_at\" datetime(6) NOT NULL, CONSTRAINT \"fk_rails_3539c52d73\"\nFOREIGN KEY (\"message_id\")\n  REFERENCES \"messages\" (\"id\")\n)",
    r#"CREATE INDEX "index_boosts_on_booster_id" ON "boosts" ("booster_id")"#,
    r#"CREATE INDEX "index_boosts_on_message_id" ON "boosts" ("message_id")"#,
    "CREATE TABLE \"messages\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"client_message_id\" varchar NOT NULL, \"created_at\" datetime(6) NOT NULL, \"creator_id\" integer NOT NULL, \"room_id\" integer NOT NULL, \"updated_at\" datetime(6) NOT NULL, CONSTRAINT \"fk_rails_a8db0fb63a\"\nFOREIGN KEY (\"room_id\")\n  REFERENCES \"rooms\" (\"id\")\n, CONSTRAINT \"fk_rails_761a2f12b3\"\nFOREIGN KEY (\"creator_id\")\n  REFERENCES \"users\" (\"id\")\n)",
    r#"CREATE INDEX "index_messages_on_creator_id" ON "messages" ("creator_id")"#,
    r#"CREATE INDEX "index_messages_on_room_id" ON "messages" ("room_id")"#,
    "CREATE TABLE \"push_subscriptions\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"auth_key\" varchar, \"created_at\" datetime(6) NOT NULL, \"endpoint\" varchar, \"p256dh_key\" varchar, \"updated_at\" datetime(6) NOT NULL, \"user_agent\" varchar, \"user_id\" integer NOT NULL, CONSTRAINT \"fk_rails_43d43720fc\"\nFOREIGN KEY (\"user_id\")\n  REFERENCES \"users\" (\"id\")\n)",
    r#"CREATE INDEX "idx_on_endpoint_p256dh_key_auth_key_7553014576" ON "push_subscriptions" ("endpoint", "p256dh_key", "auth_key")"#,
    r#"CREATE INDEX "index_push_subscriptions_on_user_id" ON "push_subscriptions" ("user_id")"#,
    "CREATE TABLE \"searches\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"created_at\" datetime(6) NOT NULL, \"query\" varchar NOT NULL, \"updated_at\" datetime(6) NOT NULL, \"user_id\" integer NOT NULL, CONSTRAINT \"fk_rails_e192b86393\"\nFOREIGN KEY (\"user_id\")\n  REFERENCES \"users\" (\"id\")\n)",
    r#"CREATE INDEX "index_searches_on_user_id" ON "searches" ("user_id")"#,
    "CREATE TABLE \"sessions\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"created_at\" datetime(6) NOT NULL, \"ip_address\" varchar, \"last_active_at\" datetime(6) NOT NULL, \"token\" varchar NOT NULL, \"updated_at\" datetime(6) NOT NULL, \"user_agent\" varchar, \"user_id\" integer NOT NULL, CONSTRAINT \"fk_rails_758836b4f0\"\nFOREIGN KEY (\"user_id\")\n  REFERENCES \"users\" (\"id\")\n)",
    r#"CREATE UNIQUE INDEX "index_sessions_on_token" ON "sessions" ("token")"#,
    r#"CREATE INDEX "index_sessions_on_user_id" ON "sessions" ("user_id")"#,
    "CREATE TABLE \"webhooks\" (\"id\" integer PRIMARY KEY AUTOINCREMENT NOT NULL, \"created_at\" datetime(6) NOT NULL, \"updated_at\" datetime(6) NOT NULL, \"url\" varchar, \"user_id\" integer NOT NULL, CONSTRAINT \"fk_rails_51bf96d3bc\"\nFOREIGN KEY (\"user_id\")\n  REFERENCES \"users\" (\"id\")\n)",
    r#"CREATE INDEX "index_webhooks_on_user_id" ON "webhooks" ("user_id")"#,
    // Rails' create_virtual_table; SQLite drops the IF NOT EXISTS when storing it.
    "CREATE VIRTUAL TABLE IF NOT EXISTS message_search_index USING fts5 (body, tokenize=porter)",
    r#"CREATE TABLE "schema_migrations" ("version" varchar NOT NULL PRIMARY KEY)"#,
    r#"CREATE TABLE "ar_internal_metadata" ("key" varchar NOT NULL PRIMARY KEY, "value" varchar, "created_at" datetime(6) NOT NULL, "updated_at" datetime(6) NOT NULL)"#,
];

/// Every migration in the Rails app's db/migrate: a fresh database is "fully migrated".
pub const MIGRATION_VERSIONS: &[&str] = &[
    "20231215043540", "20231220143106", "20240110071740", "20240115124901", "20240130003150",
    "20240130213001", "20240131105830", "20240209110503", "20250825100957", "20250825100958",
    "20250825100959", "20251126092013", "20251126115722", "20251126130131", "20251212154340",
];

/// SHA-1 of the Rails app's db/schema.rb at version 2025_12_12_154340, which Rails
/// records in ar_internal_metadata when it loads that schema.
pub const SCHEMA_SHA1: &str = "f75da8dad38bfb179ffd757bd7a7c2b3f818bc29";

/// Indexes campfire-room adds (the Rails schema lacks them): name, DDL. Named the way Rails
/// would name them; created on fresh and existing databases alike.
pub const EXTRA_INDEXES: &[(&str, &str)] = &[
    // Room pages and pagination order messages of one room by created_at.
    (
        "index_messages_on_room_id_and_created_at",
        r#"CREATE INDEX IF NOT EXISTS "index_messages_on_room_id_and_created_at" ON "messages" ("room_id", "created_at")"#,
    ),
    // A post marks the room unread for its visible members who have read it (memberships::
    // mark_unread): this holds exactly those rows, so the post touches them, not the room.
    (
        "index_memberships_on_room_id_read",
        r#"CREATE INDEX IF NOT EXISTS "index_memberships_on_room_id_read" ON "memberships" ("room_id") WHERE unread_at IS NULL AND involvement != 'invisible'"#,
    ),
    // The invitation check's "original room" (rooms::original: ORDER BY created_at, id LIMIT 1;
    // the rowid is the index's last column) is its first entry instead of a sort of all rooms.
    ("index_rooms_on_created_at", r#"CREATE INDEX IF NOT EXISTS "index_rooms_on_created_at" ON "rooms" ("created_at")"#),
    // The sidebar's people to message (users::placeholders: oldest first, up to a limit)
    // walk users in this order and stop at the limit instead of sorting every user.
    ("index_users_on_created_at", r#"CREATE INDEX IF NOT EXISTS "index_users_on_created_at" ON "users" ("created_at")"#),
    // The sidebar's rooms of a user (memberships::sidebar) and the direct-room partner count
    // read a user's memberships from this index alone: a user's rows lie together here, while
    // in the table they are spread over as many pages as rooms (1,000 at ×100, beyond the
    // connection's page cache).
    (
        "index_memberships_on_user_id_and_room_id_and_involvement_and_unread_at",
        r#"CREATE INDEX IF NOT EXISTS "index_memberships_on_user_id_and_room_id_and_involvement_and_unread_at" ON "memberships" ("user_id", "room_id", "involvement", "unread_at")"#,
    ),
];

/// What `ensure` found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The database was empty; the whole Rails schema was created.
    Created,
    /// An existing Campfire database; only missing extra indexes were added.
    Existing,
}

/// Makes the database at `conn` (read-write) a Campfire database: creates the Rails schema
/// when it holds no tables at all, records every migration and the environment so Rails
/// sees it fully migrated, and adds our extra indexes. Never alters an existing table.
/// Fails if the database holds tables but no `messages` table (not a Campfire database).
pub fn ensure(conn: &Conn) -> Result<Outcome> {
    let outcome = ensure_tables(conn)?;
    build_indexes(conn)?;
    Ok(outcome)
}

/// `ensure` without the extra indexes: what must be there before anything reads. The
/// writer builds the indexes afterwards (`build_indexes`), while the loops already answer.
pub fn ensure_tables(conn: &Conn) -> Result<Outcome> {
    conn.transaction(|c| {
        if count_tables(c)? == 0 {
            create(c)?;
            Ok(Outcome::Created)
        } else if has_table(c, "messages")? {
            Ok(Outcome::Existing)
        } else {
            Err(Error::new(ffi::SQLITE_ERROR, "database has tables but no \"messages\" table: not a Campfire database"))
        }
    })
}

/// Creates the extra indexes a database lacks, each in its own transaction. On a large
/// database made by Rails this is a sort of every row (1M messages: seconds): the sort's runs
/// go to temporary files (`temp_store = FILE`, the connection's page cache bounding what it
/// holds) instead of memory, where they took 83 MB at 1M messages; where no temporary
/// directory is writable it falls back to memory. Logs each build and its time.
pub fn build_indexes(conn: &Conn) -> Result<()> {
    for (name, sql) in EXTRA_INDEXES {
        if has_index(conn, name)? {
            continue;
        }
        let t0 = std::time::Instant::now();
        eprintln!("schema: building index {name} (missing on this database); requests are answered meanwhile, writes wait");
        conn.exec("PRAGMA temp_store = FILE")?;
        let built = conn.transaction(|c| c.exec(sql));
        conn.exec("PRAGMA temp_store = MEMORY")?;
        if let Err(e) = built {
            eprintln!("schema: building {name} with temporary files failed ({e}); building it in memory");
            conn.transaction(|c| c.exec(sql))?;
        }
        eprintln!("schema: built index {name} in {:.2} s", t0.elapsed().as_secs_f64());
    }
    Ok(())
}

fn has_index(c: &Conn, name: &str) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")?;
    s.bind(1, name)?;
    s.row()
}

fn count_tables(c: &Conn) -> Result<i64> {
    let mut s = c.prepare_cached("SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")?;
    Ok(if s.row()? { s.int(0) } else { 0 })
}

fn has_table(c: &Conn, name: &str) -> Result<bool> {
    let mut s = c.prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?;
    s.bind(1, name)?;
    s.row()
}

fn create(c: &Conn) -> Result<()> {
    for sql in RAILS_DDL {
        c.exec(sql)?;
    }
    for v in MIGRATION_VERSIONS {
        let mut s = c.prepare_cached(r#"INSERT INTO "schema_migrations" ("version") VALUES (?1)"#)?;
        s.bind(1, *v)?;
        s.run()?;
    }
    let now = time::format(time::now_us());
    for (key, value) in [("environment", "production"), ("schema_sha1", SCHEMA_SHA1)] {
        let mut s = c.prepare_cached(
            r#"INSERT INTO "ar_internal_metadata" ("key", "value", "created_at", "updated_at") VALUES (?1, ?2, ?3, ?3)"#,
        )?;
        s.bind(1, key)?;
        s.bind(2, value)?;
        s.bind(3, now.as_str())?;
        s.run()?;
    }
    Ok(())
}
