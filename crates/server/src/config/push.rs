//! Settings of push notification delivery (`[push]`, `A2A__PUSH__*`): a leaf, read by the
//! configuration.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// How webhooks are checked, signed, retried and bounded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PushSettings {
    /// Deliver to private, loopback, link-local and other non-public addresses
    /// (`A2A__PUSH__ALLOW_PRIVATE_TARGETS`); off, so a webhook cannot reach the server's own
    /// network.
    pub allow_private_targets: bool,
    /// Attempts per notification, the first included, before it is dropped.
    pub max_attempts: u32,
    /// Delay before the first retry, in milliseconds; doubled at every further retry.
    pub base_delay_ms: u64,
    /// Longest delay between two attempts, in milliseconds.
    pub max_delay_ms: u64,
    /// How long one attempt may take, connecting included, in milliseconds.
    pub delivery_timeout_ms: u64,
    /// How long a claimed delivery stays invisible to other replicas, in milliseconds: a
    /// replica that dies mid-delivery leaves it to another after this. Longer than the
    /// delivery timeout.
    pub claim_lease_ms: u64,
    /// How often an idle worker looks for due deliveries, in milliseconds.
    pub poll_interval_ms: u64,
    /// Deliveries in flight at once per replica.
    pub concurrency: usize,
    /// Deliveries of one owner in flight at once, across the replicas sharing the queue
    /// (`A2A__PUSH__MAX_IN_FLIGHT_PER_OWNER`): the owner's share of the workers, so that a slow
    /// or dead receiver delays only its owner's notifications.
    pub max_in_flight_per_owner: usize,
    /// Deliveries to one webhook host in flight at once, across the replicas sharing the queue
    /// (`A2A__PUSH__MAX_IN_FLIGHT_PER_HOST`): a slow host, whoever aims at it, holds only this
    /// many workers.
    pub max_in_flight_per_host: usize,
    /// Push configs a task may have.
    pub max_configs_per_task: usize,
    /// Undelivered notifications a task may have waiting.
    pub max_pending_per_task: u64,
    /// Undelivered notifications one user may have waiting, all tasks together.
    pub max_pending_per_owner: u64,
    /// Undelivered notifications waiting in all.
    pub max_pending_total: u64,
    /// Largest task JSON that is pushed, in bytes.
    pub max_payload_bytes: usize,
    /// Longest webhook URL, in bytes.
    pub max_url_bytes: usize,
    /// Longest config `token`, in bytes.
    pub max_token_bytes: usize,
    /// Lifetime of the signed `Authorization` JWT, in seconds.
    pub jwt_ttl_secs: u64,
    /// A PEM file (PKCS#8, P-256) holding the key that signs notifications
    /// (`A2A__PUSH__SIGNING_KEY_PATH`); absent: a key is generated at every start. Replicas
    /// behind one load balancer need the same file, so that the keys served at
    /// `/.well-known/jwks.json` verify every replica's notifications.
    pub signing_key_path: Option<PathBuf>,
}

impl Default for PushSettings {
    fn default() -> Self {
        PushSettings {
            allow_private_targets: false,
            max_attempts: 8,
            base_delay_ms: 1_000,
            max_delay_ms: 300_000,
            delivery_timeout_ms: 10_000,
            claim_lease_ms: 60_000,
            poll_interval_ms: 500,
            concurrency: 16,
            max_in_flight_per_owner: 4,
            max_in_flight_per_host: 8,
            max_configs_per_task: 10,
            max_pending_per_task: 50,
            max_pending_per_owner: 1_000,
            max_pending_total: 100_000,
            max_payload_bytes: 1024 * 1024,
            max_url_bytes: 2048,
            max_token_bytes: 512,
            jwt_ttl_secs: 300,
            signing_key_path: None,
        }
    }
}

impl PushSettings {
    /// The first key whose value cannot work, with the reason.
    pub fn invalid_key(&self) -> Option<(&'static str, String)> {
        let at_least_one = [
            ("push.max_attempts", u64::from(self.max_attempts)),
            ("push.base_delay_ms", self.base_delay_ms),
            ("push.delivery_timeout_ms", self.delivery_timeout_ms),
            ("push.poll_interval_ms", self.poll_interval_ms),
            ("push.concurrency", self.concurrency as u64),
            (
                "push.max_in_flight_per_owner",
                self.max_in_flight_per_owner as u64,
            ),
            (
                "push.max_in_flight_per_host",
                self.max_in_flight_per_host as u64,
            ),
            (
                "push.max_configs_per_task",
                self.max_configs_per_task as u64,
            ),
            ("push.max_pending_per_task", self.max_pending_per_task),
            ("push.max_pending_per_owner", self.max_pending_per_owner),
            ("push.max_pending_total", self.max_pending_total),
            ("push.jwt_ttl_secs", self.jwt_ttl_secs),
        ];
        if let Some((key, _)) = at_least_one.iter().find(|(_, value)| *value == 0) {
            return Some((key, "must be at least 1".into()));
        }
        if self.max_delay_ms < self.base_delay_ms {
            return Some((
                "push.max_delay_ms",
                "must be at least push.base_delay_ms".into(),
            ));
        }
        if self.claim_lease_ms <= self.delivery_timeout_ms {
            return Some((
                "push.claim_lease_ms",
                "must be longer than push.delivery_timeout_ms, or a slow delivery would be claimed twice".into(),
            ));
        }
        if self.max_payload_bytes < 1024 {
            return Some(("push.max_payload_bytes", "must be at least 1024".into()));
        }
        if self.max_url_bytes < 64 {
            return Some(("push.max_url_bytes", "must be at least 64".into()));
        }
        if self.max_token_bytes < 16 {
            return Some(("push.max_token_bytes", "must be at least 16".into()));
        }
        None
    }
}
