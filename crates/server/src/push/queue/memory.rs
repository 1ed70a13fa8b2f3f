//! The in-process queue of the memory store: the same claims, leases and shares in flight as
//! Redis, lost with the process.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::{CLAIM_SCAN, CapReached, Claimed, Delivery, DeliveryQueue, InFlightCaps, QueueCaps};
use crate::push::PushError;

/// Pending deliveries ordered by due time, with per-task and per-owner counts of those pending
/// and per-owner and per-host counts of those in flight.
#[derive(Default)]
pub struct MemoryQueue {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    due: BTreeSet<(Instant, String)>,
    items: HashMap<String, Entry>,
    pending: Counts,
    in_flight: Counts,
}

struct Entry {
    delivery: Delivery,
    due: Instant,
    attempts: u32,
    /// Whether a claim holds the delivery's places in flight.
    holding: bool,
}

/// Counts by key; a count that falls to zero is removed.
#[derive(Default)]
struct Counts(HashMap<String, u64>);

impl Counts {
    fn get(&self, key: &str) -> u64 {
        self.0.get(key).copied().unwrap_or(0)
    }

    fn add(&mut self, key: String, by: i64) {
        let value = self.get(&key).saturating_add_signed(by);
        if value == 0 {
            self.0.remove(&key);
        } else {
            self.0.insert(key, value);
        }
    }
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
    /// Takes the delivery's places in flight unless its owner or host has its share; a claim
    /// whose lease ran out still holds them, and keeps them.
    fn take_places(&mut self, id: &str, caps: InFlightCaps) -> bool {
        let Some(entry) = self.items.get(id) else {
            return false;
        };
        if entry.holding {
            return true;
        }
        let (owner, host) = (
            entry.delivery.owner_counter(),
            entry.delivery.host_counter(),
        );
        if self.in_flight.get(&owner) >= caps.per_owner
            || self.in_flight.get(&host) >= caps.per_host
        {
            return false;
        }
        self.in_flight.add(owner, 1);
        self.in_flight.add(host, 1);
        if let Some(entry) = self.items.get_mut(id) {
            entry.holding = true;
        }
        true
    }

    /// Frees the delivery's places in flight, if a claim holds them.
    fn free_places(&mut self, id: &str) {
        let Some(entry) = self.items.get_mut(id) else {
            return;
        };
        if !std::mem::take(&mut entry.holding) {
            return;
        }
        let (owner, host) = (
            entry.delivery.owner_counter(),
            entry.delivery.host_counter(),
        );
        self.in_flight.add(owner, -1);
        self.in_flight.add(host, -1);
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
        if state.pending.get(&delivery.task_counter()) >= caps.per_task {
            return Err(PushError::QueueFull(CapReached::PerTask));
        }
        if state.pending.get(&delivery.owner_counter()) >= caps.per_owner {
            return Err(PushError::QueueFull(CapReached::PerOwner));
        }
        let now = Instant::now();
        state.due.insert((now, delivery.id.clone()));
        state.pending.add(delivery.task_counter(), 1);
        state.pending.add(delivery.owner_counter(), 1);
        state.items.insert(
            delivery.id.clone(),
            Entry {
                delivery: delivery.clone(),
                due: now,
                attempts: 0,
                holding: false,
            },
        );
        Ok(())
    }

    async fn claim(
        &self,
        limit: usize,
        lease: Duration,
        caps: InFlightCaps,
    ) -> Result<Vec<Claimed>, PushError> {
        let mut state = self.lock();
        let now = Instant::now();
        let due: Vec<(Instant, String)> = state
            .due
            .iter()
            .take_while(|(due, _)| *due <= now)
            .take(CLAIM_SCAN)
            .cloned()
            .collect();
        let hidden_until = now + lease;
        let mut claimed = Vec::with_capacity(limit.min(due.len()));
        for key in due {
            if claimed.len() == limit {
                break;
            }
            if !state.take_places(&key.1, caps) {
                continue;
            }
            state.due.remove(&key);
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
        state.free_places(&delivery.id);
        if let Some(entry) = state.items.remove(&delivery.id) {
            state.due.remove(&(entry.due, delivery.id.clone()));
            state.pending.add(delivery.task_counter(), -1);
            state.pending.add(delivery.owner_counter(), -1);
        }
        Ok(())
    }

    async fn retry_after(&self, delivery: &Delivery, delay: Duration) -> Result<(), PushError> {
        let mut state = self.lock();
        state.free_places(&delivery.id);
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
