//! Where each task's push configs are kept, beside the task store: per owner, per task, by
//! config id, at most `push.max_configs_per_task` a task, for as long as tasks are kept.

mod memory;
mod redis;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use a2a_types::PushNotificationConfig;

use super::PushError;
use super::fault::DeliveryFault;
use crate::store::Owner;
use crate::wire::Version;

pub use memory::MemoryConfigs;
pub use redis::RedisConfigs;

/// A config as kept: the config and the wire it was set over, whose terms its webhook is
/// told in. A config kept before the wire was recorded has none and reads as 0.3.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredConfig {
    /// The config as the client set it.
    #[serde(flatten)]
    pub config: PushNotificationConfig,
    /// The wire of the method (or the send) that set it.
    #[serde(rename = "a2aWire", default = "wire_before_it_was_recorded")]
    pub wire: Version,
}

fn wire_before_it_was_recorded() -> Version {
    Version::V03
}

/// A store of push configs. Every config it holds has an id.
#[async_trait]
pub trait PushConfigStore: Send + Sync {
    /// Adds the config, or replaces the task's config of the same id; refused with
    /// [`PushError::TooManyConfigs`] when the task already has `cap` others.
    async fn set(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &StoredConfig,
        cap: usize,
    ) -> Result<(), PushError>;

    /// The task's configs, ordered by id.
    async fn list(&self, owner: &Owner, task_id: &str) -> Result<Vec<StoredConfig>, PushError>;

    /// Keeps the fault the conformance kit asked for on the task's notifications, as long as
    /// its configs are kept, replacing any earlier one.
    async fn set_fault(
        &self,
        owner: &Owner,
        task_id: &str,
        fault: &DeliveryFault,
    ) -> Result<(), PushError>;

    /// The task's fault, if the kit asked for one.
    async fn fault(&self, owner: &Owner, task_id: &str)
    -> Result<Option<DeliveryFault>, PushError>;

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
    ) -> Result<Option<StoredConfig>, PushError> {
        let configs = self.list(owner, task_id).await?;
        Ok(match config_id {
            Some(id) => configs
                .into_iter()
                .find(|c| c.config.id.as_deref() == Some(id)),
            None => configs.into_iter().next(),
        })
    }
}

/// The id a stored config goes by.
fn id_of(config: &StoredConfig) -> Result<&str, PushError> {
    config
        .config
        .id
        .as_deref()
        .ok_or_else(|| PushError::InvalidConfig("pushNotificationConfig.id is required".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_kept_before_wires_were_recorded_reads_as_0_3() {
        let old: StoredConfig =
            serde_json::from_str(r#"{"id":"a","url":"https://hooks.example/","token":"t"}"#)
                .unwrap();
        assert_eq!(old.wire, Version::V03);
        assert_eq!(old.config.token.as_deref(), Some("t"));
        let new = StoredConfig {
            wire: Version::V1,
            ..old
        };
        let json = serde_json::to_string(&new).unwrap();
        assert!(json.contains(r#""a2aWire":"1.0""#), "{json}");
        assert_eq!(serde_json::from_str::<StoredConfig>(&json).unwrap(), new);
    }
}
