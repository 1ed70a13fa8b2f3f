//! Notifications waiting to be delivered: at least once, each claimed by one worker at a time
//! for a lease, retried later, or finished. In memory for the memory store; in Redis for the
//! Redis store, so that a replica's restart loses none and any replica delivers them.
//!
//! Claims are fair: a claim takes due deliveries oldest first but skips those whose owner, or
//! whose webhook's host, already has its share in flight ([`InFlightCaps`]), so a slow or dead
//! receiver holds only its owner's share of the workers and delays nobody else. A claim holds
//! its owner's and host's places until the delivery is finished or made due again; one whose
//! lease ran out (its replica died) keeps them for the claim that takes it over.

mod memory;
mod redis;

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::PushError;
use super::fault::DeliveryFault;

pub use memory::MemoryQueue;
pub use redis::RedisQueue;

/// One notification: a task's JSON for one webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// The notification id, sent as `Idempotency-Key`: the same on every attempt.
    pub id: String,
    /// The hashed owner of the task (see [`crate::store::Owner`]).
    pub owner: String,
    /// The task.
    pub task_id: String,
    /// The webhook URL, checked when the config was set.
    pub url: String,
    /// The config's token, sent as `X-A2A-Notification-Token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The conformance kit's fault on the task's notifications, if it asked for one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<DeliveryFault>,
    /// The W3C `traceparent` of the span that queued the notification, when traces are
    /// exported: each attempt's span is its child, so the webhook call joins the call's trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The notification's body, in the terms of the wire its config was set over, posted as
    /// is.
    #[serde(skip)]
    pub body: Bytes,
}

impl Delivery {
    /// The stored form: the other fields as one JSON line, then the body's bytes.
    pub fn encode(&self) -> Result<Vec<u8>, PushError> {
        let mut out = serde_json::to_vec(self).map_err(|e| PushError::Corrupt(e.to_string()))?;
        out.push(b'\n');
        out.extend_from_slice(&self.body);
        Ok(out)
    }

    /// Reads [`Delivery::encode`]'s form.
    pub fn decode(raw: &[u8]) -> Result<Self, PushError> {
        let split = raw
            .iter()
            .position(|b| *b == b'\n')
            .ok_or_else(|| PushError::Corrupt("a pending delivery without a body".into()))?;
        let mut delivery: Delivery =
            serde_json::from_slice(&raw[..split]).map_err(|e| PushError::Corrupt(e.to_string()))?;
        delivery.body = Bytes::copy_from_slice(&raw[split + 1..]);
        Ok(delivery)
    }

    /// The counter of the task's pending deliveries.
    fn task_counter(&self) -> String {
        format!("t:{}:{}", self.owner, self.task_id)
    }

    /// The counter of the owner's pending deliveries, and (among the counts in flight) of its
    /// deliveries in flight.
    fn owner_counter(&self) -> String {
        format!("o:{}", self.owner)
    }

    /// The counter of the deliveries in flight to the webhook's host (its name or address,
    /// lowercase, without the port: one machine answers on every port).
    fn host_counter(&self) -> String {
        let host = reqwest::Url::parse(&self.url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
            .unwrap_or_default();
        format!("h:{host}")
    }
}

/// How many deliveries may be in flight at once for one owner and for one host, across every
/// worker that shares the queue (`push.max_in_flight_per_owner`, `push.max_in_flight_per_host`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlightCaps {
    /// Deliveries of one owner.
    pub per_owner: u64,
    /// Deliveries to one host.
    pub per_host: u64,
}

/// Due deliveries one claim looks at, at most: enough to step over several owners' whole
/// backlogs (`push.max_pending_per_owner`, 1000 by default) held back by their share, and few
/// enough that a claim stays a short script on Redis.
pub const CLAIM_SCAN: usize = 4096;

/// A delivery claimed for one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// What to deliver.
    pub delivery: Delivery,
    /// Which attempt this is, from 1 (an attempt cut short by a crash counts).
    pub attempt: u32,
}

/// How much may wait, so one user or a dead receiver cannot fill the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueCaps {
    /// Pending deliveries of one task.
    pub per_task: u64,
    /// Pending deliveries of one owner.
    pub per_owner: u64,
    /// Pending deliveries in all.
    pub total: u64,
}

/// Which cap refused a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapReached {
    /// `push.max_pending_per_task`.
    PerTask,
    /// `push.max_pending_per_owner`.
    PerOwner,
    /// `push.max_pending_total`.
    Total,
}

impl CapReached {
    /// The setting that was reached.
    pub fn key(self) -> &'static str {
        match self {
            CapReached::PerTask => "push.max_pending_per_task",
            CapReached::PerOwner => "push.max_pending_per_owner",
            CapReached::Total => "push.max_pending_total",
        }
    }
}

/// A queue of pending deliveries.
#[async_trait]
pub trait DeliveryQueue: Send + Sync {
    /// Adds a delivery, due now, unless a cap is reached (then nothing is added).
    async fn enqueue(&self, delivery: &Delivery, caps: QueueCaps) -> Result<(), PushError>;

    /// Up to `limit` due deliveries, oldest first, skipping those whose owner or host already
    /// has its share of `caps` in flight (looking at no more than [`CLAIM_SCAN`]); each is
    /// hidden from other claims for `lease` (after which a claim that was never finished or
    /// retried is due again), with its attempt number.
    async fn claim(
        &self,
        limit: usize,
        lease: Duration,
        caps: InFlightCaps,
    ) -> Result<Vec<Claimed>, PushError>;

    /// Removes a delivery that succeeded or was given up, freeing its place in flight.
    async fn finish(&self, delivery: &Delivery) -> Result<(), PushError>;

    /// Makes a claimed delivery due again after `delay`, freeing its place in flight.
    async fn retry_after(&self, delivery: &Delivery, delay: Duration) -> Result<(), PushError>;

    /// How many deliveries are pending (claimed ones included).
    async fn pending(&self) -> Result<u64, PushError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_round_trips_with_newlines_in_its_body() {
        let delivery = Delivery {
            id: "n-1".into(),
            owner: "o".into(),
            task_id: "t\n1".into(),
            url: "https://hooks.example/".into(),
            token: Some("tok".into()),
            fault: None,
            trace: Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into()),
            body: Bytes::from_static(b"{\"a\":\n1}"),
        };
        assert_eq!(
            Delivery::decode(&delivery.encode().unwrap()).unwrap(),
            delivery
        );
        assert!(Delivery::decode(b"{}").is_err());
    }
}
