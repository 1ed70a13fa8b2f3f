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
use skills::{Bucket, LiturgySettings, SkillSettings};

mod push;
mod tasks;

use corpus::SearchMode;
pub use push::PushSettings;
pub use tasks::TaskSettings;

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
    /// The client conformance kit (off unless enabled).
    pub conformance: ConformanceSettings,
    /// How the document corpus is searched.
    pub corpus: CorpusSettings,
    /// Push notifications: SSRF rules, signing, retries and caps.
    pub push: PushSettings,
    /// The profile these settings were loaded with (`A2A_PROFILE`); not a key of its own.
    #[serde(skip)]
    pub profile: String,
}

/// Listening socket and HTTP limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on (`A2A__SERVER__BIND`).
    pub bind: String,
    /// Absolute base URL clients reach this server at, e.g. `https://a2a.example.org`
    /// (`A2A__SERVER__PUBLIC_URL`); defaults to one built from the bound address.
    pub public_url: Option<String>,
    /// Largest request body accepted, in bytes; larger bodies get 413.
    pub max_body_bytes: usize,
    /// Seconds a skill may run before its task ends as `failed`.
    pub request_timeout_secs: u64,
    /// Open connections at most (`A2A__SERVER__MAX_CONNECTIONS`).
    pub max_connections: usize,
    /// Calls running at once at most; one more gets 503 at once (load shedding).
    pub max_in_flight: usize,
    /// Calls one user may have running at once, counted from the moment its token is verified
    /// (before its body is read) until its answer is made
    /// (`A2A__SERVER__MAX_IN_FLIGHT_PER_USER`): one user trickling bodies or asking for slow
    /// answers holds at most this many of the `max_in_flight` slots; one more is refused at once
    /// with 429 `-32003` (bucket `in_flight`).
    pub max_in_flight_per_user: usize,
    /// A client must send its request headers within this many seconds (slow clients).
    pub header_read_timeout_secs: u64,
    /// A client must send its whole body within this many seconds (slow clients).
    pub body_read_timeout_secs: u64,
    /// Seconds an answer in progress may wait for its client to take more of it
    /// (`A2A__SERVER__WRITE_TIMEOUT_SECS`): a response body (an event stream included) whose
    /// client accepts no bytes for this long is cut, its connection closed and its stream place
    /// and memory given back.
    pub write_timeout_secs: u64,
    /// Largest request head (line and headers) in bytes; at least 8192.
    pub max_header_bytes: usize,
    /// Failed authentications per minute per client address before it is refused with 429
    /// (0 turns this off).
    pub failed_auth_per_minute_per_ip: u32,
    /// The proxies in front of the server, as comma-separated CIDRs, e.g.
    /// `10.0.0.0/8,fd00::/8` (`A2A__SERVER__TRUSTED_PROXIES`). A request from one of them has
    /// its client address read from `X-Forwarded-For`, walked from the right to the first
    /// address that is not a trusted proxy; empty: the peer address is the client.
    pub trusted_proxies: String,
    /// Seconds shutdown waits for requests in flight.
    pub shutdown_grace_secs: u64,
    /// `per_core` or `shared` (`A2A__SERVER__THREADING`): where connections are served.
    pub threading: Threading,
    /// Serving threads under `per_core` (`A2A__SERVER__SERVING_THREADS`); 0: one per core
    /// the process may use.
    pub serving_threads: usize,
    /// Whether the process may use transparent huge pages
    /// (`A2A__SERVER__TRANSPARENT_HUGE_PAGES`); off by default: a growing memory store would
    /// clear 2 MiB at a time inside requests ([`crate::huge_pages`]).
    pub transparent_huge_pages: bool,
}

/// Where the server serves its connections. Per-core threads keep each connection, and so each
/// request, on one thread: no cross-core wake-up per request (BENCHMARKS.md, "Serving
/// threads"); `shared` is tokio's work-stealing runtime, kept to compare against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Threading {
    /// One single-threaded runtime per serving thread, connections handed out in turn.
    PerCore,
    /// The one multi-threaded runtime of the process.
    Shared,
}

/// The most serving threads accepted: far above any core count, low enough that a typo cannot
/// start thousands of threads.
pub const MAX_SERVING_THREADS: usize = 1024;

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            bind: "127.0.0.1:8080".into(),
            public_url: None,
            max_body_bytes: 1024 * 1024,
            request_timeout_secs: 60,
            max_connections: 4096,
            max_in_flight: 512,
            max_in_flight_per_user: 64,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 15,
            write_timeout_secs: 30,
            max_header_bytes: 16 * 1024,
            failed_auth_per_minute_per_ip: 60,
            trusted_proxies: String::new(),
            shutdown_grace_secs: 30,
            threading: Threading::PerCore,
            serving_threads: 0,
            transparent_huge_pages: false,
        }
    }
}

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

/// Which task store backs the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    /// In-process, with TTL: the embedded default, nothing to install.
    Memory,
    /// Redis: shared by replicas, survives restarts.
    Redis,
}

/// Task storage settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreSettings {
    /// `memory` or `redis` (`A2A__STORE__BACKEND`).
    pub backend: StoreBackend,
    /// Redis URL, e.g. `redis://redis.internal:6379/0` (`A2A__STORE__REDIS_URL`); for a Redis
    /// Cluster, several seed node URLs separated by commas.
    pub redis_url: Option<String>,
    /// Treat `redis_url` as a Redis Cluster even with one seed node (`A2A__STORE__REDIS_CLUSTER`).
    pub redis_cluster: bool,
    /// Write finished tasks to Redis compressed (zstd with the shipped dictionary; both forms
    /// are always read) (`A2A__STORE__REDIS_COMPRESSED_WRITES`). Off by default in this
    /// release, so that replicas of an earlier one, which read only plain JSON, can run beside
    /// it during an upgrade; turn it on once every replica runs this release. The memory store
    /// always compresses.
    pub redis_compressed_writes: bool,
    /// How long a task is kept, in seconds (`A2A__STORE__TASK_TTL_SECS`).
    pub task_ttl_secs: u64,
    /// Most tasks the memory store keeps (`A2A__STORE__MEMORY_MAX_TASKS`); beyond it the oldest
    /// saved leave first (reading a task does not keep it longer).
    pub memory_max_tasks: u64,
    /// Most earlier tasks of one context handed to a skill as conversation history.
    pub context_history_tasks: usize,
    /// Largest stored task, as JSON bytes (`A2A__STORE__MAX_TASK_BYTES`): a continuation that
    /// would grow a task past it is refused with `-32602`, and the stored task stays as it was.
    pub max_task_bytes: usize,
    /// Bytes of stored task JSON one `ListTasks` page holds at most
    /// (`A2A__STORE__MAX_LIST_PAGE_BYTES`): a page that would pass it ends early, with its
    /// `nextPageToken`, so the client continues; a page always holds at least one task.
    pub max_list_page_bytes: usize,
    /// Bytes the memory store keeps at most, its tasks and the running tasks' event logs
    /// together (`A2A__STORE__MEMORY_MAX_BYTES`): a new task that finds it full is refused
    /// (`-32003`, naming this key); no one's task is pushed out for it.
    pub memory_max_bytes: u64,
    /// Each user's share of the memory store, in bytes (`A2A__STORE__MEMORY_MAX_BYTES_PER_USER`):
    /// a user's saves beyond it push out that user's own oldest tasks (and leave that user's
    /// event logs short), never another user's.
    pub memory_max_bytes_per_user: u64,
    /// How long one Redis command (store and limiter connections, and connecting) may take
    /// before it is an error, in milliseconds (`A2A__STORE__REDIS_TIMEOUT_MS`): a stalled Redis
    /// becomes a quick `-32603` instead of a hung request.
    pub redis_timeout_ms: u64,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            backend: StoreBackend::Memory,
            redis_url: None,
            redis_cluster: false,
            redis_compressed_writes: false,
            task_ttl_secs: 24 * 60 * 60,
            memory_max_tasks: 1_000_000,
            context_history_tasks: 10,
            max_task_bytes: 1024 * 1024,
            max_list_page_bytes: 4 * 1024 * 1024,
            memory_max_bytes: 1024 * 1024 * 1024,
            memory_max_bytes_per_user: 64 * 1024 * 1024,
            redis_timeout_ms: 2000,
        }
    }
}

/// One paid plan's limits, in calls per minute per user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlanLimits {
    /// Calls to the default bucket (every skill but `catholic_qa`); 0 refuses them all.
    pub default_per_minute: u32,
    /// Calls to the expensive bucket (`catholic_qa`); 0 refuses them all.
    pub expensive_per_minute: u32,
}

impl Default for PlanLimits {
    fn default() -> Self {
        PlanLimits {
            default_per_minute: 15,
            expensive_per_minute: 2,
        }
    }
}

/// Where rate-limit state lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitBackend {
    /// In-process (`governor`): exact for one replica.
    Local,
    /// Redis (a GCRA script on Redis' clock): one combined limit across replicas.
    Redis,
}

/// What the Redis limiter does when Redis does not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LimitFailMode {
    /// Fall back to this replica's in-process limiter (each replica then limits on its own).
    Local,
    /// Allow the call.
    Open,
    /// Refuse the call with an internal error.
    Closed,
}

/// Rate limits per plan (free is refused before any limit applies).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitSettings {
    /// Whether the limits apply (`A2A__LIMITS__ENABLED`). Unset: they apply when tokens are
    /// checked, and not in `auth.mode = "none"`, where the one local user would only throttle
    /// itself (a test suite's calls would hit the expensive bucket at once).
    pub enabled: Option<bool>,
    /// `local` or `redis` (`A2A__LIMITS__BACKEND`).
    pub backend: LimitBackend,
    /// Redis for the limiter (`A2A__LIMITS__REDIS_URL`); defaults to `store.redis_url`.
    pub redis_url: Option<String>,
    /// `local`, `open` or `closed` when Redis fails (`A2A__LIMITS__ON_REDIS_ERROR`).
    pub on_redis_error: LimitFailMode,
    /// How long a limiter call to Redis may take before it counts as a failure.
    pub redis_timeout_ms: u64,
    /// Reads (`tasks/get`, `tasks/cancel`) per minute per user, whatever the plan
    /// (`A2A__LIMITS__READS_PER_MINUTE`); one more is refused with 429 `-32003`, bucket `read`.
    pub reads_per_minute: u32,
    /// Pro plan (`A2A__LIMITS__PRO__DEFAULT_PER_MINUTE`, …).
    pub pro: PlanLimits,
    /// Organization plan.
    pub organization: PlanLimits,
    /// Enterprise plan.
    pub enterprise: PlanLimits,
}

impl Default for LimitSettings {
    fn default() -> Self {
        LimitSettings {
            enabled: None,
            backend: LimitBackend::Local,
            redis_url: None,
            on_redis_error: LimitFailMode::Local,
            redis_timeout_ms: 250,
            reads_per_minute: 600,
            pro: PlanLimits::default(),
            organization: PlanLimits::default(),
            enterprise: PlanLimits {
                default_per_minute: 120,
                expensive_per_minute: 20,
            },
        }
    }
}

impl LimitSettings {
    /// The limiter's Redis: its own URL, else the store's.
    pub fn effective_redis_url<'a>(&'a self, store: &'a StoreSettings) -> Option<&'a str> {
        self.redis_url.as_deref().or(store.redis_url.as_deref())
    }

    /// Whether the limiter keeps its buckets in the task store's Redis (both on Redis, the
    /// limiter without a URL of its own or with the store's): then a save may charge its call
    /// in the same script, one round trip instead of two.
    pub fn shares_the_store_redis(&self, store: &StoreSettings) -> bool {
        self.backend == LimitBackend::Redis
            && store.backend == StoreBackend::Redis
            && store.redis_url.is_some()
            && self.effective_redis_url(store) == store.redis_url.as_deref()
    }

    /// Every bucket of a paid plan with its calls per minute; `None` for free.
    pub fn buckets_for(&self, plan: Plan) -> Option<[(Bucket, u32); 3]> {
        self.for_plan(plan).map(|limits| {
            [
                (Bucket::Default, limits.default_per_minute),
                (Bucket::Expensive, limits.expensive_per_minute),
                (Bucket::Read, self.reads_per_minute),
            ]
        })
    }

    /// The limits of a paid plan; `None` for free.
    pub fn for_plan(&self, plan: Plan) -> Option<PlanLimits> {
        match plan {
            Plan::Free => None,
            Plan::Pro => Some(self.pro),
            Plan::Organization => Some(self.organization),
            Plan::Enterprise => Some(self.enterprise),
        }
    }
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

    /// Checks every value that serde could not.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_production()?;
        let bind = self.bind_addr()?;
        self.trusted_proxies()?;
        if let Some(url) = &self.server.public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError::invalid(
                "server.public_url",
                "must be an absolute http:// or https:// URL",
            ));
        }
        if self.server.max_body_bytes < 1024 {
            return Err(ConfigError::invalid(
                "server.max_body_bytes",
                "must be at least 1024",
            ));
        }
        for (key, value) in [
            ("server.max_connections", self.server.max_connections as u64),
            ("server.max_in_flight", self.server.max_in_flight as u64),
            (
                "server.max_in_flight_per_user",
                self.server.max_in_flight_per_user as u64,
            ),
            (
                "server.header_read_timeout_secs",
                self.server.header_read_timeout_secs,
            ),
            (
                "server.body_read_timeout_secs",
                self.server.body_read_timeout_secs,
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "must be at least 1"));
            }
        }
        if self.server.serving_threads > MAX_SERVING_THREADS {
            return Err(ConfigError::invalid(
                "server.serving_threads",
                format!("must be at most {MAX_SERVING_THREADS} (0: one per core)"),
            ));
        }
        if self.server.max_header_bytes < 8192 {
            return Err(ConfigError::invalid(
                "server.max_header_bytes",
                "must be at least 8192",
            ));
        }
        if self.server.request_timeout_secs == 0 {
            return Err(ConfigError::invalid(
                "server.request_timeout_secs",
                "must be at least 1",
            ));
        }
        match self.auth.mode {
            AuthMode::Hs256 => {
                if let Some(secret) = &self.auth.hs256_secret
                    && secret.len() < 32
                {
                    return Err(ConfigError::invalid(
                        "auth.hs256_secret",
                        "must be at least 32 characters (e.g. `openssl rand -hex 32`)",
                    ));
                }
            }
            AuthMode::Jwks => match &self.auth.jwks_url {
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
            (
                "auth.jwks_min_refresh_secs",
                self.auth.jwks_min_refresh_secs,
            ),
            ("auth.jwks_refresh_secs", self.auth.jwks_refresh_secs),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "must be at least 1 (seconds)"));
            }
        }
        if self.auth.plan_claim.trim().is_empty() {
            return Err(ConfigError::invalid("auth.plan_claim", "must name a claim"));
        }
        if self.store.backend == StoreBackend::Redis && self.store.redis_url.is_none() {
            return Err(ConfigError::invalid(
                "store.redis_url",
                "is required when store.backend is `redis`",
            ));
        }
        let invalid_url = |urls: &str| {
            urls.split(',')
                .any(|u| redis::Client::open(u.trim()).is_err())
        };
        if let Some(url) = &self.store.redis_url
            && invalid_url(url)
        {
            return Err(ConfigError::invalid(
                "store.redis_url",
                "is not a valid Redis URL (e.g. redis://redis.internal:6379/0, or comma-separated cluster nodes)",
            ));
        }
        if let Some(url) = &self.limits.redis_url
            && invalid_url(url)
        {
            return Err(ConfigError::invalid(
                "limits.redis_url",
                "is not a valid Redis URL (e.g. redis://redis.internal:6379/0)",
            ));
        }
        if self.limits.backend == LimitBackend::Redis
            && self.limits.redis_url.is_none()
            && self.store.redis_url.is_none()
        {
            return Err(ConfigError::invalid(
                "limits.redis_url",
                "is required when limits.backend is `redis` (or set store.redis_url)",
            ));
        }
        if self.limits.redis_timeout_ms == 0 {
            return Err(ConfigError::invalid(
                "limits.redis_timeout_ms",
                "must be at least 1",
            ));
        }
        if self.conformance.enabled
            && !ConformanceSettings::profile_allows(&self.profile)
            && !self.conformance.allow_with_production_profile
        {
            return Err(ConfigError::invalid(
                "conformance.enabled",
                format!(
                    "the conformance kit simulates failures and records client behaviour, so it runs only with the development or test profile (this is `{}`); set A2A__CONFORMANCE__ALLOW_WITH_PRODUCTION_PROFILE=true as well if you really mean it",
                    self.profile
                ),
            ));
        }
        if self.conformance.enabled && self.conformance.max_memory_bytes < 64 * 1024 {
            return Err(ConfigError::invalid(
                "conformance.max_memory_bytes",
                "must be at least 65536 (bytes)",
            ));
        }
        if self.store.task_ttl_secs == 0 {
            return Err(ConfigError::invalid(
                "store.task_ttl_secs",
                "must be at least 1",
            ));
        }
        if self.store.redis_timeout_ms == 0 {
            return Err(ConfigError::invalid(
                "store.redis_timeout_ms",
                "must be at least 1 (milliseconds)",
            ));
        }
        if self.store.max_task_bytes < 4096 {
            return Err(ConfigError::invalid(
                "store.max_task_bytes",
                "must be at least 4096 (bytes)",
            ));
        }
        if self.store.max_list_page_bytes < 4096 {
            return Err(ConfigError::invalid(
                "store.max_list_page_bytes",
                "must be at least 4096 (bytes)",
            ));
        }
        if self.store.memory_max_bytes_per_user < self.store.max_task_bytes as u64 {
            return Err(ConfigError::invalid(
                "store.memory_max_bytes_per_user",
                "must be at least store.max_task_bytes (one task of the largest size)",
            ));
        }
        if self.store.memory_max_bytes < self.store.memory_max_bytes_per_user {
            return Err(ConfigError::invalid(
                "store.memory_max_bytes",
                "must be at least store.memory_max_bytes_per_user",
            ));
        }
        if self.server.write_timeout_secs == 0 {
            return Err(ConfigError::invalid(
                "server.write_timeout_secs",
                "must be at least 1",
            ));
        }
        if self.limits.reads_per_minute == 0 {
            return Err(ConfigError::invalid(
                "limits.reads_per_minute",
                "must be at least 1",
            ));
        }
        if self.store.memory_max_tasks == 0 {
            return Err(ConfigError::invalid(
                "store.memory_max_tasks",
                "must be at least 1",
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
        if let Some((key, reason)) = self.liturgy.invalid_key() {
            return Err(ConfigError::invalid(key, reason));
        }
        if let Some((key, reason)) = self.push.invalid_key() {
            return Err(ConfigError::invalid(key, reason));
        }
        if let Some((key, reason)) = self.tasks.invalid_key() {
            return Err(ConfigError::invalid(key, reason));
        }
        Ok(())
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

/// Settings of the kit (`[conformance]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConformanceSettings {
    /// Turns the kit on (`A2A__CONFORMANCE__ENABLED`).
    pub enabled: bool,
    /// The second, explicit key needed to enable the kit with any profile but `development`
    /// and `test`.
    pub allow_with_production_profile: bool,
    /// Longest `slow;ms=N` delay honoured.
    pub max_slow_ms: u64,
    /// A client polling a terminal task more often than this is reported.
    pub min_poll_interval_ms: u64,
    /// Bytes the kit may keep for its runs, findings and remembered tokens, task ids and
    /// buckets; the oldest runs are dropped first when it is full.
    pub max_memory_bytes: usize,
    /// Most findings kept per run (oldest dropped first).
    pub max_findings_per_run: usize,
}

impl Default for ConformanceSettings {
    fn default() -> Self {
        ConformanceSettings {
            enabled: false,
            allow_with_production_profile: false,
            max_slow_ms: 10_000,
            min_poll_interval_ms: 1_000,
            max_memory_bytes: 16 * 1024 * 1024,
            max_findings_per_run: 500,
        }
    }
}

impl ConformanceSettings {
    /// Whether the kit may run under `profile` without the second key: only where no real
    /// user is expected.
    pub fn profile_allows(profile: &str) -> bool {
        matches!(profile, "development" | "test")
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
