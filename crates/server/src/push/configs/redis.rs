//! Push configs in Redis, for the Redis store: a hash per task (config id → config JSON) under
//! the owner's hash tag, expiring with the tasks.

use std::time::Duration;

use async_trait::async_trait;
use redis::Script;

use super::{PushConfigStore, StoredConfig, id_of};
use crate::push::PushError;
use crate::push::fault::DeliveryFault;
use crate::redis_conn::RedisConnection;
use crate::store::Owner;

/// Each task's configs in one Redis hash.
pub struct RedisConfigs {
    connection: RedisConnection,
    ttl_secs: u64,
    set: Script,
}

impl RedisConfigs {
    /// Configs over `connection`, kept `ttl` after their task's last config change.
    pub fn new(connection: RedisConnection, ttl: Duration) -> Self {
        RedisConfigs {
            connection,
            ttl_secs: ttl.as_secs().max(1),
            set: Script::new(include_str!(
                "../../../../../migrations/scripts/push_config_set.lua"
            )),
        }
    }

    fn key(owner: &Owner, task_id: &str) -> String {
        format!("a2a:v1:{{o:{}}}:push:{task_id}", owner.as_str())
    }

    /// The conformance kit's fault on the task's notifications, beside its configs.
    fn fault_key(owner: &Owner, task_id: &str) -> String {
        format!("a2a:v1:{{o:{}}}:pushfault:{task_id}", owner.as_str())
    }
}

#[async_trait]
impl PushConfigStore for RedisConfigs {
    async fn set(
        &self,
        owner: &Owner,
        task_id: &str,
        config: &StoredConfig,
        cap: usize,
    ) -> Result<(), PushError> {
        let id = id_of(config)?;
        let json = serde_json::to_vec(config).map_err(|e| PushError::Corrupt(e.to_string()))?;
        let key = Self::key(owner, task_id);
        let mut connection = self.connection.clone();
        let set: i64 = self
            .set
            .key(&key)
            .arg(id)
            .arg(json)
            .arg(cap)
            .arg(self.ttl_secs)
            .invoke_async(&mut connection)
            .await?;
        if set == 1 {
            connection.acknowledge(&key).await?;
            Ok(())
        } else {
            Err(PushError::TooManyConfigs(cap))
        }
    }

    async fn list(&self, owner: &Owner, task_id: &str) -> Result<Vec<StoredConfig>, PushError> {
        let raws: Vec<Vec<u8>> = redis::cmd("HVALS")
            .arg(Self::key(owner, task_id))
            .query_async(&mut self.connection.clone())
            .await?;
        let mut configs = raws
            .iter()
            .map(|raw| {
                serde_json::from_slice::<StoredConfig>(raw)
                    .map_err(|e| PushError::Corrupt(e.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        configs.sort_by(|a, b| a.config.id.cmp(&b.config.id));
        Ok(configs)
    }

    async fn delete(
        &self,
        owner: &Owner,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool, PushError> {
        let removed: i64 = redis::cmd("HDEL")
            .arg(Self::key(owner, task_id))
            .arg(config_id)
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(removed == 1)
    }

    async fn set_fault(
        &self,
        owner: &Owner,
        task_id: &str,
        fault: &DeliveryFault,
    ) -> Result<(), PushError> {
        let json = serde_json::to_vec(fault).map_err(|e| PushError::Corrupt(e.to_string()))?;
        let () = redis::cmd("SET")
            .arg(Self::fault_key(owner, task_id))
            .arg(json)
            .arg("EX")
            .arg(self.ttl_secs)
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    async fn fault(
        &self,
        owner: &Owner,
        task_id: &str,
    ) -> Result<Option<DeliveryFault>, PushError> {
        let raw: Option<Vec<u8>> = redis::cmd("GET")
            .arg(Self::fault_key(owner, task_id))
            .query_async(&mut self.connection.clone())
            .await?;
        raw.map(|raw| serde_json::from_slice(&raw).map_err(|e| PushError::Corrupt(e.to_string())))
            .transpose()
    }
}
