//! One certificate order against an ACME server (RFC 8555 §7): directory, nonce, account,
//! order, HTTP-01 challenges (answered by the HTTP_PORT listener from `Tls::challenges`),
//! finalize with our CSR, download the chain. Blocking; runs on the renewal thread only, over
//! the outbound client (`crate::outbound`).

use super::keys;
use crate::crypto::json::{self, Reader};
use crate::outbound::{self, Response};
use crate::tls::Tls;
use p256::ecdsa::SigningKey;
use std::sync::Arc;
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BODY: usize = 1 << 20;
/// How long to wait for the server to validate challenges or issue (polls a second apart).
const POLLS: usize = 90;

pub struct Client {
    tls: Option<Arc<rustls::ClientConfig>>,
    key: SigningKey,
    kid: Option<String>,
    nonce: Option<String>,
    new_nonce: String,
    new_account: String,
    new_order: String,
}

impl Client {
    /// Reads the directory at `url`. `roots` adds trust anchors (ACME_CA_FILE) to the public ones.
    pub fn new(url: &str, ca_file: Option<&std::path::Path>, key: SigningKey) -> Result<Client, String> {
        let tls = match ca_file {
            None => None,
            Some(path) => Some(client_config(path)?),
        };
        let mut c = Client { tls, key, kid: None, nonce: None, new_nonce: String::new(), new_account: String::new(), new_order: String::new() };
        let dir = c.exchange("GET", url, &[], b"")?;
        if dir.status != 200 {
            return Err(format!("directory {url}: status {}", dir.status));
        }
        let field = |k: &str| member(&dir.body, k).and_then(string).ok_or_else(|| format!("directory {url} has no {k}"));
        c.new_nonce = field("newNonce")?;
        c.new_account = field("newAccount")?;
        c.new_order = field("newOrder")?;
        Ok(c)
    }

    fn exchange(&mut self, method: &str, url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Response, String> {
        let req = outbound::Request { method, url, headers, body, timeout: TIMEOUT, max_body: MAX_BODY };
        let r = outbound::send_via(&req, None, self.tls.clone()).map_err(|e| format!("{url}: {e}"))?;
        if let Some(n) = r.header("replay-nonce") {
            self.nonce = Some(n.to_string());
        }
        Ok(r)
    }

    /// POSTs a JWS of `payload` (empty: POST-as-GET) to `url`, once more on `badNonce`.
    fn post(&mut self, url: &str, payload: &[u8]) -> Result<Response, String> {
        for attempt in 0..2 {
            let nonce = match self.nonce.take() {
                Some(n) => n,
                None => {
                    let nn = self.new_nonce.clone();
                    self.exchange("HEAD", &nn, &[], b"")?;
                    self.nonce.take().ok_or("newNonce gave no Replay-Nonce")?
                }
            };
            let body = keys::jws(&self.key, url, &nonce, self.kid.as_deref(), payload);
            let r = self.exchange("POST", url, &[("Content-Type", "application/jose+json")], &body)?;
            if r.status >= 400 {
                let kind = member(&r.body, "type").and_then(string).unwrap_or_default();
                if attempt == 0 && kind.ends_with(":badNonce") {
                    continue;
                }
                return Err(format!("{url}: status {} {}", r.status, String::from_utf8_lossy(&r.body[..r.body.len().min(300)])));
            }
            return Ok(r);
        }
        Err(format!("{url}: bad nonce twice"))
    }

    /// Finds or creates the account for our key (RFC 8555 §7.3).
    pub fn account(&mut self) -> Result<(), String> {
        let url = self.new_account.clone();
        let r = self.post(&url, br#"{"termsOfServiceAgreed":true}"#)?;
        self.kid = Some(r.header("location").ok_or("newAccount gave no Location")?.to_string());
        Ok(())
    }

    /// Orders a certificate for `names` with `cert_key`, answering HTTP-01 through `tls`, and
    /// returns the PEM chain.
    pub fn order(&mut self, tls: &Tls, names: &[String], cert_key: &SigningKey) -> Result<String, String> {
        let ids: Vec<String> = names.iter().map(|n| format!(r#"{{"type":"dns","value":{}}}"#, keys::json_str(n))).collect();
        let url = self.new_order.clone();
        let r = self.post(&url, format!(r#"{{"identifiers":[{}]}}"#, ids.join(",")).as_bytes())?;
        let order_url = r.header("location").ok_or("newOrder gave no Location")?.to_string();
        let authorizations: Vec<String> = member(&r.body, "authorizations").map(items).unwrap_or_default().into_iter().filter_map(string).collect();
        let finalize = member(&r.body, "finalize").and_then(string).ok_or("order has no finalize URL")?;
        for authz in &authorizations {
            self.authorize(tls, authz)?;
        }
        let csr = keys::b64(&keys::csr(cert_key, names));
        self.post(&finalize, format!(r#"{{"csr":"{csr}"}}"#).as_bytes())?;
        let mut certificate = None;
        for _ in 0..POLLS {
            let r = self.post(&order_url, b"")?;
            match member(&r.body, "status").and_then(string).as_deref() {
                Some("valid") => {
                    certificate = member(&r.body, "certificate").and_then(string);
                    break;
                }
                Some("invalid") => return Err(format!("order {order_url} became invalid")),
                _ => std::thread::sleep(Duration::from_secs(1)),
            }
        }
        let url = certificate.ok_or("the order was not issued in time")?;
        let r = self.post(&url, b"")?;
        String::from_utf8(r.body).map_err(|_| "the certificate is not PEM text".to_string())
    }

    /// Completes one authorization with its HTTP-01 challenge.
    fn authorize(&mut self, tls: &Tls, url: &str) -> Result<(), String> {
        let r = self.post(url, b"")?;
        if member(&r.body, "status").and_then(string).as_deref() == Some("valid") {
            return Ok(());
        }
        let challenge = member(&r.body, "challenges")
            .map(items)
            .unwrap_or_default()
            .into_iter()
            .find(|c| member(c, "type").and_then(string).as_deref() == Some("http-01"))
            .ok_or_else(|| format!("{url} offers no http-01 challenge"))?;
        let token = member(challenge, "token").and_then(string).ok_or("challenge without token")?;
        let challenge_url = member(challenge, "url").and_then(string).ok_or("challenge without url")?;
        let answer = format!("{token}.{}", keys::thumbprint(&self.key));
        if let Ok(mut list) = tls.challenges.lock() {
            list.push((token.clone(), answer));
        }
        let result = self.validate(url, &challenge_url);
        if let Ok(mut list) = tls.challenges.lock() {
            list.retain(|(t, _)| *t != token);
        }
        result
    }

    fn validate(&mut self, authz: &str, challenge: &str) -> Result<(), String> {
        self.post(challenge, b"{}")?;
        for _ in 0..POLLS {
            let r = self.post(authz, b"")?;
            match member(&r.body, "status").and_then(string).as_deref() {
                Some("valid") => return Ok(()),
                Some("pending") | Some("processing") => std::thread::sleep(Duration::from_secs(1)),
                other => {
                    // The server's reason is in the failed challenge's `error.detail`.
                    let why = member(&r.body, "challenges")
                        .map(items)
                        .unwrap_or_default()
                        .into_iter()
                        .find_map(|c| member(c, "error").and_then(|e| member(e, "detail")).and_then(string))
                        .unwrap_or_default();
                    return Err(format!("authorization {authz} is {}: {why}", other.unwrap_or("unknown")));
                }
            }
        }
        Err(format!("authorization {authz} not validated in time"))
    }
}

/// The public roots plus the PEM certificates in `path`.
fn client_config(path: &std::path::Path) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    let pem = std::fs::read(path).map_err(|e| format!("ACME_CA_FILE {}: {e}", path.display()))?;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(&pem) {
        let c = c.map_err(|e| format!("ACME_CA_FILE {}: {e}", path.display()))?;
        roots.add(c).map_err(|e| format!("ACME_CA_FILE {}: {e}", path.display()))?;
    }
    outbound::tls::with_roots(roots)
}

/// The raw value of member `key` of the JSON object `obj`.
fn member<'a>(obj: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let mut r = Reader::new(obj);
    r.begin_object().ok()?;
    while let Some(k) = r.next_key().ok()? {
        let v = r.value().ok()?;
        if k == key.as_bytes() {
            return Some(v);
        }
    }
    None
}

/// A JSON string value, unescaped.
fn string(raw: &[u8]) -> Option<String> {
    let inner = Reader::new(raw).string().ok()?;
    let mut out = Vec::new();
    json::unescape(inner, &mut out).ok()?;
    String::from_utf8(out).ok()
}

/// The raw elements of a JSON array.
fn items(raw: &[u8]) -> Vec<&[u8]> {
    let mut r = Reader::new(raw);
    let mut out = Vec::new();
    if r.begin_array().is_err() {
        return out;
    }
    while let Ok(true) = r.next_item() {
        match r.value() {
            Ok(v) => out.push(v),
            Err(_) => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_helpers() {
        let order = br#"{"status":"pending","authorizations":["https://a/1","https://a/2"],"finalize":"https://a\/f","x":{"y":[1,2]}}"#;
        assert_eq!(member(order, "status").and_then(string).as_deref(), Some("pending"));
        assert_eq!(member(order, "finalize").and_then(string).as_deref(), Some("https://a/f"));
        let auths: Vec<String> = member(order, "authorizations").map(items).unwrap().into_iter().filter_map(string).collect();
        assert_eq!(auths, ["https://a/1", "https://a/2"]);
        assert!(member(order, "missing").is_none());
        assert!(member(b"[1]", "status").is_none());
        assert!(items(b"{}").is_empty());
    }
}
