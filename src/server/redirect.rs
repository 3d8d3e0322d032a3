//! What the plain HTTP_PORT listener of an HTTPS server answers: the ACME HTTP-01 challenge
//! (RFC 8555 §8.3) while one is pending, and a 301 to the same URL over HTTPS for everything
//! else. It runs on its own small loop (`server::serve`), never reaching the application.

use crate::tls::Tls;
use crate::http::{Method, Request, Response};
use super::{Call, Flow, Handler};
use std::sync::Arc;

pub const CHALLENGE_PREFIX: &[u8] = b"/.well-known/acme-challenge/";

pub struct Redirect {
    pub tls: Arc<Tls>,
}

impl Handler for Redirect {
    type Socket = ();

    fn handle(&mut self, req: &Request, res: &mut Response, _cx: &mut Call<Self>) -> Flow {
        res.header("Cache-Control", b"no-store");
        if let Some(token) = req.path.strip_prefix(CHALLENGE_PREFIX) {
            match self.tls.challenge(token) {
                Some(answer) if matches!(req.method, Method::Get | Method::Head) => {
                    res.header("Content-Type", b"application/octet-stream");
                    res.body().extend_from_slice(answer.as_bytes());
                }
                _ => {
                    res.status(404);
                    res.body().extend_from_slice(b"Not Found\n");
                }
            }
            return Flow::Done;
        }
        let host = req.header(b"host").and_then(host_name).or_else(|| self.tls.settings.domains.first().map(|d| d.as_bytes()));
        let Some(host) = host else {
            res.status(400);
            res.body().extend_from_slice(b"Bad Request: no Host to redirect to\n");
            return Flow::Done;
        };
        let mut location = Vec::with_capacity(16 + host.len() + req.target.len());
        location.extend_from_slice(b"https://");
        location.extend_from_slice(host);
        let port = self.tls.settings.https_port;
        if port != 443 {
            location.push(b':');
            location.extend_from_slice(port.to_string().as_bytes());
        }
        if req.target.first() == Some(&b'/') {
            location.extend_from_slice(req.target);
        } else {
            location.push(b'/');
        }
        res.status(301);
        res.header("Location", &location);
        Flow::Done
    }
}

/// The host part of a `Host` header when it is a plain name or address (the port is ours to
/// choose); None for anything that could smuggle something into `Location`.
fn host_name(value: &[u8]) -> Option<&[u8]> {
    let host = if value.first() == Some(&b'[') {
        let end = value.iter().position(|&b| b == b']')?;
        &value[..=end]
    } else {
        value.split(|&b| b == b':').next()?
    };
    let ok = !host.is_empty() && host.len() <= 255 && host.iter().all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'[' | b']' | b':'));
    ok.then_some(host)
}

#[cfg(test)]
mod tests {
    use super::host_name;

    #[test]
    fn host_names() {
        assert_eq!(host_name(b"chat.example.com:80"), Some(&b"chat.example.com"[..]));
        assert_eq!(host_name(b"[::1]:8080"), Some(&b"[::1]"[..]));
        assert_eq!(host_name(b"evil.com/x"), None);
        assert_eq!(host_name(b"a\r\nb"), None);
        assert_eq!(host_name(b""), None);
    }
}
