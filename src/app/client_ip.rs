//! The client IP address as Rails' `request.remote_ip` computes it (spec/03 §9).
//!
//! Sessions record it, bans match it and the sign-in rate limit counts by it, so it must agree
//! with what Rails stored before the switch. Rules: the forwarded list comes from the RFC 7239
//! `Forwarded` header when present, else `X-Forwarded-For`; candidates are that list read from
//! the right, then `Client-Ip` from the right, then the socket peer; trusted proxies
//! (`CAMPFIRE_TRUSTED_PROXIES`, by default Rails' loopback, private and link-local ranges) are
//! skipped; the first remaining candidate wins. When every candidate is a proxy, the left-most
//! forwarded/Client-Ip address is used, else the peer.
//!
//! Unlike Rails, the headers are read only when the socket peer itself is a trusted proxy: a
//! client that reaches the port directly would otherwise pick its own address, and with it
//! escape bans and the sign-in rate limit.

use crate::http::trusted::TrustedProxies;
use std::net::IpAddr;

/// Both `Client-Ip` and a forwarded list were sent and disagree: Rails raises an
/// IP-spoofing error rather than guess; we answer it 400 (the request is bad, not the server).
#[derive(Debug, PartialEq, Eq)]
pub struct Spoofed;

/// Most addresses we look at in one header; the rest of a longer list is ignored (a proxy chain
/// longer than this is not a real deployment, and the list is attacker-controlled).
const MAX_ADDRS: usize = 16;

/// A small fixed list of parsed addresses, so the computation never allocates.
struct Addrs {
    items: [IpAddr; MAX_ADDRS],
    len: usize,
}

impl Addrs {
    fn new() -> Addrs {
        Addrs { items: [IpAddr::from([0u8, 0, 0, 0]); MAX_ADDRS], len: 0 }
    }
    fn push(&mut self, ip: IpAddr) {
        if self.len < MAX_ADDRS {
            self.items[self.len] = ip;
            self.len += 1;
        }
    }
    fn as_slice(&self) -> &[IpAddr] {
        &self.items[..self.len]
    }
}

/// The proxy headers of one request, each the raw header value when present.
#[derive(Clone, Copy, Default)]
pub struct Forwarding<'a> {
    pub forwarded: Option<&'a [u8]>,
    pub x_forwarded_for: Option<&'a [u8]>,
    pub client_ip: Option<&'a [u8]>,
}

/// Computes the client IP from the socket peer and, when the peer is in `trusted`, its proxy
/// headers. Never fails on malformed headers: invalid entries are skipped. Returns
/// `Err(Spoofed)` only in the case Rails treats as an attack (see [`Spoofed`]).
pub fn client_ip(peer: IpAddr, headers: Forwarding<'_>, trusted: &TrustedProxies) -> Result<IpAddr, Spoofed> {
    let Forwarding { forwarded, x_forwarded_for, client_ip } = headers;
    // Nothing forwarded (a direct client, or a proxy that adds nothing): the peer, whatever it
    // is. The common case, answered without looking at the list.
    if forwarded.is_none() && x_forwarded_for.is_none() && client_ip.is_none() {
        return Ok(peer);
    }
    if !trusted.contains(peer) {
        return Ok(peer);
    }
    let mut fwd = Addrs::new();
    match forwarded {
        Some(v) => forwarded_for_values(v, &mut fwd),
        None => {
            if let Some(v) = x_forwarded_for {
                comma_list(v, &mut fwd);
            }
        }
    }
    let mut cli = Addrs::new();
    if let Some(v) = client_ip {
        comma_list(v, &mut cli);
    }
    let (fwd, cli) = (fwd.as_slice(), cli.as_slice());
    if let (Some(first_cli), Some(_)) = (cli.first(), fwd.first()) {
        if !fwd.contains(first_cli) {
            return Err(Spoofed);
        }
    }
    let candidates = fwd.iter().rev().chain(cli.iter().rev());
    for ip in candidates.chain(std::iter::once(&peer)) {
        if !trusted.contains(*ip) {
            return Ok(*ip);
        }
    }
    // All trusted: the left-most client address (Client-Ip first, as Rails orders them).
    Ok(cli.first().or(fwd.first()).copied().unwrap_or(peer))
}

/// Parses a comma-separated address list (`X-Forwarded-For`, `Client-Ip`), keeping valid
/// single addresses only; `1.2.3.4:5678` and `[::1]:80` lose their port as in Rack.
fn comma_list(v: &[u8], out: &mut Addrs) {
    for item in v.split(|&b| b == b',') {
        if let Some(ip) = parse_addr(trim(item)) {
            out.push(ip);
        }
    }
}

/// Collects the `for=` values of an RFC 7239 `Forwarded` header, in order.
fn forwarded_for_values(v: &[u8], out: &mut Addrs) {
    for element in v.split(|&b| b == b',') {
        for pair in element.split(|&b| b == b';') {
            let pair = trim(pair);
            let Some(eq) = pair.iter().position(|&b| b == b'=') else { continue };
            let (name, value) = (&pair[..eq], &pair[eq + 1..]);
            if !name.eq_ignore_ascii_case(b"for") {
                continue;
            }
            let value = trim(value);
            let value = value
                .strip_prefix(b"\"")
                .and_then(|x| x.strip_suffix(b"\""))
                .unwrap_or(value);
            if let Some(ip) = parse_addr(value) {
                out.push(ip);
            }
        }
    }
}

/// One address, optionally bracketed and/or with a port.
fn parse_addr(s: &[u8]) -> Option<IpAddr> {
    let s = std::str::from_utf8(s).ok()?;
    if let Some(rest) = s.strip_prefix('[') {
        let end = rest.find(']')?;
        return rest[..end].parse().ok();
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    // IPv4 with a port: exactly one colon.
    let (host, port) = s.rsplit_once(':')?;
    if host.contains(':') || port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn fwd<'a>(forwarded: Option<&'a [u8]>, xff: Option<&'a [u8]>, cli: Option<&'a [u8]>) -> Forwarding<'a> {
        Forwarding { forwarded, x_forwarded_for: xff, client_ip: cli }
    }

    fn rails(peer: &str, f: Forwarding<'_>) -> Result<IpAddr, Spoofed> {
        client_ip(ip(peer), f, &TrustedProxies::rails_default())
    }

    #[test]
    fn peer_only() {
        assert_eq!(rails("203.0.113.5", fwd(None, None, None)), Ok(ip("203.0.113.5")));
    }

    #[test]
    fn proxy_on_localhost_forwards_the_client() {
        assert_eq!(rails("127.0.0.1", fwd(None, Some(b"203.0.113.1"), None)), Ok(ip("203.0.113.1")));
    }

    #[test]
    fn rightmost_untrusted_wins() {
        assert_eq!(rails("10.0.0.1", fwd(None, Some(b"1.1.1.1, 2.2.2.2, 10.0.0.2"), None)), Ok(ip("2.2.2.2")));
    }

    #[test]
    fn a_direct_client_is_its_socket_whatever_it_claims() {
        // Rails would believe 203.0.113.9 here; a peer outside the trusted list is not a proxy.
        let claims = fwd(Some(b"for=192.0.2.1"), Some(b"203.0.113.9, 198.51.100.1"), Some(b"4.4.4.4"));
        assert_eq!(rails("198.51.100.7", claims), Ok(ip("198.51.100.7")));
        // Not even a Client-Ip disagreeing with X-Forwarded-For is looked at.
        assert_eq!(rails("198.51.100.7", fwd(None, Some(b"5.5.5.5"), Some(b"4.4.4.4"))), Ok(ip("198.51.100.7")));
    }

    #[test]
    fn an_empty_list_believes_no_one() {
        let none = TrustedProxies::none();
        assert_eq!(client_ip(ip("127.0.0.1"), fwd(None, Some(b"203.0.113.9"), None), &none), Ok(ip("127.0.0.1")));
    }

    #[test]
    fn a_configured_proxy_is_believed_and_skipped() {
        let lb = TrustedProxies::parse("203.0.113.0/24").unwrap();
        let got = client_ip(ip("203.0.113.2"), fwd(None, Some(b"198.51.100.4, 203.0.113.3"), None), &lb);
        assert_eq!(got, Ok(ip("198.51.100.4")));
    }

    #[test]
    fn all_trusted_takes_leftmost() {
        assert_eq!(rails("127.0.0.1", fwd(None, Some(b"192.168.1.2, 10.0.0.3"), None)), Ok(ip("192.168.1.2")));
        assert_eq!(rails("127.0.0.1", fwd(None, None, None)), Ok(ip("127.0.0.1")));
    }

    #[test]
    fn forwarded_header_has_priority() {
        let got = rails(
            "127.0.0.1",
            fwd(Some(b"for=192.0.2.60;proto=http;by=203.0.113.43, for=\"[2001:db8:cafe::17]:4711\""), Some(b"9.9.9.9"), None),
        );
        assert_eq!(got, Ok(ip("2001:db8:cafe::17")));
    }

    #[test]
    fn garbage_and_ports_are_handled() {
        assert_eq!(rails("127.0.0.1", fwd(None, Some(b"nonsense, 1.2.3.4:8080, 1.2.3.0/24"), None)), Ok(ip("1.2.3.4")));
    }

    #[test]
    fn client_ip_header_and_spoofing() {
        assert_eq!(rails("127.0.0.1", fwd(None, None, Some(b"4.4.4.4"))), Ok(ip("4.4.4.4")));
        assert_eq!(rails("127.0.0.1", fwd(None, Some(b"4.4.4.4"), Some(b"4.4.4.4"))), Ok(ip("4.4.4.4")));
        assert_eq!(rails("127.0.0.1", fwd(None, Some(b"5.5.5.5"), Some(b"4.4.4.4"))), Err(Spoofed));
    }
}
