//! The in-process queue of the memory store: the same claims and leases as Redis, lost with
//! the process.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{CapReached, Claimed, Delivery, DeliveryQueue, QueueCaps};
use crate::push::PushError;

/// Pending deliveries ordered by due time, with per-task and per-owner counts.
#[derive(Default)]
pub struct MemoryQueue {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    due: BTreeSet<(Instant, String)>,
    items: HashMap<String, Entry>,
    counts: HashMap<String, u64>,
}

struct Entry {
    delivery: Delivery,
    due: Instant,
    attempts: u32,
}

impl MemoryQueue {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn count(&self, key: &str) -> u64 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    fn add(&mut self, key: String, by: i64) {
        let value = self.count(&key).saturating_add_signed(by);
        if value == 0 {
            self.counts.remove(&key);
        } else {
            self.counts.insert(key, value);
        }
    }
}

#[async_trait]
impl DeliveryQueue for MemoryQueue {
    async fn enqueue(&self, delivery: &Delivery, caps: QueueCaps) -> Result<(), PushError> {
        let mut state = self.lock();
        if state.items.contains_key(&delivery.id) {
            return Ok(());
        }
        if state.items.len() as u64 >= caps.total {
            return Err(PushError::QueueFull(CapReached::Total));
        }
        if state.count(&delivery.task_counter()) >= caps.per_task {
            return Err(PushError::QueueFull(CapReached::PerTask));
        }
        if state.count(&delivery.owner_counter()) >= caps.per_owner {
            return Err(PushError::QueueFull(CapReached::PerOwner));
        }
        let now = Instant::now();
        state.due.insert((now, delivery.id.clone()));
        state.add(delivery.task_counter(), 1);
        state.add(delivery.owner_counter(), 1);
        state.items.insert(
            delivery.id.clone(),
            Entry {
                delivery: delivery.clone(),
                due: now,
                attempts: 0,
            },
        );
        Ok(())
    }

    async fn claim(&self, limit: usize, lease: Duration) -> Result<Vec<Claimed>, PushError> {
        let mut state = self.lock();
        let now = Instant::now();
        let ids: Vec<(Instant, String)> = state
            .due
            .iter()
            .take_while(|(due, _)| *due <= now)
            .take(limit)
            .cloned()
            .collect();
        let mut claimed = Vec::with_capacity(ids.len());
        for key in ids {
            state.due.remove(&key);
            let hidden_until = now + lease;
            let Some(entry) = state.items.get_mut(&key.1) else {
                continue;
            };
            entry.due = hidden_until;
            entry.attempts += 1;
            claimed.push(Claimed {
                delivery: entry.delivery.clone(),
                attempt: entry.attempts,
            });
            state.due.insert((hidden_until, key.1));
        }
        Ok(claimed)
    }

    async fn finish(&self, delivery: &Delivery) -> Result<(), PushError> {
        let mut state = self.lock();
        if let Some(entry) = state.items.remove(&delivery.id) {
            state.due.remove(&(entry.due, delivery.id.clone()));
            state.add(delivery.task_counter(), -1);
            state.add(delivery.owner_counter(), -1);
        }
        Ok(())
    }

    async fn retry_after(&self, delivery: &Delivery, delay: Duration) -> Result<(), PushError> {
        let mut state = self.lock();
        let due = Instant::now() + delay;
        let Some(entry) = state.items.get_mut(&delivery.id) else {
            return Ok(());
        };
        let previous = std::mem::replace(&mut entry.due, due);
        state.due.remove(&(previous, delivery.id.clone()));
        state.due.insert((due, delivery.id.clone()));
        Ok(())
    }

    async fn pending(&self) -> Result<u64, PushError> {
        Ok(self.lock().items.len() as u64)
    }
}
