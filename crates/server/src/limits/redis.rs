//! The shared limiter: GCRA in a Redis script on Redis' own clock, so every replica charges the
//! same bucket and a pro user gets 15 calls a minute in all, not 15 per replica.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use redis::Script;
use skills::Bucket;

use super::{Decision, LocalLimiter, RateLimiter};
use crate::auth::Plan;
use crate::config::{LimitFailMode, LimitSettings};
use crate::metrics::Metrics;
use crate::redis_conn::RedisConnection;
use crate::store::Owner;

/// Rate limits enforced in Redis, with a configured behaviour when Redis fails.
pub struct RedisLimiter {
    connection: RedisConnection,
    script: Script,
    limits: HashMap<(Plan, Bucket), u32>,
    fallback: Arc<LocalLimiter>,
    mode: LimitFailMode,
    timeout: Duration,
    metrics: Arc<Metrics>,
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
            script: Script::new(include_str!("../../../../migrations/scripts/gcra.lua")),
            limits,
            fallback,
            mode: settings.on_redis_error,
            timeout: Duration::from_millis(settings.redis_timeout_ms),
            metrics,
        }
    }

    fn key(owner: &Owner, plan: Plan, bucket: Bucket) -> String {
        format!(
            "a2a:v1:{{o:{}}}:rl:{}:{}",
            owner.as_str(),
            plan.as_str(),
            bucket.as_str()
        )
    }

    async fn ask(&self, key: String, limit: u32) -> Result<Vec<i64>, String> {
        let interval_us = 60_000_000 / u64::from(limit);
        let mut invocation = self.script.key(key);
        invocation.arg(interval_us).arg(limit);
        let mut connection = self.connection.clone();
        let call = invocation.invoke_async::<Vec<i64>>(&mut connection);
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(reply)) if reply.len() == 4 => Ok(reply),
            Ok(Ok(reply)) => Err(format!("unexpected reply {reply:?}")),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        }
    }
}

fn micros(value: i64) -> Duration {
    Duration::from_micros(u64::try_from(value).unwrap_or(0))
}

#[async_trait]
impl RateLimiter for RedisLimiter {
    async fn check(&self, owner: &Owner, plan: Plan, bucket: Bucket) -> Decision {
        let limit = self.limits.get(&(plan, bucket)).copied().unwrap_or(0);
        if limit == 0 {
            return Decision::Limited {
                limit: 0,
                retry_after: Duration::from_secs(60),
            };
        }
        match self.ask(Self::key(owner, plan, bucket), limit).await {
            Ok(reply) if reply[0] == 1 => Decision::Allowed {
                limit,
                remaining: u32::try_from(reply[1]).unwrap_or(0),
                reset_after: micros(reply[3]),
            },
            Ok(reply) => Decision::Limited {
                limit,
                retry_after: micros(reply[2]),
            },
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
}
