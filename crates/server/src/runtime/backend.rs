//! What the task runtime needs from where it keeps its shared state, so that one runtime code
//! path runs over the in-process backend and over Redis: working records with leases, the
//! per-task event logs, the per-user caps, and the signals that cross replicas.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use tokio::sync::broadcast;

use crate::store::{Owner, StoreError, StoredTask, short_hash};

/// The key of one task's event log and signals: a hash of the owner and the task id, so a
/// client-chosen id never appears in a key and another user's task of the same id is another
/// key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TaskKey(String);

impl TaskKey {
    /// The key of the owner's task.
    pub fn of(owner: &Owner, task_id: &str) -> Self {
        TaskKey(short_hash(&format!("{}:{task_id}", owner.as_str())))
    }

    /// A key read back from a signal.
    pub fn from_signal(raw: &str) -> Self {
        TaskKey(raw.to_string())
    }

    /// The hashed form.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A message from one replica to every replica's runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signal {
    /// A task's log has a new event: its subscribers read on.
    Appended(TaskKey),
    /// A task was canceled: the replica running it drops its work.
    Cancel(TaskKey),
    /// Signals may have been lost (the listener lagged or reconnected): every subscriber
    /// reads again, and every runner checks its record.
    Resync,
}

/// Who ends a working task; the backend lets exactly one ending through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending<'a> {
    /// The runner holding the record, with its work done.
    Runner(&'a str),
    /// A cancel request, from any replica.
    Cancel,
    /// A reaper, only once the lease has run out.
    Expired,
}

/// The terminal task an ending stores.
#[derive(Debug, Clone)]
pub struct Finish {
    /// The task as it is kept for its TTL.
    pub stored: StoredTask,
    /// Whether the task is new in its context (not a continued one).
    pub new_in_context: bool,
}

/// A task about to run, as [`RuntimeBackend::begin`] records it: the working record (what
/// readers see until it ends, under its runner's lease) and its message's record, kept as long
/// as a stored task, so that the same message sent again while the task works, through any
/// replica, finds the task instead of starting another.
#[derive(Debug, Clone, Copy)]
pub struct Starting<'a> {
    /// Whose task it is.
    pub owner: &'a Owner,
    /// The task's id.
    pub task_id: &'a str,
    /// The idempotency key of the message that starts it.
    pub message_key: &'a str,
    /// The runner that will hold its lease.
    pub runner: &'a str,
    /// The task as JSON, `submitted`.
    pub task_json: &'a Bytes,
}

/// What [`RuntimeBackend::begin`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// The task runs, and its message is recorded as the one that started it.
    Started,
    /// The owner already runs the most tasks allowed, or this task already runs.
    Busy,
    /// The message was seen before: the id of the task it started or produced, which the
    /// caller answers with instead of running it again.
    Seen(String),
}

/// What appending to a log did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Appended {
    /// The event is in the log.
    Added,
    /// The log is at its cap: the event was left out (the final one never is).
    Full,
    /// The log already has its final event: nothing more goes in.
    Closed,
}

/// Caps on one task's event log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogCaps {
    /// Most events, the final one included.
    pub max_events: usize,
    /// Most bytes of event JSON (the final event may pass it).
    pub max_bytes: usize,
    /// How long the log is kept after its last event.
    pub ttl: Duration,
}

/// A position in a log: `None` before the first event, else the backend's id of the last
/// event read.
pub type LogCursor = Option<String>;

/// The shared state of running tasks.
#[async_trait]
pub trait RuntimeBackend: Send + Sync {
    /// Records a task that starts running, with its message, in one step (see [`Starting`]),
    /// unless the message was seen before or the owner already runs `max_running` tasks.
    async fn begin(
        &self,
        starting: &Starting<'_>,
        lease: Duration,
        max_running: usize,
    ) -> Result<Begin, StoreError>;

    /// Renews the runner's lease (and replaces what readers see, when given); `false` when
    /// the task is no longer this runner's (canceled, or ended by a reaper).
    async fn renew(
        &self,
        owner: &Owner,
        task_id: &str,
        runner: &str,
        task_json: Option<&Bytes>,
        lease: Duration,
    ) -> Result<bool, StoreError>;

    /// The owner's working task, as JSON text, while it runs.
    async fn working(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError>;

    /// Ends a working task with `finish`, once: `true` for the one call that did.
    async fn finish(
        &self,
        owner: &Owner,
        task_id: &str,
        ending: Ending<'_>,
        finish: &Finish,
    ) -> Result<bool, StoreError>;

    /// Up to `limit` working tasks whose leases may have run out, for the reaper.
    async fn expired(&self, limit: usize) -> Result<Vec<(Owner, String)>, StoreError>;

    /// Forgets a lease entry whose task is no longer working (ended without its entry being
    /// removed, e.g. the runner stopped between the two).
    async fn forget_lease(&self, owner: &Owner, task_id: &str) -> Result<(), StoreError>;

    /// Holds (or renews) one of the owner's stream places for `hold`; `false` when all
    /// `max_streams` are held.
    async fn hold_stream(
        &self,
        owner: &Owner,
        stream_id: &str,
        hold: Duration,
        max_streams: usize,
    ) -> Result<bool, StoreError>;

    /// Gives a stream place back.
    async fn release_stream(&self, owner: &Owner, stream_id: &str) -> Result<(), StoreError>;

    /// Appends one event (JSON text) to the owner's task's log and signals
    /// [`Signal::Appended`].
    async fn append(
        &self,
        owner: &Owner,
        key: &TaskKey,
        event: &Bytes,
        is_final: bool,
        caps: LogCaps,
    ) -> Result<Appended, StoreError>;

    /// Empties a task's log, for a new run of the task (a continued task runs under the same
    /// id; its earlier run's log ended with a final event).
    async fn clear_log(&self, key: &TaskKey) -> Result<(), StoreError>;

    /// Up to `max` events after `after`, each with its cursor.
    async fn read(
        &self,
        key: &TaskKey,
        after: &LogCursor,
        max: usize,
    ) -> Result<Vec<(String, Bytes)>, StoreError>;

    /// Tells every replica's runtime that a task was canceled.
    async fn signal_cancel(&self, key: &TaskKey) -> Result<(), StoreError>;

    /// The signals from every replica, this one's included.
    fn signals(&self) -> broadcast::Receiver<Signal>;
}
