//! A task store whose every round trip is a span of the call's trace: put in front of the
//! configured store only when traces are exported (`telemetry.otlp_endpoint`), so a deployment
//! without them keeps the store as it is, with nothing in between.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use tracing::Instrument;

use a2a_types::Task;

use super::{
    ChargedSaveOutcome, ChargedSaves, IndexEntry, MessageRecord, Owner, SaveOutcome, StoreError,
    StoredTask, TaskStore,
};
use crate::gcra::BucketCharge;
use crate::telemetry::TRACE_TARGET;

/// The configured store, each call in a span named `store.<operation>` with the backend
/// (`memory` or `redis`) as `db.system`.
pub struct TracedStore {
    inner: Arc<dyn TaskStore>,
    backend: &'static str,
}

impl TracedStore {
    /// Traces the calls of `inner`, whose backend is `backend`.
    pub fn new(inner: Arc<dyn TaskStore>, backend: &'static str) -> Self {
        TracedStore { inner, backend }
    }

    fn span(&self, operation: &'static str) -> tracing::Span {
        tracing::info_span!(
            target: TRACE_TARGET,
            "store",
            otel.name = operation,
            otel.kind = "client",
            db.system = self.backend,
            db.operation = operation,
        )
    }
}

#[async_trait]
impl TaskStore for TracedStore {
    async fn get(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        let span = self.span("store.get");
        self.inner.get(owner, task_id).instrument(span).await
    }

    async fn message(
        &self,
        owner: &Owner,
        message_key: &str,
    ) -> Result<Option<MessageRecord>, StoreError> {
        let span = self.span("store.message");
        self.inner
            .message(owner, message_key)
            .instrument(span)
            .await
    }

    async fn save(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        record: &MessageRecord,
        new_in_context: bool,
    ) -> Result<SaveOutcome, StoreError> {
        let span = self.span("store.save");
        self.inner
            .save(owner, task, message_key, record, new_in_context)
            .instrument(span)
            .await
    }

    async fn owned_index(&self, owner: &Owner) -> Result<Vec<IndexEntry>, StoreError> {
        let span = self.span("store.owned_index");
        self.inner.owned_index(owner).instrument(span).await
    }

    async fn tasks(&self, owner: &Owner, ids: &[String]) -> Result<Vec<Option<Bytes>>, StoreError> {
        let span = self.span("store.tasks");
        self.inner.tasks(owner, ids).instrument(span).await
    }

    async fn context(
        &self,
        owner: &Owner,
        context_id: &str,
        limit: usize,
    ) -> Result<Vec<Task>, StoreError> {
        let span = self.span("store.context");
        self.inner
            .context(owner, context_id, limit)
            .instrument(span)
            .await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.inner.ping().await
    }

    fn over_budget(&self) -> Option<&'static str> {
        self.inner.over_budget()
    }

    fn charged_saves(&self) -> Option<&dyn ChargedSaves> {
        self.inner
            .charged_saves()
            .map(|_| self as &dyn ChargedSaves)
    }
}

#[async_trait]
impl ChargedSaves for TracedStore {
    async fn save_charged(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        charge: &BucketCharge,
    ) -> Result<ChargedSaveOutcome, StoreError> {
        let Some(saves) = self.inner.charged_saves() else {
            // Not reached: `charged_saves` offers this only when the store behind has them.
            return Err(StoreError::Corrupt("the store has no charged saves".into()));
        };
        let span = self.span("store.save_charged");
        saves
            .save_charged(owner, task, message_key, charge)
            .instrument(span)
            .await
    }
}
