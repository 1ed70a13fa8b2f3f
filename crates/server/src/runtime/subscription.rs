//! One subscriber's view of a task's event log: everything from the first event (or after the
//! one a resumed stream saw last), then each new one as it is appended, until the final status.
//! The log is shared; a subscriber holds only its position, so a slow one costs no memory and
//! never holds back the task or other subscribers. Each event of the log is numbered by its
//! place in it, from 0: the same number on every replica, so a stream cut on one resumes on
//! another.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use tokio::sync::Notify;
use tokio::task::AbortHandle;

use a2a_types::TaskStatusUpdateEvent;

use super::backend::{LogCursor, TaskKey};
use super::{READ_BATCH, Shared, to_json};
use crate::store::{Owner, StoreError, decode_task};

/// What a subscription yields next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// An event, as JSON text (the 0.3 form: the task, a status update or an artifact update),
    /// with its place in the task's log; `None` for an event made from the stored task, which
    /// is in no log.
    Event(Bytes, Option<u64>),
    /// A resumed stream asked for the events after a place the log does not hold (the log
    /// expired, or the task ran again): the task's current state follows instead.
    Gap,
    /// Nothing happened for a keep-alive interval: the stream sends a comment, so proxies keep
    /// it open.
    KeepAlive,
}

/// One of an owner's stream places (see [`super::TaskRuntime::hold_stream`]), held until it is
/// dropped or released. A task of its own renews it every keep-alive interval for as long as
/// it lives, whether or not its stream is read: a stream whose client reads nothing still
/// counts against the cap until its answer ends (cut at the write deadline, or dropped).
pub struct StreamPlace {
    shared: Arc<Shared>,
    owner: Owner,
    stream_id: String,
    renewal: AbortHandle,
}

impl StreamPlace {
    pub(super) fn new(shared: Arc<Shared>, owner: Owner, stream_id: String) -> Self {
        let renewal = tokio::spawn(renew_forever(
            Arc::clone(&shared),
            owner.clone(),
            stream_id.clone(),
        ))
        .abort_handle();
        StreamPlace {
            shared,
            owner,
            stream_id,
            renewal,
        }
    }

    /// Whose place it is.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    /// Gives the place back now (dropping it gives it back soon after, on a task of its own).
    pub async fn release(mut self) -> Result<(), StoreError> {
        self.renewal.abort();
        let stream_id = std::mem::take(&mut self.stream_id);
        self.shared
            .backend
            .release_stream(&self.owner, &stream_id)
            .await
    }
}

/// Renews a stream place every keep-alive interval (it lapses after three without renewal, so
/// a replica that dies frees its places soon). A place lost meanwhile (a Redis restart) is
/// taken again when one is free; the stream goes on either way.
async fn renew_forever(shared: Arc<Shared>, owner: Owner, stream_id: String) {
    let mut tick = tokio::time::interval(shared.settings.keepalive);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let renewed = shared
            .backend
            .hold_stream(
                &owner,
                &stream_id,
                shared.stream_hold(),
                shared.settings.max_streams_per_owner,
            )
            .await;
        if let Err(error) = renewed {
            tracing::warn!(%error, "a stream place could not be renewed; it is tried again");
        }
    }
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        self.renewal.abort();
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
    cursor: LogCursor,
    /// Events read and not yet yielded, each with its place in the log.
    pending: VecDeque<(Bytes, Option<u64>)>,
    /// The place in the log of the next event read.
    next_place: u64,
    /// Events of the log still to pass over: those a resumed stream's client has seen.
    seen: u64,
    /// Whether the final event was yielded: nothing follows.
    done: bool,
    /// Whether the task's state was looked at since the log last ran dry.
    checked: bool,
    /// Bytes of the last two events handed out, the older first: counted as not yet taken by
    /// the client (see [`Subscription::taken`]).
    queued: [usize; 2],
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
            next_place: 0,
            seen: 0,
            done: false,
            checked: false,
            queued: [0; 2],
        }
    }

    /// Resumes the stream after the event at `place` in the log (the client's `Last-Event-ID`):
    /// the events up to it are passed over, and if the log holds fewer, the stream says so and
    /// sends the task's current state before the events that follow.
    pub fn resume_after(&mut self, place: u64) {
        self.seen = place.saturating_add(1);
    }

    /// How often an idle stream gets a keep-alive: also how long a stream refused for a byte
    /// budget is told to wait.
    pub fn keepalive(&self) -> std::time::Duration {
        self.shared.settings.keepalive
    }

    /// Counts `bytes` of an event as handed to the connection, within the owner's and the
    /// replica's budgets of queued stream bytes; `Err` names the budget it would pass (then
    /// nothing is counted and the event must not be sent).
    pub fn handed_out(&mut self, bytes: usize) -> Result<(), &'static str> {
        self.shared.stream_bytes.take(self.place.owner(), bytes)?;
        self.queued[1] += bytes;
        Ok(())
    }

    /// The connection asks for the next event: the one before the last it was handed no
    /// longer counts. The last still does: asking for more says the connection has room, not
    /// that the client took it (HTTP/2 buffers a whole event the client's window does not
    /// admit yet; HTTP/1 asks once most of it is written).
    pub fn taken(&mut self) {
        let [older, newer] = self.queued;
        self.queued = [newer, 0];
        self.shared
            .stream_bytes
            .give_back(self.place.owner(), older);
    }

    /// The next event, a keep-alive after an idle interval, or `None` after the final event.
    pub async fn next(&mut self) -> Result<Option<Next>, StoreError> {
        loop {
            if let Some((event, place)) = self.pending.pop_front() {
                self.done = is_final(&event)?;
                return Ok(Some(Next::Event(event, place)));
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
            if self.seen > 0 {
                // The log ran dry before the place the client saw: it no longer holds it.
                self.seen = 0;
                if let Some(json) = self.current_state().await? {
                    self.pending.push_back((json, None));
                }
                return Ok(Some(Next::Gap));
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
        for (_, event) in events {
            let place = self.next_place;
            self.next_place += 1;
            if self.seen > 0 {
                // Seen by the client before it resumed: when that was the final event, nothing
                // follows. A final event before the place the client names means the log
                // does not hold that place (see `next`).
                self.seen -= 1;
                if self.seen == 0 && is_final(&event)? {
                    self.done = true;
                }
                continue;
            }
            self.pending.push_back((event, Some(place)));
        }
        Ok(true)
    }

    /// The task as it is now, working or kept, as the event that carries a whole task.
    async fn current_state(&self) -> Result<Option<Bytes>, StoreError> {
        let owner = self.place.owner();
        let json = match self.shared.backend.working(owner, &self.task_id).await? {
            Some(json) => Some(json),
            None => self.shared.store.get(owner, &self.task_id).await?,
        };
        json.map(|json| to_json(&decode_task(&json)?)).transpose()
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
                self.pending.push_back((to_json(&event)?, None));
            }
            None => self.done = true,
        }
        Ok(true)
    }
}

/// Whether an event of the log is the final one: nothing follows it.
fn is_final(event: &[u8]) -> Result<bool, StoreError> {
    let finality: Finality =
        serde_json::from_slice(event).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(finality.is_final)
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let [older, newer] = std::mem::take(&mut self.queued);
        self.shared
            .stream_bytes
            .give_back(self.place.owner(), older + newer);
    }
}
