//! Push notifications: a task's changes POSTed to the webhooks its owner configured, at least
//! once, signed by the server, and only to public addresses.
//!
//! One job per module (its settings, `[push]`, are in [`crate::config`]): [`target`] (a config checked when it is set),
//! [`address`] (which addresses are forbidden), [`resolve`] (resolve once, check, connect to
//! the checked address), [`signing`] (the server's ES256 key and its JWK set), [`routes`]
//! (`/.well-known/jwks.json`), [`deliver`] (one attempt), [`backoff`], [`queue`] (pending
//! deliveries, memory or Redis), [`worker`] (drains the queue), [`configs`] (each task's
//! configs, memory or Redis), [`fault`] (the conformance kit's webhook failures on purpose),
//! `outage` (Redis errors tried again) and `observer` (the task runtime's state changes
//! queued). [`Push`] puts them together behind the few calls the methods need. A notification
//! that will never be delivered is counted in the metrics (`a2a_push_undelivered_total`).
//!
//! A notification's body is in the terms of the wire its config was set over: the stored 0.3
//! task for 0.3, and for 1.0 a `StreamResponse` holding the whole task as `GetTask` answers it
//! (`{"task": …}`), not a `statusUpdate`: deliveries are at least once and may arrive out of
//! order, and a whole task lets the receiver keep the newest state without asking again.

pub mod address;
pub mod backoff;
pub mod configs;
pub mod deliver;
pub mod fault;
mod observer;
mod outage;
pub mod queue;
pub mod resolve;
pub mod routes;
pub mod signing;
pub mod target;
pub mod worker;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;

use a2a_types::v1::V1StreamResponse;
use a2a_types::{PushNotificationConfig, TaskPushNotificationConfig};

use crate::config::{Settings, StoreBackend};
use crate::metrics::Metrics;
use crate::redis_conn;
use crate::store::{Owner, decode_task};
use crate::wire::Version;
use configs::{MemoryConfigs, PushConfigStore, RedisConfigs, StoredConfig};
use deliver::Deliverer;
use fault::{DeliveryFault, FaultLog};
use outage::through_outage;
use queue::{CapReached, Delivery, DeliveryQueue, MemoryQueue, QueueCaps, RedisQueue};
use signing::SigningKeys;
use worker::PushWorker;

pub use crate::config::PushSettings;
pub use routes::jwks_routes;

/// Why a push operation failed. [`PushError::InvalidConfig`] and
/// [`PushError::TooManyConfigs`] are the client's doing (`-32602`); the others are the
/// server's.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The config breaks a rule; the text names the field.
    #[error("{0}")]
    InvalidConfig(String),
    /// The task already has the most configs allowed.
    #[error(
        "the task already has {0} push notification configs, the most allowed (push.max_configs_per_task)"
    )]
    TooManyConfigs(usize),
    /// The task's JSON is larger than `push.max_payload_bytes`.
    #[error("the task is {size} bytes, more than push.max_payload_bytes ({max}); not pushed")]
    PayloadTooLarge {
        /// The task's size.
        size: usize,
        /// The cap.
        max: usize,
    },
    /// A cap on pending deliveries is reached; the notification was not queued.
    #[error("the notification was not queued: {} is reached", .0.key())]
    QueueFull(CapReached),
    /// Redis did not answer or refused.
    #[error("redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// A stored value could not be read back.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
    /// The signing key could not be made, read or used.
    #[error("push signing key: {0}")]
    Key(String),
    /// The HTTP client could not be built.
    #[error("push HTTP client: {0}")]
    Client(String),
}

/// Queues notifications: the call the task runtime makes on every state change.
pub struct PushNotifier {
    queue: Arc<dyn DeliveryQueue>,
    caps: QueueCaps,
    max_payload_bytes: usize,
    wake: Arc<Notify>,
}

impl PushNotifier {
    /// Queues one POST of `task_json` to `config`'s webhook; returns the notification id (its
    /// `Idempotency-Key`). The config must have passed [`target::check_config`] when it was
    /// set. While Redis does not answer, the write is tried again for a few seconds.
    pub async fn enqueue(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &PushNotificationConfig,
        task_json: Bytes,
    ) -> Result<String, PushError> {
        self.queue(owner, task_id, config, task_json, None).await
    }

    /// [`PushNotifier::enqueue`] of a body already in the config's terms, with the kit's fault.
    async fn queue(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &PushNotificationConfig,
        body: Bytes,
        fault: Option<DeliveryFault>,
    ) -> Result<String, PushError> {
        if body.len() > self.max_payload_bytes {
            return Err(PushError::PayloadTooLarge {
                size: body.len(),
                max: self.max_payload_bytes,
            });
        }
        let delivery = Delivery {
            id: uuid::Uuid::new_v4().to_string(),
            owner: owner.as_str().to_string(),
            task_id: task_id.to_string(),
            url: config.url.clone(),
            token: config.token.clone(),
            fault,
            trace: crate::telemetry::traceparent(),
            body,
        };
        through_outage("queue a notification", || {
            self.queue.enqueue(&delivery, self.caps)
        })
        .await?;
        self.wake.notify_one();
        Ok(delivery.id)
    }
}

/// Push notifications of one server: the configs, the queue, the signing key and the
/// deliverer.
pub struct Push {
    settings: PushSettings,
    production: bool,
    configs: Arc<dyn PushConfigStore>,
    queue: Arc<dyn DeliveryQueue>,
    notifier: PushNotifier,
    deliverer: Arc<Deliverer>,
    keys: Arc<SigningKeys>,
    wake: Arc<Notify>,
    fault_log: Option<Arc<dyn FaultLog>>,
    metrics: Option<Arc<Metrics>>,
}

impl Push {
    /// Push as the settings say: configs and queue in memory or in the store's Redis, the key
    /// from `push.signing_key_path` or generated; `issuer` is the server's public base URL.
    pub async fn open(settings: &Settings, issuer: &str) -> Result<Push, PushError> {
        Self::open_over(settings, issuer, None).await
    }

    /// [`Push::open`] over the server's shared Redis connection when it has one (so push
    /// follows the same primary as the store), else over a connection of its own.
    pub async fn open_over(
        settings: &Settings,
        issuer: &str,
        redis: Option<&redis_conn::RedisConnection>,
    ) -> Result<Push, PushError> {
        let keys = match &settings.push.signing_key_path {
            Some(path) => SigningKeys::load(path)?,
            None => {
                if settings.store.backend == StoreBackend::Redis {
                    tracing::warn!(
                        "push.signing_key_path is not set: this replica signs notifications with a key of its own, which the JWKS of the other replicas does not hold; give every replica the same key file"
                    );
                }
                SigningKeys::generate()?
            }
        };
        let ttl = Duration::from_secs(settings.store.task_ttl_secs);
        let (queue, configs): (Arc<dyn DeliveryQueue>, Arc<dyn PushConfigStore>) =
            match settings.store.backend {
                StoreBackend::Memory => (
                    Arc::new(MemoryQueue::new()),
                    Arc::new(MemoryConfigs::new(ttl, settings.store.memory_max_tasks)),
                ),
                StoreBackend::Redis => {
                    let connection = match redis {
                        Some(shared) => shared.clone(),
                        None => {
                            redis_conn::open(&redis_conn::Target::of_store(&settings.store)).await?
                        }
                    };
                    (
                        Arc::new(RedisQueue::new(connection.clone())),
                        Arc::new(RedisConfigs::new(connection, ttl)),
                    )
                }
            };
        Self::with_parts(
            &settings.push,
            settings.is_production(),
            Arc::new(keys),
            issuer.to_string(),
            queue,
            configs,
        )
    }

    /// Push from given parts.
    pub fn with_parts(
        settings: &PushSettings,
        production: bool,
        keys: Arc<SigningKeys>,
        issuer: String,
        queue: Arc<dyn DeliveryQueue>,
        configs: Arc<dyn PushConfigStore>,
    ) -> Result<Push, PushError> {
        let wake = Arc::new(Notify::new());
        let deliverer = Arc::new(Deliverer::new(settings, Arc::clone(&keys), issuer)?);
        Ok(Push {
            notifier: PushNotifier {
                queue: Arc::clone(&queue),
                caps: QueueCaps {
                    per_task: settings.max_pending_per_task,
                    per_owner: settings.max_pending_per_owner,
                    total: settings.max_pending_total,
                },
                max_payload_bytes: settings.max_payload_bytes,
                wake: Arc::clone(&wake),
            },
            settings: settings.clone(),
            production,
            configs,
            queue,
            deliverer,
            keys,
            wake,
            fault_log: None,
            metrics: None,
        })
    }

    /// Tells what happens to notifications under the conformance kit's faults to `log`.
    pub fn record_faults_in(&mut self, log: Arc<dyn FaultLog>) {
        self.fault_log = Some(log);
    }

    /// Counts the notifications that will never be delivered in `metrics`.
    pub fn count_in(&mut self, metrics: Arc<Metrics>) {
        self.metrics = Some(metrics);
    }

    /// `tasks/pushNotificationConfig/set` for a task the caller owns: checks the config, gives
    /// it the task id as its id when it has none, and stores it with `wire`, the wire it was
    /// set over, whose terms its notifications are in.
    pub async fn set_config(
        &self,
        owner: &Owner,
        task_id: &str,
        mut config: PushNotificationConfig,
        wire: Version,
    ) -> Result<TaskPushNotificationConfig, PushError> {
        target::check_config(&config, &self.settings, self.production)?;
        config.id.get_or_insert_with(|| task_id.to_string());
        let stored = StoredConfig { config, wire };
        self.configs
            .set(owner, task_id, &stored, self.settings.max_configs_per_task)
            .await?;
        Ok(TaskPushNotificationConfig {
            task_id: task_id.to_string(),
            push_notification_config: stored.config,
        })
    }

    /// Refuses a config the task has no room for, as [`Push::set_config`] would, without
    /// storing it: an inline config on a continued task is refused before its send is
    /// charged. (A config set meanwhile may still fill the task; `set_config` holds the cap.)
    pub async fn check_room(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &PushNotificationConfig,
    ) -> Result<(), PushError> {
        let id = config.id.as_deref().unwrap_or(task_id);
        let configs = self.configs.list(owner, task_id).await?;
        let cap = self.settings.max_configs_per_task;
        if configs.len() >= cap && !configs.iter().any(|c| c.config.id.as_deref() == Some(id)) {
            return Err(PushError::TooManyConfigs(cap));
        }
        Ok(())
    }

    /// Keeps the conformance kit's fault for every later notification of the task.
    pub async fn set_fault(
        &self,
        owner: &Owner,
        task_id: &str,
        fault: &DeliveryFault,
    ) -> Result<(), PushError> {
        self.configs.set_fault(owner, task_id, fault).await
    }

    /// `tasks/pushNotificationConfig/get`: one config by id, or the task's first.
    pub async fn get_config(
        &self,
        owner: &Owner,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<Option<TaskPushNotificationConfig>, PushError> {
        Ok(self
            .configs
            .get(owner, task_id, config_id)
            .await?
            .map(|stored| TaskPushNotificationConfig {
                task_id: task_id.to_string(),
                push_notification_config: stored.config,
            }))
    }

    /// `tasks/pushNotificationConfig/list`.
    pub async fn list_configs(
        &self,
        owner: &Owner,
        task_id: &str,
    ) -> Result<Vec<TaskPushNotificationConfig>, PushError> {
        Ok(self
            .configs
            .list(owner, task_id)
            .await?
            .into_iter()
            .map(|stored| TaskPushNotificationConfig {
                task_id: task_id.to_string(),
                push_notification_config: stored.config,
            })
            .collect())
    }

    /// `tasks/pushNotificationConfig/delete`: whether the config existed.
    pub async fn delete_config(
        &self,
        owner: &Owner,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool, PushError> {
        self.configs.delete(owner, task_id, config_id).await
    }

    /// Checks a config a client wants to set, as [`Push::set_config`] would, without storing
    /// it: an inline config is refused before its send is charged.
    pub fn check_config(&self, config: &PushNotificationConfig) -> Result<(), PushError> {
        target::check_config(config, &self.settings, self.production).map(drop)
    }

    /// Queues the task (its stored 0.3 JSON) for every config of the task (a state change),
    /// each in the terms of its config's wire; returns how many were queued. A cap reached for
    /// one config stops the others too. Redis errors are tried again for a few seconds; the
    /// notifications not queued are counted as undelivered (once when the configs could not be
    /// read).
    pub async fn notify(
        &self,
        owner: &Owner,
        task_id: &str,
        task_json: Bytes,
    ) -> Result<usize, PushError> {
        let mut queued = 0;
        let result = self
            .notify_each(owner, task_id, task_json, &mut queued)
            .await;
        result.map_err(|not_queued| {
            if let Some(metrics) = &self.metrics {
                let lost = not_queued.configs.saturating_sub(queued).max(1);
                metrics.push_undelivered(undelivered_reason(&not_queued.error), lost as u64);
            }
            not_queued.error
        })
    }

    /// [`Push::notify`]'s work, counting in `queued` the notifications queued so far.
    async fn notify_each(
        &self,
        owner: &Owner,
        task_id: &str,
        task_json: Bytes,
        queued: &mut usize,
    ) -> Result<usize, NotQueued> {
        let unread = |error| NotQueued { error, configs: 0 };
        let configs = through_outage("read a task's push configs", || {
            self.configs.list(owner, task_id)
        })
        .await
        .map_err(unread)?;
        if configs.is_empty() {
            return Ok(0);
        }
        let fault = through_outage("read a task's push fault", || {
            self.configs.fault(owner, task_id)
        })
        .await
        .map_err(unread)?;
        let not_queued = |error| NotQueued {
            error,
            configs: configs.len(),
        };
        let mut v1_body = None;
        for stored in &configs {
            let body = match stored.wire {
                Version::V03 => task_json.clone(),
                Version::V1 => {
                    if v1_body.is_none() {
                        v1_body = Some(v1_stream_response(&task_json).map_err(not_queued)?);
                    }
                    v1_body.clone().unwrap_or_default()
                }
            };
            self.notifier
                .queue(owner, task_id, &stored.config, body, fault.clone())
                .await
                .map_err(not_queued)?;
            *queued += 1;
        }
        Ok(configs.len())
    }

    /// The queueing half alone, for callers that hold a config already (an inline config of
    /// `message/send`).
    pub fn notifier(&self) -> &PushNotifier {
        &self.notifier
    }

    /// The signing key and its JWK set.
    pub fn keys(&self) -> &Arc<SigningKeys> {
        &self.keys
    }

    /// How many notifications wait to be delivered, in flight included.
    pub async fn pending(&self) -> Result<u64, PushError> {
        self.queue.pending().await
    }

    /// Starts this replica's delivery worker.
    pub fn spawn_worker(&self) -> PushWorker {
        PushWorker::spawn(
            Arc::clone(&self.queue),
            Arc::clone(&self.deliverer),
            self.settings.clone(),
            Arc::clone(&self.wake),
            self.fault_log.clone(),
            self.metrics.clone(),
        )
    }
}

/// A state change's notifications that were not queued: why, and how many configs the task
/// has (0 when they could not be read).
struct NotQueued {
    error: PushError,
    configs: usize,
}

/// The label under which a notification that could not be queued is counted.
fn undelivered_reason(error: &PushError) -> &'static str {
    match error {
        PushError::QueueFull(_) => "queue_full",
        PushError::PayloadTooLarge { .. } => "too_large",
        _ => "not_queued",
    }
}

/// The 1.0 notification of a stored task: a `StreamResponse` holding the task as `GetTask`
/// answers it.
fn v1_stream_response(task_json: &[u8]) -> Result<Bytes, PushError> {
    let task = decode_task(task_json).map_err(|e| PushError::Corrupt(e.to_string()))?;
    serde_json::to_vec(&V1StreamResponse::Task(task.into()))
        .map(Bytes::from)
        .map_err(|e| PushError::Corrupt(e.to_string()))
}
