//! Push notifications as the task runtime's observer: every state a task enters is queued for
//! the webhooks of each of its configs, by the replica that recorded the change, so each change
//! is queued once wherever the task ends.

use async_trait::async_trait;
use bytes::Bytes;

use super::Push;
use crate::runtime::TransitionObserver;
use crate::store::Owner;

#[async_trait]
impl TransitionObserver for Push {
    async fn entered(&self, owner: &Owner, task_id: &str, task_json: Bytes) {
        if let Err(error) = self.notify(owner, task_id, task_json).await {
            tracing::warn!(%error, task_id, "a task's state change could not be queued for its webhooks");
        }
    }
}
