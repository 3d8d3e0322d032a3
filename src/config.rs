//! Configuration from the environment, in the Rails app's spirit. Every value is checked once at
//! start; a malformed one is a clear message and exit code 2 (see main.rs), never a guess.
//!
//! | variable | default | meaning |
//! | --- | --- | --- |
//! | PORT | 3000 | TCP port, all addresses |
//! | DATABASE_PATH | storage/db/production.sqlite3 | the SQLite file |
//! | STORAGE_PATH | storage | attachments, the generated secret |
//! | SECRET_KEY_BASE | generated once into STORAGE_PATH/secret_key_base | Rails' secret |
//! | CAMPFIRE_LOOPS | usable cores, at most 4 | event-loop threads |
//! | CAMPFIRE_LOG | 1 | 0 turns the access log off |
//! | CAMPFIRE_MAX_* , *_TIMEOUT_MS, CAMPFIRE_OUT_BUDGET | http::limits, below | see README.md |
//! | CAMPFIRE_TRUSTED_PROXIES | Rails' list; none with SSL_DOMAIN | peers whose forwarding headers are believed |
//! | CAMPFIRE_WS_* , CAMPFIRE_CABLE_MAX_SUBSCRIPTIONS | `WsLimits` | see README.md |
//! | SSL_DOMAIN, TLS_*, HTTP(S)_PORT, ACME_* | HTTPS off | `tls::settings` |

use crate::http::limits::{self, Limits};
use crate::http::trusted::TrustedProxies;
use std::path::{Path, PathBuf};

/// Seconds-scale defaults for the slow-client guards.
pub const REQUEST_TIMEOUT_MS: u64 = 15_000;
pub const IDLE_TIMEOUT_MS: u64 = 30_000;
pub const DRAIN_TIMEOUT_MS: u64 = 10_000;
/// Connections one loop holds before it answers new ones with 503 + Retry-After.
pub const MAX_CONNECTIONS: usize = 8192;
/// Output the whole process may hold for clients that are not reading it (every loop's HTTP
/// responses and WebSocket queues blocked on a full socket, with the input those connections
/// stopped reading into): beyond it the connections holding the most are dropped. Sized for the
/// 15 MB container: an idle server is ~5 MB resident, which leaves room for this, the page
/// cache's share and the fragment cache.
pub const OUT_BUDGET: usize = 4 * 1024 * 1024;
/// Unsent bytes a WebSocket may accumulate before it is dropped as a slow consumer.
pub const WS_OUT_MAX: usize = 1024 * 1024;
/// How long a WebSocket's queued output may make no progress before the socket is dropped.
pub const WS_WRITE_STALL_MS: u64 = 15_000;
/// Most Cable subscriptions one socket may hold (a Campfire page holds 7); more are rejected.
pub const CABLE_MAX_SUBSCRIPTIONS: usize = 32;

/// The bounds on WebSocket clients (the largest message's default is the frame reader's,
/// `http::websocket::MAX_MESSAGE`).
#[derive(Clone, Copy, Debug)]
pub struct WsLimits {
    /// Largest message after reassembly and inflation (close 1009 beyond).
    pub max_message: usize,
    /// Unsent bytes a socket may hold before it is dropped as a slow consumer.
    pub out_max: usize,
    /// How long a socket's output may make no progress before it is dropped.
    pub write_stall_ms: u64,
    /// Subscriptions per socket (further ones are rejected).
    pub max_subscriptions: usize,
}

/// Default upper bound on loops when CAMPFIRE_LOOPS is unset.
pub const DEFAULT_MAX_LOOPS: usize = 4;

#[derive(Clone)]
pub struct Config {
    pub port: u16,
    pub database_path: PathBuf,
    pub storage_path: PathBuf,
    /// Empty until `prepare_storage` fills it from the environment or the storage folder.
    pub secret_key_base: String,
    secret_from_env: Option<String>,
    pub loops: usize,
    pub log: bool,
    pub limits: Limits,
    /// A request (head and body) must arrive within this time of its first byte.
    pub request_timeout_ms: u64,
    /// A keep-alive connection with no request in progress is closed after this.
    pub idle_timeout_ms: u64,
    /// On SIGTERM, in-flight requests get this long to finish.
    pub drain_timeout_ms: u64,
    /// Per loop.
    pub max_connections: usize,
    /// For the whole process (`OUT_BUDGET`).
    pub out_budget: usize,
    pub ws: WsLimits,
    /// Peers whose `X-Forwarded-*`, `Forwarded` and `Client-Ip` headers are believed.
    pub trusted_proxies: TrustedProxies,
    /// CAMPFIRE_TEST_ROUTES=1 adds routes only the integration tests use (`POST /__echo`).
    pub test_routes: bool,
    /// HTTPS in the process (issue 14 §2): None when off; parsed by `tls::settings`.
    pub tls: Option<crate::tls::settings::Settings>,
}

impl Config {
    /// Reads the process environment.
    pub fn from_env() -> Result<Config, String> {
        Config::from_lookup(|k| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Builds a Config from `get` (the environment, or a map in tests). Errors name the
    /// variable and say what was expected.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Config, String> {
        let storage_path = PathBuf::from(get("STORAGE_PATH").unwrap_or_else(|| "storage".into()));
        if storage_path.as_os_str().is_empty() {
            return Err("STORAGE_PATH is empty".into());
        }
        let database_path = match get("DATABASE_PATH") {
            Some(p) if p.is_empty() => return Err("DATABASE_PATH is empty".into()),
            Some(p) => PathBuf::from(p),
            None => PathBuf::from("storage/db/production.sqlite3"),
        };
        let secret_from_env = match get("SECRET_KEY_BASE") {
            Some(s) if s.trim().is_empty() => return Err("SECRET_KEY_BASE is set but empty".into()),
            other => other,
        };
        let default_loops = crate::sys::process::usable_cpus().min(DEFAULT_MAX_LOOPS);
        let limits = Limits {
            max_url: num(&get, "CAMPFIRE_MAX_URL", limits::MAX_URL, 64, 1 << 20)?,
            max_header_bytes: num(&get, "CAMPFIRE_MAX_HEADER_BYTES", limits::MAX_HEADER_BYTES, 256, 1 << 20)?,
            max_headers: num(&get, "CAMPFIRE_MAX_HEADERS", limits::MAX_HEADERS, 1, limits::HEADER_SLOTS)?,
            max_body: num(&get, "CAMPFIRE_MAX_BODY", limits::MAX_BODY, 0, 1 << 30)?,
            max_upload: num(&get, "CAMPFIRE_MAX_UPLOAD", limits::MAX_UPLOAD, 0, 1 << 40)?,
        };
        let tls = crate::tls::settings::from_lookup(&get)?;
        Ok(Config {
            port: num(&get, "PORT", 3000, 0, 65535)? as u16,
            database_path,
            storage_path,
            secret_key_base: String::new(),
            secret_from_env,
            loops: num(&get, "CAMPFIRE_LOOPS", default_loops, 1, 64)?,
            log: flag(&get, "CAMPFIRE_LOG", true)?,
            limits,
            request_timeout_ms: num(&get, "CAMPFIRE_REQUEST_TIMEOUT_MS", REQUEST_TIMEOUT_MS as usize, 100, 86_400_000)? as u64,
            idle_timeout_ms: num(&get, "CAMPFIRE_IDLE_TIMEOUT_MS", IDLE_TIMEOUT_MS as usize, 100, 86_400_000)? as u64,
            drain_timeout_ms: num(&get, "CAMPFIRE_DRAIN_TIMEOUT_MS", DRAIN_TIMEOUT_MS as usize, 0, 3_600_000)? as u64,
            max_connections: num(&get, "CAMPFIRE_MAX_CONNECTIONS", MAX_CONNECTIONS, 1, 1 << 20)?,
            out_budget: num(&get, "CAMPFIRE_OUT_BUDGET", OUT_BUDGET, 64 * 1024, 1 << 40)?,
            ws: WsLimits {
                max_message: num(&get, "CAMPFIRE_WS_MAX_MESSAGE", crate::http::websocket::MAX_MESSAGE, 1024, 1 << 26)?,
                out_max: num(&get, "CAMPFIRE_WS_OUT_MAX", WS_OUT_MAX, 64 * 1024, 1 << 30)?,
                write_stall_ms: num(&get, "CAMPFIRE_WS_WRITE_STALL_MS", WS_WRITE_STALL_MS as usize, 100, 86_400_000)? as u64,
                max_subscriptions: num(&get, "CAMPFIRE_CABLE_MAX_SUBSCRIPTIONS", CABLE_MAX_SUBSCRIPTIONS, 1, 4096)?,
            },
            test_routes: flag(&get, "CAMPFIRE_TEST_ROUTES", false)?,
            trusted_proxies: trusted_proxies(&get, tls.is_some())?,
            tls,
        })
    }

    /// The lock a serving process holds on its database (`restore` refuses while it is held).
    pub fn server_lock_path(&self) -> PathBuf {
        PathBuf::from(format!("{}-server.lock", self.database_path.display()))
    }

    /// Creates the storage folder and the database's folder, and settles the secret key base:
    /// SECRET_KEY_BASE when set, else the one kept in `STORAGE_PATH/secret_key_base`, else a new
    /// one (64 random bytes as hex) written there with mode 0600 and reused on later starts.
    pub fn prepare_storage(&mut self) -> Result<(), String> {
        std::fs::create_dir_all(&self.storage_path)
            .map_err(|e| format!("cannot create STORAGE_PATH {}: {e}", self.storage_path.display()))?;
        if let Some(dir) = self.database_path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        self.secret_key_base = match &self.secret_from_env {
            Some(s) => s.clone(),
            None => stored_secret(&self.storage_path.join("secret_key_base"))?,
        };
        Ok(())
    }
}

/// Shows everything but the secret, so a debug print can never leak it into a log.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("port", &self.port)
            .field("database_path", &self.database_path)
            .field("storage_path", &self.storage_path)
            .field("secret_key_base", &"[redacted]")
            .field("loops", &self.loops)
            .field("log", &self.log)
            .field("limits", &self.limits)
            .field("request_timeout_ms", &self.request_timeout_ms)
            .field("idle_timeout_ms", &self.idle_timeout_ms)
            .field("drain_timeout_ms", &self.drain_timeout_ms)
            .field("max_connections", &self.max_connections)
            .field("out_budget", &self.out_budget)
            .field("ws", &self.ws)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("test_routes", &self.test_routes)
            .field("tls", &self.tls)
            .finish()
    }
}

fn stored_secret(path: &Path) -> Result<String, String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::read_to_string(path) {
        Ok(s) if !s.trim().is_empty() => return Ok(s.trim().to_string()),
        Ok(_) => return Err(format!("{} is empty; delete it to generate a new secret", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    let mut raw = [0u8; 64];
    crate::sys::random::fill(&mut raw);
    let hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    f.write_all(hex.as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(hex)
}

/// `CAMPFIRE_TRUSTED_PROXIES` when set (empty: nobody). Unset, Rails' loopback and private
/// ranges, for a proxy beside us; but a server that terminates TLS itself (`SSL_DOMAIN` or its
/// own certificate) faces the clients directly, so it believes nobody by default.
fn trusted_proxies(get: &impl Fn(&str) -> Option<String>, own_tls: bool) -> Result<TrustedProxies, String> {
    match get("CAMPFIRE_TRUSTED_PROXIES") {
        Some(v) => TrustedProxies::parse(&v).map_err(|e| format!("CAMPFIRE_TRUSTED_PROXIES: {e}")),
        None if own_tls => Ok(TrustedProxies::none()),
        None => Ok(TrustedProxies::rails_default()),
    }
}

fn num(get: &impl Fn(&str) -> Option<String>, key: &str, default: usize, min: usize, max: usize) -> Result<usize, String> {
    match get(key) {
        None => Ok(default),
        Some(v) => match v.trim().parse::<usize>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!("{key}={v:?} is not a whole number between {min} and {max}")),
        },
    }
}

fn flag(get: &impl Fn(&str) -> Option<String>, key: &str, default: bool) -> Result<bool, String> {
    match get(key).as_deref().map(str::trim) {
        None => Ok(default),
        Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(v) => Err(format!("{key}={v:?} is not a switch (use 1 or 0)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> Result<Config, String> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn defaults_and_overrides() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.port, 3000);
        assert_eq!(c.database_path, PathBuf::from("storage/db/production.sqlite3"));
        assert!(c.log && c.loops >= 1 && c.loops <= 4);
        let c = cfg(&[("PORT", "8080"), ("CAMPFIRE_LOG", "0"), ("CAMPFIRE_MAX_URL", "100"), ("CAMPFIRE_LOOPS", "8")]).unwrap();
        assert_eq!((c.port, c.log, c.limits.max_url, c.loops), (8080, false, 100, 8));
        assert_eq!(cfg(&[]).unwrap().out_budget, OUT_BUDGET);
        assert_eq!(cfg(&[("CAMPFIRE_OUT_BUDGET", "1048576")]).unwrap().out_budget, 1 << 20);
    }

    #[test]
    fn trusted_proxies_default_and_override() {
        let lo: std::net::IpAddr = "127.0.0.1".parse().unwrap();
        assert!(cfg(&[]).unwrap().trusted_proxies.contains(lo));
        assert!(cfg(&[("CAMPFIRE_TRUSTED_PROXIES", "")]).unwrap().trusted_proxies.is_empty());
        assert!(cfg(&[("SSL_DOMAIN", "chat.example.com")]).unwrap().trusted_proxies.is_empty());
        let one = cfg(&[("SSL_DOMAIN", "chat.example.com"), ("CAMPFIRE_TRUSTED_PROXIES", "127.0.0.1")]).unwrap();
        assert!(one.trusted_proxies.contains(lo));
        let e = cfg(&[("CAMPFIRE_TRUSTED_PROXIES", "10.0.0.0/40")]).unwrap_err();
        assert!(e.contains("CAMPFIRE_TRUSTED_PROXIES") && e.contains("10.0.0.0/40"), "{e}");
    }

    #[test]
    fn malformed_values_are_errors() {
        for bad in [("PORT", "x"), ("PORT", "70000"), ("CAMPFIRE_LOOPS", "0"), ("CAMPFIRE_LOG", "maybe"),
            ("SECRET_KEY_BASE", " "), ("CAMPFIRE_MAX_HEADERS", "500"), ("DATABASE_PATH", ""),
            ("CAMPFIRE_OUT_BUDGET", "1000"), ("CAMPFIRE_OUT_BUDGET", "4M")] {
            let e = cfg(&[bad]).unwrap_err();
            assert!(e.contains(bad.0), "{e}");
        }
    }

    #[test]
    fn secret_generated_once() {
        let dir = std::env::temp_dir().join(format!("campfire-cfg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = dir.to_string_lossy().into_owned();
        let db = format!("{s}/db/x.sqlite3");
        let mut a = cfg(&[("STORAGE_PATH", &s), ("DATABASE_PATH", &db)]).unwrap();
        a.prepare_storage().unwrap();
        assert_eq!(a.secret_key_base.len(), 128);
        assert!(dir.join("db").is_dir());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("secret_key_base")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let mut b = cfg(&[("STORAGE_PATH", &s), ("DATABASE_PATH", &db)]).unwrap();
        b.prepare_storage().unwrap();
        assert_eq!(a.secret_key_base, b.secret_key_base);
        let mut c = cfg(&[("STORAGE_PATH", &s), ("DATABASE_PATH", &db), ("SECRET_KEY_BASE", "abc")]).unwrap();
        c.prepare_storage().unwrap();
        assert_eq!(c.secret_key_base, "abc");
        assert!(!format!("{c:?}").contains("abc"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
