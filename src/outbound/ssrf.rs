//! The SSRF address policy for link unfurling (spec/02 §4.30): which resolved addresses a
//! server-side fetch on a user's behalf may connect to. Private, loopback, link-local,
//! documentation, multicast and reserved ranges are blocked, and so is every IPv6 form that
//! smuggles an IPv4 address past an IPv4-only check (mapped, compatible, NAT64, SIIT, 6to4,
//! Teredo). Bot webhooks deliberately do not use it: administrators point them inside.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Addresses (comma-separated) that link previews may fetch despite the policy. For tests
/// that serve pages on loopback (`127.0.0.1`); never set it in production.
pub const ALLOW_PRIVATE_ENV: &str = "CAMPFIRE_UNFURL_ALLOW_PRIVATE";

static OVERRIDE: std::sync::OnceLock<Vec<IpAddr>> = std::sync::OnceLock::new();

/// True when the test override lists `ip` (the environment is read once).
pub fn overridden(ip: IpAddr) -> bool {
    OVERRIDE.get_or_init(|| parse_override(&std::env::var(ALLOW_PRIVATE_ENV).unwrap_or_default())).contains(&ip)
}

fn parse_override(v: &str) -> Vec<IpAddr> {
    v.split(',').filter_map(|a| a.trim().parse().ok()).collect()
}

/// True when a fetch may not connect to `ip`.
pub fn blocked(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

const V4_BLOCKS: [(u32, u8); 15] = [
    (0x0000_0000, 8),   // 0.0.0.0/8
    (0x0a00_0000, 8),   // 10.0.0.0/8
    (0x6440_0000, 10),  // 100.64.0.0/10
    (0x7f00_0000, 8),   // 127.0.0.0/8
    (0xa9fe_0000, 16),  // 169.254.0.0/16
    (0xac10_0000, 12),  // 172.16.0.0/12
    (0xc000_0000, 24),  // 192.0.0.0/24
    (0xc000_0200, 24),  // 192.0.2.0/24
    (0xc058_6300, 24),  // 192.88.99.0/24
    (0xc0a8_0000, 16),  // 192.168.0.0/16
    (0xc612_0000, 15),  // 198.18.0.0/15
    (0xc633_6400, 24),  // 198.51.100.0/24
    (0xcb00_7100, 24),  // 203.0.113.0/24
    (0xe000_0000, 4),   // 224.0.0.0/4
    (0xf000_0000, 4),   // 240.0.0.0/4
];

fn blocked_v4(ip: Ipv4Addr) -> bool {
    let a = u32::from(ip);
    V4_BLOCKS.iter().any(|&(net, len)| a >> (32 - len) == net >> (32 - len))
}

/// (prefix, length) over the 128-bit address.
const V6_BLOCKS: [(u128, u8); 11] = [
    (1, 128),                                        // ::1
    (0, 128),                                        // ::
    (0xfc00 << 112, 7),                              // fc00::/7
    (0xfe80 << 112, 10),                             // fe80::/10
    (0x0100 << 112, 64),                             // 100::/64
    (0x2001 << 112, 32),                             // 2001::/32 Teredo
    ((0x2001 << 112) | (0x0002 << 96), 48),          // 2001:2::/48
    ((0x2001 << 112) | (0x0db8 << 96), 32),          // 2001:db8::/32
    (0x2002 << 112, 16),                             // 2002::/16 6to4
    (0xfec0 << 112, 10),                             // fec0::/10
    (0xff00 << 112, 8),                              // ff00::/8
];

fn in_prefix(a: u128, net: u128, len: u8) -> bool {
    len == 0 || a >> (128 - len as u32) == net >> (128 - len as u32)
}

fn blocked_v6(ip: Ipv6Addr) -> bool {
    let a = u128::from(ip);
    let low_v4 = Ipv4Addr::from(a as u32);
    // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d (excluding :: and ::1, listed
    // below): always.
    if in_prefix(a, 0xffff << 32, 96) || (in_prefix(a, 0, 96) && a > 1) {
        return true;
    }
    // NAT64 local-use 64:ff9b:1::/48: always.
    if in_prefix(a, (0x0064 << 112) | (0xff9b << 96) | (0x0001 << 80), 48) {
        return true;
    }
    // NAT64 64:ff9b::/96 and SIIT ::ffff:0:0:0/96: as the IPv4 they carry.
    if in_prefix(a, (0x0064 << 112) | (0xff9b << 96), 96) || in_prefix(a, 0xffff << 48, 96) {
        return blocked_v4(low_v4);
    }
    V6_BLOCKS.iter().any(|&(net, len)| in_prefix(a, net, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> bool {
        blocked(s.parse().unwrap())
    }

    #[test]
    fn the_override_lists_addresses() {
        assert_eq!(parse_override("127.0.0.1, ::1,nonsense"), vec!["127.0.0.1".parse::<IpAddr>().unwrap(), "::1".parse().unwrap()]);
        assert!(parse_override("").is_empty());
    }

    #[test]
    fn blocks_private_and_reserved_ipv4() {
        for ip in ["0.1.2.3", "10.0.0.1", "100.64.0.1", "100.127.255.255", "127.0.0.1", "169.254.169.254", "172.16.0.0",
            "172.31.255.255", "192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.19.255.255",
            "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.1.1.1", "240.0.0.1", "255.255.255.255"] {
            assert!(b(ip), "{ip} should be blocked");
        }
        for ip in ["1.2.3.4", "8.8.8.8", "100.63.255.255", "100.128.0.0", "172.15.255.255", "172.32.0.0", "192.0.1.1",
            "192.169.0.1", "198.17.255.255", "198.20.0.0", "223.255.255.255"] {
            assert!(!b(ip), "{ip} should be allowed");
        }
    }

    #[test]
    fn blocks_ipv6_ranges_and_smuggled_ipv4() {
        for ip in ["::1", "::", "::ffff:192.168.1.1", "::ffff:c0a8:0101", "::ffff:8.8.8.8", "::8.8.8.8", "fc00::1", "fd12::1",
            "fe80::1", "100::1", "2001::1", "2001:2::1", "2001:db8::1", "2002::1", "fec0::1", "ff02::1", "64:ff9b:1::808:808",
            "64:ff9b::7f00:1", "64:ff9b::a00:1", "::ffff:0:7f00:1"] {
            assert!(b(ip), "{ip} should be blocked");
        }
        for ip in ["2606:4700::1111", "2a00:1450:4001::200e", "64:ff9b::808:808", "::ffff:0:808:808", "2001:4860::8888"] {
            assert!(!b(ip), "{ip} should be allowed");
        }
    }
}
