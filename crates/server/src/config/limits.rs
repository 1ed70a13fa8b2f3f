//! Settings of the per-user rate limits (`[limits]`, `A2A__LIMITS__*`).

use serde::{Deserialize, Serialize};
use skills::Bucket;

use super::{ConfigError, Plan, StoreBackend, StoreSettings, invalid_redis_url};

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
    /// Redis for the limiter (`A2A__LIMITS__REDIS_URL`); defaults to the store's Redis
    /// (`store.redis_url`, or the primary `store.redis_sentinels` name).
    pub redis_url: Option<String>,
    /// `local`, `open` or `closed` when Redis fails (`A2A__LIMITS__ON_REDIS_ERROR`).
    pub on_redis_error: LimitFailMode,
    /// How long a limiter call to Redis may take before it counts as a failure.
    pub redis_timeout_ms: u64,
    /// The Redis limiter's lease, in milliseconds of a bucket's rate
    /// (`A2A__LIMITS__REDIS_LEASE_MS`): a bucket whose limit allows two calls or more in that
    /// time is charged that many calls at once, which this replica then serves without asking
    /// Redis again, for at most that long. Across replicas a user may go over the limit by at
    /// most this much of it, and lose up to a lease a replica per lapse. 0 charges every call
    /// in Redis (the limits of the default plans, 2 to 600 a minute, are charged one by one at
    /// any value up to 100).
    pub redis_lease_ms: u64,
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
            redis_lease_ms: 50,
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
            && (store.redis_url.is_some() || store.redis_sentinels.is_some())
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

impl LimitSettings {
    /// Checks the section's values that serde could not; `store` may lend its Redis.
    pub(super) fn validate(&self, store: &StoreSettings) -> Result<(), ConfigError> {
        if let Some(url) = &self.redis_url
            && invalid_redis_url(url)
        {
            return Err(ConfigError::invalid(
                "limits.redis_url",
                "is not a valid Redis URL (e.g. redis://redis.internal:6379/0)",
            ));
        }
        if self.backend == LimitBackend::Redis
            && self.redis_url.is_none()
            && store.redis_url.is_none()
            && store.redis_sentinels.is_none()
        {
            return Err(ConfigError::invalid(
                "limits.redis_url",
                "is required when limits.backend is `redis` (or set store.redis_url or store.redis_sentinels)",
            ));
        }
        for (key, value) in [
            ("limits.redis_timeout_ms", self.redis_timeout_ms),
            ("limits.reads_per_minute", u64::from(self.reads_per_minute)),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "must be at least 1"));
            }
        }
        if self.redis_lease_ms > MAX_REDIS_LEASE_MS {
            return Err(ConfigError::invalid(
                "limits.redis_lease_ms",
                "must be at most 1000 (a second of a bucket's rate)",
            ));
        }
        Ok(())
    }
}

/// The longest lease the Redis limiter may take: a second of a bucket's rate.
const MAX_REDIS_LEASE_MS: u64 = 1000;
