//! Settings of tasks that run after the call that started them (`[tasks]`, `A2A__TASKS__*`):
//! a leaf, read by the configuration.

use serde::{Deserialize, Serialize};

/// Tasks that run after the call returns (streamed or non-blocking sends): what one user may
/// hold open, how long a replica's claim on a running task lasts, how much each task's event
/// log keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TaskSettings {
    /// Tasks one user may have running at once (`A2A__TASKS__MAX_RUNNING_PER_USER`); one more
    /// is refused, so no user can occupy every replica's workers.
    pub max_running_per_user: usize,
    /// Streams one user may hold open at once (`A2A__TASKS__MAX_STREAMS_PER_USER`); each holds
    /// a connection and a subscription.
    pub max_streams_per_user: usize,
    /// Bytes of events one user's open streams may hold handed to their connections and not
    /// yet taken by the client (`A2A__TASKS__MAX_STREAM_BYTES_PER_USER`; each stream counts its
    /// last two events): a stream whose next event would pass it ends with an error naming this
    /// key instead of sending it (its task, if it started one, runs on).
    pub max_stream_bytes_per_user: usize,
    /// The same, over all users' streams on this replica (`A2A__TASKS__MAX_STREAM_BYTES`).
    pub max_stream_bytes: usize,
    /// Events one task's log keeps (`A2A__TASKS__MAX_EVENTS_PER_TASK`); later chunks are left
    /// out of the log (the stored task still holds the whole answer) and the final status
    /// always goes in.
    pub max_events_per_task: usize,
    /// Bytes of event JSON one task's log keeps (`A2A__TASKS__MAX_EVENT_BYTES_PER_TASK`), with
    /// the same rule.
    pub max_event_bytes_per_task: usize,
    /// How long a task's event log is kept after its last event, in seconds
    /// (`A2A__TASKS__EVENT_TTL_SECS`), for subscribers that join late.
    pub event_ttl_secs: u64,
    /// Seconds a replica's claim on a running task lasts without renewal
    /// (`A2A__TASKS__LEASE_SECS`); the replica renews it three times per lease, and any
    /// replica ends a task whose lease ran out `failed`.
    pub lease_secs: u64,
    /// An idle stream gets a keep-alive comment every this many seconds
    /// (`A2A__TASKS__KEEPALIVE_SECS`), so proxies keep it open.
    pub keepalive_secs: u64,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            max_running_per_user: 8,
            max_streams_per_user: 16,
            max_stream_bytes_per_user: 8 * 1024 * 1024,
            max_stream_bytes: 256 * 1024 * 1024,
            max_events_per_task: 10_000,
            max_event_bytes_per_task: 4 * 1024 * 1024,
            event_ttl_secs: 3600,
            lease_secs: 15,
            keepalive_secs: 15,
        }
    }
}

impl TaskSettings {
    /// The first key whose value cannot work, with the reason.
    pub fn invalid_key(&self) -> Option<(&'static str, String)> {
        let at_least_one = [
            (
                "tasks.max_running_per_user",
                self.max_running_per_user as u64,
            ),
            (
                "tasks.max_streams_per_user",
                self.max_streams_per_user as u64,
            ),
            ("tasks.event_ttl_secs", self.event_ttl_secs),
            ("tasks.lease_secs", self.lease_secs),
            ("tasks.keepalive_secs", self.keepalive_secs),
        ];
        if let Some((key, _)) = at_least_one.iter().find(|(_, value)| *value == 0) {
            return Some((key, "must be at least 1".into()));
        }
        if self.max_stream_bytes_per_user < 4096 {
            return Some((
                "tasks.max_stream_bytes_per_user",
                "must be at least 4096".into(),
            ));
        }
        if self.max_stream_bytes < self.max_stream_bytes_per_user {
            return Some((
                "tasks.max_stream_bytes",
                "must be at least tasks.max_stream_bytes_per_user".into(),
            ));
        }
        if self.max_events_per_task < 2 {
            return Some((
                "tasks.max_events_per_task",
                "must be at least 2 (the task and its final status)".into(),
            ));
        }
        if self.max_event_bytes_per_task < 4096 {
            return Some((
                "tasks.max_event_bytes_per_task",
                "must be at least 4096".into(),
            ));
        }
        None
    }
}
