//! Where each task's push configs are kept, beside the task store: per owner, per task, by
//! config id, at most `push.max_configs_per_task` a task, for as long as tasks are kept.

mod memory;
mod redis;

use async_trait::async_trait;

use a2a_types::PushNotificationConfig;

use super::PushError;
use crate::store::Owner;

pub use memory::MemoryConfigs;
pub use redis::RedisConfigs;

/// A store of push configs. Every config it holds has an id.
#[async_trait]
pub trait PushConfigStore: Send + Sync {
    /// Adds the config, or replaces the task's config of the same id; refused with
    /// [`PushError::TooManyConfigs`] when the task already has `cap` others.
    async fn set(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &PushNotificationConfig,
        cap: usize,
    ) -> Result<(), PushError>;

    /// The task's configs, ordered by id.
    async fn list(
        &self,
        owner: &Owner,
        task_id: &str,
    ) -> Result<Vec<PushNotificationConfig>, PushError>;

    /// Removes one config; whether it existed.
    async fn delete(
        &self,
        owner: &Owner,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool, PushError>;

    /// One config by id; `None` for the id: the task's first.
    async fn get(
        &self,
        owner: &Owner,
        task_id: &str,
        config_id: Option<&str>,
    ) -> Result<Option<PushNotificationConfig>, PushError> {
        let configs = self.list(owner, task_id).await?;
        Ok(match config_id {
            Some(id) => configs.into_iter().find(|c| c.id.as_deref() == Some(id)),
            None => configs.into_iter().next(),
        })
    }
}

/// The id a stored config goes by.
fn id_of(config: &PushNotificationConfig) -> Result<&str, PushError> {
    config
        .id
        .as_deref()
        .ok_or_else(|| PushError::InvalidConfig("pushNotificationConfig.id is required".into()))
}
