//! Which addresses a webhook may reach: only public unicast ones. Everything else — the
//! server's own host, its private network, cloud metadata endpoints, multicast, and the
//! documentation and benchmarking ranges — is refused, whatever IPv6 form embeds it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 ranges a webhook may not reach, each with why.
const FORBIDDEN_V4: &[(Ipv4Addr, u8, &str)] = &[
    (
        Ipv4Addr::new(0, 0, 0, 0),
        8,
        "\"this network\" (unspecified)",
    ),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "shared address space (carrier-grade NAT)",
    ),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "link-local (cloud metadata)",
    ),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (
        Ipv4Addr::new(240, 0, 0, 0),
        4,
        "reserved (broadcast included)",
    ),
];

/// IPv6 ranges a webhook may not reach (the IPv4-embedding ones are looked through first).
const FORBIDDEN_V6: &[(Ipv6Addr, u8, &str)] = &[
    (
        Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0, 0),
        96,
        "unspecified, loopback or IPv4-compatible",
    ),
    (
        Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
        48,
        "local-use NAT64",
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        "discard-only",
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        "IETF protocol assignments (Teredo, benchmarking)",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation",
    ),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, "6to4"),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        "documentation",
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        "unique local",
    ),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "site-local"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast"),
];

/// Why `ip` may not be a webhook's address, or `None` when it is public unicast. IPv4-mapped
/// (`::ffff:a.b.c.d`) and NAT64 (`64:ff9b::a.b.c.d`) addresses are judged by the IPv4 address
/// they carry, so `::ffff:127.0.0.1` is loopback.
pub fn forbidden_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = embedded_v4(v6) {
                return forbidden_v4(v4);
            }
            let bits = u128::from(v6);
            FORBIDDEN_V6
                .iter()
                .find(|(net, prefix, _)| same_prefix_v6(bits, u128::from(*net), *prefix))
                .map(|(_, _, why)| *why)
        }
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = u32::from(ip);
    FORBIDDEN_V4
        .iter()
        .find(|(net, prefix, _)| {
            let mask = u32::MAX.checked_shl(32 - u32::from(*prefix)).unwrap_or(0);
            bits & mask == u32::from(*net) & mask
        })
        .map(|(_, _, why)| *why)
}

fn same_prefix_v6(bits: u128, net: u128, prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    bits & mask == net & mask
}

/// The IPv4 address an IPv4-mapped or well-known-prefix NAT64 address reaches.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let segments = ip.segments();
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let bits = u128::from(ip) as u32;
        return Some(Ipv4Addr::from(bits));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        forbidden_reason(text.parse().unwrap()).is_some()
    }

    #[test]
    fn private_loopback_link_local_and_special_ranges_are_refused() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "192.0.2.10",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "2001:db8::1",
            "3fff::1",
            "fec0::1",
        ] {
            assert!(refused(ip), "{ip} should be refused");
        }
    }

    #[test]
    fn ipv4_embedded_in_ipv6_is_judged_by_its_ipv4_address() {
        assert!(refused("::ffff:127.0.0.1"));
        assert!(refused("::ffff:10.0.0.1"));
        assert!(refused("::ffff:169.254.169.254"));
        assert!(refused("64:ff9b::7f00:1"));
        assert!(!refused("::ffff:93.184.216.34"));
        assert!(!refused("64:ff9b::5db8:d822"));
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "2a00:1450:4001::1",
        ] {
            assert!(!refused(ip), "{ip} should pass");
        }
    }
}
