//! The embedded task store: in-process, bounded, with a TTL. Nothing to install; tasks vanish
//! when the process stops.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use moka::future::Cache;
use moka::policy::EvictionPolicy;

use crate::hashing::DerivedKeys;

use a2a_types::Task;

use super::{
    IndexEntry, MessageRecord, OWNER_INDEX_CAP, Owner, SaveOutcome, StoreError, StoredTask,
    TaskStore, decode_task,
};

/// Tasks (as JSON text), messages, contexts and each owner's task ids in four TTL caches
/// (moka), each bounded in entries. The messages' cache is synchronous: the runtime records a
/// starting task's message under the lock of its working records, so that no resend finds the
/// message without its task. Keys are the owner's hash followed by the client's id: the
/// hash has a fixed length, so no two (owner, id) pairs share a key. Task ids, message keys and
/// owners are made by the server, so their caches hash with [`DerivedKeys`]; a context id may
/// be the client's choice, so the contexts keep the standard hasher.
pub struct MemoryStore {
    tasks: Cache<String, Bytes, DerivedKeys>,
    messages: moka::sync::Cache<String, MessageRecord, DerivedKeys>,
    contexts: Cache<String, Arc<Vec<String>>>,
    owners: Cache<String, Arc<OwnerIndex>, DerivedKeys>,
    context_cap: usize,
}

/// One owner's index, changed in place: a save touches one entry, not a copy of up to
/// [`OWNER_INDEX_CAP`] of them (a copy per save made `message/send` of a user with many tasks
/// several times dearer).
type OwnerIndex = Mutex<VecDeque<IndexEntry>>;

impl MemoryStore {
    /// A store keeping each entry for `ttl`, and at most `max_tasks` tasks (least recently used
    /// first out beyond that).
    ///
    /// The caches evict by recency only: moka's default admission policy (TinyLFU) would refuse
    /// a new task once the store is full, in favour of tasks read more often, and a client
    /// could not read back the task it was just given.
    pub fn new(ttl: Duration, max_tasks: u64) -> Self {
        MemoryStore {
            tasks: Self::cache(ttl, max_tasks, DerivedKeys::default()),
            messages: moka::sync::Cache::builder()
                .max_capacity(max_tasks)
                .time_to_live(ttl)
                .eviction_policy(EvictionPolicy::lru())
                .build_with_hasher(DerivedKeys::default()),
            contexts: Self::cache(ttl, max_tasks, std::hash::RandomState::new()),
            owners: Self::cache(ttl, max_tasks, DerivedKeys::default()),
            context_cap: 100,
        }
    }

    fn cache<V, S>(ttl: Duration, capacity: u64, hasher: S) -> Cache<String, V, S>
    where
        V: Clone + Send + Sync + 'static,
        S: std::hash::BuildHasher + Clone + Send + Sync + 'static,
    {
        Cache::builder()
            .max_capacity(capacity)
            .time_to_live(ttl)
            .eviction_policy(EvictionPolicy::lru())
            .build_with_hasher(hasher)
    }

    fn key(owner: &Owner, id: &str) -> String {
        let owner = owner.as_str();
        let mut key = String::with_capacity(owner.len() + 1 + id.len());
        key.push_str(owner);
        key.push(':');
        key.push_str(id);
        key
    }

    /// What the owner's message produced or started, read without waiting (see
    /// [`TaskStore::message`]).
    pub fn recorded_message(&self, owner: &Owner, message_key: &str) -> Option<MessageRecord> {
        self.messages.get(&Self::key(owner, message_key))
    }

    /// Records the owner's message as the one that started `record`'s task, unless it was
    /// recorded before: then the earlier record.
    pub fn record_message(
        &self,
        owner: &Owner,
        message_key: &str,
        record: &MessageRecord,
    ) -> Option<MessageRecord> {
        let entry = self
            .messages
            .entry(Self::key(owner, message_key))
            .or_insert_with(|| record.clone());
        (!entry.is_fresh()).then(|| entry.into_value())
    }

    /// Stores a terminal task whose message was recorded when it started (a task that ran
    /// after its call returned): the task, its context and the owner's index, as
    /// [`TaskStore::save`] does after the message check.
    pub async fn save_finished(&self, owner: &Owner, task: &StoredTask, new_in_context: bool) {
        self.tasks
            .insert(Self::key(owner, &task.id), task.json.clone())
            .await;
        let cap = self.context_cap;
        let task_id = task.id.clone();
        self.contexts
            .entry(Self::key(owner, &task.context_id))
            .and_upsert_with(|existing| async move {
                let mut ids = existing
                    .map(|e| e.into_value().as_ref().clone())
                    .unwrap_or_default();
                if new_in_context {
                    ids.push(task_id);
                    if ids.len() > cap {
                        ids.drain(..ids.len() - cap);
                    }
                }
                Arc::new(ids)
            })
            .await;
        let index = self
            .owners
            .get_with(owner.as_str().to_string(), async { Arc::default() })
            .await;
        {
            let mut entries = index.lock().unwrap_or_else(PoisonError::into_inner);
            // A continued task leaves its earlier entry (usually among the newest: looked
            // for from the back); a new task has none.
            if !new_in_context
                && let Some(at) = entries
                    .iter()
                    .rposition(|e| e.task_id == task.entry.task_id)
            {
                entries.remove(at);
            }
            entries.push_back(task.entry.clone());
            if entries.len() > OWNER_INDEX_CAP {
                entries.pop_front();
            }
        }
        // Inserting the same index again renews its time to live with the owner's newest task.
        self.owners.insert(owner.as_str().to_string(), index).await;
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn get(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        Ok(self.tasks.get(&Self::key(owner, task_id)).await)
    }

    async fn message(
        &self,
        owner: &Owner,
        message_key: &str,
    ) -> Result<Option<MessageRecord>, StoreError> {
        Ok(self.recorded_message(owner, message_key))
    }

    async fn save(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        record: &MessageRecord,
        new_in_context: bool,
    ) -> Result<SaveOutcome, StoreError> {
        if let Some(existing) = self.record_message(owner, message_key, record) {
            return Ok(SaveOutcome::Duplicate(existing));
        }
        self.save_finished(owner, task, new_in_context).await;
        Ok(SaveOutcome::Saved)
    }

    async fn owned_index(&self, owner: &Owner) -> Result<Vec<IndexEntry>, StoreError> {
        let Some(index) = self.owners.get(owner.as_str()).await else {
            return Ok(Vec::new());
        };
        let entries: Vec<IndexEntry> = index
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        let mut live = Vec::with_capacity(entries.len());
        for entry in entries {
            if self.tasks.contains_key(&Self::key(owner, &entry.task_id)) {
                live.push(entry);
            }
        }
        Ok(live)
    }

    async fn tasks(&self, owner: &Owner, ids: &[String]) -> Result<Vec<Option<Bytes>>, StoreError> {
        let mut tasks = Vec::with_capacity(ids.len());
        for id in ids {
            tasks.push(self.get(owner, id).await?);
        }
        Ok(tasks)
    }

    async fn context(
        &self,
        owner: &Owner,
        context_id: &str,
        limit: usize,
    ) -> Result<Vec<Task>, StoreError> {
        let Some(ids) = self.contexts.get(&Self::key(owner, context_id)).await else {
            return Ok(Vec::new());
        };
        let mut tasks = Vec::new();
        for id in ids.iter().rev().take(limit) {
            if let Some(json) = self.get(owner, id).await? {
                tasks.push(decode_task(&json)?);
            }
        }
        tasks.reverse();
        Ok(tasks)
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str) -> StoredTask {
        StoredTask {
            id: id.into(),
            context_id: format!("ctx-{id}"),
            json: Bytes::from(format!(r#"{{"id":"{id}"}}"#)),
            entry: IndexEntry {
                task_id: id.into(),
                timestamp: "2026-12-01T10:00:00.000Z".into(),
                state: a2a_types::TaskState::Completed,
                context_hash: super::super::short_hash(&format!("ctx-{id}")),
            },
        }
    }

    #[tokio::test]
    async fn a_full_store_keeps_the_newest_tasks() {
        let store = MemoryStore::new(Duration::from_secs(3600), 100);
        let owner = Owner::of("", "alice");
        for n in 0..400 {
            let id = format!("t{n}");
            let record = MessageRecord {
                task_id: id.clone(),
            };
            let saved = store
                .save(&owner, &task(&id), &format!("m{n}"), &record, true)
                .await
                .unwrap();
            assert_eq!(saved, SaveOutcome::Saved);
        }
        store.tasks.run_pending_tasks().await;
        for n in 380..400 {
            let id = format!("t{n}");
            assert!(
                store.get(&owner, &id).await.unwrap().is_some(),
                "the recently stored task {id} must read back"
            );
        }
        assert!(store.tasks.entry_count() <= 100, "the cap holds");
    }
}
