//! Absolute `http`/`https` URLs as the outbound client needs them: scheme, host (name or IP
//! literal), port, and the request-target. Nothing is resolved here.
//!
//! Anything that cannot be sent safely is refused rather than guessed at: other schemes, an
//! empty or non-ASCII host, a bad port. Bytes a request line must not carry (controls,
//! spaces, non-ASCII) are percent-encoded in the target, so no URL can inject a header.

use std::net::IpAddr;

/// A parsed absolute URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// Lowercased host name without brackets or trailing dot, or an IP literal's text.
    pub host: String,
    /// The host when it is an IP literal (`[::1]`, `127.0.0.1`).
    pub ip: Option<IpAddr>,
    pub port: u16,
    /// Path and query, starting with `/`, fragment dropped.
    pub target: String,
}

impl Url {
    /// The `Host` header value: the host, bracketed when IPv6, with the port unless default.
    pub fn host_header(&self) -> String {
        let host = match self.ip {
            Some(IpAddr::V6(_)) => format!("[{}]", self.host),
            _ => self.host.clone(),
        };
        if self.port == if self.https { 443 } else { 80 } {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// Parses `s` (surrounding whitespace ignored); the error says why it is not a usable URL.
pub fn parse(s: &str) -> Result<Url, String> {
    let s = s.trim();
    let (scheme, rest) = s.split_once("://").ok_or("not an absolute URL")?;
    let https = match scheme.to_ascii_lowercase().as_str() {
        "http" => false,
        "https" => true,
        _ => return Err(format!("unsupported scheme {scheme:?}")),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    // Userinfo is never sent (we have no use for credentials in URLs).
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = split_port(hostport)?;
    let port = match port {
        None => if https { 443 } else { 80 },
        Some(p) => p.parse::<u16>().ok().filter(|&p| p != 0).ok_or("bad port")?,
    };
    let (host, ip) = if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']').ok_or("unclosed IPv6 literal")?;
        let ip: std::net::Ipv6Addr = inner.parse().map_err(|_| "bad IPv6 literal")?;
        (ip.to_string(), Some(IpAddr::V6(ip)))
    } else {
        let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
        if host.is_empty() || !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_') {
            return Err("bad host".into());
        }
        let ip = host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4);
        (host, ip)
    };
    let tail = tail.split('#').next().unwrap_or("");
    let mut target = String::with_capacity(tail.len() + 1);
    if !tail.starts_with('/') {
        target.push('/');
    }
    for b in tail.bytes() {
        if b <= b' ' || b >= 0x7f || matches!(b, b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}') {
            target.push_str(&format!("%{b:02X}"));
        } else {
            target.push(b as char);
        }
    }
    Ok(Url { https, host, ip, port, target })
}

/// `host[:port]` or `[v6][:port]` → (host, port text).
fn split_port(hp: &str) -> Result<(&str, Option<&str>), String> {
    if hp.starts_with('[') {
        return Ok(match hp.rfind("]:") {
            Some(i) => (&hp[..=i], Some(&hp[i + 2..])),
            None => (hp, None),
        });
    }
    Ok(match hp.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (hp, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hosts_ports_and_targets() {
        let u = parse("https://Example.COM/a/b?c=d#frag").unwrap();
        assert_eq!((u.https, u.host.as_str(), u.port, u.target.as_str()), (true, "example.com", 443, "/a/b?c=d"));
        assert_eq!(u.host_header(), "example.com");
        let u = parse("http://user:pw@127.0.0.1:8080").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.target.as_str()), ("127.0.0.1", 8080, "/"));
        assert_eq!(u.ip, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(u.host_header(), "127.0.0.1:8080");
        let u = parse("http://[::1]:81/x?y").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.target.as_str()), ("::1", 81, "/x?y"));
        assert_eq!(u.host_header(), "[::1]:81");
        assert_eq!(parse("http://h?q=1").unwrap().target, "/?q=1");
    }

    #[test]
    fn encodes_what_a_request_line_cannot_carry() {
        let u = parse("http://h/a b\r\nX: y/é").unwrap();
        assert_eq!(u.target, "/a%20b%0D%0AX:%20y/%C3%A9");
    }

    #[test]
    fn refuses_what_cannot_be_sent() {
        for bad in ["ftp://h/", "httpfake", "~/etc/password", " foo", "https/incorrect", "http://", "http://:80/",
            "http://h:0/", "http://h:99999/", "http://exa mple.com/", "http://[::1/", "http://hé.com/"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
