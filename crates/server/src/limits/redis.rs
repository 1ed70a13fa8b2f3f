//! The shared limiter: GCRA in a Redis script on Redis' own clock, so every replica charges the
//! same bucket and a pro user gets 15 calls a minute in all, not 15 per replica. On the store's
//! own Redis, it may leave a charge to the script that saves the call's task
//! ([`RateLimiter::defer`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use skills::Bucket;

use super::{Decision, LocalLimiter, RateLimiter};
use crate::auth::Plan;
use crate::config::{LimitFailMode, LimitSettings};
use crate::gcra::{BucketCharge, GcraReply};
use crate::metrics::Metrics;
use crate::redis_conn::RedisConnection;
use crate::store::Owner;

/// The limiter's script: the GCRA, then the call of it on the script's key.
const CHARGE_SCRIPT: &str = concat!(
    include_str!("../../../../migrations/scripts/gcra.lua"),
    include_str!("../../../../migrations/scripts/charge.lua"),
);

/// Rate limits enforced in Redis, with a configured behaviour when Redis fails.
pub struct RedisLimiter {
    connection: RedisConnection,
    script: Script,
    limits: HashMap<(Plan, Bucket), u32>,
    fallback: Arc<LocalLimiter>,
    mode: LimitFailMode,
    timeout: Duration,
    metrics: Arc<Metrics>,
    shares_the_store_redis: bool,
}

impl RedisLimiter {
    /// A limiter over `connection`; `fallback` answers in `local` fail mode.
    pub fn new(
        connection: RedisConnection,
        settings: &LimitSettings,
        fallback: Arc<LocalLimiter>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let mut limits = HashMap::new();
        for plan in [Plan::Pro, Plan::Organization, Plan::Enterprise] {
            for (bucket, per_minute) in settings.buckets_for(plan).into_iter().flatten() {
                limits.insert((plan, bucket), per_minute);
            }
        }
        RedisLimiter {
            connection,
            script: Script::new(CHARGE_SCRIPT),
            limits,
            fallback,
            mode: settings.on_redis_error,
            timeout: Duration::from_millis(settings.redis_timeout_ms),
            metrics,
            shares_the_store_redis: false,
        }
    }

    /// The same limiter, told that its Redis is the task store's: then it may leave a charge to
    /// the script that saves the call's task ([`RateLimiter::defer`]).
    #[must_use]
    pub fn sharing_the_store_redis(self) -> Self {
        RedisLimiter {
            shares_the_store_redis: true,
            ..self
        }
    }

    /// The charge of one call, `None` for a closed bucket (limit 0: refused without asking
    /// Redis).
    fn charge(&self, owner: &Owner, plan: Plan, bucket: Bucket) -> Option<BucketCharge> {
        let limit = self.limits.get(&(plan, bucket)).copied().unwrap_or(0);
        (limit > 0).then(|| BucketCharge::new(Self::key(owner, plan, bucket), limit))
    }

    fn key(owner: &Owner, plan: Plan, bucket: Bucket) -> String {
        format!(
            "a2a:v1:{{o:{}}}:rl:{}:{}",
            owner.as_str(),
            plan.as_str(),
            bucket.as_str()
        )
    }

    async fn ask(&self, charge: &BucketCharge) -> Result<Decision, String> {
        let mut invocation = self.script.key(&charge.key);
        invocation.arg(charge.interval_ps).arg(charge.limit);
        let mut connection = self.connection.clone();
        let call = invocation.invoke_async::<Vec<i64>>(&mut connection);
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(reply)) => GcraReply::parse(&reply)
                .map(|gcra| Decision::of_gcra(charge.limit, &gcra))
                .ok_or_else(|| format!("unexpected reply {reply:?}")),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        }
    }
}

#[async_trait]
impl RateLimiter for RedisLimiter {
    async fn check(&self, owner: &Owner, plan: Plan, bucket: Bucket) -> Decision {
        let Some(charge) = self.charge(owner, plan, bucket) else {
            return Decision::Limited {
                limit: 0,
                retry_after: Duration::from_secs(60),
            };
        };
        let limit = charge.limit;
        match self.ask(&charge).await {
            Ok(decision) => decision,
            Err(error) => {
                let mode = match self.mode {
                    LimitFailMode::Local => "local",
                    LimitFailMode::Open => "open",
                    LimitFailMode::Closed => "closed",
                };
                self.metrics.limiter_backend_error(mode);
                tracing::warn!(%error, fail_mode = mode, "rate limiter: Redis failed");
                match self.mode {
                    LimitFailMode::Local => self.fallback.check(owner, plan, bucket).await,
                    LimitFailMode::Open => Decision::Allowed {
                        limit,
                        remaining: limit,
                        reset_after: Duration::ZERO,
                    },
                    LimitFailMode::Closed => Decision::Unavailable,
                }
            }
        }
    }

    fn defer(&self, owner: &Owner, plan: Plan, bucket: Bucket) -> Option<BucketCharge> {
        if !self.shares_the_store_redis {
            return None;
        }
        self.charge(owner, plan, bucket)
    }
}
