//! Per-user rate limits, one bucket per (plan, skill bucket).
//!
//! `message/send` is charged to its skill's bucket; `tasks/get` and `tasks/cancel` to the
//! `read` bucket, one budget per user whatever the plan. Both limiters implement the same GCRA: limits are "N per
//! minute" with a burst of N, so a user who waited a minute may send N calls at once, then one
//! every 60/N seconds. [`LocalLimiter`] (`governor`) is exact within one process;
//! [`RedisLimiter`] keeps the state in Redis so replicas share one limit per user, and may leave
//! a charge to a store on the same Redis ([`RateLimiter::defer`]).

mod charge_first;
mod redis;
pub mod user_slots;

pub use self::charge_first::ChargeFirstOwners;
pub use self::redis::RedisLimiter;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter as Gcra};
use skills::Bucket;

use crate::auth::Plan;
use crate::config::LimitSettings;
use crate::gcra::{BucketCharge, GcraReply};
use crate::hashing::DerivedKeys;
use crate::store::Owner;

/// The answer of a limiter for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The call may run.
    Allowed {
        /// Calls per minute of this bucket.
        limit: u32,
        /// Calls left in the current burst.
        remaining: u32,
        /// Time until the bucket is full again.
        reset_after: Duration,
    },
    /// The call is refused.
    Limited {
        /// Calls per minute of this bucket (0: the bucket is closed for the plan).
        limit: u32,
        /// Time until one call will be allowed.
        retry_after: Duration,
    },
    /// The shared limiter could not decide and is configured to fail closed.
    Unavailable,
    /// No limit applies (authentication off without `limits.enabled`): the call runs, and no
    /// `RateLimit` headers describe a limit that does not exist.
    Unmetered,
}

impl Decision {
    /// The decision of a GCRA script's reply in a bucket of `limit` calls per minute.
    pub fn of_gcra(limit: u32, reply: &GcraReply) -> Decision {
        if reply.allowed {
            Decision::Allowed {
                limit,
                remaining: reply.remaining,
                reset_after: reply.reset_after,
            }
        } else {
            Decision::Limited {
                limit,
                retry_after: reply.retry_after,
            }
        }
    }

    /// `retryAfter` as sent to clients: whole seconds, rounded up, at least 1.
    pub fn retry_after_secs(retry_after: Duration) -> u64 {
        retry_after.as_millis().div_ceil(1000).max(1) as u64
    }
}

/// Decides whether a user may make one more call in a bucket.
#[async_trait]
pub trait RateLimiter: Send + Sync {
    /// Charges one call of `owner` on `plan` to `bucket`, if allowed.
    async fn check(&self, owner: &Owner, plan: Plan, bucket: Bucket) -> Decision;

    /// The charge of one call of `owner` on `plan` to `bucket`, left to the task store to apply
    /// in the same atomic step as its save ([`crate::store::TaskStore::charged_saves`]), when
    /// this limiter keeps its state where that store does. `None` (the default: an in-process
    /// limiter, a limiter on a Redis of its own, a closed bucket): charge with
    /// [`RateLimiter::check`] first.
    fn defer(&self, _owner: &Owner, _plan: Plan, _bucket: Bucket) -> Option<BucketCharge> {
        None
    }

    /// The span of the lease in which this limiter charges calls of `plan` to `bucket` ahead,
    /// several at a time, so that [`RateLimiter::check`] usually decides without a round trip:
    /// then a cheap send is charged before it runs and its save alone tells a message seen
    /// before (no look-up of the message first). `None`, the default: one call at a time.
    fn lease_span(&self, _plan: Plan, _bucket: Bucket) -> Option<Duration> {
        None
    }

    /// Gives back a call [`RateLimiter::check`] charged ahead, when the call turned out to be a
    /// message seen before (answered uncharged). The default does nothing.
    fn give_back(&self, _owner: &Owner, _plan: Plan, _bucket: Bucket) {}
}

/// The limiter of a server whose limits are off: every call runs.
pub struct Unmetered;

#[async_trait]
impl RateLimiter for Unmetered {
    async fn check(&self, _owner: &Owner, _plan: Plan, _bucket: Bucket) -> Decision {
        Decision::Unmetered
    }
}

/// Owners are hashes the server made, so the per-user state is looked up with [`DerivedKeys`].
type KeyedGcra = Gcra<
    Owner,
    DefaultKeyedStateStore<Owner, DerivedKeys>,
    DefaultClock,
    StateInformationMiddleware,
>;

/// The in-process limiter: exact for one replica, `N ×` the limit across `N` replicas.
pub struct LocalLimiter {
    buckets: HashMap<(Plan, Bucket), Option<Arc<KeyedGcra>>, DerivedKeys>,
    limits: HashMap<(Plan, Bucket), u32, DerivedKeys>,
}

impl LocalLimiter {
    /// One keyed GCRA per paid plan and bucket, from config.
    pub fn new(settings: &LimitSettings) -> Self {
        let mut buckets = HashMap::default();
        let mut limits = HashMap::default();
        for plan in [Plan::Pro, Plan::Organization, Plan::Enterprise] {
            for (bucket, per_minute) in settings.buckets_for(plan).into_iter().flatten() {
                let limiter = NonZeroU32::new(per_minute).map(|n| {
                    Arc::new(
                        Gcra::dashmap_with_hasher(Quota::per_minute(n), DerivedKeys::default())
                            .with_middleware::<StateInformationMiddleware>(),
                    )
                });
                buckets.insert((plan, bucket), limiter);
                limits.insert((plan, bucket), per_minute);
            }
        }
        LocalLimiter { buckets, limits }
    }

    /// Drops the state of users whose buckets are full again (indistinguishable from new
    /// users), so memory stays bounded however many users come and go.
    pub fn forget_idle(&self) {
        for limiter in self.buckets.values().flatten() {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
    }

    /// Users with live state, across buckets (what the tests of its memory bound read).
    #[cfg(test)]
    pub fn tracked_keys(&self) -> usize {
        self.buckets.values().flatten().map(|l| l.len()).sum()
    }
}

#[async_trait]
impl RateLimiter for LocalLimiter {
    async fn check(&self, owner: &Owner, plan: Plan, bucket: Bucket) -> Decision {
        let limit = self.limits.get(&(plan, bucket)).copied().unwrap_or(0);
        let Some(Some(limiter)) = self.buckets.get(&(plan, bucket)) else {
            return Decision::Limited {
                limit: 0,
                retry_after: Duration::from_secs(60),
            };
        };
        // A refusal whose time has already come was decided on a stale clock: another thread
        // read a later instant and updated the user's state first. Asked again, it is decided
        // on a fresh one (once: a second refusal stands).
        let checked = match limiter.check_key(owner) {
            Err(not_until) if not_until.wait_time_from(limiter.clock().now()).is_zero() => {
                limiter.check_key(owner)
            }
            checked => checked,
        };
        match checked {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                let used = limit.saturating_sub(remaining);
                let per_call = Duration::from_secs(60) / limit.max(1);
                Decision::Allowed {
                    limit,
                    remaining,
                    reset_after: per_call * used,
                }
            }
            Err(not_until) => Decision::Limited {
                limit,
                retry_after: not_until.wait_time_from(limiter.clock().now()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::PlanLimits;

    /// Two first calls of a user at the same moment on two threads, with a limit of two: both
    /// are allowed, however the threads' reads of the clock interleave with their updates.
    #[test]
    fn concurrent_calls_within_the_limit_are_all_allowed() {
        let mut settings = LimitSettings::default();
        settings.pro.default_per_minute = 2;
        let limiter = std::sync::Arc::new(LocalLimiter::new(&settings));
        let refused = std::sync::atomic::AtomicUsize::new(0);
        for round in 0..2_000 {
            let owner = Owner::of("", &format!("user-{round}"));
            let barrier = std::sync::Barrier::new(2);
            std::thread::scope(|scope| {
                for _ in 0..2 {
                    scope.spawn(|| {
                        barrier.wait();
                        let decision = futures::executor::block_on(limiter.check(
                            &owner,
                            Plan::Pro,
                            Bucket::Default,
                        ));
                        if matches!(decision, Decision::Limited { .. }) {
                            refused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    });
                }
            });
        }
        assert_eq!(refused.into_inner(), 0, "calls refused within the limit");
    }

    #[tokio::test]
    async fn sixteenth_default_call_is_limited_per_user() {
        let limiter = LocalLimiter::new(&LimitSettings::default());
        for i in 0..15 {
            let d = limiter
                .check(&Owner::of("", "alice"), Plan::Pro, Bucket::Default)
                .await;
            assert!(
                matches!(d, Decision::Allowed { remaining, .. } if remaining == 14 - i),
                "{d:?}"
            );
        }
        let d = limiter
            .check(&Owner::of("", "alice"), Plan::Pro, Bucket::Default)
            .await;
        let Decision::Limited { limit, retry_after } = d else {
            panic!("{d:?}")
        };
        assert_eq!(limit, 15);
        assert_eq!(Decision::retry_after_secs(retry_after), 4);
        assert!(matches!(
            limiter
                .check(&Owner::of("", "bob"), Plan::Pro, Bucket::Default)
                .await,
            Decision::Allowed { .. }
        ));
        assert!(matches!(
            limiter
                .check(&Owner::of("", "alice"), Plan::Pro, Bucket::Expensive)
                .await,
            Decision::Allowed { .. }
        ));
        assert_eq!(limiter.tracked_keys(), 3);
        for _ in 0..600 {
            assert!(matches!(
                limiter
                    .check(&Owner::of("", "alice"), Plan::Pro, Bucket::Read)
                    .await,
                Decision::Allowed { .. }
            ));
        }
        assert!(matches!(
            limiter
                .check(&Owner::of("", "alice"), Plan::Pro, Bucket::Read)
                .await,
            Decision::Limited { limit: 600, .. }
        ));
    }

    #[tokio::test]
    async fn zero_closes_a_bucket() {
        let settings = LimitSettings {
            pro: PlanLimits {
                default_per_minute: 0,
                expensive_per_minute: 2,
            },
            ..LimitSettings::default()
        };
        let limiter = LocalLimiter::new(&settings);
        assert!(matches!(
            limiter
                .check(&Owner::of("", "a"), Plan::Pro, Bucket::Default)
                .await,
            Decision::Limited { limit: 0, .. }
        ));
        assert!(matches!(
            limiter
                .check(&Owner::of("", "a"), Plan::Free, Bucket::Default)
                .await,
            Decision::Limited { .. }
        ));
    }

    #[tokio::test]
    async fn idle_users_are_forgotten() {
        let settings = LimitSettings {
            enterprise: PlanLimits {
                default_per_minute: 600_000,
                expensive_per_minute: 20,
            },
            ..LimitSettings::default()
        };
        let limiter = LocalLimiter::new(&settings);
        for user in 0..1000 {
            limiter
                .check(
                    &Owner::of("", &format!("user-{user}")),
                    Plan::Enterprise,
                    Bucket::Default,
                )
                .await;
        }
        assert_eq!(limiter.tracked_keys(), 1000);
        // One call refills in 0.1 ms at 600,000 a minute: all are idle well within 50 ms.
        tokio::time::sleep(Duration::from_millis(50)).await;
        limiter.forget_idle();
        assert_eq!(
            limiter.tracked_keys(),
            0,
            "memory stays bounded as users come and go"
        );
    }

    #[tokio::test]
    async fn huge_limits_allow_and_count_down() {
        for limit in [60_000_001, 100_000_000, u32::MAX] {
            let settings = LimitSettings {
                pro: PlanLimits {
                    default_per_minute: limit,
                    expensive_per_minute: limit,
                },
                reads_per_minute: limit,
                ..LimitSettings::default()
            };
            let limiter = LocalLimiter::new(&settings);
            for bucket in [Bucket::Default, Bucket::Expensive, Bucket::Read] {
                for _ in 0..3 {
                    let d = limiter.check(&Owner::of("", "a"), Plan::Pro, bucket).await;
                    let Decision::Allowed { remaining, .. } = d else {
                        panic!("{limit}: {d:?}")
                    };
                    assert!(
                        u64::from(remaining) + 10 >= u64::from(limit),
                        "{limit}: {d:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(Decision::retry_after_secs(Duration::from_millis(1)), 1);
        assert_eq!(
            Decision::retry_after_secs(Duration::from_millis(19_999)),
            20
        );
        assert_eq!(Decision::retry_after_secs(Duration::ZERO), 1);
    }
}
