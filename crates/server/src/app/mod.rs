//! Start-up: builds the store, limiter, authenticator and skills from settings, binds the
//! listener, and serves until shutdown.

pub(crate) mod documents;
pub(crate) mod router;

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use a2a_types::AgentCard;
use axum::body::Bytes;
use corpus::Corpus;
use futures::FutureExt;
use skills::documents::{DocumentFetch, DocumentSearch};
use skills::qa::{CalendarFacts, CatholicQa};
use skills::readings::LiturgicalReadings;
use skills::saints::SaintsOfTheDay;
use skills::{Skill, SkillError, SkillRegistry, SkillSettings};
use tokio::net::TcpListener;

use crate::auth::{AuthSetupError, Authenticator};
use crate::bindings::AppState;
use crate::bindings::card::ServedCards;
use crate::bindings::card::signed::CardSigner;
use crate::bindings::jsonrpc::envelope::BodyLimits;
use crate::config::{AuthMode, ConfigError, LimitBackend, Settings, StoreBackend};
use crate::conformance::Kit;
use crate::edge::guard::Guard;
use crate::edge::serve::{self, ConnectionLimits, Threads};
use crate::limits::user_slots::UserSlots;
use crate::limits::{LocalLimiter, RateLimiter, RedisLimiter, Unmetered};
use crate::metrics::Metrics;
use crate::paths;
use crate::pipeline::Pipeline;
use crate::pipeline::call::Capabilities;
use crate::pipeline::kit::KitHook;
use crate::push::fault::FaultLog;
use crate::push::{Push, PushError};
use crate::redis_conn::{self, RedisConnection};
use crate::runtime::{
    MemoryBackend, RedisBackend, RuntimeBackend, RuntimeSettings, TaskRuntime, TransitionObserver,
};
use crate::service::{A2aService, SizeCaps, Tasks};
use crate::store::{MemoryStore, RedisStore, StoreError, TaskStore, TracedStore};

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The authenticator could not be built.
    #[error("auth: {0}")]
    Auth(#[from] AuthSetupError),
    /// The store could not be reached or migrated.
    #[error("task store: {0}")]
    Store(#[from] StoreError),
    /// Push notifications could not be set up (signing key, Redis).
    #[error("push notifications: {0}")]
    Push(#[from] PushError),
    /// The document corpus refused an operation.
    #[error("corpus: {0}")]
    Corpus(#[from] corpus::CorpusError),
    /// The development secret file may be read by other users of the machine, and anyone who
    /// reads it can sign tokens for any user and plan.
    #[error(
        "auth: the development HS256 secret {} has mode {mode:03o}: group or others may read it, and whoever reads it can sign tokens; run `chmod 600 {}` (or delete it to have a new one generated)",
        path.display(),
        path.display()
    )]
    UnsafeSecretFile {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A skill's data is present but unusable.
    #[error("skills: {0}")]
    Skills(String),
    /// The trace exporter (`telemetry.otlp_endpoint`) could not be built.
    #[error("telemetry: {0}")]
    Telemetry(#[from] crate::telemetry::ExporterError),
    /// A command could not do all it was asked.
    #[error("{0}")]
    Command(String),
    /// The listener or a data file failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// The file holding the development HS256 secret, inside the data directory.
pub fn dev_secret_path(data_dir: &Path) -> PathBuf {
    data_dir.join("dev-hs256-secret")
}

/// Where the HS256 secret came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    /// `auth.hs256_secret`.
    Configured,
    /// Read from the data directory (made by an earlier start).
    DevFile(PathBuf),
    /// Generated now and written to the data directory.
    Generated(PathBuf),
}

/// The HS256 secret in effect: configured, or the development one in the data directory
/// (generated on first use, so `serve` and `token` agree without any configuration). Under the
/// production profile only a configured secret is used, and the development file is neither
/// read nor made. A development file that group or others may read is refused: anyone who can
/// read it can sign tokens for any user and plan.
pub fn hs256_secret(
    settings: &Settings,
    create: bool,
) -> Result<Option<(String, SecretSource)>, StartupError> {
    if settings.auth.mode != AuthMode::Hs256 {
        return Ok(None);
    }
    if let Some(secret) = &settings.auth.hs256_secret {
        return Ok(Some((secret.clone(), SecretSource::Configured)));
    }
    if settings.is_production() {
        return Err(StartupError::Auth(AuthSetupError::MissingSecret));
    }
    let path = dev_secret_path(&settings.data.dir);
    let io = |context: &str, source| StartupError::Io {
        context: format!("{context} {}", path.display()),
        source,
    };
    if let Some(mode) = file_mode(&path).map_err(|e| io("reading the permissions of", e))?
        && mode & 0o077 != 0
    {
        return Err(StartupError::UnsafeSecretFile { path, mode });
    }
    match std::fs::read_to_string(&path) {
        Ok(secret) if secret.trim().len() >= 32 => {
            return Ok(Some((
                secret.trim().to_string(),
                SecretSource::DevFile(path),
            )));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("reading", e)),
    }
    if !create {
        return Ok(None);
    }
    let secret = hex::encode(rand::random::<[u8; 32]>());
    std::fs::create_dir_all(&settings.data.dir).map_err(|e| io("creating the folder of", e))?;
    write_private(&path, &secret).map_err(|e| io("writing", e))?;
    Ok(Some((secret, SecretSource::Generated(path))))
}

/// The permission bits of a file, `None` when it does not exist (or the platform has none).
fn file_mode(path: &Path) -> std::io::Result<Option<u32>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        match std::fs::metadata(path) {
            Ok(metadata) => Ok(Some(metadata.permissions().mode() & 0o777)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(None)
    }
}

fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")
}

/// The skills this build offers, each routed to its implementation, in card order. Data that
/// is missing makes a skill answer with `failed` tasks saying so; data that is present but
/// broken (a corrupt corpus, a malformed martyrology file) stops the start.
pub fn skill_registry(settings: &SkillSettings) -> Result<SkillRegistry, StartupError> {
    let corpus = Arc::new(
        Corpus::open_with_mode(&settings.data_dir, settings.search_mode)
            .map_err(|e| StartupError::Skills(format!("corpus: {e}")))?,
    );
    if corpus.is_empty() {
        tracing::warn!(
            data_dir = %settings.data_dir.display(),
            "the document corpus is empty: catholic_qa, document_search and document_fetch have nothing to answer from; fill it with `{}` and restart",
            skills::readings::INSTALL_BIBLE_COMMAND
        );
    }
    let skill_error = |name: &str, e: SkillError| StartupError::Skills(format!("{name}: {e}"));
    let readings: Arc<dyn Skill> = Arc::new(
        LiturgicalReadings::new(&settings.liturgy, &settings.data_dir)
            .map_err(|e| skill_error("liturgical_readings", e))?,
    );
    let saints: Arc<dyn Skill> = Arc::new(
        SaintsOfTheDay::new(&settings.liturgy, &settings.data_dir)
            .map_err(|e| skill_error("saints_of_the_day", e))?,
    );
    let calendar = CalendarFacts::new(Arc::clone(&saints), Arc::clone(&readings));
    let mut registry = SkillRegistry::new();
    registry.register(Arc::new(
        CatholicQa::new(Arc::clone(&corpus), &settings.llm)
            .map_err(|e| skill_error("catholic_qa", e))?
            .with_calendar(calendar)
            .with_trace_context(settings.trace_context),
    ));
    registry.register(Arc::new(DocumentSearch::new(Arc::clone(&corpus))));
    registry.register(Arc::new(DocumentFetch::new(corpus)));
    registry.register(readings);
    registry.register(saints);
    Ok(registry)
}

/// The connection to the store's Redis (its URL, cluster or sentinels), when the store is
/// Redis: made once, and shared by everything that talks to that Redis.
async fn store_redis(settings: &Settings) -> Result<Option<RedisConnection>, StartupError> {
    match settings.store.backend {
        StoreBackend::Memory => Ok(None),
        StoreBackend::Redis => Ok(Some(
            redis_conn::open(&redis_conn::Target::of_store(&settings.store))
                .await
                .map_err(StoreError::from)?,
        )),
    }
}

/// Opens the configured task store (running migrations for Redis) and the runtime of the tasks
/// that run after their call returns, over the same backing, telling `observer` of every state
/// change of a task.
pub async fn open_store(
    settings: &Settings,
    observer: Option<Arc<dyn TransitionObserver>>,
    redis: Option<&RedisConnection>,
) -> Result<(Arc<dyn TaskStore>, TaskRuntime), StartupError> {
    let ttl = Duration::from_secs(settings.store.task_ttl_secs);
    let runtime_settings = RuntimeSettings::new(&settings.tasks, settings.store.max_task_bytes);
    let (store, backend): (Arc<dyn TaskStore>, Arc<dyn RuntimeBackend>) =
        match settings.store.backend {
            StoreBackend::Memory => {
                let store = Arc::new(
                    MemoryStore::new(ttl, settings.store.memory_max_tasks).with_byte_budget(
                        settings.store.memory_max_bytes,
                        settings.store.memory_max_bytes_per_user,
                    ),
                );
                let backend = Arc::new(MemoryBackend::new(
                    Arc::clone(&store),
                    runtime_settings.log.ttl,
                    settings.store.memory_max_tasks,
                ));
                (store, backend)
            }
            StoreBackend::Redis => {
                let connection = match redis {
                    Some(shared) => shared.clone(),
                    None => redis_conn::open(&redis_conn::Target::of_store(&settings.store))
                        .await
                        .map_err(StoreError::from)?,
                };
                let compressed_writes = settings.store.redis_compressed_writes;
                let store = RedisStore::over(connection.clone(), ttl)
                    .await?
                    .with_compressed_writes(compressed_writes);
                let backend =
                    RedisBackend::connect(connection, settings.store.redis_url.as_deref(), ttl)
                        .await?
                        .with_compressed_writes(compressed_writes);
                (Arc::new(store), Arc::new(backend))
            }
        };
    // With traces exported, each store round trip is a span of the call; without, the store
    // is used directly.
    let store: Arc<dyn TaskStore> = match settings.telemetry.otlp_endpoint {
        Some(_) => Arc::new(TracedStore::new(
            store,
            match settings.store.backend {
                StoreBackend::Memory => "memory",
                StoreBackend::Redis => "redis",
            },
        )),
        None => store,
    };
    let runtime = TaskRuntime::new(backend, Arc::clone(&store), runtime_settings, observer);
    Ok((store, runtime))
}

/// A bound, ready-to-run server.
pub struct Application {
    listener: TcpListener,
    /// The gRPC binding's own listener (`grpc.bind`), serving the same routes.
    grpc_listener: Option<TcpListener>,
    router: axum::Router,
    guard: Arc<Guard>,
    connection_limits: ConnectionLimits,
    threads: Threads,
    limiter: Arc<LocalLimiter>,
    push: Arc<Push>,
    base_url: String,
    rate_limits: &'static str,
}

/// Whether rate limits apply, as the start-up line says it.
fn rate_limits_summary(settings: &Settings) -> &'static str {
    match (settings.limits_apply(), settings.auth.mode) {
        (true, _) => "on",
        (false, AuthMode::None) => {
            "off: authentication is off (auth.mode = none); A2A__LIMITS__ENABLED=true applies them"
        }
        (false, _) => "off (limits.enabled = false)",
    }
}

impl Application {
    /// Builds every part and binds the listener (port 0 picks a free port).
    pub async fn build(settings: Settings) -> Result<Application, StartupError> {
        let mut skill_settings = settings.skill_settings();
        if settings.telemetry.otlp_endpoint.is_some() {
            skill_settings.trace_context =
                Some(skills::TraceContext(crate::telemetry::traceparent));
        }
        let skills = skill_registry(&skill_settings)?;
        Self::build_with_skills(settings, skills).await
    }

    /// [`Application::build`] with a given skill registry (deployments that add skills of
    /// their own, and tests).
    pub async fn build_with_skills(
        settings: Settings,
        skills: SkillRegistry,
    ) -> Result<Application, StartupError> {
        settings.validate()?;
        install_tls_provider();
        let (listener, local) = bind(&settings).await?;
        let base_url = settings.public_base_url(local);
        let (grpc_listener, grpc_target) = bind_grpc(&settings, &base_url).await?;

        let authenticator = authenticator(&settings).await?;

        let kit = kit(&settings);
        let metrics = Arc::new(Metrics::new());
        // One connection to the store's Redis for the store, the runtime, push and the
        // limiter: through sentinels, all of them follow one primary at a time.
        let redis = store_redis(&settings).await?;
        let push = push(&settings, &base_url, redis.as_ref(), &metrics, &kit).await?;
        // Off, push is kept for its key set alone: no config is taken and nothing is pushed.
        let offered_push = settings.agent.push_notifications.then(|| Arc::clone(&push));
        let observer = offered_push
            .clone()
            .map(|push| push as Arc<dyn TransitionObserver>);
        let (store, runtime) = open_store(&settings, observer, redis.as_ref()).await?;
        let local_limiter = Arc::new(LocalLimiter::new(&settings.limits));
        let limiter = limiter(&settings, &local_limiter, &metrics, redis.as_ref()).await?;
        let tasks = Tasks {
            store: Arc::clone(&store),
            runtime: Arc::new(runtime),
            push: offered_push,
        };
        let service = service(&settings, skills, tasks, limiter, Arc::clone(&metrics));
        let card = documents::agent_card(&settings, &base_url, &grpc_target, &service);
        let signer = card_signer(&settings, &push, &base_url);
        let (cards, skill_cards) = served_cards(&card, &service, &base_url, signer)?;
        let resource = documents::protected_resource_metadata(&settings, &base_url).to_string();
        let state = Arc::new(AppState {
            pipeline: pipeline(&settings, service, authenticator, kit.clone()),
            store,
            metrics,
            cards,
            skill_cards,
            resource_metadata: Bytes::from(resource),
            challenge: documents::challenge(&base_url),
            body_limits: BodyLimits {
                max_bytes: settings.server.max_body_bytes,
                read_timeout: Duration::from_secs(settings.server.body_read_timeout_secs),
            },
            push: Arc::clone(&push),
            max_reflection_streams: settings.grpc.max_reflection_streams,
        });
        let guard = guard(&settings)?;
        let router = router::router(
            state,
            router::OuterLayers {
                guard: Arc::clone(&guard),
                body_read_timeout: Duration::from_secs(settings.server.body_read_timeout_secs),
                loopback_only: settings.auth.mode == AuthMode::None,
            },
        );
        Ok(Application {
            listener,
            grpc_listener,
            router,
            guard,
            connection_limits: connection_limits(&settings),
            threads: match settings.serving_threads() {
                Some(count) => Threads::PerCore(count),
                None => Threads::Shared,
            },
            limiter: local_limiter,
            push,
            base_url,
            rate_limits: rate_limits_summary(&settings),
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The address of the gRPC binding's own listener, when `grpc.bind` configures one.
    pub fn grpc_addr(&self) -> Option<SocketAddr> {
        self.grpc_listener
            .as_ref()
            .and_then(|listener| listener.local_addr().ok())
    }

    /// The public base URL (what the agent card advertises).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether rate limits apply, in words (`on`, or `off` and why), for the start-up line.
    pub fn rate_limits(&self) -> &'static str {
        self.rate_limits
    }

    /// Serves until `shutdown` resolves, then finishes the requests in flight.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let limiter = Arc::clone(&self.limiter);
        let guard = Arc::clone(&self.guard);
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(60));
            loop {
                tick.tick().await;
                limiter.forget_idle();
                guard.forget_idle();
            }
        });
        let push_worker = self.push.spawn_worker();
        tracing::info!(endpoint = %router::describe_bind(self.local_addr()), card = %format!("{}{}", self.base_url, paths::AGENT_CARD_LEGACY), rate_limits = self.rate_limits, threads = ?self.threads, "serving");
        let shutdown = shutdown.shared();
        // The gRPC listener serves the same routes under the same limits, on the shared runtime.
        let (grpc_listener, grpc_router) = (self.grpc_listener, self.router.clone());
        let (limits, grpc_shutdown) = (self.connection_limits, shutdown.clone());
        let grpc_served = async move {
            match grpc_listener {
                Some(listener) => {
                    tracing::info!(grpc = %listener.local_addr().map(|a| a.to_string()).unwrap_or_default(), "serving gRPC on its own port too");
                    serve::serve(
                        listener,
                        grpc_router,
                        limits,
                        Threads::Shared,
                        grpc_shutdown,
                    )
                    .await
                }
                None => Ok(()),
            }
        };
        let http_served = serve::serve(
            self.listener,
            self.router,
            self.connection_limits,
            self.threads,
            shutdown,
        );
        let (served, grpc_served) = tokio::join!(http_served, grpc_served);
        let served = served.and(grpc_served);
        sweeper.abort();
        push_worker.shutdown().await;
        served
    }
}

/// The limits every connection is served within.
fn connection_limits(settings: &Settings) -> ConnectionLimits {
    ConnectionLimits {
        max_connections: settings.server.max_connections,
        header_read_timeout: Duration::from_secs(settings.server.header_read_timeout_secs),
        write_timeout: Duration::from_secs(settings.server.write_timeout_secs),
        max_header_bytes: settings.server.max_header_bytes,
        shutdown_grace: Duration::from_secs(settings.server.shutdown_grace_secs),
    }
}

/// The methods over the skills, the tasks' places and the limiter.
fn service(
    settings: &Settings,
    skills: SkillRegistry,
    tasks: Tasks,
    limiter: Arc<dyn RateLimiter>,
    metrics: Arc<Metrics>,
) -> A2aService {
    A2aService::new(
        skills,
        tasks,
        limiter,
        metrics,
        Duration::from_secs(settings.server.request_timeout_secs),
        settings.store.context_history_tasks,
        SizeCaps {
            max_task_bytes: settings.store.max_task_bytes,
            max_list_page_bytes: settings.store.max_list_page_bytes,
        },
    )
    .with_plan_limits(settings.limits_apply().then(|| settings.limits.clone()))
}

/// The steps of a call and the service they lead to.
fn pipeline(
    settings: &Settings,
    service: A2aService,
    authenticator: Authenticator,
    kit: Option<Arc<Kit>>,
) -> Pipeline {
    Pipeline {
        service,
        authenticator: Arc::new(authenticator),
        user_slots: UserSlots::new(settings.in_flight_per_user()),
        capabilities: Capabilities {
            streaming: settings.agent.streaming,
            push_notifications: settings.agent.push_notifications,
        },
        kit: KitHook::new(kit),
    }
}

/// The edge's guard: load shedding and the failed-token budget.
fn guard(settings: &Settings) -> Result<Arc<Guard>, StartupError> {
    Ok(Arc::new(Guard::new(
        settings.server.max_in_flight,
        settings.server.failed_auth_per_minute_per_ip,
        settings.trusted_proxies()?,
    )))
}

/// The gRPC binding's own listener, when `grpc.bind` configures one, and the target the card
/// names for the binding (`grpc.public_target`, else the public URL's host with the port of
/// that listener, or of the URL).
async fn bind_grpc(
    settings: &Settings,
    base_url: &str,
) -> Result<(Option<TcpListener>, String), StartupError> {
    let target = |port| {
        settings
            .grpc
            .public_target
            .clone()
            .unwrap_or_else(|| documents::grpc_target(base_url, port))
    };
    let Some(bind) = settings.grpc.bind_addr()? else {
        return Ok((None, target(None)));
    };
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|source| StartupError::Io {
            context: format!("binding {bind} (grpc.bind)"),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| StartupError::Io {
        context: "reading the gRPC listener's address".into(),
        source,
    })?;
    Ok((Some(listener), target(Some(local.port()))))
}

/// The listener on the configured address, and the address it is bound to.
async fn bind(settings: &Settings) -> Result<(TcpListener, SocketAddr), StartupError> {
    let bind = settings.bind_addr()?;
    let listener = TcpListener::bind(bind)
        .await
        .map_err(|source| StartupError::Io {
            context: format!("binding {bind}"),
            source,
        })?;
    let local = listener.local_addr().map_err(|source| StartupError::Io {
        context: "reading the bound address".into(),
        source,
    })?;
    Ok((listener, local))
}

/// Token verification: the HS256 secret (generated or read in development) or the JWKS,
/// fetched once at start and refreshed on.
async fn authenticator(settings: &Settings) -> Result<Authenticator, StartupError> {
    let secret = hs256_secret(settings, true)?;
    if let Some((_, source)) = &secret {
        match source {
            SecretSource::Generated(path) => tracing::info!(
                path = %path.display(),
                "generated a development HS256 secret; `magisterium-a2a token --sub USER --plan pro` signs tokens with it"
            ),
            SecretSource::DevFile(path) => {
                tracing::info!(path = %path.display(), "using the development HS256 secret")
            }
            SecretSource::Configured => {}
        }
    }
    let authenticator = Authenticator::new(
        &settings.auth,
        secret.as_ref().map(|(s, _)| s.as_str()),
        settings.is_production(),
    )?;
    if let Some(jwks) = authenticator.jwks() {
        if let Err(e) = jwks.refresh().await {
            tracing::warn!(error = %e, "could not fetch the JWKS at start; will retry when a token arrives");
        }
        jwks.refresh_periodically(Duration::from_secs(settings.auth.jwks_refresh_secs));
    }

    Ok(authenticator)
}

/// The conformance kit, when the settings turn it on.
fn kit(settings: &Settings) -> Option<Arc<Kit>> {
    settings.conformance.enabled.then(|| {
        tracing::warn!(
            profile = %settings.profile,
            max_memory_bytes = settings.conformance.max_memory_bytes,
            "the client conformance kit is on: A2A-Simulate answers simulated failures and calls are recorded per token owner at /conformance/report"
        );
        Arc::new(Kit::new(settings.conformance.clone()))
    })
}

/// The rate limiter: none when limits do not apply, the local one, or Redis's (with the
/// local one as its fallback).
async fn limiter(
    settings: &Settings,
    local_limiter: &Arc<LocalLimiter>,
    metrics: &Arc<Metrics>,
    store_redis: Option<&RedisConnection>,
) -> Result<Arc<dyn RateLimiter>, StartupError> {
    Ok(match settings.limits.backend {
        _ if !settings.limits_apply() => Arc::new(Unmetered),
        LimitBackend::Local => local_limiter.clone(),
        LimitBackend::Redis => {
            // The limiter's own Redis, else the store's (sentinels included); a charge is not
            // a write a call's answer promises to keep, so it waits for no replica.
            let connection = match (&settings.limits.redis_url, store_redis) {
                (Some(url), _) => redis_conn::open(&redis_conn::Target::url(
                    url,
                    settings.store.redis_cluster,
                    Duration::from_millis(settings.store.redis_timeout_ms),
                ))
                .await
                .map_err(StoreError::from)?,
                (None, Some(shared)) => shared.without_ack(),
                (None, None) => redis_conn::open(&redis_conn::Target {
                    ack: None,
                    ..redis_conn::Target::of_store(&settings.store)
                })
                .await
                .map_err(StoreError::from)?,
            };
            let limiter = RedisLimiter::new(
                connection,
                &settings.limits,
                local_limiter.clone(),
                Arc::clone(metrics),
            );
            if settings.limits.shares_the_store_redis(&settings.store) {
                Arc::new(limiter.sharing_the_store_redis())
            } else {
                Arc::new(limiter)
            }
        }
    })
}

/// Push delivery over the store's Redis connection (or in memory), counting into the metrics
/// and, with the conformance kit on, recording its simulated faults there.
async fn push(
    settings: &Settings,
    base_url: &str,
    redis: Option<&RedisConnection>,
    metrics: &Arc<Metrics>,
    kit: &Option<Arc<Kit>>,
) -> Result<Arc<Push>, StartupError> {
    let mut push = Push::open_over(settings, base_url, redis).await?;
    push.count_in(Arc::clone(metrics));
    if let Some(kit) = kit {
        push.record_faults_in(Arc::clone(kit) as Arc<dyn FaultLog>);
    }
    Ok(Arc::new(push))
}

/// The signer of the cards when the deployment signs them (`agent.sign_card`): the push key
/// file every replica shares, published at `/.well-known/jwks.json`.
fn card_signer(settings: &Settings, push: &Push, base_url: &str) -> Option<Arc<CardSigner>> {
    settings.signs_card().then(|| {
        Arc::new(CardSigner::new(
            Arc::clone(push.keys()),
            format!("{base_url}{}", crate::paths::JWKS),
        ))
    })
}

/// The agent card in both forms, and each skill's own agent's card, serialised once, signed by
/// `signer` when the deployment signs its cards.
fn served_cards(
    card: &AgentCard,
    service: &A2aService,
    base_url: &str,
    signer: Option<Arc<CardSigner>>,
) -> Result<(ServedCards, BTreeMap<&'static str, ServedCards>), StartupError> {
    let serialised = |card: &AgentCard| {
        ServedCards::new(card, chrono::Utc::now(), signer.clone()).map_err(|e| StartupError::Io {
            context: "serialising the agent card".into(),
            source: std::io::Error::other(e),
        })
    };
    let cards = serialised(card)?;
    let mut skill_cards = BTreeMap::new();
    for skill in service.skills().iter() {
        let info = skill.info();
        let own = documents::skill_agent_card(card, info, base_url);
        skill_cards.insert(info.id, serialised(&own)?);
    }
    Ok((cards, skill_cards))
}

/// Installs the process-wide TLS provider for outbound HTTPS (JWKS, LLM backends) and for
/// clients built by tests; a provider already installed is kept.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing requests in flight");
}
