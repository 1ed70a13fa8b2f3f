//! Tasks that run after the call that started them returns: a registry of running tasks, each
//! with an ordered event log that subscribers read from its start or join live, a cancel that
//! reaches the replica running the task, and leases, so that a task whose replica died ends
//! `failed` instead of staying `working` for ever.
//!
//! A task goes `submitted` → `working` → `completed` | `failed` | `canceled`. While it runs,
//! its working record (what `tasks/get` reads) lives in the [`RuntimeBackend`]; the one ending
//! the backend lets through (the runner's, a cancel's or a reaper's) stores the terminal task
//! where every finished task is kept, then closes the log with the final status event. Each
//! state a task enters is told once to the runtime's [`TransitionObserver`], by the replica
//! that recorded it. The runner (one running task, driven under its lease) is in `runner`.

mod backend;
mod memory;
mod redis;
mod runner;
pub mod skill_stream;
mod stream_bytes;
mod subscription;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use tokio::sync::{Notify, broadcast};
use tokio::task::AbortHandle;
use tracing::Instrument;
use uuid::Uuid;

use a2a_types::{Message, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};

pub use backend::{
    Appended, Begin, Ending, Finish, LogCaps, LogCursor, RuntimeBackend, Signal, Starting, TaskKey,
};
pub use memory::MemoryBackend;
pub use redis::RedisBackend;
pub use runner::EventSink;
use runner::RunningTask;
pub use stream_bytes::StreamByteCaps;
pub use subscription::{Next, StreamPlace, Subscription};

use crate::config::TaskSettings;
use crate::store::{Owner, StoreError, StoredTask, TaskStore, decode_task, now_timestamp};
use crate::telemetry::traces;

/// Events read from a log per round trip.
const READ_BATCH: usize = 256;
/// Expired leases ended per sweep of the reaper.
const REAP_BATCH: usize = 100;
/// The agent's message on a task whose work panicked.
const WORK_PANICKED: &str =
    "The task failed: the server met an internal error. Please try again later.";
/// The agent's message on a task whose replica stopped before it ended.
const REPLICA_STOPPED: &str = "The task stopped: the server running it stopped before it finished. Please send the message again.";

/// Told of each state a running task enters (`submitted`, `working`, then `completed`,
/// `failed` or `canceled`), once per change, by the replica that recorded it: the one that
/// started the task, the runner, the canceler or the reaper. Push notifications hang here, so
/// the runtime knows nothing of webhooks. It is called after the change is recorded; a slow
/// observer delays the task's next step, not its recording.
#[async_trait]
pub trait TransitionObserver: Send + Sync {
    /// The owner's task entered the state `task_json` (the task as stored) shows.
    async fn entered(&self, owner: &Owner, task_id: &str, task_json: Bytes);
}

/// The runtime's limits and timings, from [`TaskSettings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeSettings {
    /// How long a runner's claim lasts without renewal.
    pub lease: Duration,
    /// An idle subscription yields [`Next::KeepAlive`] this often.
    pub keepalive: Duration,
    /// Tasks one owner may have running at once.
    pub max_running_per_owner: usize,
    /// Streams one owner may hold open at once.
    pub max_streams_per_owner: usize,
    /// Bytes of events open streams may hold handed to their connections and not yet taken
    /// by their clients, per owner and on this replica.
    pub stream_bytes: StreamByteCaps,
    /// Caps on each task's event log.
    pub log: LogCaps,
    /// The largest task stored (its JSON, in bytes): a task whose answer would make it larger
    /// ends `failed` instead, its turn kept without the answer.
    pub max_task_bytes: usize,
}

impl RuntimeSettings {
    /// The runtime's settings from the tasks' settings and the store's cap on a task's size.
    pub fn new(settings: &TaskSettings, max_task_bytes: usize) -> Self {
        RuntimeSettings {
            lease: Duration::from_secs(settings.lease_secs),
            keepalive: Duration::from_secs(settings.keepalive_secs),
            max_running_per_owner: settings.max_running_per_user,
            max_streams_per_owner: settings.max_streams_per_user,
            stream_bytes: StreamByteCaps {
                per_owner: settings.max_stream_bytes_per_user,
                total: settings.max_stream_bytes,
            },
            log: LogCaps {
                max_events: settings.max_events_per_task,
                max_bytes: settings.max_event_bytes_per_task,
                ttl: Duration::from_secs(settings.event_ttl_secs),
            },
            max_task_bytes,
        }
    }
}

/// A task about to run, in its first state.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// Whose task it is.
    pub owner: Owner,
    /// The task, `submitted`, with the user's message in its history.
    pub task: Task,
    /// Whether it is new in its context (not a continued task).
    pub new_in_context: bool,
    /// The idempotency key of the message that starts it, recorded as it starts.
    pub message_key: String,
}

/// What [`TaskRuntime::start`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Started {
    /// The task runs; its `submitted` JSON, as the caller answers with it.
    Running(Bytes),
    /// The owner already runs the most tasks allowed (or this task already runs).
    Busy {
        /// The cap.
        limit: usize,
    },
    /// The message was seen before (sent again, perhaps through another replica at the same
    /// time): the id of its task, which runs or ran once.
    Seen(String),
}

/// What [`TaskRuntime::cancel`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Canceled {
    /// The working task was canceled; its stored JSON.
    Canceled(Bytes),
    /// The task is not working here or anywhere (finished, unknown or another user's).
    NotWorking,
}

/// What [`TaskRuntime::subscribe`] and [`TaskRuntime::subscribe_with`] did.
pub enum Subscribed {
    /// The task's events, from the first.
    Stream(Box<Subscription>),
    /// No such task of this owner, working or kept.
    NotFound,
    /// The owner already holds the most streams allowed (never from a place held already).
    Busy {
        /// The cap.
        limit: usize,
    },
}

/// The runtime of one replica: starts tasks, cancels and reads them wherever they run, and
/// ends those whose replica stopped renewing its lease. Dropping it stops its runners without
/// ending their tasks, as a replica that dies would; the reapers of the others end them.
pub struct TaskRuntime {
    shared: Arc<Shared>,
    loops: Vec<AbortHandle>,
}

struct Shared {
    backend: Arc<dyn RuntimeBackend>,
    store: Arc<dyn TaskStore>,
    settings: RuntimeSettings,
    /// The bytes open streams' clients have not taken yet.
    stream_bytes: stream_bytes::StreamBytes,
    /// Told of every state change this replica records.
    observer: Option<Arc<dyn TransitionObserver>>,
    /// This replica's runners, by task.
    running: Mutex<HashMap<TaskKey, AbortHandle>>,
    /// The subscribers waiting on this replica, by task.
    waiting: Mutex<HashMap<TaskKey, Weak<Notify>>>,
}

impl Drop for TaskRuntime {
    fn drop(&mut self) {
        for handle in &self.loops {
            handle.abort();
        }
        let running = std::mem::take(
            &mut *self
                .shared
                .running
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for handle in running.values() {
            handle.abort();
        }
    }
}

impl TaskRuntime {
    /// A runtime over `backend`, storing terminal tasks through `store` (the store the backend
    /// writes to when a task ends, read by `tasks/get`), telling `observer` of every state
    /// change it records. Starts its signal listener and its reaper on the current tokio
    /// runtime.
    pub fn new(
        backend: Arc<dyn RuntimeBackend>,
        store: Arc<dyn TaskStore>,
        settings: RuntimeSettings,
        observer: Option<Arc<dyn TransitionObserver>>,
    ) -> Self {
        let signals = backend.signals();
        let shared = Arc::new(Shared {
            backend,
            store,
            settings,
            stream_bytes: stream_bytes::StreamBytes::new(settings.stream_bytes),
            observer,
            running: Mutex::default(),
            waiting: Mutex::default(),
        });
        let dispatcher = tokio::spawn(dispatch(Arc::downgrade(&shared), signals)).abort_handle();
        let reaper = tokio::spawn(reap_forever(Arc::downgrade(&shared))).abort_handle();
        TaskRuntime {
            shared,
            loops: vec![dispatcher, reaper],
        }
    }

    /// The runtime's settings.
    pub fn settings(&self) -> RuntimeSettings {
        self.shared.settings
    }

    /// Starts a task: records it `submitted`, logs the task, then runs `work` on a tokio task
    /// of its own: `working`, the artifacts `work` sends through its [`EventSink`] and those of
    /// the task it returns (`completed` or `failed`) that it did not send, then the final
    /// status. The caller may return at once; the task runs on.
    pub async fn start<W, F>(&self, new: NewTask, work: W) -> Result<Started, StoreError>
    where
        W: FnOnce(EventSink) -> F,
        F: Future<Output = Task> + Send + 'static,
    {
        let shared = &self.shared;
        let limit = shared.settings.max_running_per_owner;
        let runner = Uuid::new_v4().to_string();
        let task = new.task;
        let submitted = StoredTask::of(&task)?.json;
        let starting = Starting {
            owner: &new.owner,
            task_id: &task.id,
            message_key: &new.message_key,
            runner: &runner,
            task_json: &submitted,
        };
        match shared
            .backend
            .begin(&starting, shared.settings.lease, limit)
            .await?
        {
            Begin::Started => {}
            Begin::Busy => return Ok(Started::Busy { limit }),
            Begin::Seen(task_id) => return Ok(Started::Seen(task_id)),
        }
        let key = TaskKey::of(&new.owner, &task.id);
        if !new.new_in_context {
            shared.backend.clear_log(&key).await?;
        }
        shared.append(&new.owner, &key, &submitted, false).await?;
        shared.entered(&new.owner, &task.id, &submitted).await;
        let sink = EventSink {
            shared: Arc::clone(shared),
            owner: new.owner.clone(),
            key: key.clone(),
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            streamed: Arc::default(),
        };
        let streamed = Arc::clone(&sink.streamed);
        // Boxed once: moved by value through `drive` and `run`, the work's state machine would
        // be copied into each (a running task was 12 KB; with the work and the steps around it
        // boxed, 3 KB beside the work's own 2 KB).
        let work = Box::pin(work(sink));
        let run = RunningTask {
            shared: Arc::clone(shared),
            owner: new.owner,
            runner,
            key: key.clone(),
            task,
            new_in_context: new.new_in_context,
            streamed,
        };
        // The handle is registered before the runner can finish and remove it.
        let mut running = shared
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // With traces exported, the work's spans (the model request) stay in the trace of the
        // call that started it; without, the task is spawned as it is.
        let handle = if traces::traces_on() {
            tokio::spawn(run.drive(work).instrument(traces::task_span()))
        } else {
            tokio::spawn(run.drive(work))
        }
        .abort_handle();
        running.insert(key, handle);
        Ok(Started::Running(submitted))
    }

    /// The owner's task as JSON, working or kept: `None` when unknown, expired or another
    /// user's.
    pub async fn read(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        let shared = &self.shared;
        // Both reads at once (on Redis, one connection: sent together, answered in the order
        // sent, one round trip); the working record wins, since a continued task that runs
        // again has its earlier turn stored.
        let (working, stored) = tokio::try_join!(
            shared.backend.working(owner, task_id),
            shared.store.get(owner, task_id)
        )?;
        if let Some(json) = working.or(stored) {
            return Ok(Some(json));
        }
        // It may have started again between the two reads.
        shared.backend.working(owner, task_id).await
    }

    /// The owner's task once it is no longer working, wherever it runs (a blocking send that
    /// runs on the runtime waits here): `None` when unknown, expired or another user's. Woken
    /// by each event of its log, and looks again every keep-alive interval.
    pub async fn ended(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        let shared = &self.shared;
        let notify = shared.waiter(&TaskKey::of(owner, task_id));
        loop {
            // Armed before the read, so an ending after it wakes this wait.
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if shared.backend.working(owner, task_id).await?.is_none() {
                return self.read(owner, task_id).await;
            }
            let _ = tokio::time::timeout(shared.settings.keepalive, notified).await;
        }
    }

    /// Cancels the owner's working task, wherever it runs: ends it `canceled`, closes its log
    /// and tells the replica running it to drop its work.
    pub async fn cancel(&self, owner: &Owner, task_id: &str) -> Result<Canceled, StoreError> {
        let shared = &self.shared;
        let Some(working) = shared.backend.working(owner, task_id).await? else {
            return Ok(Canceled::NotWorking);
        };
        let task = terminal_task(&working, TaskState::Canceled, None)?;
        let finish = Finish {
            stored: StoredTask::of(&task)?,
            new_in_context: shared.new_in_context(owner, task_id).await?,
        };
        if !shared
            .backend
            .finish(owner, task_id, Ending::Cancel, &finish)
            .await?
        {
            return Ok(Canceled::NotWorking);
        }
        let key = TaskKey::of(owner, task_id);
        shared.close(owner, &task, &finish.stored.json).await?;
        shared.backend.signal_cancel(&key).await?;
        Ok(Canceled::Canceled(finish.stored.json))
    }

    /// The owner's task's events from the first, then live until its final status; holds one
    /// of the owner's stream places while it lives.
    pub async fn subscribe(&self, owner: &Owner, task_id: &str) -> Result<Subscribed, StoreError> {
        if self.read(owner, task_id).await?.is_none() {
            return Ok(Subscribed::NotFound);
        }
        match self.hold_stream(owner).await? {
            Some(place) => Ok(Subscribed::Stream(Box::new(self.attach(place, task_id)))),
            None => Ok(Subscribed::Busy {
                limit: self.shared.settings.max_streams_per_owner,
            }),
        }
    }

    /// Holds one of the owner's stream places, before the stream's task exists (a stream
    /// refused for the cap must start nothing); `None` when every place is held. The place is
    /// given back when dropped, or when the subscription it becomes ends.
    pub async fn hold_stream(&self, owner: &Owner) -> Result<Option<StreamPlace>, StoreError> {
        let shared = &self.shared;
        let stream_id = Uuid::new_v4().to_string();
        let held = shared
            .backend
            .hold_stream(
                owner,
                &stream_id,
                shared.stream_hold(),
                shared.settings.max_streams_per_owner,
            )
            .await?;
        Ok(held.then(|| StreamPlace::new(Arc::clone(shared), owner.clone(), stream_id)))
    }

    /// As [`TaskRuntime::subscribe`], in a place held already.
    pub async fn subscribe_with(
        &self,
        place: StreamPlace,
        task_id: &str,
    ) -> Result<Subscribed, StoreError> {
        if self.read(place.owner(), task_id).await?.is_none() {
            place.release().await?;
            return Ok(Subscribed::NotFound);
        }
        Ok(Subscribed::Stream(Box::new(self.attach(place, task_id))))
    }

    fn attach(&self, place: StreamPlace, task_id: &str) -> Subscription {
        let key = TaskKey::of(place.owner(), task_id);
        let notify = self.shared.waiter(&key);
        Subscription::new(
            Arc::clone(&self.shared),
            place,
            task_id.to_string(),
            key,
            notify,
        )
    }

    /// One sweep of the reaper: ends `failed` every working task whose lease ran out, and
    /// closes its log. Returns how many this sweep ended.
    pub async fn reap(&self) -> Result<usize, StoreError> {
        self.shared.reap().await
    }
}

impl Shared {
    async fn append(
        &self,
        owner: &Owner,
        key: &TaskKey,
        event: &Bytes,
        is_final: bool,
    ) -> Result<Appended, StoreError> {
        self.backend
            .append(owner, key, event, is_final, self.settings.log)
            .await
    }

    /// Appends a terminal task's final status event and tells the observer; called once per
    /// task ending, by whoever's ending the backend let through.
    async fn close(&self, owner: &Owner, task: &Task, json: &Bytes) -> Result<(), StoreError> {
        let event =
            TaskStatusUpdateEvent::new(&task.id, &task.context_id, task.status.clone(), true);
        self.append(
            owner,
            &TaskKey::of(owner, &task.id),
            &to_json(&event)?,
            true,
        )
        .await?;
        self.entered(owner, &task.id, json).await;
        Ok(())
    }

    /// Tells the observer, if any, that the owner's task entered the state of `json`.
    async fn entered(&self, owner: &Owner, task_id: &str, json: &Bytes) {
        if let Some(observer) = &self.observer {
            observer.entered(owner, task_id, json.clone()).await;
        }
    }

    /// Whether a working task is new in its context: a continued task already has an earlier
    /// turn stored under its id.
    async fn new_in_context(&self, owner: &Owner, task_id: &str) -> Result<bool, StoreError> {
        Ok(self.store.get(owner, task_id).await?.is_none())
    }

    /// How long a stream place is held without renewal: a few keep-alives, so a replica that
    /// dies frees its streams' places soon.
    fn stream_hold(&self) -> Duration {
        self.settings.keepalive * 3
    }

    fn waiter(&self, key: &TaskKey) -> Arc<Notify> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(notify) = waiting.get(key).and_then(Weak::upgrade) {
            return notify;
        }
        waiting.retain(|_, notify| notify.strong_count() > 0);
        let notify = Arc::new(Notify::new());
        waiting.insert(key.clone(), Arc::downgrade(&notify));
        notify
    }

    fn wake(&self, key: &TaskKey) {
        let notify = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .and_then(Weak::upgrade);
        if let Some(notify) = notify {
            notify.notify_waiters();
        }
    }

    fn wake_all(&self) {
        let all: Vec<Arc<Notify>> = self
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        for notify in all {
            notify.notify_waiters();
        }
    }

    fn stop_runner(&self, key: &TaskKey) {
        let handle = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
        if let Some(handle) = handle {
            handle.abort();
        }
    }

    async fn reap(&self) -> Result<usize, StoreError> {
        let mut ended_count = 0;
        for (owner, task_id) in self.backend.expired(REAP_BATCH).await? {
            let Some(working) = self.backend.working(&owner, &task_id).await? else {
                self.backend.forget_lease(&owner, &task_id).await?;
                continue;
            };
            let task = terminal_task(&working, TaskState::Failed, Some(REPLICA_STOPPED))?;
            let finish = Finish {
                stored: StoredTask::of(&task)?,
                new_in_context: self.new_in_context(&owner, &task_id).await?,
            };
            if self
                .backend
                .finish(&owner, &task_id, Ending::Expired, &finish)
                .await?
            {
                self.close(&owner, &task, &finish.stored.json).await?;
                ended_count += 1;
            }
        }
        Ok(ended_count)
    }
}

/// Routes signals to this replica's subscribers and runners until the runtime is dropped.
async fn dispatch(shared: Weak<Shared>, mut signals: broadcast::Receiver<Signal>) {
    loop {
        let signal = match signals.recv().await {
            Ok(signal) => signal,
            Err(broadcast::error::RecvError::Lagged(_)) => Signal::Resync,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match signal {
            Signal::Appended(key) => shared.wake(&key),
            Signal::Cancel(key) => {
                shared.stop_runner(&key);
                shared.wake(&key);
            }
            // A runner whose task was canceled unheard stops at its next renewal.
            Signal::Resync => shared.wake_all(),
        }
    }
}

/// Sweeps for expired leases twice per lease, until the runtime is dropped.
async fn reap_forever(shared: Weak<Shared>) {
    let period = match shared.upgrade() {
        Some(shared) => shared.settings.lease / 2,
        None => return,
    };
    let mut sweep = tokio::time::interval(period);
    loop {
        sweep.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if let Err(error) = shared.reap().await {
            tracing::warn!(%error, "the reaper of expired tasks failed; it tries again");
        }
    }
}

/// A working task ended in `state`, with `reason` as the agent's last message.
fn terminal_task(
    working: &[u8],
    state: TaskState,
    reason: Option<&str>,
) -> Result<Task, StoreError> {
    let mut task = decode_task(working)?;
    let message = reason.map(|reason| {
        let mut message = Message::agent_text(Uuid::new_v4().to_string(), reason);
        message.task_id = Some(task.id.clone());
        message.context_id = Some(task.context_id.clone());
        task.history.push(message.clone());
        message
    });
    task.status = TaskStatus {
        state,
        message,
        timestamp: Some(now_timestamp()),
    };
    Ok(task)
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<Bytes, StoreError> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| StoreError::Corrupt(e.to_string()))
}
