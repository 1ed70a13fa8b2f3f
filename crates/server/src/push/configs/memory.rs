//! Push configs in process, for the memory store: bounded in tasks, kept as long as tasks.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use moka::policy::EvictionPolicy;
use moka::sync::Cache;

use super::{PushConfigStore, StoredConfig, id_of};
use crate::push::PushError;
use crate::push::fault::DeliveryFault;
use crate::store::Owner;

/// Each task's configs, ordered by id, keyed by owner and task.
pub struct MemoryConfigs {
    tasks: Cache<String, Arc<Vec<StoredConfig>>>,
    faults: Cache<String, DeliveryFault>,
    writes: Mutex<()>,
}

impl MemoryConfigs {
    /// Keeps each task's configs for `ttl` after their last change, for at most `max_tasks`
    /// tasks (least recently used first out).
    pub fn new(ttl: Duration, max_tasks: u64) -> Self {
        MemoryConfigs {
            tasks: Cache::builder()
                .max_capacity(max_tasks)
                .time_to_live(ttl)
                .eviction_policy(EvictionPolicy::lru())
                .build(),
            faults: Cache::builder()
                .max_capacity(max_tasks)
                .time_to_live(ttl)
                .eviction_policy(EvictionPolicy::lru())
                .build(),
            writes: Mutex::new(()),
        }
    }

    /// The owner's hash has a fixed length, so no two (owner, task) pairs share a key.
    fn key(owner: &Owner, task_id: &str) -> String {
        format!("{}{task_id}", owner.as_str())
    }
}

#[async_trait]
impl PushConfigStore for MemoryConfigs {
    async fn set(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &StoredConfig,
        cap: usize,
    ) -> Result<(), PushError> {
        let id = id_of(config)?;
        let key = Self::key(owner, task_id);
        let _write = self.writes.lock().unwrap_or_else(PoisonError::into_inner);
        let mut configs: Vec<_> = self
            .tasks
            .get(&key)
            .map(|c| c.as_ref().clone())
            .unwrap_or_default();
        match configs
            .iter()
            .position(|c| c.config.id.as_deref() == Some(id))
        {
            Some(at) => configs[at] = config.clone(),
            None if configs.len() >= cap => return Err(PushError::TooManyConfigs(cap)),
            None => {
                configs.push(config.clone());
                configs.sort_by(|a, b| a.config.id.cmp(&b.config.id));
            }
        }
        self.tasks.insert(key, Arc::new(configs));
        Ok(())
    }

    async fn list(&self, owner: &Owner, task_id: &str) -> Result<Vec<StoredConfig>, PushError> {
        Ok(self
            .tasks
            .get(&Self::key(owner, task_id))
            .map(|c| c.as_ref().clone())
            .unwrap_or_default())
    }

    async fn delete(
        &self,
        owner: &Owner,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool, PushError> {
        let key = Self::key(owner, task_id);
        let _write = self.writes.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(configs) = self.tasks.get(&key) else {
            return Ok(false);
        };
        let kept: Vec<_> = configs
            .iter()
            .filter(|c| c.config.id.as_deref() != Some(config_id))
            .cloned()
            .collect();
        if kept.len() == configs.len() {
            return Ok(false);
        }
        if kept.is_empty() {
            self.tasks.invalidate(&key);
        } else {
            self.tasks.insert(key, Arc::new(kept));
        }
        Ok(true)
    }

    async fn set_fault(
        &self,
        owner: &Owner,
        task_id: &str,
        fault: &DeliveryFault,
    ) -> Result<(), PushError> {
        self.faults.insert(Self::key(owner, task_id), fault.clone());
        Ok(())
    }

    async fn fault(
        &self,
        owner: &Owner,
        task_id: &str,
    ) -> Result<Option<DeliveryFault>, PushError> {
        Ok(self.faults.get(&Self::key(owner, task_id)))
    }
}
