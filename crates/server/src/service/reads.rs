//! `tasks/get`, `tasks/cancel` and `ListTasks`: the caller's tasks, charged as reads.

use bytes::Bytes;
use skills::Bucket;

use crate::auth::Principal;
use crate::error::ApiError;
use crate::runtime::Canceled;
use crate::service::listing::{self, TaskPage};
use crate::store::{Owner, StoredTask, decode_task};

use super::A2aService;
use super::requests::{CancelRequest, GetRequest, ListRequest};

impl A2aService {
    /// The caller's task as stored (0.3 JSON), its history trimmed to the last
    /// `history_length` messages when given.
    pub async fn get(&self, principal: &Principal, request: GetRequest) -> Result<Bytes, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        let json = self.owned_task(&principal.owner, &request.id).await?;
        match request.history_length {
            None => Ok(json),
            Some(length) => {
                let mut task = decode_task(&json)?;
                task.trim_history(usize::try_from(length).unwrap_or(usize::MAX));
                Ok(StoredTask::of(&task)?.json)
            }
        }
    }

    /// Cancels the caller's working task, wherever it runs: it ends `canceled` and its skill's
    /// work is dropped. A task that ended already is refused, naming its state.
    pub async fn cancel(
        &self,
        principal: &Principal,
        request: CancelRequest,
    ) -> Result<Bytes, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        if let Canceled::Canceled(json) = self.runtime.cancel(&principal.owner, &request.id).await?
        {
            return Ok(json);
        }
        let task = decode_task(&self.owned_task(&principal.owner, &request.id).await?)?;
        Err(ApiError::InvalidStateTransition(task.status.state.as_str()))
    }

    /// One page of the caller's tasks of the last 24 hours (`ListTasks`), charged as a read.
    pub async fn list(
        &self,
        principal: &Principal,
        request: ListRequest,
    ) -> Result<TaskPage, ApiError> {
        self.charge(principal, Bucket::Read).await?;
        let owner = &principal.owner;
        let query = &request.query;
        let mut selection = listing::select(self.store.owned_index(owner).await?, query);
        let stored = self.read_page(owner, &mut selection).await?;
        let mut page = listing::page(selection, stored, query)?;
        if !request.include_artifacts {
            for task in &mut page.tasks {
                task.artifacts.clear();
            }
        }
        Ok(page)
    }

    /// The tasks of a page, read a few at a time until they reach the page's budget in bytes;
    /// the page is cut after the last that fits.
    pub(super) async fn read_page(
        &self,
        owner: &Owner,
        selection: &mut listing::Selection,
    ) -> Result<Vec<Option<Bytes>>, ApiError> {
        let mut stored = Vec::with_capacity(selection.page.len());
        let mut bytes = 0usize;
        while stored.len() < selection.page.len() && bytes <= self.sizes.max_list_page_bytes {
            let ids = selection.ids(stored.len(), listing::READ_BATCH);
            let read = self.store.tasks(owner, &ids).await?;
            bytes += read.iter().flatten().map(Bytes::len).sum::<usize>();
            stored.extend(read);
        }
        let kept = listing::fitting(&stored, self.sizes.max_list_page_bytes);
        selection.cut(kept);
        stored.truncate(kept);
        Ok(stored)
    }
}
