//! The owners whose sends this replica charges before their skill runs, for a while.
//!
//! A new message of a cheap skill may run its skill first and be charged by the save of its
//! task, in one round trip to Redis. Run that way, a send that turns out refused (or a resend
//! of a message already answered) ran its skill for nothing, and a client that kept sending
//! would keep the server working for free. So a refused send keeps its owner on the
//! charge-first path (message lookup, charge, run, save) until its `retryAfter` has passed,
//! and a resend found after its run keeps the owner there for one emission interval: at most
//! one run goes uncharged per owner, per replica, per such window.

use std::time::{Duration, Instant};

use moka::Expiry;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

use crate::hashing::DerivedKeys;
use crate::store::Owner;

/// Owners held on the charge-first path, each until its own time has passed, at most
/// [`ChargeFirstOwners::CAPACITY`] of them: beyond that the least recently held is forgotten
/// (and may get one more run before it is refused and held again), so memory stays bounded
/// however many users are refused at once.
pub struct ChargeFirstOwners {
    owners: Cache<Owner, Duration, DerivedKeys>,
}

/// Each entry lives for the duration it holds, from its last write.
struct HeldFor;

impl Expiry<Owner, Duration> for HeldFor {
    fn expire_after_create(
        &self,
        _owner: &Owner,
        held_for: &Duration,
        _created_at: Instant,
    ) -> Option<Duration> {
        Some(*held_for)
    }

    fn expire_after_update(
        &self,
        _owner: &Owner,
        held_for: &Duration,
        _updated_at: Instant,
        _left: Option<Duration>,
    ) -> Option<Duration> {
        Some(*held_for)
    }
}

impl ChargeFirstOwners {
    /// Most owners held at once: a few hundred bytes each, so about a megabyte at most.
    pub const CAPACITY: u64 = 10_000;

    /// An empty set holding at most `capacity` owners.
    pub fn new(capacity: u64) -> Self {
        ChargeFirstOwners {
            owners: Cache::builder()
                .max_capacity(capacity)
                .eviction_policy(EvictionPolicy::lru())
                .expire_after(HeldFor)
                .build_with_hasher(DerivedKeys::default()),
        }
    }

    /// Holds `owner` on the charge-first path for `duration` from now (a later hold replaces
    /// an earlier one).
    pub fn hold(&self, owner: &Owner, duration: Duration) {
        self.owners.insert(owner.clone(), duration);
    }

    /// Whether `owner`'s sends are to be charged before their skill runs.
    pub fn holds(&self, owner: &Owner) -> bool {
        self.owners.contains_key(owner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(held: &ChargeFirstOwners) -> u64 {
        held.owners.run_pending_tasks();
        held.owners.entry_count()
    }

    #[test]
    fn an_owner_is_held_until_its_time_has_passed() {
        let held = ChargeFirstOwners::new(100);
        let alice = Owner::of("", "alice");
        assert!(!held.holds(&alice));
        held.hold(&alice, Duration::from_millis(80));
        assert!(held.holds(&alice));
        assert!(!held.holds(&Owner::of("", "bob")), "per owner");
        std::thread::sleep(Duration::from_millis(120));
        assert!(!held.holds(&alice), "released once the time passed");
        held.hold(&alice, Duration::from_secs(60));
        held.hold(&alice, Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(80));
        assert!(!held.holds(&alice), "the later hold replaces the earlier");
    }

    #[test]
    fn memory_stays_bounded_however_many_owners_are_held() {
        let held = ChargeFirstOwners::new(100);
        for user in 0..1_000 {
            held.hold(
                &Owner::of("", &format!("user-{user}")),
                Duration::from_secs(60),
            );
        }
        assert!(count(&held) <= 100, "{}", count(&held));
        assert!(
            held.holds(&Owner::of("", "user-999")),
            "the newest are kept"
        );
    }
}
