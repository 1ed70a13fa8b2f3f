//! The delivery client's name resolver: each host is resolved once per connection, every
//! address it resolves to is checked, and the connection is made to those checked addresses
//! only — there is no second lookup an attacker's DNS could answer differently (DNS rebinding).
//! A name with any forbidden address is refused whole.

use std::net::{IpAddr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::address::forbidden_reason;

/// Resolves with the system resolver, then refuses forbidden addresses unless private targets
/// are allowed.
#[derive(Debug, Clone, Copy)]
pub struct CheckedResolver {
    /// `push.allow_private_targets`.
    pub allow_private: bool,
}

/// A webhook host resolved to an address that deliveries may not reach.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to {ip}, a {reason} address, which this server does not deliver to")]
pub struct RefusedAddress {
    /// The name in the URL.
    pub host: String,
    /// The forbidden address it resolved to.
    pub ip: IpAddr,
    /// Which range it is in.
    pub reason: &'static str,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private
                && let Some((ip, reason)) = addresses
                    .iter()
                    .find_map(|a| forbidden_reason(a.ip()).map(|reason| (a.ip(), reason)))
            {
                return Err(Box::new(RefusedAddress { host, ip, reason }) as _);
            }
            Ok(Box::new(addresses.into_iter()) as Addrs)
        })
    }
}
