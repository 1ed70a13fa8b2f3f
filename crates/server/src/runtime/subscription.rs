//! One subscriber's view of a task's event log: everything from the first event, then each new
//! one as it is appended, until the final status. The log is shared; a subscriber holds only its
//! position, so a slow one costs no memory and never holds back the task or other subscribers.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use tokio::sync::Notify;

use a2a_types::TaskStatusUpdateEvent;

use super::backend::{Cursor, TaskKey};
use super::{READ_BATCH, Shared, to_json};
use crate::store::{Owner, StoreError, decode_task};

/// What a subscription yields next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// An event, as JSON text (the 0.3 form: the task, a status update or an artifact update).
    Event(Bytes),
    /// Nothing happened for a keep-alive interval: the stream sends a comment, so proxies keep
    /// it open.
    KeepAlive,
}

/// One of an owner's stream places (see [`super::TaskRuntime::hold_stream`]), held until it is
/// dropped or released; a subscription keeps it renewed while it lives.
pub struct StreamPlace {
    shared: Arc<Shared>,
    owner: Owner,
    stream_id: String,
}

impl StreamPlace {
    pub(super) fn new(shared: Arc<Shared>, owner: Owner, stream_id: String) -> Self {
        StreamPlace {
            shared,
            owner,
            stream_id,
        }
    }

    /// Whose place it is.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// Gives the place back now (dropping it gives it back soon after, on a task of its own).
    pub async fn release(mut self) -> Result<(), StoreError> {
        let stream_id = std::mem::take(&mut self.stream_id);
        self.shared
            .backend
            .release_stream(&self.owner, &stream_id)
            .await
    }

    async fn renew(&self) -> Result<(), StoreError> {
        let settings = self.shared.settings;
        // A place lost meanwhile (a Redis restart) is taken again when one is free; the stream
        // goes on either way.
        self.shared
            .backend
            .hold_stream(
                &self.owner,
                &self.stream_id,
                self.shared.stream_hold(),
                settings.max_streams_per_owner,
            )
            .await?;
        Ok(())
    }
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        if self.stream_id.is_empty() {
            return;
        }
        let backend = Arc::clone(&self.shared.backend);
        let owner = self.owner.clone();
        let stream_id = std::mem::take(&mut self.stream_id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(error) = backend.release_stream(&owner, &stream_id).await {
                    tracing::warn!(%error, "a stream place could not be given back; it expires on its own");
                }
            });
        }
    }
}

/// A subscription to one task's events (see [`super::TaskRuntime::subscribe`]). Dropping it
/// gives its stream place back; the task runs on.
pub struct Subscription {
    shared: Arc<Shared>,
    place: StreamPlace,
    task_id: String,
    key: TaskKey,
    notify: Arc<Notify>,
    cursor: Cursor,
    pending: VecDeque<Bytes>,
    /// Whether the final event was yielded: nothing follows.
    done: bool,
    /// Whether the task's state was looked at since the log last ran dry.
    checked: bool,
}

/// The one field of an event that says whether it ends the stream.
#[derive(Deserialize)]
struct Finality {
    #[serde(default, rename = "final")]
    is_final: bool,
}

impl Subscription {
    pub(super) fn new(
        shared: Arc<Shared>,
        place: StreamPlace,
        task_id: String,
        key: TaskKey,
        notify: Arc<Notify>,
    ) -> Self {
        Subscription {
            shared,
            place,
            task_id,
            key,
            notify,
            cursor: None,
            pending: VecDeque::new(),
            done: false,
            checked: false,
        }
    }

    /// The next event, a keep-alive after an idle interval, or `None` after the final event.
    pub async fn next(&mut self) -> Result<Option<Next>, StoreError> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                let finality: Finality = serde_json::from_slice(&event)
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                self.done = finality.is_final;
                return Ok(Some(Next::Event(event)));
            }
            if self.done {
                return Ok(None);
            }
            // Armed before the read, so an event appended after it wakes this wait.
            let notify = Arc::clone(&self.notify);
            let notified = notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.fill().await? {
                continue;
            }
            if !self.checked {
                // The log ran dry: a task that ended without its final event in the log (its
                // log expired, or its replica stopped between the two) gets one from the store.
                self.checked = true;
                if self.end_from_store().await? {
                    continue;
                }
            }
            match tokio::time::timeout(self.shared.settings.keepalive, notified).await {
                Ok(()) => continue,
                Err(_) => {
                    self.checked = false;
                    self.place.renew().await?;
                    if self.fill().await? {
                        continue;
                    }
                    return Ok(Some(Next::KeepAlive));
                }
            }
        }
    }

    /// Reads the next events into `pending`; `true` when there were any.
    async fn fill(&mut self) -> Result<bool, StoreError> {
        let events = self
            .shared
            .backend
            .read(&self.key, &self.cursor, READ_BATCH)
            .await?;
        let Some((last, _)) = events.last() else {
            return Ok(false);
        };
        self.cursor = Some(last.clone());
        self.checked = false;
        self.pending
            .extend(events.into_iter().map(|(_, event)| event));
        Ok(true)
    }

    /// When the task is no longer working: its events appended meanwhile, else a final status
    /// made from the stored task; the stream ends when the task is gone altogether.
    async fn end_from_store(&mut self) -> Result<bool, StoreError> {
        let owner = self.place.owner().clone();
        if self
            .shared
            .backend
            .working(&owner, &self.task_id)
            .await?
            .is_some()
        {
            return Ok(false);
        }
        if self.fill().await? {
            return Ok(true);
        }
        match self.shared.store.get(&owner, &self.task_id).await? {
            Some(json) => {
                let task = decode_task(&json)?;
                let event =
                    TaskStatusUpdateEvent::new(&task.id, &task.context_id, task.status, true);
                self.pending.push_back(to_json(&event)?);
            }
            None => self.done = true,
        }
        Ok(true)
    }
}
