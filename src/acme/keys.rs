//! P-256 keys for ACME: the account key that signs every request (JWS ES256, RFC 7515/7518)
//! and the certificate's key, stored as PKCS#8 PEM (mode 0600), and the CSR (PKCS#10,
//! RFC 2986) built in DER by hand for the names being ordered.

use crate::crypto::base64::{self, Alphabet};
use crate::tls::der::{self, Reader};
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use sha2::{Digest, Sha256};
use std::path::Path;

/// 1.2.840.10045.2.1 id-ecPublicKey and 1.2.840.10045.3.1.7 prime256v1, as an AlgorithmIdentifier.
const EC_P256_ALG: &[u8] = &[
    0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
];
/// 1.2.840.10045.4.3.2 ecdsa-with-SHA256.
const ECDSA_SHA256_ALG: &[u8] = &[0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02];
/// 1.2.840.113549.1.9.14 extensionRequest.
const EXTENSION_REQUEST: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x0e];
/// 2.5.4.3 commonName.
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];

pub fn b64(data: &[u8]) -> String {
    let mut out = Vec::new();
    base64::encode(Alphabet::UrlSafe, false, data, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// A new random key.
pub fn generate() -> SigningKey {
    loop {
        let scalar: [u8; 32] = crate::sys::random::bytes();
        // A random 32-byte string is a valid scalar except with probability ~2^-32.
        if let Ok(k) = SigningKey::from_slice(&scalar) {
            return k;
        }
    }
}

/// The uncompressed public point (0x04 ‖ x ‖ y).
fn point(key: &SigningKey) -> Vec<u8> {
    key.verifying_key().to_sec1_point(false).as_bytes().to_vec()
}

/// PKCS#8 PrivateKeyInfo wrapping an RFC 5915 ECPrivateKey (with its public key, which ring
/// wants).
pub fn pkcs8(key: &SigningKey) -> Vec<u8> {
    let mut ec = der::unsigned_integer(&[1]);
    der::put(&mut ec, der::OCTET_STRING, &key.to_bytes());
    let mut bits = vec![0];
    bits.extend_from_slice(&point(key));
    der::put(&mut ec, 0xa1, &der::wrap(der::BIT_STRING, &bits));
    let mut info = der::unsigned_integer(&[0]);
    info.extend_from_slice(EC_P256_ALG);
    der::put(&mut info, der::OCTET_STRING, &der::wrap(der::SEQUENCE, &ec));
    der::wrap(der::SEQUENCE, &info)
}

/// The key in a PKCS#8 document as `pkcs8` writes it.
pub fn from_pkcs8(doc: &[u8]) -> Option<SigningKey> {
    let mut info = Reader::new(Reader::new(doc).expect(der::SEQUENCE)?);
    info.expect(der::INTEGER)?;
    if info.expect(der::SEQUENCE)? != &EC_P256_ALG[2..] {
        return None;
    }
    let mut ec = Reader::new(Reader::new(info.expect(der::OCTET_STRING)?).expect(der::SEQUENCE)?);
    ec.expect(der::INTEGER)?;
    SigningKey::from_slice(ec.expect(der::OCTET_STRING)?).ok()
}

pub fn pem(label: &str, der_bytes: &[u8]) -> String {
    let mut b = Vec::new();
    base64::encode(Alphabet::Standard, true, der_bytes, &mut b);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b.chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Reads a key stored by `store_key`, or makes and stores a new one.
pub fn load_or_create(path: &Path) -> Result<SigningKey, String> {
    use rustls::pki_types::pem::PemObject;
    match std::fs::read(path) {
        Ok(pem_bytes) => {
            let doc = rustls::pki_types::PrivatePkcs8KeyDer::from_pem_slice(&pem_bytes).map_err(|e| format!("{}: {e}", path.display()))?;
            from_pkcs8(doc.secret_pkcs8_der()).ok_or_else(|| format!("{} is not a P-256 key", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = generate();
            write_private(path, pem("PRIVATE KEY", &pkcs8(&key)).as_bytes())?;
            Ok(key)
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Writes `data` to `path` with mode 0600, through a temporary file renamed into place so a
/// reader never sees half a file.
pub fn write_private(path: &Path, data: &[u8]) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    f.write_all(data).and_then(|_| f.sync_all()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))
}

/// The account key as a JWK, members in the lexicographic order RFC 7638 hashes them in.
pub fn jwk(key: &SigningKey) -> String {
    let p = point(key);
    format!(r#"{{"crv":"P-256","kty":"EC","x":"{}","y":"{}"}}"#, b64(&p[1..33]), b64(&p[33..65]))
}

/// The RFC 7638 thumbprint that HTTP-01 key authorizations end with.
pub fn thumbprint(key: &SigningKey) -> String {
    b64(&Sha256::digest(jwk(key).as_bytes()))
}

/// A flattened JWS (RFC 8555 §6.2): `kid` once the account exists, else the `jwk` itself.
pub fn jws(key: &SigningKey, url: &str, nonce: &str, kid: Option<&str>, payload: &[u8]) -> Vec<u8> {
    let who = match kid {
        Some(k) => format!(r#""kid":{}"#, json_str(k)),
        None => format!(r#""jwk":{}"#, jwk(key)),
    };
    let protected = format!(r#"{{"alg":"ES256",{who},"nonce":{},"url":{}}}"#, json_str(nonce), json_str(url));
    let signing_input = format!("{}.{}", b64(protected.as_bytes()), b64(payload));
    let sig: Signature = key.sign(signing_input.as_bytes());
    let (p, rest) = signing_input.split_once('.').unwrap_or_default();
    format!(r#"{{"protected":"{p}","payload":"{rest}","signature":"{}"}}"#, b64(&sig.to_bytes())).into_bytes()
}

pub fn json_str(s: &str) -> String {
    let mut out = Vec::new();
    crate::crypto::json::write_string(s.as_bytes(), &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// A PKCS#10 request for `names` (the first also as the subject's CN) signed by `key`.
pub fn csr(key: &SigningKey, names: &[String]) -> Vec<u8> {
    let mut subject = Vec::new();
    if let Some(first) = names.first().filter(|n| n.len() <= 64) {
        let mut atv = der::wrap(der::OID, COMMON_NAME);
        der::put(&mut atv, der::UTF8_STRING, first.as_bytes());
        subject = der::wrap(der::SET, &der::wrap(der::SEQUENCE, &atv));
    }
    let mut spki = EC_P256_ALG.to_vec();
    let mut bits = vec![0];
    bits.extend_from_slice(&point(key));
    der::put(&mut spki, der::BIT_STRING, &bits);
    let mut general_names = Vec::new();
    for n in names {
        der::put(&mut general_names, 0x82, n.as_bytes());
    }
    let mut san = der::wrap(der::OID, crate::tls::certs::SAN_OID);
    der::put(&mut san, der::OCTET_STRING, &der::wrap(der::SEQUENCE, &general_names));
    let extensions = der::wrap(der::SEQUENCE, &der::wrap(der::SEQUENCE, &san));
    let mut attribute = der::wrap(der::OID, EXTENSION_REQUEST);
    der::put(&mut attribute, der::SET, &extensions);
    let mut info = der::unsigned_integer(&[0]);
    der::put(&mut info, der::SEQUENCE, &subject);
    der::put(&mut info, der::SEQUENCE, &spki);
    der::put(&mut info, 0xa0, &der::wrap(der::SEQUENCE, &attribute));
    let info = der::wrap(der::SEQUENCE, &info);
    let sig: Signature = key.sign(&info);
    let (r, s) = sig.split_bytes();
    let mut rs = der::unsigned_integer(&r);
    rs.extend_from_slice(&der::unsigned_integer(&s));
    let mut sig_bits = vec![0];
    sig_bits.extend_from_slice(&der::wrap(der::SEQUENCE, &rs));
    let mut req = info;
    req.extend_from_slice(ECDSA_SHA256_ALG);
    der::put(&mut req, der::BIT_STRING, &sig_bits);
    der::wrap(der::SEQUENCE, &req)
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;

    #[test]
    fn pkcs8_round_trips_and_rustls_takes_it() {
        let k = generate();
        let doc = pkcs8(&k);
        assert_eq!(from_pkcs8(&doc).unwrap().to_bytes(), k.to_bytes());
        let der = rustls::pki_types::PrivateKeyDer::Pkcs8(doc.into());
        assert!(rustls::crypto::ring::default_provider().key_provider.load_private_key(der).is_ok());
    }

    #[test]
    fn jws_signature_verifies() {
        let k = generate();
        let body = String::from_utf8(jws(&k, "https://ca/new", "n0nce", None, b"{}")).unwrap();
        let field = |name: &str| body.split(&format!(r#""{name}":""#)).nth(1).unwrap().split('"').next().unwrap().to_string();
        let input = format!("{}.{}", field("protected"), field("payload"));
        let mut sig = Vec::new();
        base64::decode(Alphabet::UrlSafe, field("signature").as_bytes(), &mut sig).unwrap();
        let sig = Signature::from_slice(&sig).unwrap();
        assert!(k.verifying_key().verify(input.as_bytes(), &sig).is_ok());
        let mut protected = Vec::new();
        base64::decode(Alphabet::UrlSafe, field("protected").as_bytes(), &mut protected).unwrap();
        let protected = String::from_utf8(protected).unwrap();
        assert!(protected.contains(r#""jwk":{"crv":"P-256","kty":"EC""#) && protected.contains(r#""url":"https://ca/new""#), "{protected}");
        assert_eq!(thumbprint(&k).len(), 43);
    }

    #[test]
    fn csr_parses_as_der_with_the_names() {
        let k = generate();
        let names = vec!["chat.example.com".to_string(), "b.example.com".to_string()];
        let req = csr(&k, &names);
        let mut outer = Reader::new(Reader::new(&req).expect(der::SEQUENCE).unwrap());
        let info = outer.any().unwrap();
        assert_eq!(info.0, der::SEQUENCE);
        assert_eq!(outer.expect(der::SEQUENCE).unwrap(), &ECDSA_SHA256_ALG[2..]);
        let bits = outer.expect(der::BIT_STRING).unwrap();
        assert!(outer.is_empty());
        let text = String::from_utf8_lossy(info.1);
        assert!(text.contains("chat.example.com") && text.contains("b.example.com"));
        // The signature is over the DER of the info, as PKCS#10 says.
        let info_der = der::wrap(der::SEQUENCE, info.1);
        let mut rs = Reader::new(Reader::new(&bits[1..]).expect(der::SEQUENCE).unwrap());
        let mut raw = [0u8; 64];
        for half in raw.chunks_mut(32) {
            let int = rs.expect(der::INTEGER).unwrap();
            let int = &int[int.len().saturating_sub(32)..];
            half[32 - int.len()..].copy_from_slice(int);
        }
        let sig = Signature::from_slice(&raw).unwrap();
        assert!(k.verifying_key().verify(&info_der, &sig).is_ok());
    }
}
