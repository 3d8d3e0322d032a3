//! What the application layout reads on every full page (spec/07 §1): the account's version
//! stamp (the `v=` of the logo URL), its custom CSS, and whether a logo is uploaded.

use super::conn::Conn;
use super::error::Result;

/// The account's look; all empty before first run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountLook {
    /// `accounts.updated_at`, µs since the epoch.
    pub updated_at: Option<i64>,
    /// The administrators' CSS, `None` when unset or blank.
    pub custom_styles: Option<String>,
    pub has_logo: bool,
}

/// One query on the single account row and its logo attachment.
pub fn account_look(c: &Conn) -> Result<AccountLook> {
    let mut s = c.prepare_cached(
        "SELECT a.updated_at, a.custom_styles, EXISTS (SELECT 1 FROM active_storage_attachments t \
         WHERE t.record_type = 'Account' AND t.record_id = a.id AND t.name = 'logo') \
         FROM accounts a ORDER BY a.id LIMIT 1",
    )?;
    if !s.row()? {
        return Ok(AccountLook::default());
    }
    Ok(AccountLook {
        updated_at: if s.is_null(0) { None } else { Some(s.time(0)?) },
        custom_styles: s.opt_string(1)?.filter(|css| !css.trim().is_empty()),
        has_logo: s.int(2) != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::TempDb;

    #[test]
    fn look_of_the_account() {
        let (_db, conn) = TempDb::with_schema();
        assert_eq!(account_look(&conn).unwrap(), AccountLook::default());
        conn.exec(concat!(
            "INSERT INTO accounts (id, name, join_code, custom_styles, created_at, updated_at) ",
            "VALUES (1, 'Campfire', 'a-b-c', '  ', '2025-01-01 00:00:00', '2025-12-12 15:43:40.123456');"
        ))
        .unwrap();
        let look = account_look(&conn).unwrap();
        assert_eq!(look.updated_at, crate::db::time::parse("2025-12-12 15:43:40.123456"));
        assert_eq!((look.custom_styles, look.has_logo), (None, false));
        conn.exec(concat!(
            "UPDATE accounts SET custom_styles = 'body { color: red }';",
            "INSERT INTO active_storage_blobs (id, key, filename, byte_size, service_name, created_at) VALUES (1, 'k', 'logo.png', 1, 'local', '2025-01-01 00:00:00');",
            "INSERT INTO active_storage_attachments (name, record_type, record_id, blob_id, created_at) VALUES ('logo', 'Account', 1, 1, '2025-01-01 00:00:00');",
        ))
        .unwrap();
        let look = account_look(&conn).unwrap();
        assert_eq!((look.custom_styles.as_deref(), look.has_logo), (Some("body { color: red }"), true));
    }
}
