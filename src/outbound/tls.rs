//! TLS for `https://` through rustls (ring provider, webpki-roots trust anchors; see
//! docs/dependencies.md). The client configuration, with its ~150 root certificates, is built
//! on the first https request and then shared, so a server that never calls out holds none of it.
//!
//! The handshake is finished before the request is written, so a bad certificate reads as
//! `Error::Tls` and a silent server as `Error::Timeout`, never as a protocol error.

use super::http1::io_error;
use super::Error;
use crate::sys::client::Socket;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use std::sync::{Arc, OnceLock};

/// A TLS stream over our socket.
pub type Stream = StreamOwned<ClientConnection, Socket>;

static CONFIG: OnceLock<Result<Arc<ClientConfig>, String>> = OnceLock::new();

/// The process-wide client configuration (public web PKI), built once.
pub fn config() -> Result<Arc<ClientConfig>, Error> {
    CONFIG
        .get_or_init(|| {
            let mut roots = RootCertStore::empty();
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            with_roots(roots)
        })
        .clone()
        .map_err(Error::Tls)
}

/// A client configuration trusting exactly `roots` (TLS 1.2 and 1.3, ring's safe defaults).
pub fn with_roots(roots: RootCertStore) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider).with_safe_default_protocol_versions().map_err(|e| e.to_string())?;
    Ok(Arc::new(builder.with_root_certificates(roots).with_no_client_auth()))
}

/// Runs the handshake with `host` (SNI and certificate name; an IP literal is checked against
/// the certificate's IP addresses) over `sock`.
pub fn connect(mut sock: Socket, host: &str, config: Arc<ClientConfig>) -> Result<Stream, Error> {
    let name = ServerName::try_from(host.to_owned()).map_err(|e| Error::Tls(format!("{host}: {e}")))?;
    let mut conn = ClientConnection::new(config, name).map_err(|e| Error::Tls(e.to_string()))?;
    while conn.is_handshaking() {
        match conn.complete_io(&mut sock) {
            Ok(_) => {}
            Err(e) => {
                return Err(match io_error(e) {
                    Error::Protocol(m) => Error::Tls(m),
                    other => other,
                })
            }
        }
    }
    Ok(StreamOwned::new(conn, sock))
}
