//! Which peers are believed about the client: `CAMPFIRE_TRUSTED_PROXIES`, a list of addresses
//! and CIDR blocks. A request from a peer on the list may name the client's address, scheme and
//! host in its forwarding headers (`X-Forwarded-For`, `Forwarded`, `Client-Ip`,
//! `X-Forwarded-Proto`, `X-Forwarded-Host`); from anyone else those headers are ignored and the
//! socket is the truth. The same list tells which hops of a forwarded chain are proxies.

use std::net::IpAddr;

/// Rails' default list (`ActionDispatch::RemoteIp::TRUSTED_PROXIES`): loopback, private and
/// link-local ranges, for a proxy on the same host or network.
pub const RAILS_DEFAULT: &str = "127.0.0.0/8,::1/128,fc00::/7,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,169.254.0.0/16,fe80::/10";

/// One block: the network's address as a 128-bit number (IPv4 as IPv4-mapped IPv6) and the
/// prefix length in that space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Net {
    bits: u128,
    prefix: u8,
}

/// The blocks split by family: IPv4 ones are checked with 32-bit masks (every request asks
/// about its peer, usually an IPv4 or IPv4-mapped one); IPv6 ones in the 128-bit space, which
/// also holds IPv4 as mapped addresses (so `::/0` covers everything).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    v4: Vec<(u32, u32)>,
    v6: Vec<Net>,
}

impl TrustedProxies {
    /// Nobody is believed.
    pub fn none() -> TrustedProxies {
        TrustedProxies::default()
    }

    /// Parses `a, b/len, ...`; an empty list is `none()`. The error names the bad entry.
    pub fn parse(list: &str) -> Result<TrustedProxies, String> {
        let mut t = TrustedProxies::default();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let net = parse_net(item).ok_or_else(|| format!("{item:?} is not an address or CIDR block"))?;
            let mapped = net.prefix >= 96 && (net.bits >> 32) == 0xffff;
            if mapped {
                let len = u32::from(net.prefix - 96);
                let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
                t.v4.push((net.bits as u32, mask));
            } else {
                t.v6.push(net);
            }
        }
        Ok(t)
    }

    pub fn rails_default() -> TrustedProxies {
        // The constant is ours and well formed (a unit test parses it).
        TrustedProxies::parse(RAILS_DEFAULT).unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// Whether `ip` lies in one of the blocks (an IPv4-mapped IPv6 peer counts as its IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let v4 = match ip {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(a) => a.to_ipv4_mapped(),
        };
        if let Some(a) = v4 {
            let a = u32::from(a);
            if self.v4.iter().any(|&(bits, m)| a & m == bits) {
                return true;
            }
        }
        let v = as_u128(ip);
        self.v6.iter().any(|n| mask(v, n.prefix) == n.bits)
    }
}

fn as_u128(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => u128::from(v4.to_ipv6_mapped()),
            None => u128::from(v6),
        },
    }
}

fn mask(v: u128, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        v & (u128::MAX << (128 - u32::from(prefix)))
    }
}

fn parse_net(s: &str) -> Option<Net> {
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().ok()?)),
        None => (s, None),
    };
    let ip: IpAddr = addr.parse().ok()?;
    // IPv4 prefixes count in the mapped space, after its 96 fixed bits.
    let (max, offset) = if ip.is_ipv4() { (32, 96) } else { (128, 0) };
    let len = len.unwrap_or(max);
    if len > max {
        return None;
    }
    let prefix = len + offset;
    let bits = as_u128(ip);
    // A block written with host bits set (10.1.2.3/8) means its network, as Ruby's IPAddr does.
    Some(Net { bits: mask(bits, prefix), prefix })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn rails_default_ranges() {
        let t = TrustedProxies::rails_default();
        assert_eq!((t.v4.len(), t.v6.len()), (5, 3));
        for yes in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.0.1", "169.254.1.1", "::1", "fd00::1", "fe80::1", "::ffff:10.0.0.1"] {
            assert!(t.contains(ip(yes)), "{yes}");
        }
        for no in ["172.32.0.1", "8.8.8.8", "203.0.113.1", "2001:db8::1", "::ffff:8.8.8.8", "::2"] {
            assert!(!t.contains(ip(no)), "{no}");
        }
    }

    #[test]
    fn lists_single_addresses_and_errors() {
        let t = TrustedProxies::parse(" 203.0.113.7 , 2001:db8::/32,10.9.9.9/8").unwrap();
        assert!(t.contains(ip("203.0.113.7")) && !t.contains(ip("203.0.113.8")));
        assert!(t.contains(ip("2001:db8:1::5")) && !t.contains(ip("2001:db9::1")));
        assert!(t.contains(ip("10.200.0.1")), "host bits in a block are its network");
        assert!(TrustedProxies::parse("").unwrap().is_empty());
        assert!(!TrustedProxies::parse("").unwrap().contains(ip("127.0.0.1")));
        assert!(TrustedProxies::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        assert!(!TrustedProxies::parse("0.0.0.0/0").unwrap().contains(ip("2001:db8::1")));
        assert!(TrustedProxies::parse("::/0").unwrap().contains(ip("8.8.8.8")), "IPv6 ::/0 holds mapped IPv4 too");
        assert!(TrustedProxies::parse("::ffff:10.0.0.0/104").unwrap().contains(ip("10.1.2.3")));
        for bad in ["10.0.0.0/33", "::/129", "localhost", "1.2.3.4/x", "1.2.3"] {
            let e = TrustedProxies::parse(bad).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }
}
