//! The bytes of events this replica's open streams have handed to their connections and their
//! clients have not taken yet, per owner and in all. A client that never reads keeps what was
//! handed to it in the connection's buffers; counting it bounds that memory, one owner's share
//! first, so one owner's stalled streams never stop another owner's.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::store::Owner;

/// The budgets of open streams' queued bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamByteCaps {
    /// What one owner's streams may hold queued at once.
    pub per_owner: usize,
    /// What all streams of this replica may hold queued at once.
    pub total: usize,
}

/// Which budget an event would pass: its setting's key, named in the refusal.
pub const PER_OWNER_KEY: &str = "tasks.max_stream_bytes_per_user";
/// See [`PER_OWNER_KEY`].
pub const TOTAL_KEY: &str = "tasks.max_stream_bytes";

/// The queued bytes of every owner with a stream holding some.
#[derive(Debug)]
pub(super) struct StreamBytes {
    caps: StreamByteCaps,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    by_owner: HashMap<Owner, usize>,
    total: usize,
}

impl StreamBytes {
    pub(super) fn new(caps: StreamByteCaps) -> Self {
        StreamBytes {
            caps,
            held: Mutex::default(),
        }
    }

    /// Counts `bytes` more queued for the owner, or names the budget they would pass (and
    /// counts nothing).
    pub(super) fn take(&self, owner: &Owner, bytes: usize) -> Result<(), &'static str> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let owner_held = held.by_owner.get(owner).copied().unwrap_or(0);
        if owner_held + bytes > self.caps.per_owner {
            return Err(PER_OWNER_KEY);
        }
        if held.total + bytes > self.caps.total {
            return Err(TOTAL_KEY);
        }
        held.total += bytes;
        *held.by_owner.entry(owner.clone()).or_insert(0) += bytes;
        Ok(())
    }

    /// The owner's client took `bytes` (or its stream ended): they no longer count.
    pub(super) fn give_back(&self, owner: &Owner, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        held.total = held.total.saturating_sub(bytes);
        if let Some(owner_held) = held.by_owner.get_mut(owner) {
            *owner_held = owner_held.saturating_sub(bytes);
            if *owner_held == 0 {
                held.by_owner.remove(owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_owner_has_its_share_and_all_share_the_total() {
        let bytes = StreamBytes::new(StreamByteCaps {
            per_owner: 100,
            total: 150,
        });
        let (a, b) = (Owner::of("i", "a"), Owner::of("i", "b"));
        assert_eq!(bytes.take(&a, 80), Ok(()));
        assert_eq!(bytes.take(&a, 30), Err(PER_OWNER_KEY));
        assert_eq!(bytes.take(&b, 80), Err(TOTAL_KEY));
        assert_eq!(bytes.take(&b, 70), Ok(()));
        bytes.give_back(&a, 80);
        assert_eq!(bytes.take(&a, 80), Ok(()));
        bytes.give_back(&a, 80);
        bytes.give_back(&b, 70);
        assert!(bytes.held.lock().unwrap().by_owner.is_empty());
    }
}
