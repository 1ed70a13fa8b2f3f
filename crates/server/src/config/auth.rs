//! Settings of token verification and the plans it reads (`[auth]`, `A2A__AUTH__*`).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// How bearer tokens are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// HS256 with a shared secret: development and small deployments.
    Hs256,
    /// RS256/ES256 with keys from the issuer's JWKS URL: production.
    Jwks,
    /// No tokens at all: every request acts as one configured user (loopback only).
    None,
}

/// Token verification settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthSettings {
    /// `hs256`, `jwks` or `none` (`A2A__AUTH__MODE`).
    pub mode: AuthMode,
    /// The HS256 secret (`A2A__AUTH__HS256_SECRET`); outside the production profile one is
    /// generated into the data directory when absent.
    pub hs256_secret: Option<String>,
    /// The issuer's JWKS URL (`A2A__AUTH__JWKS_URL`), required in `jwks` mode; `https://`
    /// under the production profile.
    pub jwks_url: Option<String>,
    /// Expected `iss` (`A2A__AUTH__ISSUER`), checked when set; required under the production
    /// profile, so tokens the identity provider signed for another issuer are refused.
    pub issuer: Option<String>,
    /// Expected `aud` (`A2A__AUTH__AUDIENCE`), checked when set; required under the production
    /// profile, so tokens the identity provider signed for another application are refused.
    pub audience: Option<String>,
    /// The claim that carries the plan (`A2A__AUTH__PLAN_CLAIM`).
    pub plan_claim: String,
    /// Clock skew tolerated on `exp` and `nbf`, in seconds.
    pub leeway_secs: u64,
    /// Shortest interval between two JWKS fetches, in seconds (at least 1), so unknown `kid`s
    /// and bad signatures cannot cause a fetch storm.
    pub jwks_min_refresh_secs: u64,
    /// The JWKS is fetched again every this many seconds (at least 1), so a key the issuer
    /// removed stops being trusted then, even when no token names a new `kid`.
    pub jwks_refresh_secs: u64,
    /// Authorization servers named in the protected-resource metadata (defaults to the issuer).
    pub authorization_servers: Vec<String>,
    /// In `none` mode: the user every request acts as.
    pub none_sub: String,
    /// In `none` mode: that user's plan.
    pub none_plan: Plan,
}

impl Default for AuthSettings {
    fn default() -> Self {
        AuthSettings {
            mode: AuthMode::Hs256,
            hs256_secret: None,
            jwks_url: None,
            issuer: None,
            audience: None,
            plan_claim: "plan".into(),
            leeway_secs: 30,
            jwks_min_refresh_secs: 60,
            jwks_refresh_secs: 600,
            authorization_servers: Vec::new(),
            none_sub: "local-user".into(),
            none_plan: Plan::Pro,
        }
    }
}

/// A subscription plan. Only paid plans may call the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Plan {
    /// No A2A access.
    Free,
    /// Paid, individual.
    Pro,
    /// Paid, team.
    Organization,
    /// Paid, contract limits.
    Enterprise,
}

impl Plan {
    /// Reads a plan name as found in a token; anything unknown counts as free.
    pub fn from_claim(value: &str) -> Plan {
        match value.trim().to_ascii_lowercase().as_str() {
            "pro" => Plan::Pro,
            "organization" | "organisation" | "org" => Plan::Organization,
            "enterprise" => Plan::Enterprise,
            _ => Plan::Free,
        }
    }

    /// The lowercase name, for logs, metrics and tokens.
    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Pro => "pro",
            Plan::Organization => "organization",
            Plan::Enterprise => "enterprise",
        }
    }

    /// Whether the plan includes A2A.
    pub fn allows_a2a(self) -> bool {
        self != Plan::Free
    }
}

impl std::str::FromStr for Plan {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "free" => Ok(Plan::Free),
            "pro" => Ok(Plan::Pro),
            "organization" => Ok(Plan::Organization),
            "enterprise" => Ok(Plan::Enterprise),
            other => Err(format!(
                "unknown plan `{other}`; use free, pro, organization or enterprise"
            )),
        }
    }
}

impl AuthSettings {
    /// Checks the section's values that serde could not; `bind` is the address the server
    /// listens on (authentication may be off on a loopback address only).
    pub(super) fn validate(&self, bind: SocketAddr) -> Result<(), ConfigError> {
        match self.mode {
            AuthMode::Hs256 => {
                if let Some(secret) = &self.hs256_secret
                    && secret.len() < 32
                {
                    return Err(ConfigError::invalid(
                        "auth.hs256_secret",
                        "must be at least 32 characters (e.g. `openssl rand -hex 32`)",
                    ));
                }
            }
            AuthMode::Jwks => match &self.jwks_url {
                Some(url) if url.starts_with("http://") || url.starts_with("https://") => {}
                Some(_) => {
                    return Err(ConfigError::invalid(
                        "auth.jwks_url",
                        "must be an http:// or https:// URL",
                    ));
                }
                None => {
                    return Err(ConfigError::invalid(
                        "auth.jwks_url",
                        "is required when auth.mode is `jwks`",
                    ));
                }
            },
            AuthMode::None => {
                if !bind.ip().is_loopback() {
                    return Err(ConfigError::invalid(
                        "auth.mode",
                        format!(
                            "`none` turns authentication off, so it is only allowed on a loopback bind address, not {bind}"
                        ),
                    ));
                }
            }
        }
        for (key, value) in [
            ("auth.jwks_min_refresh_secs", self.jwks_min_refresh_secs),
            ("auth.jwks_refresh_secs", self.jwks_refresh_secs),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "must be at least 1 (seconds)"));
            }
        }
        if self.plan_claim.trim().is_empty() {
            return Err(ConfigError::invalid("auth.plan_claim", "must name a claim"));
        }
        Ok(())
    }
}
