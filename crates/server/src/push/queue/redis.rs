//! The shared queue: Redis, so that pending deliveries survive a replica's restart and any
//! replica delivers them. A sorted set of ids by due time, a hash of records, a hash of attempt
//! counts, a hash of per-task and per-owner counters, and for fair claims a hash of each
//! delivery's owner and host, a hash of the counts in flight per owner and per host and a set
//! of the claims holding places, all under one hash tag, each change one atomic script on
//! Redis' clock. The counts in flight are shared by every replica: an owner's share is of the
//! whole fleet's workers.

use std::time::Duration;

use async_trait::async_trait;
use redis::{Script, Value};

use super::{CLAIM_SCAN, CapReached, Claimed, Delivery, DeliveryQueue, InFlightCaps, QueueCaps};
use crate::push::PushError;
use crate::redis_conn::RedisConnection;

const DUE: &str = "a2a:v1:{push}:due";
const ITEMS: &str = "a2a:v1:{push}:deliveries";
const ATTEMPTS: &str = "a2a:v1:{push}:attempts";
const COUNTERS: &str = "a2a:v1:{push}:counters";
const ROUTES: &str = "a2a:v1:{push}:routes";
const IN_FLIGHT: &str = "a2a:v1:{push}:in_flight";
const HOLDING: &str = "a2a:v1:{push}:holding";

const FINISH_SCRIPT: &str = concat!(
    include_str!("../../../../../migrations/scripts/push_release.lua"),
    include_str!("../../../../../migrations/scripts/push_finish.lua"),
);
const RETRY_SCRIPT: &str = concat!(
    include_str!("../../../../../migrations/scripts/push_release.lua"),
    include_str!("../../../../../migrations/scripts/push_retry.lua"),
);

/// Pending deliveries in Redis, shared by every replica.
pub struct RedisQueue {
    connection: RedisConnection,
    enqueue: Script,
    claim: Script,
    finish: Script,
    retry: Script,
}

impl RedisQueue {
    /// A queue over `connection` (the store's Redis, already migrated).
    pub fn new(connection: RedisConnection) -> Self {
        RedisQueue {
            connection,
            enqueue: Script::new(include_str!(
                "../../../../../migrations/scripts/push_enqueue.lua"
            )),
            claim: Script::new(include_str!(
                "../../../../../migrations/scripts/push_claim.lua"
            )),
            finish: Script::new(FINISH_SCRIPT),
            retry: Script::new(RETRY_SCRIPT),
        }
    }
}

#[async_trait]
impl DeliveryQueue for RedisQueue {
    async fn enqueue(&self, delivery: &Delivery, caps: QueueCaps) -> Result<(), PushError> {
        let reply: i64 = self
            .enqueue
            .key(DUE)
            .key(ITEMS)
            .key(ATTEMPTS)
            .key(COUNTERS)
            .key(ROUTES)
            .arg(&delivery.id)
            .arg(delivery.encode()?)
            .arg(delivery.task_counter())
            .arg(delivery.owner_counter())
            .arg(caps.per_task)
            .arg(caps.per_owner)
            .arg(caps.total)
            .arg(format!(
                "{}\n{}",
                delivery.owner_counter(),
                delivery.host_counter()
            ))
            .invoke_async(&mut self.connection.clone())
            .await?;
        match reply {
            1 => Ok(()),
            -1 => Err(PushError::QueueFull(CapReached::Total)),
            -2 => Err(PushError::QueueFull(CapReached::PerTask)),
            -3 => Err(PushError::QueueFull(CapReached::PerOwner)),
            other => Err(PushError::Corrupt(format!("enqueue replied {other}"))),
        }
    }

    async fn claim(
        &self,
        limit: usize,
        lease: Duration,
        caps: InFlightCaps,
    ) -> Result<Vec<Claimed>, PushError> {
        let reply: Vec<Value> = self
            .claim
            .key(DUE)
            .key(ITEMS)
            .key(ATTEMPTS)
            .key(ROUTES)
            .key(IN_FLIGHT)
            .key(HOLDING)
            .arg(limit)
            .arg(lease.as_millis() as u64)
            .arg(caps.per_owner)
            .arg(caps.per_host)
            .arg(CLAIM_SCAN)
            .invoke_async(&mut self.connection.clone())
            .await?;
        reply
            .chunks(3)
            .map(|triple| match triple {
                [_, Value::BulkString(record), Value::Int(attempt)] => Ok(Claimed {
                    delivery: Delivery::decode(record)?,
                    attempt: u32::try_from(*attempt).unwrap_or(u32::MAX),
                }),
                other => Err(PushError::Corrupt(format!("claim replied {other:?}"))),
            })
            .collect()
    }

    async fn finish(&self, delivery: &Delivery) -> Result<(), PushError> {
        let _: i64 = self
            .finish
            .key(DUE)
            .key(ITEMS)
            .key(ATTEMPTS)
            .key(COUNTERS)
            .key(ROUTES)
            .key(IN_FLIGHT)
            .key(HOLDING)
            .arg(&delivery.id)
            .arg(delivery.task_counter())
            .arg(delivery.owner_counter())
            .arg(delivery.owner_counter())
            .arg(delivery.host_counter())
            .invoke_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    async fn retry_after(&self, delivery: &Delivery, delay: Duration) -> Result<(), PushError> {
        let _: i64 = self
            .retry
            .key(DUE)
            .key(ITEMS)
            .key(IN_FLIGHT)
            .key(HOLDING)
            .arg(&delivery.id)
            .arg(delay.as_millis() as u64)
            .arg(delivery.owner_counter())
            .arg(delivery.host_counter())
            .invoke_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    async fn pending(&self) -> Result<u64, PushError> {
        Ok(redis::cmd("HLEN")
            .arg(ITEMS)
            .query_async(&mut self.connection.clone())
            .await?)
    }
}
