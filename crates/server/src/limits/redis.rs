//! The shared limiter: GCRA in a Redis script on Redis' own clock, so every replica charges the
//! same bucket and a pro user gets 15 calls a minute in all, not 15 per replica. On the store's
//! own Redis, it may leave a charge to the script that saves the call's task
//! ([`RateLimiter::defer`]). A bucket whose limit allows several calls within the lease
//! (`limits.redis_lease_ms`) is charged that many at once, and this replica serves them from
//! its [`Leases`] without asking Redis again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use redis::Script;
use skills::Bucket;

use super::{Decision, LocalLimiter, RateLimiter};
use crate::auth::Plan;
use crate::config::{LimitFailMode, LimitSettings};
use crate::gcra::{BucketCharge, GcraReply};
use crate::hashing::DerivedKeys;
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
    lease_span: Duration,
    leases: Leases,
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
            lease_span: Duration::from_millis(settings.redis_lease_ms),
            leases: Leases::default(),
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
        let limit = self.limit(plan, bucket);
        (limit > 0).then(|| BucketCharge::new(Self::key(owner, plan, bucket), limit))
    }

    fn limit(&self, plan: Plan, bucket: Bucket) -> u32 {
        self.limits.get(&(plan, bucket)).copied().unwrap_or(0)
    }

    /// The calls one lease of a bucket of `limit` calls a minute holds: those its rate allows
    /// within the lease span, at most [`MAX_LEASE`]; 1 (no lease) when that is fewer than two.
    fn lease_size(&self, limit: u32) -> u32 {
        let calls = u128::from(limit) * self.lease_span.as_millis() / 60_000;
        u32::try_from(calls)
            .unwrap_or(MAX_LEASE)
            .clamp(1, MAX_LEASE)
    }

    fn key(owner: &Owner, plan: Plan, bucket: Bucket) -> String {
        format!(
            "a2a:v1:{{o:{}}}:rl:{}:{}",
            owner.as_str(),
            plan.as_str(),
            bucket.as_str()
        )
    }

    /// Charges `want` calls at most (as many as the bucket has room for) in Redis.
    async fn ask(&self, charge: &BucketCharge, want: u32) -> Result<GcraReply, String> {
        let mut invocation = self.script.key(&charge.key);
        invocation
            .arg(charge.interval_ps)
            .arg(charge.limit)
            .arg(want);
        let mut connection = self.connection.clone();
        let call = invocation.invoke_async::<Vec<i64>>(&mut connection);
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(reply)) => {
                GcraReply::parse(&reply).ok_or_else(|| format!("unexpected reply {reply:?}"))
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        }
    }

    /// Charges one call in Redis, taking a lease of the bucket when its size is above one.
    async fn charge_in_redis(
        &self,
        owner: &Owner,
        plan: Plan,
        bucket: Bucket,
        charge: &BucketCharge,
    ) -> Result<Decision, String> {
        let size = self.lease_size(charge.limit);
        let gcra = self.ask(charge, size).await?;
        if gcra.allowed && gcra.charged > 1 {
            let lease = Lease::granted(&gcra, charge.interval(), self.lease_span);
            return Ok(self
                .leases
                .add((owner.clone(), plan, bucket), lease, charge.limit));
        }
        Ok(Decision::of_gcra(charge.limit, &gcra))
    }
}

/// The most calls one lease holds, whatever the limit and span: a replica that stops or loses
/// its user's traffic gives up at most this many of the user's calls.
const MAX_LEASE: u32 = 256;

/// Calls of one bucket charged in Redis ahead of their calls, which this replica serves until
/// they run out or lapse.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// Calls charged and not yet served.
    left: u32,
    /// When the calls left are given up: one lease span after the oldest charge in it, so no
    /// call is served more than a span after Redis charged it.
    lapses: Instant,
    /// Calls the bucket had left in Redis after the last charge of this lease.
    remaining_in_redis: u32,
    /// When the bucket in Redis is full again, as of the last charge.
    full_at: Instant,
    /// The time one call frees up.
    interval: Duration,
}

impl Lease {
    /// The lease of a reply that charged several calls, the first of them served at once.
    fn granted(gcra: &GcraReply, interval: Duration, span: Duration) -> Self {
        let now = Instant::now();
        Lease {
            left: gcra.charged - 1,
            lapses: now + span,
            remaining_in_redis: gcra.remaining,
            full_at: now + gcra.reset_after,
            interval,
        }
    }

    /// The decision of a call served from this lease, `left` already counting it out: the
    /// calls left here and in Redis, and the bucket full once both are back.
    fn decision(&self, limit: u32, now: Instant) -> Decision {
        let unserved = self.interval.saturating_mul(self.left);
        Decision::Allowed {
            limit,
            remaining: self.remaining_in_redis.saturating_add(self.left),
            reset_after: self
                .full_at
                .saturating_duration_since(now)
                .saturating_sub(unserved),
        }
    }
}

/// A bucket of a user on one plan.
type LeaseKey = (Owner, Plan, Bucket);

/// This replica's leases, by user and bucket. Lapsed leases are dropped when the map has grown
/// to twice its size after the last sweep, so it holds about the users of one lease span.
#[derive(Default)]
struct Leases {
    held: Mutex<LeaseMap>,
}

#[derive(Default)]
struct LeaseMap {
    leases: HashMap<LeaseKey, Lease, DerivedKeys>,
    sweep_above: usize,
}

/// Leases below this many are never swept.
const LEASES_BEFORE_A_SWEEP: usize = 1024;

impl Leases {
    fn map(&self) -> std::sync::MutexGuard<'_, LeaseMap> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Serves one call from the bucket's lease, if it has a call left and has not lapsed.
    fn take(&self, key: &LeaseKey, limit: u32) -> Option<Decision> {
        let now = Instant::now();
        let mut map = self.map();
        let lease = map.leases.get_mut(key)?;
        if lease.left == 0 || lease.lapses <= now {
            map.leases.remove(key);
            return None;
        }
        lease.left -= 1;
        Some(lease.decision(limit, now))
    }

    /// Adds a new lease's calls to the bucket's (several calls of one user may have asked Redis
    /// at once); the first of them is served now. The whole lease lapses with its oldest charge.
    fn add(&self, key: LeaseKey, granted: Lease, limit: u32) -> Decision {
        let now = Instant::now();
        let mut map = self.map();
        let lease = match map.leases.get(&key) {
            Some(held) if held.lapses > now => Lease {
                left: held.left.saturating_add(granted.left),
                lapses: held.lapses,
                ..granted
            },
            _ => granted,
        };
        map.leases.insert(key, lease);
        if map.leases.len() > map.sweep_above.max(LEASES_BEFORE_A_SWEEP) {
            map.leases.retain(|_, lease| lease.lapses > now);
            map.sweep_above = map.leases.len() * 2;
        }
        lease.decision(limit, now)
    }

    /// Gives a call served from a lease back to it, while it holds.
    fn give_back(&self, key: &LeaseKey) {
        let now = Instant::now();
        if let Some(lease) = self.map().leases.get_mut(key)
            && lease.lapses > now
        {
            lease.left = lease.left.saturating_add(1);
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
        if self.lease_size(limit) > 1
            && let Some(decision) = self.leases.take(&(owner.clone(), plan, bucket), limit)
        {
            return decision;
        }
        match self.charge_in_redis(owner, plan, bucket, &charge).await {
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
        if !self.shares_the_store_redis || self.lease_span(plan, bucket).is_some() {
            return None;
        }
        self.charge(owner, plan, bucket)
    }

    fn lease_span(&self, plan: Plan, bucket: Bucket) -> Option<Duration> {
        (self.lease_size(self.limit(plan, bucket)) > 1).then_some(self.lease_span)
    }

    fn give_back(&self, owner: &Owner, plan: Plan, bucket: Bucket) {
        self.leases.give_back(&(owner.clone(), plan, bucket));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(charged: u32, remaining: u32) -> GcraReply {
        GcraReply {
            allowed: true,
            remaining,
            retry_after: Duration::ZERO,
            reset_after: Duration::from_secs(1),
            charged,
        }
    }

    fn key(user: &str) -> LeaseKey {
        (Owner::of("", user), Plan::Pro, Bucket::Read)
    }

    fn remaining(decision: Option<Decision>) -> Option<u32> {
        match decision? {
            Decision::Allowed { remaining, .. } => Some(remaining),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lease_serves_its_calls_then_asks_again() {
        let leases = Leases::default();
        let span = Duration::from_secs(60);
        let interval = Duration::from_millis(250);
        let first = leases.add(
            key("a"),
            Lease::granted(&reply(4, 100), interval, span),
            240,
        );
        assert_eq!(
            remaining(Some(first)),
            Some(103),
            "three left here, 100 in Redis"
        );
        assert_eq!(remaining(leases.take(&key("a"), 240)), Some(102));
        leases.give_back(&key("a"));
        assert_eq!(remaining(leases.take(&key("a"), 240)), Some(102));
        assert_eq!(remaining(leases.take(&key("a"), 240)), Some(101));
        assert_eq!(remaining(leases.take(&key("a"), 240)), Some(100));
        assert_eq!(leases.take(&key("a"), 240), None, "spent");
        assert_eq!(leases.take(&key("b"), 240), None, "another user's bucket");
    }

    #[test]
    fn leases_of_one_bucket_add_up_and_lapse_with_the_oldest() {
        let leases = Leases::default();
        let interval = Duration::from_millis(1);
        leases.add(
            key("a"),
            Lease::granted(&reply(3, 50), interval, Duration::from_millis(30)),
            60_000,
        );
        let merged = leases.add(
            key("a"),
            Lease::granted(&reply(3, 40), interval, Duration::from_secs(60)),
            60_000,
        );
        assert_eq!(remaining(Some(merged)), Some(44), "2 + 2 here, 40 in Redis");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(
            leases.take(&key("a"), 60_000),
            None,
            "lapsed with the first"
        );
        leases.give_back(&key("a"));
        assert_eq!(
            leases.take(&key("a"), 60_000),
            None,
            "nothing to give back to"
        );
    }

    #[test]
    fn lapsed_leases_are_swept_once_the_map_has_grown() {
        let leases = Leases::default();
        let interval = Duration::from_millis(1);
        for user in 0..LEASES_BEFORE_A_SWEEP {
            let lapsing = Lease::granted(&reply(2, 0), interval, Duration::ZERO);
            leases.add(key(&user.to_string()), lapsing, 60_000);
        }
        let held = Lease::granted(&reply(2, 0), interval, Duration::from_secs(60));
        leases.add(key("kept"), held, 60_000);
        assert_eq!(
            leases.map().leases.len(),
            1,
            "only the lease that holds is left"
        );
        assert_eq!(remaining(leases.take(&key("kept"), 60_000)), Some(0));
    }
}
