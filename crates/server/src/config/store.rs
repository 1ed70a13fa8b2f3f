//! Settings of the task store (`[store]`, `A2A__STORE__*`).

use serde::{Deserialize, Serialize};

use super::{ConfigError, invalid_redis_url};

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
    /// Cluster, several seed node URLs separated by commas. With `redis_sentinels` it is
    /// optional and only lends its scheme, user, password and database to the primary the
    /// sentinels name (its host and port are not used).
    pub redis_url: Option<String>,
    /// Redis Sentinel: the sentinels as comma-separated `host:port`
    /// (`A2A__STORE__REDIS_SENTINELS`). The primary is asked of them at start and again after
    /// a lost connection or a `READONLY` refusal, so a failover needs no one to repoint the
    /// replicas.
    pub redis_sentinels: Option<String>,
    /// The name the sentinels monitor the primary under (`A2A__STORE__REDIS_SENTINEL_MASTER`);
    /// required with `redis_sentinels`.
    pub redis_sentinel_master: Option<String>,
    /// The sentinels' own password (`A2A__STORE__REDIS_SENTINEL_PASSWORD`), when they ask for one;
    /// the data nodes' password is `redis_url`'s.
    pub redis_sentinel_password: Option<String>,
    /// Replicas that must hold a write before its call is answered (`A2A__STORE__REPLICAS_TO_ACK`,
    /// Redis `WAIT`): 0 answers once the primary has it (asynchronous replication: a failover can
    /// lose the last writes); N answers a write fewer than N replicas took within
    /// `replicas_ack_timeout_ms` as a failure the client can resend.
    pub replicas_to_ack: u32,
    /// How long a write waits for its replicas, in milliseconds
    /// (`A2A__STORE__REPLICAS_ACK_TIMEOUT_MS`); below `redis_timeout_ms`.
    pub replicas_ack_timeout_ms: u64,
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
            redis_sentinels: None,
            redis_sentinel_master: None,
            redis_sentinel_password: None,
            replicas_to_ack: 0,
            replicas_ack_timeout_ms: 1000,
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

impl StoreSettings {
    /// Checks the section's values that serde could not.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if self.backend == StoreBackend::Redis
            && self.redis_url.is_none()
            && self.redis_sentinels.is_none()
        {
            return Err(ConfigError::invalid(
                "store.redis_url",
                "is required when store.backend is `redis` (or set store.redis_sentinels)",
            ));
        }
        if let Some(url) = &self.redis_url
            && invalid_redis_url(url)
        {
            return Err(ConfigError::invalid(
                "store.redis_url",
                "is not a valid Redis URL (e.g. redis://redis.internal:6379/0, or comma-separated cluster nodes)",
            ));
        }
        self.validate_sentinels()?;
        self.validate_acks()?;
        self.validate_sizes()
    }

    /// The sentinels, as `(host, port)`; empty without Sentinel.
    pub fn sentinel_addresses(&self) -> Vec<(String, u16)> {
        self.redis_sentinels
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .filter_map(|entry| {
                let (host, port) = entry.rsplit_once(':')?;
                let host = host.trim_start_matches('[').trim_end_matches(']');
                Some((host.to_string(), port.parse().ok()?))
            })
            .collect()
    }

    /// Sentinel: each address a `host:port`, a master name, one data-node URL at most, no cluster.
    fn validate_sentinels(&self) -> Result<(), ConfigError> {
        let Some(list) = &self.redis_sentinels else {
            if self.redis_sentinel_master.is_some() {
                return Err(ConfigError::invalid(
                    "store.redis_sentinels",
                    "is required when store.redis_sentinel_master is set",
                ));
            }
            return Ok(());
        };
        let entries = list.split(',').filter(|e| !e.trim().is_empty()).count();
        if entries == 0 || self.sentinel_addresses().len() != entries {
            return Err(ConfigError::invalid(
                "store.redis_sentinels",
                "must be comma-separated host:port pairs (e.g. s1:26379,s2:26379,s3:26379)",
            ));
        }
        if self
            .redis_sentinel_master
            .as_deref()
            .is_none_or(str::is_empty)
        {
            return Err(ConfigError::invalid(
                "store.redis_sentinel_master",
                "is required when store.redis_sentinels is set (the name the sentinels monitor)",
            ));
        }
        if self.redis_cluster || self.redis_url.as_deref().is_some_and(|u| u.contains(',')) {
            return Err(ConfigError::invalid(
                "store.redis_sentinels",
                "cannot be combined with a Redis Cluster (store.redis_cluster or several store.redis_url nodes)",
            ));
        }
        Ok(())
    }

    /// `replicas_to_ack` only over Redis, its timeout within the command timeout.
    fn validate_acks(&self) -> Result<(), ConfigError> {
        if self.replicas_to_ack == 0 {
            return Ok(());
        }
        if self.backend != StoreBackend::Redis {
            return Err(ConfigError::invalid(
                "store.replicas_to_ack",
                "needs store.backend = `redis` (the memory store has no replicas)",
            ));
        }
        if self.replicas_ack_timeout_ms == 0
            || self.replicas_ack_timeout_ms >= self.redis_timeout_ms
        {
            return Err(ConfigError::invalid(
                "store.replicas_ack_timeout_ms",
                "must be at least 1 and below store.redis_timeout_ms (milliseconds)",
            ));
        }
        Ok(())
    }

    /// The TTL, timeouts and sizes: each at least its floor.
    fn validate_sizes(&self) -> Result<(), ConfigError> {
        if self.task_ttl_secs == 0 {
            return Err(ConfigError::invalid(
                "store.task_ttl_secs",
                "must be at least 1",
            ));
        }
        if self.redis_timeout_ms == 0 {
            return Err(ConfigError::invalid(
                "store.redis_timeout_ms",
                "must be at least 1 (milliseconds)",
            ));
        }
        for (key, value) in [
            ("store.max_task_bytes", self.max_task_bytes),
            ("store.max_list_page_bytes", self.max_list_page_bytes),
        ] {
            if value < 4096 {
                return Err(ConfigError::invalid(key, "must be at least 4096 (bytes)"));
            }
        }
        if self.memory_max_bytes_per_user < self.max_task_bytes as u64 {
            return Err(ConfigError::invalid(
                "store.memory_max_bytes_per_user",
                "must be at least store.max_task_bytes (one task of the largest size)",
            ));
        }
        if self.memory_max_bytes < self.memory_max_bytes_per_user {
            return Err(ConfigError::invalid(
                "store.memory_max_bytes",
                "must be at least store.memory_max_bytes_per_user",
            ));
        }
        if self.memory_max_tasks == 0 {
            return Err(ConfigError::invalid(
                "store.memory_max_tasks",
                "must be at least 1",
            ));
        }
        Ok(())
    }
}
