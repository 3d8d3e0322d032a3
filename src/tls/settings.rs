//! The HTTPS settings (issue 14 §2), read from the environment with the rest of `Config`:
//!
//! | variable | default | meaning |
//! | --- | --- | --- |
//! | SSL_DOMAIN | unset | names to serve HTTPS for (comma-separated); a certificate is obtained over ACME unless one is given |
//! | TLS_CERTIFICATE_PATH, TLS_PRIVATE_KEY_PATH | unset | a PEM chain and key to serve instead of ACME (re-read on SIGHUP) |
//! | HTTPS_PORT, HTTP_PORT | 443, 80 | the TLS listener; the plain one answers ACME challenges and redirects |
//! | ACME_DIRECTORY | Let's Encrypt production | the ACME (RFC 8555) directory URL |
//! | ACME_CA_FILE | unset | an extra PEM root trusted for the ACME server only |
//!
//! HTTPS is on when SSL_DOMAIN or TLS_CERTIFICATE_PATH is set; `PORT` then means nothing.

use std::path::PathBuf;

pub const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The operator's certificate chain and key.
    Files { cert: PathBuf, key: PathBuf },
    /// Obtained and renewed over ACME for `Settings::domains`.
    Acme { directory: String, ca_file: Option<PathBuf> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Lower-case names; empty only with `Source::Files` (then no name is checked).
    pub domains: Vec<String>,
    pub https_port: u16,
    pub http_port: u16,
    pub source: Source,
}

/// `Ok(None)` when HTTPS is off. Errors name the variable and say what is wrong, including
/// settings that only make sense together.
pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Settings>, String> {
    let set = |k: &str| get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let domains = match set("SSL_DOMAIN") {
        None => Vec::new(),
        Some(list) => {
            let mut names = Vec::new();
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !valid_name(name) {
                    return Err(format!("SSL_DOMAIN: {name:?} is not a DNS name"));
                }
                names.push(name.to_ascii_lowercase());
            }
            if names.is_empty() {
                return Err("SSL_DOMAIN names no domain".into());
            }
            names
        }
    };
    let cert = set("TLS_CERTIFICATE_PATH");
    let key = set("TLS_PRIVATE_KEY_PATH");
    let directory = set("ACME_DIRECTORY");
    let ca_file = set("ACME_CA_FILE");
    let source = match (cert, key) {
        (Some(cert), Some(key)) => {
            if directory.is_some() || ca_file.is_some() {
                return Err("ACME_DIRECTORY/ACME_CA_FILE make no sense with TLS_CERTIFICATE_PATH (no ACME then)".into());
            }
            Source::Files { cert: cert.into(), key: key.into() }
        }
        (Some(_), None) => return Err("TLS_CERTIFICATE_PATH is set without TLS_PRIVATE_KEY_PATH".into()),
        (None, Some(_)) => return Err("TLS_PRIVATE_KEY_PATH is set without TLS_CERTIFICATE_PATH".into()),
        (None, None) if domains.is_empty() => {
            for k in ["ACME_DIRECTORY", "ACME_CA_FILE", "HTTPS_PORT", "HTTP_PORT"] {
                if set(k).is_some() {
                    return Err(format!("{k} is set but HTTPS is off (set SSL_DOMAIN or TLS_CERTIFICATE_PATH)"));
                }
            }
            return Ok(None);
        }
        (None, None) => {
            let directory = directory.unwrap_or_else(|| LETS_ENCRYPT.into());
            if !directory.starts_with("https://") {
                return Err(format!("ACME_DIRECTORY={directory:?} is not an https:// URL"));
            }
            if domains.iter().any(|d| d.starts_with("*.")) {
                return Err("SSL_DOMAIN: wildcard names need DNS-01, which is not supported".into());
            }
            Source::Acme { directory, ca_file: ca_file.map(PathBuf::from) }
        }
    };
    let https_port = port(&set, "HTTPS_PORT", 443)?;
    let http_port = port(&set, "HTTP_PORT", 80)?;
    if https_port == http_port && https_port != 0 {
        return Err(format!("HTTPS_PORT and HTTP_PORT are both {https_port}"));
    }
    Ok(Some(Settings { domains, https_port, http_port, source }))
}

fn port(set: &impl Fn(&str) -> Option<String>, key: &str, default: u16) -> Result<u16, String> {
    match set(key) {
        None => Ok(default),
        Some(v) => v.parse::<u16>().map_err(|_| format!("{key}={v:?} is not a port between 0 and 65535")),
    }
}

/// A host name as certificates carry them: dot-separated LDH labels, an optional leading `*.`.
fn valid_name(name: &str) -> bool {
    let bare = name.strip_prefix("*.").unwrap_or(name);
    !bare.is_empty()
        && bare.len() <= 253
        && bare.split('.').all(|l| {
            !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && !l.ends_with('-') && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(pairs: &[(&str, &str)]) -> Result<Option<Settings>, String> {
        let m: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        from_lookup(&|k: &str| m.get(k).cloned())
    }

    #[test]
    fn off_by_default_and_acme_with_a_domain() {
        assert_eq!(parse(&[]).unwrap(), None);
        let s = parse(&[("SSL_DOMAIN", "Chat.Example.com, b.example.com")]).unwrap().unwrap();
        assert_eq!(s.domains, ["chat.example.com", "b.example.com"]);
        assert_eq!((s.https_port, s.http_port), (443, 80));
        assert_eq!(s.source, Source::Acme { directory: LETS_ENCRYPT.into(), ca_file: None });
    }

    #[test]
    fn own_certificate_with_ports() {
        let s = parse(&[("TLS_CERTIFICATE_PATH", "/c.pem"), ("TLS_PRIVATE_KEY_PATH", "/k.pem"), ("HTTPS_PORT", "8443"), ("HTTP_PORT", "8080")])
            .unwrap()
            .unwrap();
        assert_eq!((s.https_port, s.http_port), (8443, 8080));
        assert!(s.domains.is_empty());
        assert_eq!(s.source, Source::Files { cert: "/c.pem".into(), key: "/k.pem".into() });
    }

    #[test]
    fn bad_combinations_are_errors() {
        for (bad, names) in [
            (&[("TLS_CERTIFICATE_PATH", "/c.pem")][..], "TLS_PRIVATE_KEY_PATH"),
            (&[("TLS_PRIVATE_KEY_PATH", "/k.pem")][..], "TLS_CERTIFICATE_PATH"),
            (&[("ACME_DIRECTORY", "https://x/dir")][..], "ACME_DIRECTORY"),
            (&[("HTTPS_PORT", "8443")][..], "HTTPS_PORT"),
            (&[("SSL_DOMAIN", "a b")][..], "SSL_DOMAIN"),
            (&[("SSL_DOMAIN", ",")][..], "SSL_DOMAIN"),
            (&[("SSL_DOMAIN", "*.example.com")][..], "SSL_DOMAIN"),
            (&[("SSL_DOMAIN", "a.example"), ("ACME_DIRECTORY", "http://x/dir")][..], "ACME_DIRECTORY"),
            (&[("SSL_DOMAIN", "a.example"), ("HTTP_PORT", "443")][..], "HTTP_PORT"),
            (&[("SSL_DOMAIN", "a.example"), ("HTTPS_PORT", "99999")][..], "HTTPS_PORT"),
            (&[("TLS_CERTIFICATE_PATH", "/c"), ("TLS_PRIVATE_KEY_PATH", "/k"), ("ACME_CA_FILE", "/ca")][..], "ACME_CA_FILE"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(names), "{bad:?}: {e}");
        }
    }
}
