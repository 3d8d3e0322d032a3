//! HTTPS in the process (issue 14 §2): the settings, the certificate the loops serve, and the
//! rustls server configuration around it. The record layer itself runs on the loops
//! (`server::transport`); certificates come from the operator's files (re-read on SIGHUP) or
//! from ACME (`crate::acme`, renewed on a background thread).
//!
//! The certificate lives in a `Slot` that rustls asks at each handshake, so a renewal or a
//! reload swaps one `Arc` under a lock held for a pointer copy: no loop ever waits for it, and
//! connections already open keep the certificate they were made with.

pub mod certs;
pub mod der;
pub mod secrets;
pub mod settings;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use settings::{Settings, Source};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// The certificate being served (None until ACME delivers the first one).
#[derive(Debug, Default)]
pub struct Slot {
    current: RwLock<Option<Arc<CertifiedKey>>>,
    /// The served certificate's notAfter (Unix seconds; 0 = none), for the renewal thread.
    not_after: AtomicI64,
}

impl ResolvesServerCert for Slot {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current.read().ok()?.clone()
    }
}

impl Slot {
    pub fn install(&self, loaded: &certs::Loaded) {
        if let Ok(mut cur) = self.current.write() {
            *cur = Some(loaded.key.clone());
        }
        self.not_after.store(loaded.not_after, Ordering::Release);
    }

    pub fn not_after(&self) -> i64 {
        self.not_after.load(Ordering::Acquire)
    }
}

/// Everything the HTTPS side shares between the loops, the HTTP_PORT listener, the ACME
/// thread and the signal thread.
pub struct Tls {
    pub settings: Settings,
    pub slot: Arc<Slot>,
    pub config: Arc<ServerConfig>,
    /// Pending HTTP-01 answers: (token, key authorization).
    pub challenges: Mutex<Vec<(String, String)>>,
    /// `STORAGE_PATH/tls`: the ACME account key and the obtained certificate.
    pub dir: PathBuf,
}

impl Tls {
    /// Builds the configuration and loads the first certificate: the operator's files (which
    /// must be valid now and cover SSL_DOMAIN), or a certificate ACME stored earlier that still
    /// covers SSL_DOMAIN. An error is a configuration error (exit 2).
    pub fn start(settings: &Settings, storage: &Path) -> Result<Arc<Tls>, String> {
        let slot = Arc::new(Slot::default());
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_cert_resolver(slot.clone());
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        // After the handshake the loops keep the traffic keys only (server::tls_records).
        config.enable_secret_extraction = true;
        // TLS 1.3's key updates derive the next keys from the traffic secrets (tls::secrets).
        config.key_log = Arc::new(secrets::Capture);
        let tls = Tls {
            settings: settings.clone(),
            slot,
            config: Arc::new(config),
            challenges: Mutex::new(Vec::new()),
            dir: storage.join("tls"),
        };
        let now = crate::crypto::time::now_ms() / 1000;
        match &settings.source {
            Source::Files { cert, key } => {
                let loaded = certs::load_files(cert, key)?;
                loaded.check(&settings.domains, now).map_err(|e| format!("{}: {e}", cert.display()))?;
                tls.slot.install(&loaded);
            }
            Source::Acme { .. } => {
                if let Ok(loaded) = certs::load_files(&tls.cert_path(), &tls.key_path()) {
                    if loaded.check(&settings.domains, now).is_ok() {
                        tls.slot.install(&loaded);
                    }
                }
            }
        }
        Ok(Arc::new(tls))
    }

    pub fn cert_path(&self) -> PathBuf {
        self.dir.join("certificate.pem")
    }

    pub fn key_path(&self) -> PathBuf {
        self.dir.join("private_key.pem")
    }

    /// SIGHUP: the operator's files are read again and served if they pass the start checks;
    /// otherwise the running certificate stays. ACME certificates renew by themselves.
    pub fn reload(&self) -> Result<&'static str, String> {
        let Source::Files { cert, key } = &self.settings.source else { return Ok("certificates are managed by ACME; nothing to reload") };
        let loaded = certs::load_files(cert, key)?;
        loaded.check(&self.settings.domains, crate::crypto::time::now_ms() / 1000)?;
        self.slot.install(&loaded);
        Ok("certificate reloaded")
    }

    /// The key authorization for an HTTP-01 `token`, while its challenge is pending.
    pub fn challenge(&self, token: &[u8]) -> Option<String> {
        let list = self.challenges.lock().ok()?;
        list.iter().find(|(t, _)| t.as_bytes() == token).map(|(_, k)| k.clone())
    }
}
