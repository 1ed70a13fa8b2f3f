//! Per-user in-flight slots: how many calls one user has running at once, from the moment its
//! token is verified (before its body is read) until its answer is made. The server's
//! `max_in_flight` sheds load for everyone; this cap keeps one user (trickling bodies, or asking
//! the kit for slow answers) from holding more than its share of those slots.
//!
//! One count per user with calls running, in a map split into shards by the user's hash: a
//! call costs one short lock of one shard to take its slot and one to give it back, never a
//! lock every call contends on. A user with nothing running has no entry.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Mutex, MutexGuard};

use crate::hashing::DerivedKeys;
use crate::store::Owner;

/// Shards of the map: enough that calls of different users rarely wait on one lock.
const SHARDS: usize = 64;

/// The users' counts of calls running, each user's under a keyed 64-bit hash of its owner id
/// (drawn per process, so no one can make two users share a count).
pub struct UserSlots {
    shards: Box<[Mutex<HashMap<u64, u32, DerivedKeys>>]>,
    keys: DerivedKeys,
    cap: u32,
}

/// One call's slot, given back when dropped.
#[must_use = "the slot is given back when dropped"]
pub struct UserSlot<'a> {
    slots: &'a UserSlots,
    key: u64,
}

impl UserSlots {
    /// At most `cap` calls running per user (at least 1).
    pub fn new(cap: usize) -> Self {
        UserSlots {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            keys: DerivedKeys::default(),
            cap: u32::try_from(cap.max(1)).unwrap_or(u32::MAX),
        }
    }

    /// The cap, to name in a refusal.
    pub fn cap(&self) -> u32 {
        self.cap
    }

    /// A slot for one more call of `owner`, or `None` when it has `cap` running already.
    pub fn try_hold(&self, owner: &Owner) -> Option<UserSlot<'_>> {
        let key = self.keys.hash_one(owner.as_str());
        let mut shard = self.shard(key);
        let running = shard.entry(key).or_insert(0);
        if *running >= self.cap {
            return None;
        }
        *running += 1;
        Some(UserSlot { slots: self, key })
    }

    fn shard(&self, key: u64) -> MutexGuard<'_, HashMap<u64, u32, DerivedKeys>> {
        // The high bits choose the shard: the map inside hashes the whole key again.
        self.lock((key >> 58) as usize % SHARDS)
    }

    fn lock(&self, at: usize) -> MutexGuard<'_, HashMap<u64, u32, DerivedKeys>> {
        match self.shards[at].lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

impl Drop for UserSlot<'_> {
    fn drop(&mut self) {
        let mut shard = self.slots.shard(self.key);
        if let Some(running) = shard.get_mut(&self.key) {
            *running = running.saturating_sub(1);
            if *running == 0 {
                shard.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(slots: &UserSlots) -> u32 {
        (0..SHARDS)
            .map(|at| slots.lock(at).values().sum::<u32>())
            .sum()
    }

    #[test]
    fn each_user_holds_at_most_the_cap_and_gives_its_slots_back() {
        let slots = UserSlots::new(2);
        let alice = Owner::of("", "alice");
        let bob = Owner::of("", "bob");
        let first = slots.try_hold(&alice).expect("a first slot");
        let second = slots.try_hold(&alice).expect("a second slot");
        assert!(slots.try_hold(&alice).is_none(), "the cap is 2");
        let bobs = slots
            .try_hold(&bob)
            .expect("another user has slots of its own");
        assert_eq!(running(&slots), 3);
        drop(first);
        let third = slots
            .try_hold(&alice)
            .expect("a slot given back is free again");
        drop((second, third, bobs));
        assert_eq!(running(&slots), 0);
        assert!(
            slots.shards.iter().all(|s| s.lock().unwrap().is_empty()),
            "a user with nothing running keeps no entry"
        );
        assert_eq!(UserSlots::new(0).cap(), 1);
    }
}
