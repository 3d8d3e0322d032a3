//! Certificates as rustls serves them: PEM chain and key to a `CertifiedKey`, and what we read
//! from the leaf ourselves (its validity and DNS names) to refuse a certificate that cannot
//! work before any client sees it, and to know when to renew.

use super::der::{self, Reader};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use std::path::Path;
use std::sync::Arc;

/// A chain and key ready to serve, with the leaf's facts.
#[derive(Debug)]
pub struct Loaded {
    pub key: Arc<CertifiedKey>,
    pub not_before: i64,
    pub not_after: i64,
    /// The leaf's DNS names (subjectAltName), lower case.
    pub names: Vec<String>,
}

/// Reads a PEM chain (leaf first) and a PEM private key (PKCS#8, SEC1 or PKCS#1).
pub fn load_files(cert: &Path, key: &Path) -> Result<Loaded, String> {
    let chain_pem = std::fs::read(cert).map_err(|e| format!("cannot read {}: {e}", cert.display()))?;
    let key_pem = std::fs::read(key).map_err(|e| format!("cannot read {}: {e}", key.display()))?;
    from_pem(&chain_pem, &key_pem).map_err(|e| format!("{} / {}: {e}", cert.display(), key.display()))
}

pub fn from_pem(chain_pem: &[u8], key_pem: &[u8]) -> Result<Loaded, String> {
    let mut chain = Vec::new();
    for c in CertificateDer::pem_slice_iter(chain_pem) {
        chain.push(c.map_err(|e| format!("certificate PEM: {e}"))?);
    }
    if chain.is_empty() {
        return Err("no certificate in the PEM file".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| format!("private key PEM: {e}"))?;
    let (not_before, not_after, names) = leaf_facts(&chain[0]).ok_or("the certificate is not DER X.509 we can read")?;
    let provider = rustls::crypto::ring::default_provider();
    let key = CertifiedKey::from_der(chain, key, &provider).map_err(|e| format!("certificate and key: {e}"))?;
    Ok(Loaded { key: Arc::new(key), not_before, not_after, names })
}

impl Loaded {
    /// Refuses a certificate that is expired, not yet valid, or does not cover every one of
    /// `domains` (a `*.` name covers one label).
    pub fn check(&self, domains: &[String], now_s: i64) -> Result<(), String> {
        if now_s >= self.not_after {
            return Err(format!("the certificate expired at {}", iso(self.not_after)));
        }
        if now_s < self.not_before {
            return Err(format!("the certificate is not valid before {}", iso(self.not_before)));
        }
        for d in domains {
            if !self.names.iter().any(|n| covers(n, d)) {
                return Err(format!("the certificate is for {:?}, not {d}", self.names));
            }
        }
        Ok(())
    }
}

fn iso(t: i64) -> String {
    let mut out = Vec::new();
    crate::crypto::time::write_iso8601(t * 1000, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Whether certificate name `pattern` matches host `host` (RFC 6125: a wildcard only as the
/// whole leftmost label).
fn covers(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(rest) => host.split_once('.').is_some_and(|(first, tail)| !first.is_empty() && tail == rest),
        None => pattern == host,
    }
}

/// notBefore, notAfter and the subjectAltName DNS names of a DER certificate.
pub fn leaf_facts(cert: &[u8]) -> Option<(i64, i64, Vec<String>)> {
    let mut outer = Reader::new(Reader::new(cert).expect(der::SEQUENCE)?);
    let mut tbs = Reader::new(outer.expect(der::SEQUENCE)?);
    tbs.optional(0xa0); // version
    tbs.expect(der::INTEGER)?; // serial
    tbs.expect(der::SEQUENCE)?; // signature algorithm
    tbs.expect(der::SEQUENCE)?; // issuer
    let mut validity = Reader::new(tbs.expect(der::SEQUENCE)?);
    let (t1, b1) = validity.any()?;
    let (t2, b2) = validity.any()?;
    let (not_before, not_after) = (der::time(t1, b1)?, der::time(t2, b2)?);
    tbs.expect(der::SEQUENCE)?; // subject
    tbs.expect(der::SEQUENCE)?; // subjectPublicKeyInfo
    tbs.optional(0x81);
    tbs.optional(0x82);
    let mut names = Vec::new();
    if let Some(ext) = tbs.optional(0xa3) {
        let mut list = Reader::new(Reader::new(ext).expect(der::SEQUENCE)?);
        while !list.is_empty() {
            let mut e = Reader::new(list.expect(der::SEQUENCE)?);
            let oid = e.expect(der::OID)?;
            e.optional(0x01); // critical
            let value = e.expect(der::OCTET_STRING)?;
            if oid != SAN_OID {
                continue;
            }
            let mut general = Reader::new(Reader::new(value).expect(der::SEQUENCE)?);
            while !general.is_empty() {
                if let (0x82, dns) = general.any()? {
                    names.push(String::from_utf8_lossy(dns).to_ascii_lowercase());
                }
            }
        }
    }
    Some((not_before, not_after, names))
}

/// 2.5.29.17, subjectAltName.
pub const SAN_OID: &[u8] = &[0x55, 0x1d, 0x11];

#[cfg(test)]
mod tests {
    use super::*;

    fn make(names: &[&str], days: (i64, i64)) -> (String, String) {
        let mut p = rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        let now = crate::crypto::time::now_ms() / 1000;
        let (y, m, d) = ymd(now + days.0 * 86400);
        p.not_before = rcgen::date_time_ymd(y, m, d);
        let (y, m, d) = ymd(now + days.1 * 86400);
        p.not_after = rcgen::date_time_ymd(y, m, d);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = p.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    fn ymd(t: i64) -> (i32, u8, u8) {
        let mut out = Vec::new();
        crate::crypto::time::write_iso8601(t * 1000, &mut out);
        let s = String::from_utf8(out).unwrap();
        let n = |a: usize, b: usize| s[a..b].parse::<i32>().unwrap();
        (n(0, 4), n(5, 7) as u8, n(8, 10) as u8)
    }

    #[test]
    fn reads_names_and_validity() {
        let (c, k) = make(&["chat.example.com", "*.example.org"], (-1, 30));
        let l = from_pem(c.as_bytes(), k.as_bytes()).unwrap();
        assert_eq!(l.names, ["chat.example.com", "*.example.org"]);
        let now = crate::crypto::time::now_ms() / 1000;
        assert!(l.not_after > now + 28 * 86400 && l.not_after < now + 31 * 86400);
        assert!(l.check(&["chat.example.com".into(), "a.example.org".into()], now).is_ok());
        assert!(l.check(&["example.org".into()], now).unwrap_err().contains("not example.org"));
        assert!(l.check(&["a.b.example.org".into()], now).is_err());
        assert!(l.check(&[], l.not_after).unwrap_err().contains("expired"));
    }

    #[test]
    fn refuses_mismatched_key_and_garbage() {
        let (c, _) = make(&["a.example"], (-1, 30));
        let (_, other) = make(&["a.example"], (-1, 30));
        assert!(from_pem(c.as_bytes(), other.as_bytes()).unwrap_err().contains("key"));
        assert!(from_pem(b"nothing", other.as_bytes()).is_err());
        assert!(leaf_facts(b"\x30\x03\x30\x01\x00").is_none());
    }

    #[test]
    fn truncated_or_flipped_certificates_never_panic() {
        use rustls::pki_types::pem::PemObject;
        let (c, _) = make(&["a.example"], (-1, 30));
        let der = CertificateDer::from_pem_slice(c.as_bytes()).unwrap().to_vec();
        assert!(leaf_facts(&der).is_some());
        for n in 0..der.len() {
            assert!(leaf_facts(&der[..n]).is_none());
            let mut flipped = der.clone();
            flipped[n] ^= 0xff;
            let _ = leaf_facts(&flipped);
        }
    }
}
