//! Certificates from ACME (RFC 8555) for SSL_DOMAIN: obtained at the first start, renewed 30
//! days before they expire, on one background thread that sleeps in between. A failure is
//! logged and retried with backoff; the running certificate is only ever replaced by a new
//! one that passed the same checks as an operator's file.
//!
//! Files under `STORAGE_PATH/tls/` (mode 0600): `account_key.pem` (the ACME account's
//! P-256 key, reused across orders), `private_key.pem` and `certificate.pem` (the chain).

pub mod client;
pub mod keys;

use crate::tls::settings::Source;
use crate::tls::{certs, Tls};
use std::sync::Arc;
use std::time::Duration;

/// Renewal starts this long before notAfter (Let's Encrypt's advice for 90-day certificates).
pub const RENEW_BEFORE_S: i64 = 30 * 86_400;
const RETRY_FIRST_S: u64 = 30;
const RETRY_MAX_S: u64 = 6 * 3600;
/// Even with nothing due, look again this often (the clock may have jumped).
const CHECK_S: u64 = 12 * 3600;

/// Starts the renewal thread (it obtains the first certificate at once when none is served).
pub fn start(tls: Arc<Tls>) -> std::io::Result<()> {
    std::thread::Builder::new().name("acme".into()).spawn(move || renew_forever(&tls))?;
    Ok(())
}

fn now_s() -> i64 {
    crate::crypto::time::now_ms() / 1000
}

fn renew_forever(tls: &Tls) {
    let mut backoff = RETRY_FIRST_S;
    loop {
        let due = tls.slot.not_after() - RENEW_BEFORE_S;
        let now = now_s();
        if now < due {
            std::thread::sleep(Duration::from_secs(((due - now) as u64).min(CHECK_S)));
            continue;
        }
        match obtain(tls) {
            Ok(not_after) => {
                let mut when = Vec::new();
                crate::crypto::time::write_iso8601(not_after * 1000, &mut when);
                eprintln!("campfire-room: ACME: certificate for {} installed, valid until {}", tls.settings.domains.join(", "), String::from_utf8_lossy(&when));
                backoff = RETRY_FIRST_S;
            }
            Err(e) => {
                eprintln!("campfire-room: ACME: {e}; retrying in {backoff} s");
                std::thread::sleep(Duration::from_secs(backoff));
                backoff = (backoff * 2).min(RETRY_MAX_S);
            }
        }
    }
}

/// One order from start to installed certificate; returns the new notAfter.
pub fn obtain(tls: &Tls) -> Result<i64, String> {
    let Source::Acme { directory, ca_file } = &tls.settings.source else { return Err("not an ACME configuration".into()) };
    let account = keys::load_or_create(&tls.dir.join("account_key.pem"))?;
    let mut client = client::Client::new(directory, ca_file.as_deref(), account)?;
    client.account()?;
    let cert_key = keys::generate();
    let chain = client.order(tls, &tls.settings.domains, &cert_key)?;
    let key_pem = keys::pem("PRIVATE KEY", &keys::pkcs8(&cert_key));
    let loaded = certs::from_pem(chain.as_bytes(), key_pem.as_bytes())?;
    loaded.check(&tls.settings.domains, now_s()).map_err(|e| format!("the issued certificate: {e}"))?;
    // Key first: a crash between the two leaves a pair that fails to load at the next start,
    // which then orders again, rather than a certificate with the wrong key being served.
    keys::write_private(&tls.key_path(), key_pem.as_bytes())?;
    keys::write_private(&tls.cert_path(), chain.as_bytes())?;
    tls.slot.install(&loaded);
    Ok(loaded.not_after)
}
