//! Settings of the gRPC binding (`[grpc]`, `A2A__GRPC__*`): by default it shares the HTTP port,
//! chosen by `content-type: application/grpc`; a port of its own is optional.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Where the gRPC binding listens besides the HTTP port, and what the card tells clients to
/// dial (`[grpc]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GrpcSettings {
    /// A second listening address that serves the same routes (`A2A__GRPC__BIND`, e.g.
    /// `0.0.0.0:50051`), for clients or balancers that want gRPC on a port of its own. Unset:
    /// gRPC is served on `server.bind` only.
    pub bind: Option<String>,
    /// The `host:port` the card's `GRPC` interface names (`A2A__GRPC__PUBLIC_TARGET`), what
    /// a gRPC client dials. Unset: the host of the public URL with the gRPC listener's port
    /// (`bind`'s when set, else the public URL's).
    pub public_target: Option<String>,
    /// Server reflection streams open at once on a replica at most
    /// (`A2A__GRPC__MAX_REFLECTION_STREAMS`, 32); one more is `UNAVAILABLE` at once.
    /// Reflection needs no token and answers each request with the protocol's descriptors
    /// (about 32 KB), so this bounds what anonymous callers who never read can make the
    /// server hold.
    pub max_reflection_streams: usize,
}

impl Default for GrpcSettings {
    fn default() -> Self {
        GrpcSettings {
            bind: None,
            public_target: None,
            max_reflection_streams: 32,
        }
    }
}

impl GrpcSettings {
    /// The second listening address, when one is configured.
    pub fn bind_addr(&self) -> Result<Option<SocketAddr>, ConfigError> {
        self.bind
            .as_deref()
            .map(|bind| {
                bind.trim().parse().map_err(|_| {
                    ConfigError::invalid(
                        "grpc.bind",
                        format!(
                            "`{bind}` is not a socket address; write e.g. 0.0.0.0:50051, or leave it unset to serve gRPC on server.bind"
                        ),
                    )
                })
            })
            .transpose()
    }

    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        self.bind_addr()?;
        if self.max_reflection_streams == 0 {
            return Err(ConfigError::invalid(
                "grpc.max_reflection_streams",
                "must be at least 1 (reflection is then served one stream at a time)",
            ));
        }
        if let Some(target) = &self.public_target {
            let valid = target
                .rsplit_once(':')
                .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
                && !target.contains('/');
            if !valid {
                return Err(ConfigError::invalid(
                    "grpc.public_target",
                    format!(
                        "`{target}` is not a host:port target; write e.g. a2a.example.com:443 (no scheme, no path)"
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bind_and_the_target_are_checked() {
        let mut grpc = GrpcSettings::default();
        assert_eq!(grpc.bind_addr().unwrap(), None);
        grpc.bind = Some("127.0.0.1:50051".into());
        assert!(grpc.bind_addr().unwrap().is_some());
        grpc.bind = Some("50051".into());
        assert!(
            grpc.validate()
                .unwrap_err()
                .to_string()
                .contains("grpc.bind")
        );
        grpc.bind = None;
        for bad in ["https://a2a.example.com", "a2a.example.com", ":443"] {
            grpc.public_target = Some(bad.into());
            let refused = grpc.validate().unwrap_err().to_string();
            assert!(refused.contains("grpc.public_target"), "{bad}: {refused}");
        }
        grpc.public_target = Some("a2a.example.com:443".into());
        grpc.validate().unwrap();
        grpc.max_reflection_streams = 0;
        let refused = grpc.validate().unwrap_err().to_string();
        assert!(refused.contains("grpc.max_reflection_streams"), "{refused}");
    }
}
