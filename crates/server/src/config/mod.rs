//! One typed configuration, layered: built-in defaults → `config/default.toml` →
//! `config/{profile}.toml` → environment variables `A2A__SECTION__KEY`.
//!
//! Every value is checked at start, and a bad one stops the start with a message naming the key
//! (and the environment variable that sets it), so a typo never becomes a surprise in production.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use skills::qa::LlmSettings;
use skills::{LiturgySettings, SkillSettings};

mod auth;
mod conformance;
mod grpc;
mod limits;
mod push;
mod server;
mod store;
mod tasks;
mod telemetry;

pub use auth::{AuthMode, AuthSettings, Plan};
pub use conformance::ConformanceSettings;
use corpus::SearchMode;
pub use grpc::GrpcSettings;
pub use limits::{LimitBackend, LimitFailMode, LimitSettings, PlanLimits};
pub use push::PushSettings;
pub use server::{MAX_SERVING_THREADS, ServerSettings, Threading};
pub use store::{StoreBackend, StoreSettings};
pub use tasks::TaskSettings;
pub use telemetry::TelemetrySettings;

/// The whole configuration of a server process.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Listening socket, public URL, body limit.
    pub server: ServerSettings,
    /// Token verification and plans.
    pub auth: AuthSettings,
    /// Where tasks are kept.
    pub store: StoreSettings,
    /// Per-plan rate limits.
    pub limits: LimitSettings,
    /// Tasks that run after the call returns: caps, leases, event logs, streams.
    pub tasks: TaskSettings,
    /// What the agent card says about this deployment.
    pub agent: AgentSettings,
    /// The data directory (Bible text, corpus, development secret).
    pub data: DataSettings,
    /// Calendar options for the liturgical skills.
    pub liturgy: LiturgySettings,
    /// The OpenAI-compatible model behind `catholic_qa` (`A2A__LLM__BASE_URL`, `…__MODEL`,
    /// `…__API_KEY`); without a base URL the answers are extractive.
    pub llm: LlmSettings,
    /// Log format and level.
    pub log: LogSettings,
    /// Trace export to an OpenTelemetry collector (off unless `otlp_endpoint` is set).
    pub telemetry: TelemetrySettings,
    /// The client conformance kit (off unless enabled).
    pub conformance: ConformanceSettings,
    /// How the document corpus is searched.
    pub corpus: CorpusSettings,
    /// Push notifications: SSRF rules, signing, retries and caps.
    pub push: PushSettings,
    /// The gRPC binding: an optional port of its own and the target the card names.
    pub grpc: GrpcSettings,
    /// The profile these settings were loaded with (`A2A_PROFILE`); not a key of its own.
    #[serde(skip)]
    pub profile: String,
}

/// What the agent card says about the deployment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AgentSettings {
    /// `protocolVersion` of the card (`0.3.0` so current SDK clients connect; `0.2.6` as hosted).
    pub protocol_version: String,
    /// Agent name.
    pub name: String,
    /// Agent description.
    pub description: String,
    /// Organisation running the deployment.
    pub provider_organization: String,
    /// Its URL.
    pub provider_url: String,
    /// Documentation URL, if any.
    pub documentation_url: Option<String>,
    /// Serve streamed answers and resubscription (`A2A__AGENT__STREAMING`), advertised as
    /// `capabilities.streaming`; off, those methods are refused as the hosted reference
    /// refuses them.
    pub streaming: bool,
    /// Serve the push-notification config methods and inline configs on sends, and POST a
    /// task's changes to its webhooks (`A2A__AGENT__PUSH_NOTIFICATIONS`), advertised as
    /// `capabilities.pushNotifications`; off, those methods are refused and inline configs
    /// ignored, as the hosted reference does.
    pub push_notifications: bool,
    /// Sign the agent cards (A2A 1.0 §8.4, `A2A__AGENT__SIGN_CARD`): each form of each card
    /// carries a JWS over its canonical form, made with the key of `push.signing_key_path`,
    /// whose public half `/.well-known/jwks.json` serves. Unset: on when that key file is
    /// configured, off otherwise (a key generated at start would give every replica a
    /// signature, and so an `ETag`, of its own); `true` without the key file is refused at
    /// start.
    pub sign_card: Option<bool>,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            protocol_version: "0.3.0".into(),
            name: "Magisterium A2A".into(),
            description: "A self-hosted Catholic knowledge agent: questions answered with citations, document search and retrieval, Mass readings and the saints of the day.".into(),
            provider_organization: "magisterium-a2a".into(),
            provider_url: "https://example.invalid".into(),
            documentation_url: None,
            streaming: true,
            push_notifications: true,
            sign_card: None,
        }
    }
}

/// Where data files live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DataSettings {
    /// The data directory (`A2A__DATA__DIR`).
    pub dir: PathBuf,
}

impl Default for DataSettings {
    fn default() -> Self {
        DataSettings {
            dir: PathBuf::from("./data"),
        }
    }
}

/// Corpus search settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CorpusSettings {
    /// `bm25` (default) or `hybrid`: BM25 fused with sentence embeddings, when the server is
    /// built with `--features embeddings` and `data install-model` has run
    /// (`A2A__CORPUS__SEARCH_MODE`).
    pub search_mode: SearchMode,
}

/// Log output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines, for development.
    Pretty,
    /// One JSON object per line, for log shippers.
    Json,
}

/// Log settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LogSettings {
    /// `pretty` or `json`.
    pub format: LogFormat,
    /// A `tracing` filter, e.g. `info` or `magisterium_a2a=debug`; `RUST_LOG` wins when set.
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::Pretty,
            level: "info".into(),
        }
    }
}

/// Why the configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file or variable could not be read as the type of its key.
    #[error("configuration error: {0}")]
    Load(Box<figment::Error>),
    /// A value was read but makes no sense.
    #[error("configuration error: `{key}` (env {env}): {message}")]
    Invalid {
        /// The dotted key, e.g. `auth.jwks_url`.
        key: &'static str,
        /// The environment variable that sets it.
        env: String,
        /// What is wrong and what would be right.
        message: String,
    },
    /// Keys the profile cannot run without are not set.
    #[error(
        "configuration error: the `{profile}` profile requires {keys}; set each and start again"
    )]
    Required {
        /// The profile, e.g. `production`.
        profile: String,
        /// Every missing key with its environment variable, e.g.
        /// `` `auth.issuer` (env A2A__AUTH__ISSUER) ``.
        keys: String,
    },
    /// A profile was chosen whose file does not exist (a typo would otherwise silently run
    /// with the development defaults).
    #[error(
        "configuration error: the profile `{profile}` was chosen (A2A_PROFILE or --profile) but {} does not exist",
        path.display()
    )]
    MissingProfile {
        /// The profile asked for.
        profile: String,
        /// The file it needs.
        path: PathBuf,
    },
}

impl ConfigError {
    fn invalid(key: &'static str, message: impl Into<String>) -> Self {
        ConfigError::Invalid {
            key,
            env: env_name(key),
            message: message.into(),
        }
    }
}

/// Whether a Redis URL (or a comma-separated list of cluster nodes) does not parse.
fn invalid_redis_url(urls: &str) -> bool {
    urls.split(',')
        .any(|u| redis::Client::open(u.trim()).is_err())
}

/// The environment variable that sets a dotted key: `auth.issuer` → `A2A__AUTH__ISSUER`.
fn env_name(key: &str) -> String {
    format!("A2A__{}", key.replace('.', "__").to_uppercase())
}

/// The profile whose rules refuse unsafe settings (see `docs/security.md`).
pub const PRODUCTION_PROFILE: &str = "production";

/// Where to read configuration files from, and which profile to layer on top.
#[derive(Debug, Clone)]
pub struct ConfigSource {
    /// The folder holding `default.toml` and `{profile}.toml`.
    pub dir: PathBuf,
    /// The profile, e.g. `development` or `production`.
    pub profile: String,
    /// Whether the profile was chosen (`A2A_PROFILE` or `--profile`) rather than the implicit
    /// `development`: a chosen profile must have its file.
    pub profile_chosen: bool,
}

impl Default for ConfigSource {
    fn default() -> Self {
        let chosen = std::env::var("A2A_PROFILE").ok();
        ConfigSource {
            dir: PathBuf::from(std::env::var("A2A_CONFIG_DIR").unwrap_or_else(|_| "config".into())),
            profile_chosen: chosen.is_some(),
            profile: chosen.unwrap_or_else(|| "development".into()),
        }
    }
}

impl Settings {
    /// Reads defaults, the two files and the environment, then validates. `default.toml` is
    /// optional; the profile's file is required when the profile was chosen.
    pub fn load(source: &ConfigSource) -> Result<Settings, ConfigError> {
        let profile_file = source.dir.join(format!("{}.toml", source.profile));
        if source.profile_chosen && !profile_file.is_file() {
            return Err(ConfigError::MissingProfile {
                profile: source.profile.clone(),
                path: profile_file,
            });
        }
        let figment = Self::figment(&source.dir, &source.profile);
        let mut settings: Settings = figment
            .extract()
            .map_err(|e| ConfigError::Load(Box::new(e)))?;
        settings.profile = source.profile.clone();
        settings.validate()?;
        Ok(settings)
    }

    /// The layered sources, without extracting them.
    pub fn figment(dir: &Path, profile: &str) -> Figment {
        Figment::from(Serialized::defaults(Settings::default()))
            .merge(Toml::file(dir.join("default.toml")))
            .merge(Toml::file(dir.join(format!("{profile}.toml"))))
            .merge(Env::prefixed("A2A__").split("__").lowercase(true))
    }

    /// Calls one user may have running at once: `server.max_in_flight_per_user`, and never
    /// more than `server.max_in_flight`; in `auth.mode = "none"`, where every call is the one
    /// local user's, all of `server.max_in_flight`.
    pub fn in_flight_per_user(&self) -> usize {
        if self.auth.mode == AuthMode::None {
            return self.server.max_in_flight;
        }
        self.server
            .max_in_flight_per_user
            .min(self.server.max_in_flight)
    }

    /// What the skills read of the configuration.
    pub fn skill_settings(&self) -> SkillSettings {
        SkillSettings {
            data_dir: self.data.dir.clone(),
            liturgy: self.liturgy.clone(),
            llm: self.llm.clone(),
            search_mode: self.corpus.search_mode,
            trace_context: None,
        }
    }

    /// The trusted proxies, parsed: each entry a CIDR (`10.0.0.0/8`, `fd00::/8`) or a single
    /// address.
    pub fn trusted_proxies(&self) -> Result<Vec<IpNet>, ConfigError> {
        self.server
            .trusted_proxies
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                entry
                    .parse::<IpNet>()
                    .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| {
                        ConfigError::invalid(
                            "server.trusted_proxies",
                            format!(
                                "`{entry}` is not an address or a CIDR; write e.g. 10.0.0.0/8,192.168.1.10,fd00::/8"
                            ),
                        )
                    })
            })
            .collect()
    }

    /// The serving threads under `per_core` threading: as configured, or one per core the
    /// process may use; `None` under `shared`.
    pub fn serving_threads(&self) -> Option<usize> {
        match self.server.threading {
            Threading::Shared => None,
            Threading::PerCore if self.server.serving_threads > 0 => {
                Some(self.server.serving_threads)
            }
            Threading::PerCore => Some(
                std::thread::available_parallelism()
                    .map(std::num::NonZeroUsize::get)
                    .unwrap_or(1),
            ),
        }
    }

    /// The bind address, parsed.
    pub fn bind_addr(&self) -> Result<SocketAddr, ConfigError> {
        self.server.bind.parse().map_err(|_| {
            ConfigError::invalid(
                "server.bind",
                format!(
                    "`{}` is not a socket address; write e.g. 127.0.0.1:8080 or 0.0.0.0:8080",
                    self.server.bind
                ),
            )
        })
    }

    /// Whether these settings run under the production profile, whose rules refuse unsafe
    /// settings.
    pub fn is_production(&self) -> bool {
        self.profile == PRODUCTION_PROFILE
    }

    /// Under the production profile: every key it cannot run safely without, named at once;
    /// auth off refused; the JWKS fetched over `https://` only.
    fn validate_production(&self) -> Result<(), ConfigError> {
        if !self.is_production() {
            return Ok(());
        }
        if self.auth.mode == AuthMode::None {
            return Err(ConfigError::invalid(
                "auth.mode",
                "`none` turns authentication off, so it is refused under the production profile",
            ));
        }
        let mut missing = Vec::new();
        let mut require = |key: &'static str, value: &Option<String>| {
            if value.as_deref().is_none_or(|v| v.trim().is_empty()) {
                missing.push(format!("`{key}` (env {})", env_name(key)));
            }
        };
        require("auth.issuer", &self.auth.issuer);
        require("auth.audience", &self.auth.audience);
        require("server.public_url", &self.server.public_url);
        match self.auth.mode {
            AuthMode::Hs256 => require("auth.hs256_secret", &self.auth.hs256_secret),
            AuthMode::Jwks => require("auth.jwks_url", &self.auth.jwks_url),
            AuthMode::None => {}
        }
        if !missing.is_empty() {
            return Err(ConfigError::Required {
                profile: self.profile.clone(),
                keys: missing.join(", "),
            });
        }
        if self.auth.mode == AuthMode::Jwks
            && let Some(url) = &self.auth.jwks_url
            && !url.starts_with("https://")
        {
            return Err(ConfigError::invalid(
                "auth.jwks_url",
                "must be an https:// URL under the production profile (the keys decide who may call)",
            ));
        }
        Ok(())
    }

    /// Checks every value that serde could not: the profile's rules, the addresses, then
    /// each section by itself.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_production()?;
        let bind = self.bind_addr()?;
        self.trusted_proxies()?;
        self.server.validate()?;
        self.auth.validate(bind)?;
        self.store.validate()?;
        self.limits.validate(&self.store)?;
        self.conformance.validate(&self.profile)?;
        self.telemetry.validate()?;
        self.grpc.validate()?;
        if self.agent.sign_card == Some(true) && self.push.signing_key_path.is_none() {
            return Err(ConfigError::invalid(
                "agent.sign_card",
                "is true but no signing key is configured: set push.signing_key_path (env A2A__PUSH__SIGNING_KEY_PATH) to the PEM file (PKCS#8, P-256) every replica shares, or leave agent.sign_card unset",
            ));
        }
        if self.liturgy.time_zone.parse::<chrono_tz::Tz>().is_err() {
            return Err(ConfigError::invalid(
                "liturgy.time_zone",
                format!(
                    "`{}` is not an IANA time zone name (e.g. Europe/Rome, America/New_York, UTC)",
                    self.liturgy.time_zone
                ),
            ));
        }
        let sections = [
            self.liturgy.invalid_key(),
            self.push.invalid_key(),
            self.tasks.invalid_key(),
        ];
        if let Some((key, reason)) = sections.into_iter().flatten().next() {
            return Err(ConfigError::invalid(key, reason));
        }
        Ok(())
    }

    /// Whether the agent cards are signed: as `agent.sign_card` says, else when the shared key
    /// file (`push.signing_key_path`) is configured.
    pub fn signs_card(&self) -> bool {
        self.agent
            .sign_card
            .unwrap_or(self.push.signing_key_path.is_some())
    }

    /// Whether rate limits apply: as `limits.enabled` says, else unless authentication is off.
    pub fn limits_apply(&self) -> bool {
        self.limits
            .enabled
            .unwrap_or(self.auth.mode != AuthMode::None)
    }

    /// The public base URL, from config or from the address actually bound.
    pub fn public_base_url(&self, bound: SocketAddr) -> String {
        match &self.server.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => {
                let host = if bound.ip().is_unspecified() {
                    "localhost".to_string()
                } else {
                    bound.ip().to_string()
                };
                let host = if bound.is_ipv6() && host != "localhost" {
                    format!("[{host}]")
                } else {
                    host
                };
                format!("http://{host}:{}", bound.port())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_shares_the_store_redis_only_on_the_same_url() {
        let store = StoreSettings {
            backend: StoreBackend::Redis,
            redis_url: Some("redis://store:6379/0".into()),
            ..StoreSettings::default()
        };
        let limits = LimitSettings {
            backend: LimitBackend::Redis,
            ..LimitSettings::default()
        };
        assert!(limits.shares_the_store_redis(&store));
        let same_url = LimitSettings {
            redis_url: store.redis_url.clone(),
            ..limits.clone()
        };
        assert!(same_url.shares_the_store_redis(&store));
        let own_redis = LimitSettings {
            redis_url: Some("redis://limits:6379/0".into()),
            ..limits.clone()
        };
        assert!(!own_redis.shares_the_store_redis(&store));
        let local = LimitSettings {
            backend: LimitBackend::Local,
            ..limits.clone()
        };
        assert!(!local.shares_the_store_redis(&store));
        let memory = StoreSettings {
            backend: StoreBackend::Memory,
            ..store
        };
        assert!(!limits.shares_the_store_redis(&memory));
    }
}
