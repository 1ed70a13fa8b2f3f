//! The runner: one running task on this replica, its work driven under its lease to its end,
//! and the sink its work sends streamed artifacts to.

use std::collections::HashSet;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use futures::FutureExt;

use a2a_types::{
    Artifact, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};

use crate::store::{Owner, StoreError, StoredTask, now_timestamp};

use super::{Appended, Ending, Finish, Shared, TaskKey, WORK_PANICKED, terminal_task, to_json};

/// Hands a running task's work the way to send artifacts as it makes them (streamed answers).
pub struct EventSink {
    pub(super) shared: Arc<Shared>,
    pub(super) owner: Owner,
    pub(super) key: TaskKey,
    pub(super) task_id: String,
    pub(super) context_id: String,
    pub(super) streamed: Arc<Mutex<HashSet<String>>>,
}

impl EventSink {
    /// Sends an artifact, or a chunk of one (`append`: the parts extend the artifact of the
    /// same id; `last_chunk`: its last piece). An artifact sent this way is not sent again
    /// when the task ends.
    pub async fn artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<Appended, StoreError> {
        self.streamed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(artifact.artifact_id.clone());
        let event = TaskArtifactUpdateEvent::new(
            &self.task_id,
            &self.context_id,
            artifact,
            append,
            last_chunk,
        );
        self.shared
            .append(&self.owner, &self.key, &to_json(&event)?, false)
            .await
    }
}

/// One running task on this replica.
pub(super) struct RunningTask {
    pub(super) shared: Arc<Shared>,
    pub(super) owner: Owner,
    pub(super) runner: String,
    pub(super) key: TaskKey,
    pub(super) task: Task,
    pub(super) new_in_context: bool,
    pub(super) streamed: Arc<Mutex<HashSet<String>>>,
}

impl RunningTask {
    /// Runs the work under the lease, then ends the task; a failure of the shared state is
    /// logged and left to the reapers.
    pub(super) async fn drive(self, work: impl Future<Output = Task> + Send) {
        let key = self.key.clone();
        let shared = Arc::clone(&self.shared);
        if let Err(error) = self.run(work).await {
            tracing::warn!(%error, "a running task could not be ended; its lease will run out");
        }
        shared
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
    }

    pub(super) async fn run(
        self,
        work: impl Future<Output = Task> + Send,
    ) -> Result<(), StoreError> {
        let shared = &self.shared;
        // The steps before and after the work are boxed while they run, so that the task held
        // for the whole run (an idle stream's answer waits here) is not sized by them.
        let Some((working, working_json)) = Box::pin(self.start_working()).await? else {
            return Ok(());
        };
        let mut renewal = tokio::time::interval(shared.settings.lease / 3);
        renewal.tick().await;
        let work = AssertUnwindSafe(work).catch_unwind();
        tokio::pin!(work);
        let task = loop {
            tokio::select! {
                outcome = &mut work => break match outcome {
                    Ok(task) => task,
                    Err(_panic) => {
                        tracing::error!(task_id = %working.id, "a running task's work panicked");
                        terminal_task(&working_json, TaskState::Failed, Some(WORK_PANICKED))?
                    }
                },
                _ = renewal.tick() => {
                    if !self.renew(None).await? {
                        // Canceled or reaped elsewhere: the work is dropped here.
                        return Ok(());
                    }
                }
            }
        };
        Box::pin(self.finish(task, &working_json)).await
    }

    /// Marks the task working: renews its lease with its working form, appends the status
    /// event and tells the subscribers waiting for it. `None`: the task was canceled or reaped
    /// meanwhile, and nothing runs.
    async fn start_working(&self) -> Result<Option<(Task, Bytes)>, StoreError> {
        let shared = &self.shared;
        let mut working = self.task.clone();
        working.status = TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: Some(now_timestamp()),
        };
        let working_json = StoredTask::of(&working)?.json;
        if !self.renew(Some(&working_json)).await? {
            return Ok(None);
        }
        let event = TaskStatusUpdateEvent::new(
            &working.id,
            &working.context_id,
            working.status.clone(),
            false,
        );
        shared
            .append(&self.owner, &self.key, &to_json(&event)?, false)
            .await?;
        shared
            .entered(&self.owner, &working.id, &working_json)
            .await;
        Ok(Some((working, working_json)))
    }

    /// Ends the task with what its work made: the artifacts not streamed yet, then the task
    /// saved terminal under the lease and its event log closed.
    async fn finish(&self, task: Task, working_json: &[u8]) -> Result<(), StoreError> {
        let shared = &self.shared;
        let (task, stored) = self.within_cap(task, working_json)?;
        let unsent: Vec<Artifact> = {
            let streamed = self.streamed.lock().unwrap_or_else(PoisonError::into_inner);
            task.artifacts
                .iter()
                .filter(|artifact| !streamed.contains(&artifact.artifact_id))
                .cloned()
                .collect()
        };
        let finish = Finish {
            stored,
            new_in_context: self.new_in_context,
        };
        // The artifacts go in before the task ends, so no subscriber sees the final status
        // first; a task canceled meanwhile has its log closed, and they are refused.
        for artifact in unsent {
            let event =
                TaskArtifactUpdateEvent::new(&task.id, &task.context_id, artifact, false, true);
            shared
                .append(&self.owner, &self.key, &to_json(&event)?, false)
                .await?;
        }
        if shared
            .backend
            .finish(&self.owner, &task.id, Ending::Runner(&self.runner), &finish)
            .await?
        {
            shared
                .close(&self.owner, &task, &finish.stored.json)
                .await?;
        }
        Ok(())
    }

    /// The task as stored, or, when its answer would take it over the stored-size cap, the
    /// working task ended `failed` saying so.
    pub(super) fn within_cap(
        &self,
        task: Task,
        working: &[u8],
    ) -> Result<(Task, StoredTask), StoreError> {
        let stored = StoredTask::of(&task)?;
        let max = self.shared.settings.max_task_bytes;
        if stored.json.len() <= max {
            return Ok((task, stored));
        }
        let reason = format!(
            "The answer would make the task {} bytes stored, over the limit of {max} bytes; start a new task in the same conversation (contextId without taskId).",
            stored.json.len()
        );
        let task = terminal_task(working, TaskState::Failed, Some(&reason))?;
        let stored = StoredTask::of(&task)?;
        Ok((task, stored))
    }

    pub(super) async fn renew(&self, task_json: Option<&Bytes>) -> Result<bool, StoreError> {
        self.shared
            .backend
            .renew(
                &self.owner,
                &self.task.id,
                &self.runner,
                task_json,
                self.shared.settings.lease,
            )
            .await
    }
}
