//! A small stub resolver, so the static binary never calls glibc's `getaddrinfo` (which loads
//! NSS modules a scratch image does not have).
//!
//! Order: an IP literal is its own answer; then `/etc/hosts`; then DNS over UDP to the
//! nameservers of `/etc/resolv.conf` (127.0.0.1 when none is listed, as glibc does), asking A
//! then AAAA with recursion desired. IPv4 answers come first, each family in the order
//! received. One deadline covers the whole lookup.
//!
//! Known limits: no `search`/`ndots` expansion (names are looked up as given), no TCP fallback
//! for truncated answers (the records that did arrive are used), no caching. Answers are
//! accepted only from the queried server's address (connected socket), with our random
//! 16-bit id and our question echoed back.

use super::Error;
use crate::sys::client::Socket;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;
/// Nameservers beyond this many are ignored, like glibc's MAXNS.
const MAX_SERVERS: usize = 3;

/// All addresses of `host`, IPv4 first; `Error::Dns` when there are none, `Error::Timeout`
/// when no nameserver answered within `timeout`.
pub fn resolve(host: &str, timeout: Duration) -> Result<Vec<IpAddr>, Error> {
    let host = host.trim_end_matches('.');
    if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    if host.is_empty() {
        return Err(Error::Dns("empty host name".into()));
    }
    if let Ok(hosts) = std::fs::read_to_string("/etc/hosts") {
        let found = from_hosts(&hosts, host);
        if !found.is_empty() {
            return Ok(found);
        }
    }
    let conf = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    ask_servers(host, &nameservers(&conf), Instant::now() + timeout)
}

/// Asks `servers` in turn until one answers about `host` or `deadline` passes.
pub fn ask_servers(host: &str, servers: &[SocketAddr], deadline: Instant) -> Result<Vec<IpAddr>, Error> {
    let mut last = Error::Dns(format!("{host}: no nameserver answered"));
    for &server in servers {
        match ask_server(server, host, deadline) {
            Ok(ips) if !ips.is_empty() => return Ok(ips),
            Ok(_) => return Err(Error::Dns(format!("{host}: no addresses"))),
            Err(e @ Error::Dns(_)) if is_final(&e) => return Err(e),
            Err(e) => last = e,
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    Err(last)
}

/// NXDOMAIN is an answer, not a failure of that server: no point asking the next one.
fn is_final(e: &Error) -> bool {
    matches!(e, Error::Dns(m) if m.ends_with("does not exist"))
}

/// A then AAAA from one server.
fn ask_server(server: SocketAddr, host: &str, deadline: Instant) -> Result<Vec<IpAddr>, Error> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Error::Timeout);
    }
    let mut sock = Socket::connect_udp(server, left).map_err(|e| Error::Dns(format!("{server}: {e}")))?;
    let mut out = query(&mut sock, host, TYPE_A, deadline)?;
    match query(&mut sock, host, TYPE_AAAA, deadline) {
        Ok(v6) => out.extend(v6),
        // Having IPv4 answers is enough; a server that fumbles AAAA must not cost them.
        Err(e) if out.is_empty() => return Err(e),
        Err(_) => {}
    }
    Ok(out)
}

/// Sends one question and waits for its answer (stray or mismatched datagrams are skipped).
fn query(sock: &mut Socket, host: &str, qtype: u16, deadline: Instant) -> Result<Vec<IpAddr>, Error> {
    let id = u16::from_ne_bytes(crate::sys::random::bytes::<2>());
    let packet = build_query(id, host, qtype).ok_or_else(|| Error::Dns(format!("{host}: not a valid DNS name")))?;
    sock.write_all(&packet).map_err(|e| Error::Dns(e.to_string()))?;
    let mut buf = [0u8; 1500];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Timeout);
        }
        sock.set_read_timeout(left).map_err(|e| Error::Dns(e.to_string()))?;
        let n = match sock.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => return Err(Error::Timeout),
            Err(e) => return Err(Error::Dns(e.to_string())),
        };
        match parse_answer(buf.get(..n).unwrap_or(&[]), id, host, qtype) {
            Answer::Stray => continue,
            Answer::Addresses(ips) => return Ok(ips),
            Answer::NoSuchName => return Err(Error::Dns(format!("{host} does not exist"))),
            Answer::Failed(rcode) => return Err(Error::Dns(format!("{host}: server failure (rcode {rcode})"))),
        }
    }
}

/// The addresses `/etc/hosts` gives `host` (case-insensitive), IPv4 first.
pub fn from_hosts(file: &str, host: &str) -> Vec<IpAddr> {
    let mut v4 = Vec::new();
    let mut v6 = Vec::new();
    for line in file.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut fields = line.split_ascii_whitespace();
        let Some(ip) = fields.next().and_then(|a| a.parse::<IpAddr>().ok()) else { continue };
        if fields.any(|name| name.eq_ignore_ascii_case(host)) {
            match ip {
                IpAddr::V4(_) if !v4.contains(&ip) => v4.push(ip),
                IpAddr::V6(_) if !v6.contains(&ip) => v6.push(ip),
                _ => {}
            }
        }
    }
    v4.extend(v6);
    v4
}

/// The `nameserver` lines of resolv.conf (port 53), at most three; 127.0.0.1 when none.
pub fn nameservers(conf: &str) -> Vec<SocketAddr> {
    let mut out: Vec<SocketAddr> = conf
        .lines()
        .filter_map(|l| {
            let mut f = l.split_ascii_whitespace();
            (f.next() == Some("nameserver")).then(|| f.next()).flatten()
        })
        // A scoped IPv6 address (`fe80::1%eth0`) keeps only its address; link-local needs the
        // scope, so such a server will simply fail and the next is tried.
        .filter_map(|a| a.split('%').next().and_then(|a| a.parse::<IpAddr>().ok()))
        .map(|ip| SocketAddr::new(ip, 53))
        .take(MAX_SERVERS)
        .collect();
    if out.is_empty() {
        out.push(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 53));
    }
    out
}

/// A standard query (RD set) for `host`/`qtype`; None when a label is empty or over 63 bytes
/// or the name over 253.
pub fn build_query(id: u16, host: &str, qtype: u16) -> Option<Vec<u8>> {
    if host.len() > 253 {
        return None;
    }
    let mut p = Vec::with_capacity(18 + host.len());
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in host.split('.') {
        if label.is_empty() || label.len() > 63 {
            return None;
        }
        p.push(label.len() as u8);
        p.extend_from_slice(label.as_bytes());
    }
    p.push(0);
    p.extend_from_slice(&qtype.to_be_bytes());
    p.extend_from_slice(&1u16.to_be_bytes());
    Some(p)
}

/// What one datagram says.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// Not the answer to our question (wrong id, not a response, another question, garbage).
    Stray,
    /// The addresses of the wanted type in the answer section (possibly none: NODATA).
    Addresses(Vec<IpAddr>),
    /// NXDOMAIN.
    NoSuchName,
    /// Any other error code (SERVFAIL, REFUSED, ...).
    Failed(u8),
}

/// Reads a response to question (`id`, `host`, `qtype`). Every read is bounds-checked: a
/// malformed packet is `Stray`, never a panic.
pub fn parse_answer(p: &[u8], id: u16, host: &str, qtype: u16) -> Answer {
    parse(p, id, host, qtype).unwrap_or(Answer::Stray)
}

fn parse(p: &[u8], id: u16, host: &str, qtype: u16) -> Option<Answer> {
    let be16 = |at: usize| -> Option<u16> { Some(u16::from_be_bytes([*p.get(at)?, *p.get(at + 1)?])) };
    if be16(0)? != id || p.get(2)? & 0x80 == 0 || be16(4)? != 1 {
        return None;
    }
    let rcode = p.get(3)? & 0x0f;
    let ancount = be16(6)? as usize;
    // The question must be ours, or this is someone else's answer.
    let mut name = String::new();
    let mut at = read_name(p, 12, &mut name)?;
    if !name.eq_ignore_ascii_case(host) || be16(at)? != qtype || be16(at + 2)? != 1 {
        return None;
    }
    at += 4;
    match rcode {
        0 => {}
        3 => return Some(Answer::NoSuchName),
        r => return Some(Answer::Failed(r)),
    }
    let mut out = Vec::new();
    for _ in 0..ancount {
        let mut owner = String::new();
        at = read_name(p, at, &mut owner)?;
        let (rtype, class, len) = (be16(at)?, be16(at + 2)?, be16(at + 8)? as usize);
        let data = p.get(at + 10..at + 10 + len)?;
        at += 10 + len;
        if class != 1 {
            continue;
        }
        match (rtype, data.len()) {
            (TYPE_A, 4) if qtype == TYPE_A => out.push(IpAddr::V4(Ipv4Addr::new(data[0], data[1], data[2], data[3]))),
            (TYPE_AAAA, 16) if qtype == TYPE_AAAA => {
                let mut o = [0u8; 16];
                o.copy_from_slice(data);
                out.push(IpAddr::V6(Ipv6Addr::from(o)));
            }
            // CNAMEs come before their addresses in the same answer; the addresses are what
            // we want, so the alias chain itself is not followed.
            _ => {}
        }
    }
    Some(Answer::Addresses(out))
}

/// Reads a (possibly compressed) name at `at` into `out` (dotted, no trailing dot); returns
/// the offset after it in the packet. At most 32 pointer jumps, so a loop cannot hang us.
fn read_name(p: &[u8], mut at: usize, out: &mut String) -> Option<usize> {
    let mut end = None;
    let mut jumps = 0;
    loop {
        let len = *p.get(at)? as usize;
        match len {
            0 => return Some(end.unwrap_or(at + 1)),
            l if l & 0xc0 == 0xc0 => {
                let target = ((l & 0x3f) << 8) | *p.get(at + 1)? as usize;
                end.get_or_insert(at + 2);
                jumps += 1;
                if jumps > 32 {
                    return None;
                }
                at = target;
            }
            l if l <= 63 => {
                let label = p.get(at + 1..at + 1 + l)?;
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&String::from_utf8_lossy(label));
                at += 1 + l;
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
#[path = "dns_tests.rs"]
mod tests;
