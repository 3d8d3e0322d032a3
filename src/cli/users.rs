//! `reset-password` and `admin`: the two things an operator locked out of the web UI needs.
//! Both write through their own SQLite connection; a running server sees the change at its next
//! request (its caches key on the database's data version).

use super::open_existing;
use crate::config::Config;
use crate::crypto::{signed_id, Keys};
use crate::db::{self, users::User};

/// Prints the session-transfer link (spec/07 §10.3) for `email`: opening it signs that user in,
/// as the profile page's own link does; it is valid for 4 hours.
pub fn sign_in_link(cfg: &Config, email: &str) -> Result<(), String> {
    let c = open_existing(cfg)?;
    let user = active_user(&c, email)?;
    let keys = Keys::derive(cfg.secret_key_base.as_bytes());
    let mut id = Vec::with_capacity(160);
    signed_id::transfer_id(&keys, user.id, crate::crypto::time::now_ms(), &mut id);
    println!("{}/session/transfers/{}", public_origin(cfg), String::from_utf8_lossy(&id));
    eprintln!("campfire-room: a sign-in link for {} ({email}), valid for 4 hours", user.name);
    Ok(())
}

/// Sets the password of `email` to the first line of standard input (without its newline).
pub fn password_from_stdin(cfg: &Config, email: &str) -> Result<(), String> {
    let c = open_existing(cfg)?;
    let user = active_user(&c, email)?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).map_err(|e| format!("cannot read the password from stdin: {e}"))?;
    let password = line.strip_suffix('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).unwrap_or(&line);
    if password.is_empty() {
        return Err("the password read from stdin is empty".into());
    }
    // has_secure_password's bound: bcrypt reads no further than 72 bytes.
    if password.len() > 72 {
        return Err("the password is longer than 72 bytes".into());
    }
    let digest = crate::crypto::bcrypt::hash(password.as_bytes());
    let changes = db::users::Changes { password_digest: Some(Some(&digest)), ..Default::default() };
    db::users::update(&c, user.id, &changes, db::time::now_us()).map_err(|e| format!("cannot set the password: {e}"))?;
    eprintln!("campfire-room: password set for {} ({email})", user.name);
    Ok(())
}

/// Makes `email` an administrator.
pub fn make_admin(cfg: &Config, email: &str) -> Result<(), String> {
    let c = open_existing(cfg)?;
    let user = active_user(&c, email)?;
    if user.is_bot() {
        return Err(format!("{email} is a bot, which cannot administer"));
    }
    if user.is_administrator() {
        eprintln!("campfire-room: {} ({email}) is already an administrator", user.name);
        return Ok(());
    }
    let changes = db::users::Changes { role: Some(db::users::ROLE_ADMINISTRATOR), ..Default::default() };
    db::users::update(&c, user.id, &changes, db::time::now_us()).map_err(|e| format!("cannot change the role: {e}"))?;
    eprintln!("campfire-room: {} ({email}) is now an administrator", user.name);
    Ok(())
}

fn active_user(c: &db::Conn, email: &str) -> Result<User, String> {
    match db::users::find_by_email(c, email) {
        Ok(Some(u)) if u.is_active() => Ok(u),
        Ok(Some(_)) => Err(format!("{email} is deactivated")),
        Ok(None) => Err(format!("no user with the e-mail address {email}")),
        Err(e) => Err(format!("cannot look up {email}: {e}")),
    }
}

/// Where people reach this server, for a link printed outside any request: the first
/// `SSL_DOMAIN` over HTTPS (with `HTTPS_PORT` unless 443), else this machine on `PORT`.
fn public_origin(cfg: &Config) -> String {
    match cfg.tls.as_ref().and_then(|t| t.domains.first().map(|d| (d, t.https_port))) {
        Some((domain, 443)) => format!("https://{domain}"),
        Some((domain, port)) => format!("https://{domain}:{port}"),
        None => format!("http://localhost:{}", cfg.port),
    }
}
