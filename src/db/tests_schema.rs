//! Tests of `schema::ensure`: a fresh database has exactly the Rails schema of spec/01 §2
//! (checked column by column, index by index, key by key, independently of the DDL text),
//! the stored DDL is Rails' text, and `ensure` is idempotent and never alters a database.

use super::schema::{self, Outcome};
use super::testing::TempDb;
use super::{Conn, Mode, Step};

/// spec/01 §2: `column type [NN] [default]`, columns in schema.rb (alphabetical) order.
const TABLES: &[(&str, &str)] = &[
    ("accounts", "id integer NN pk|created_at datetime(6) NN|custom_styles text|join_code varchar NN|name varchar NN|settings json|singleton_guard integer NN 0|updated_at datetime(6) NN"),
    ("action_text_rich_texts", "id integer NN pk|body text|created_at datetime(6) NN|name varchar NN|record_id bigint NN|record_type varchar NN|updated_at datetime(6) NN"),
    ("active_storage_attachments", "id integer NN pk|blob_id bigint NN|created_at datetime(6) NN|name varchar NN|record_id bigint NN|record_type varchar NN"),
    ("active_storage_blobs", "id integer NN pk|byte_size bigint NN|checksum varchar|content_type varchar|created_at datetime(6) NN|filename varchar NN|key varchar NN|metadata text|service_name varchar NN"),
    ("active_storage_variant_records", "id integer NN pk|blob_id bigint NN|variation_digest varchar NN"),
    ("bans", "id integer NN pk|created_at datetime(6) NN|ip_address varchar NN|updated_at datetime(6) NN|user_id integer NN"),
    ("boosts", "id integer NN pk|booster_id integer NN|content varchar(16) NN|created_at datetime(6) NN|message_id integer NN|updated_at datetime(6) NN"),
    ("memberships", "id integer NN pk|connected_at datetime(6)|connections integer NN 0|created_at datetime(6) NN|involvement varchar 'mentions'|room_id integer NN|unread_at datetime(6)|updated_at datetime(6) NN|user_id integer NN"),
    ("messages", "id integer NN pk|client_message_id varchar NN|created_at datetime(6) NN|creator_id integer NN|room_id integer NN|updated_at datetime(6) NN"),
    ("push_subscriptions", "id integer NN pk|auth_key varchar|created_at datetime(6) NN|endpoint varchar|p256dh_key varchar|updated_at datetime(6) NN|user_agent varchar|user_id integer NN"),
    ("rooms", "id integer NN pk|created_at datetime(6) NN|creator_id bigint NN|name varchar|type varchar NN|updated_at datetime(6) NN"),
    ("searches", "id integer NN pk|created_at datetime(6) NN|query varchar NN|updated_at datetime(6) NN|user_id integer NN"),
    ("sessions", "id integer NN pk|created_at datetime(6) NN|ip_address varchar|last_active_at datetime(6) NN|token varchar NN|updated_at datetime(6) NN|user_agent varchar|user_id integer NN"),
    ("users", "id integer NN pk|bio text|bot_token varchar|created_at datetime(6) NN|email_address varchar|name varchar NN|password_digest varchar|role integer NN 0|status integer NN 0|updated_at datetime(6) NN"),
    ("webhooks", "id integer NN pk|created_at datetime(6) NN|updated_at datetime(6) NN|url varchar|user_id integer NN"),
    ("schema_migrations", "version varchar NN pk"),
    ("ar_internal_metadata", "key varchar NN pk|value varchar|created_at datetime(6) NN|updated_at datetime(6) NN"),
];

/// spec/01 §2: `table name [unique] (cols)`; plus our own (schema::EXTRA_INDEXES).
const INDEXES: &[&str] = &[
    "accounts index_accounts_on_singleton_guard unique (singleton_guard)",
    "action_text_rich_texts index_action_text_rich_texts_uniqueness unique (record_type,record_id,name)",
    "active_storage_attachments index_active_storage_attachments_on_blob_id (blob_id)",
    "active_storage_attachments index_active_storage_attachments_uniqueness unique (record_type,record_id,name,blob_id)",
    "active_storage_blobs index_active_storage_blobs_on_key unique (key)",
    "active_storage_variant_records index_active_storage_variant_records_uniqueness unique (blob_id,variation_digest)",
    "bans index_bans_on_ip_address (ip_address)",
    "bans index_bans_on_user_id (user_id)",
    "boosts index_boosts_on_booster_id (booster_id)",
    "boosts index_boosts_on_message_id (message_id)",
    "memberships index_memberships_on_room_id (room_id)",
    "memberships index_memberships_on_room_id_and_created_at (room_id,created_at)",
    "memberships index_memberships_on_room_id_and_user_id unique (room_id,user_id)",
    "memberships index_memberships_on_room_id_read (room_id)",
    "memberships index_memberships_on_user_id (user_id)",
    "memberships index_memberships_on_user_id_and_room_id_and_involvement_and_unread_at (user_id,room_id,involvement,unread_at)",
    "messages index_messages_on_creator_id (creator_id)",
    "messages index_messages_on_room_id (room_id)",
    "messages index_messages_on_room_id_and_created_at (room_id,created_at)",
    "push_subscriptions idx_on_endpoint_p256dh_key_auth_key_7553014576 (endpoint,p256dh_key,auth_key)",
    "push_subscriptions index_push_subscriptions_on_user_id (user_id)",
    "rooms index_rooms_on_created_at (created_at)",
    "searches index_searches_on_user_id (user_id)",
    "sessions index_sessions_on_token unique (token)",
    "sessions index_sessions_on_user_id (user_id)",
    "users index_users_on_bot_token unique (bot_token)",
    "users index_users_on_created_at (created_at)",
    "users index_users_on_email_address unique (email_address)",
    "webhooks index_webhooks_on_user_id (user_id)",
];

/// spec/01 §2.18: from.column → to, name.
const FOREIGN_KEYS: &[(&str, &str, &str, &str)] = &[
    ("active_storage_attachments", "blob_id", "active_storage_blobs", "fk_rails_c3b3935057"),
    ("active_storage_variant_records", "blob_id", "active_storage_blobs", "fk_rails_993965df05"),
    ("bans", "user_id", "users", "fk_rails_070022cd76"),
    ("boosts", "message_id", "messages", "fk_rails_3539c52d73"),
    ("messages", "room_id", "rooms", "fk_rails_a8db0fb63a"),
    ("messages", "creator_id", "users", "fk_rails_761a2f12b3"),
    ("push_subscriptions", "user_id", "users", "fk_rails_43d43720fc"),
    ("searches", "user_id", "users", "fk_rails_e192b86393"),
    ("sessions", "user_id", "users", "fk_rails_758836b4f0"),
    ("webhooks", "user_id", "users", "fk_rails_51bf96d3bc"),
];

fn columns(c: &Conn, table: &str) -> String {
    let mut s = c
        .prepare_cached(r#"SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?1) ORDER BY cid"#)
        .unwrap();
    s.bind(1, table).unwrap();
    let mut out = Vec::new();
    while s.step().unwrap() == Step::Row {
        // pragma_table_info upper-cases the types it knows (INTEGER, TEXT); the stored DDL does not.
        let mut col = format!("{} {}", s.text(0).unwrap(), s.text(1).unwrap().to_ascii_lowercase());
        if s.int(2) == 1 {
            col.push_str(" NN");
        }
        if let Some(d) = s.opt_text(3).unwrap() {
            col.push(' ');
            col.push_str(d);
        }
        if s.int(4) == 1 {
            col.push_str(" pk");
        }
        out.push(col);
    }
    out.join("|")
}

fn indexes(c: &Conn) -> Vec<String> {
    let mut s = c
        .prepare_cached(
            "SELECT m.tbl_name, m.name, il.\"unique\", \
             (SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info(m.name) ORDER BY seqno)) \
             FROM sqlite_master m JOIN pragma_index_list(m.tbl_name) il ON il.name = m.name \
             WHERE m.type = 'index' AND m.sql IS NOT NULL ORDER BY m.tbl_name, m.name",
        )
        .unwrap();
    let mut out = Vec::new();
    while s.step().unwrap() == Step::Row {
        let unique = if s.int(2) == 1 { " unique" } else { "" };
        out.push(format!("{} {}{} ({})", s.text(0).unwrap(), s.text(1).unwrap(), unique, s.text(3).unwrap()));
    }
    out
}

fn master(c: &Conn) -> Vec<(String, String, Option<String>)> {
    let mut s = c.prepare_cached("SELECT type, name, sql FROM sqlite_master ORDER BY rowid").unwrap();
    let mut out = Vec::new();
    while s.step().unwrap() == Step::Row {
        out.push((s.string(0).unwrap(), s.string(1).unwrap(), s.opt_string(2).unwrap()));
    }
    out
}

fn sql_of(c: &Conn, name: &str) -> String {
    let mut s = c.prepare_cached("SELECT sql FROM sqlite_master WHERE name = ?1").unwrap();
    s.bind(1, name).unwrap();
    assert!(s.row().unwrap(), "{name} missing");
    s.string(0).unwrap()
}

#[test]
fn fresh_database_has_the_rails_schema() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    assert_eq!(schema::ensure(&c).unwrap(), Outcome::Created);
    for (table, expected) in TABLES {
        assert_eq!(columns(&c, table), *expected, "table {table}");
    }
    assert_eq!(indexes(&c), INDEXES.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    for (from, col, to, name) in FOREIGN_KEYS {
        let mut s = c
            .prepare_cached(r#"SELECT "table", "to", on_delete FROM pragma_foreign_key_list(?1) WHERE "from" = ?2"#)
            .unwrap();
        s.bind(1, *from).unwrap();
        s.bind(2, *col).unwrap();
        assert!(s.row().unwrap(), "fk {from}.{col}");
        assert_eq!((s.text(0).unwrap(), s.text(1).unwrap(), s.text(2).unwrap()), (*to, "id", "NO ACTION"));
        drop(s);
        // Rails' text and name, as its SchemaCreation writes a foreign key.
        let clause = format!("CONSTRAINT \"{name}\"\nFOREIGN KEY (\"{col}\")\n  REFERENCES \"{to}\" (\"id\")\n");
        assert!(sql_of(&c, from).contains(&clause), "{from}: {clause}");
    }
    let mut s = c.prepare_cached("SELECT count(*) FROM pragma_foreign_key_list(?1)").unwrap();
    for (table, _) in TABLES {
        s.bind(1, *table).unwrap();
        assert!(s.row().unwrap());
        let n = FOREIGN_KEYS.iter().filter(|fk| fk.0 == *table).count() as i64;
        assert_eq!(s.int(0), n, "foreign keys of {table}");
        s.step().unwrap();
    }
    drop(s);
    assert_eq!(sql_of(&c, "message_search_index"), "CREATE VIRTUAL TABLE message_search_index USING fts5 (body, tokenize=porter)");
    assert_eq!(
        sql_of(&c, "accounts"),
        r#"CREATE TABLE "accounts" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "created_at" datetime(6) NOT NULL, "custom_styles" text, "join_code" varchar NOT NULL, "name" varchar NOT NULL, "settings" json, "singleton_guard" integer DEFAULT 0 NOT NULL, "updated_at" datetime(6) NOT NULL)"#
    );
    // Every table and index of the Rails schema, the FTS shadow tables, sqlite_sequence, and nothing else.
    let names: Vec<String> = master(&c).into_iter().filter(|(t, _, _)| t == "table").map(|(_, n, _)| n).collect();
    let mut expected: Vec<&str> = TABLES.iter().map(|t| t.0).collect();
    expected.extend(["sqlite_sequence", "message_search_index"]);
    expected.extend(["data", "idx", "content", "docsize", "config"].map(|s| match s {
        "data" => "message_search_index_data",
        "idx" => "message_search_index_idx",
        "content" => "message_search_index_content",
        "docsize" => "message_search_index_docsize",
        _ => "message_search_index_config",
    }));
    let mut sorted = names.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
}

#[test]
fn rails_bookkeeping_marks_the_database_migrated() {
    let (_db, c) = TempDb::with_schema();
    let mut s = c.prepare_cached("SELECT version FROM schema_migrations ORDER BY version").unwrap();
    let mut versions = Vec::new();
    while s.step().unwrap() == Step::Row {
        versions.push(s.string(0).unwrap());
    }
    assert_eq!(versions, schema::MIGRATION_VERSIONS);
    assert_eq!(versions.len(), 15);
    drop(s);
    let mut s = c.prepare_cached("SELECT value, created_at FROM ar_internal_metadata WHERE key = 'environment'").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.text(0).unwrap(), "production");
    assert!(super::time::parse(s.text(1).unwrap()).is_some());
}

#[test]
fn fts_table_uses_porter_stemming() {
    let (_db, c) = TempDb::with_schema();
    c.exec("INSERT INTO message_search_index (rowid, body) VALUES (7, 'Eels are slippery')").unwrap();
    let mut s = c.prepare_cached("SELECT rowid FROM message_search_index WHERE body MATCH ?1").unwrap();
    s.bind(1, "eel").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.int(0), 7);
}

#[test]
fn ensure_is_idempotent_and_never_alters() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    schema::ensure(&c).unwrap();
    let before = master(&c);
    assert_eq!(schema::ensure(&c).unwrap(), Outcome::Existing);
    drop(c);
    let c = db.open(Mode::ReadWrite);
    assert_eq!(schema::ensure(&c).unwrap(), Outcome::Existing);
    assert_eq!(master(&c), before);
    let mut s = c.prepare_cached("SELECT count(*) FROM schema_migrations").unwrap();
    assert!(s.row().unwrap());
    assert_eq!(s.int(0), 15);
}

#[test]
fn existing_database_only_gets_our_missing_index() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    schema::ensure(&c).unwrap();
    c.exec(r#"DROP INDEX "index_messages_on_room_id_and_created_at""#).unwrap();
    // Something Rails would not have, to prove ensure leaves it alone.
    c.exec("CREATE TABLE local_notes (x)").unwrap();
    let before = master(&c);
    assert_eq!(schema::ensure(&c).unwrap(), Outcome::Existing);
    let after = master(&c);
    assert_eq!(after.len(), before.len() + 1);
    assert!(after.iter().any(|(_, n, _)| n == "index_messages_on_room_id_and_created_at"));
    assert!(after.iter().any(|(_, n, _)| n == "local_notes"));
}

#[test]
fn refuses_a_database_that_is_not_campfire() {
    let db = TempDb::new();
    let c = db.open(Mode::ReadWrite);
    c.exec("CREATE TABLE something_else (x)").unwrap();
    assert!(schema::ensure(&c).is_err());
    assert_eq!(master(&c).len(), 1);
}
