//! The shared task store: Redis, so that replicas see each other's tasks and tasks survive a
//! restart of the server. One reconnecting multiplexed connection; each save is one atomic
//! script call (which may carry the charge of its call: [`ChargedSaves`]); every key of a user
//! carries the same hash tag (one Redis Cluster slot), the shared limiter's buckets included.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use redis::{Script, ScriptInvocation, Value};

use a2a_types::Task;

use super::{
    CONTEXT_CAP, ChargedSaveOutcome, ChargedSaves, IndexEntry, MessageRecord, OWNER_INDEX_CAP,
    Owner, SaveOutcome, StoreError, StoredTask, TaskStore, decode_task, packing, short_hash,
};
use crate::gcra::{BucketCharge, GcraReply};
use crate::redis_conn::{self, RedisConnection};

const SCHEMA_KEY: &str = "a2a:v1:schema";

/// The numbered migrations, in order (see `migrations/README.md`).
const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        include_str!("../../../../migrations/0001_initial_layout.lua"),
    ),
    (
        2,
        include_str!("../../../../migrations/0002_rate_limit_keys.lua"),
    ),
    (
        3,
        include_str!("../../../../migrations/0003_owner_with_issuer.lua"),
    ),
    (
        4,
        include_str!("../../../../migrations/0004_owner_index.lua"),
    ),
    (
        5,
        include_str!("../../../../migrations/0005_push_notifications.lua"),
    ),
];

/// The save script: the GCRA and the shared end that stores the task (functions), then the
/// message check, the charge when the save carries one, and the save.
const SAVE_TASK_SCRIPT: &str = concat!(
    include_str!("../../../../migrations/scripts/gcra.lua"),
    include_str!("../../../../migrations/scripts/store_task.lua"),
    include_str!("../../../../migrations/scripts/save_task.lua"),
);

/// Tasks in Redis with `SET … EX`.
pub struct RedisStore {
    connection: RedisConnection,
    ttl_secs: u64,
    save_script: Script,
    compressed_writes: bool,
}

impl RedisStore {
    /// Connects (failing fast when Redis is unreachable) and applies pending migrations;
    /// `timeout` bounds each command.
    pub async fn connect(
        url: &str,
        cluster: bool,
        ttl: Duration,
        timeout: Duration,
    ) -> Result<Self, StoreError> {
        Self::open(&redis_conn::Target::url(url, cluster, timeout), ttl).await
    }

    /// Connects to `target` (a URL, cluster nodes or sentinels; each save waits for the
    /// replicas it names) and applies pending migrations.
    pub async fn open(target: &redis_conn::Target, ttl: Duration) -> Result<Self, StoreError> {
        Self::over(redis_conn::open(target).await?, ttl).await
    }

    /// The store over a connection the server shares with its other Redis users (so that all
    /// of them follow one primary), with pending migrations applied.
    pub async fn over(connection: RedisConnection, ttl: Duration) -> Result<Self, StoreError> {
        apply_migrations(&mut connection.clone()).await?;
        Ok(RedisStore {
            connection,
            ttl_secs: ttl.as_secs().max(1),
            save_script: Script::new(SAVE_TASK_SCRIPT),
            compressed_writes: false,
        })
    }

    /// Writes tasks compressed (zstd with the shipped dictionary, behind a format byte) when
    /// `on`; plain JSON otherwise. Both forms are read.
    pub fn with_compressed_writes(mut self, on: bool) -> Self {
        self.compressed_writes = on;
        self
    }

    /// The key of one of the owner's values (`task`, `msg`, `ctx`, …): every key of a user
    /// carries the user's hash tag.
    pub(crate) fn key(owner: &Owner, kind: &str, id: &str) -> String {
        format!("a2a:v1:{{o:{}}}:{kind}:{id}", owner.as_str())
    }

    /// The owner's index: encoded [`IndexEntry`]s, least recently saved first.
    pub(crate) fn owner_index(owner: &Owner) -> String {
        format!("a2a:v1:{{o:{}}}:tasks", owner.as_str())
    }

    /// The save script's keys and arguments for `task` and its message (see `save_task.lua`).
    fn save_invocation(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        record: &MessageRecord,
        new_in_context: bool,
    ) -> Result<ScriptInvocation<'_>, StoreError> {
        let stored = stored_form(&task.json, self.compressed_writes)?;
        let mut invocation = self.save_script.key(Self::key(owner, "msg", message_key));
        invocation
            .key(Self::key(owner, "task", &task.id))
            .key(Self::key(owner, "ctx", &short_hash(&task.context_id)))
            .key(Self::owner_index(owner))
            .arg(&record.task_id)
            .arg(stored.as_ref())
            .arg(self.ttl_secs)
            .arg(&task.id)
            .arg(if new_in_context { "1" } else { "0" })
            .arg(CONTEXT_CAP)
            .arg(OWNER_INDEX_CAP)
            .arg(task.entry.encode());
        Ok(invocation)
    }

    async fn tasks_by_id(
        connection: &mut RedisConnection,
        owner: &Owner,
        ids: &[String],
    ) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = ids.iter().map(|id| Self::key(owner, "task", id)).collect();
        Ok(redis::cmd("MGET")
            .arg(&keys)
            .query_async(connection)
            .await?)
    }
}

/// Applies every migration newer than the recorded schema version; returns the version after.
/// Each migration raises the version atomically, so concurrent callers are harmless.
pub async fn apply_migrations(connection: &mut RedisConnection) -> Result<i64, StoreError> {
    let supported = MIGRATIONS.last().map_or(0, |(v, _)| *v);
    let current: Option<i64> = redis::cmd("GET")
        .arg(SCHEMA_KEY)
        .query_async(connection)
        .await?;
    let current = current.unwrap_or(0);
    if current > supported {
        return Err(StoreError::SchemaTooNew {
            found: current,
            supported,
        });
    }
    let mut version = current;
    for (number, source) in MIGRATIONS {
        if *number > version {
            version = Script::new(source)
                .key(SCHEMA_KEY)
                .invoke_async(connection)
                .await?;
            tracing::info!(version, "applied Redis migration");
        }
    }
    Ok(version)
}

#[async_trait]
impl TaskStore for RedisStore {
    async fn get(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        let raw: Option<Vec<u8>> = redis::cmd("GET")
            .arg(Self::key(owner, "task", task_id))
            .query_async(&mut self.connection.clone())
            .await?;
        raw.map(|raw| packing::unpack(Bytes::from(raw))).transpose()
    }

    async fn message(
        &self,
        owner: &Owner,
        message_key: &str,
    ) -> Result<Option<MessageRecord>, StoreError> {
        let key = Self::key(owner, "msg", message_key);
        let mut connection = self.connection.clone();
        let task_id: Option<String> = redis::cmd("GET")
            .arg(&key)
            .query_async(&mut connection)
            .await?;
        if task_id.is_some() {
            // A resend's answer is the task of the first attempt: shown only once it is as
            // durable as a first answer would have been.
            connection.acknowledge_existing(&key).await?;
        }
        Ok(task_id.map(|task_id| MessageRecord { task_id }))
    }

    async fn save(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        record: &MessageRecord,
        new_in_context: bool,
    ) -> Result<SaveOutcome, StoreError> {
        let mut connection = self.connection.clone();
        let reply: Vec<Value> = self
            .save_invocation(owner, task, message_key, record, new_in_context)?
            .invoke_async(&mut connection)
            .await?;
        let key = Self::key(owner, "msg", message_key);
        match reply.as_slice() {
            [Value::Int(1)] => {
                connection.acknowledge(&key).await?;
                Ok(SaveOutcome::Saved)
            }
            [Value::Int(0), existing] => {
                connection.acknowledge_existing(&key).await?;
                Ok(SaveOutcome::Duplicate(seen(existing)?))
            }
            other => Err(StoreError::Corrupt(format!(
                "unexpected save reply {other:?}"
            ))),
        }
    }

    async fn owned_index(&self, owner: &Owner) -> Result<Vec<IndexEntry>, StoreError> {
        let mut connection = self.connection.clone();
        // The saves trim the index only once it is an eighth over its cap (store_task.lua).
        let raws: Vec<String> = redis::cmd("LRANGE")
            .arg(Self::owner_index(owner))
            .arg(-(OWNER_INDEX_CAP as i64))
            .arg(-1)
            .query_async(&mut connection)
            .await?;
        let entries = raws
            .iter()
            .map(|raw| {
                IndexEntry::decode(raw).ok_or_else(|| StoreError::Corrupt("index entry".into()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if entries.is_empty() {
            return Ok(entries);
        }
        // The index outlives tasks saved long before its last renewal: keep the live ones.
        let mut exists = redis::pipe();
        for entry in &entries {
            exists.exists(Self::key(owner, "task", &entry.task_id));
        }
        let live: Vec<bool> = exists.query_async(&mut connection).await?;
        Ok(entries
            .into_iter()
            .zip(live)
            .filter_map(|(entry, live)| live.then_some(entry))
            .collect())
    }

    async fn tasks(&self, owner: &Owner, ids: &[String]) -> Result<Vec<Option<Bytes>>, StoreError> {
        let raws = Self::tasks_by_id(&mut self.connection.clone(), owner, ids).await?;
        raws.into_iter()
            .map(|raw| raw.map(|raw| packing::unpack(Bytes::from(raw))).transpose())
            .collect()
    }

    async fn context(
        &self,
        owner: &Owner,
        context_id: &str,
        limit: usize,
    ) -> Result<Vec<Task>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut connection = self.connection.clone();
        let ids: Vec<String> = redis::cmd("LRANGE")
            .arg(Self::key(owner, "ctx", &short_hash(context_id)))
            .arg(-(limit as i64))
            .arg(-1)
            .query_async(&mut connection)
            .await?;
        let raws = Self::tasks_by_id(&mut connection, owner, &ids).await?;
        raws.into_iter()
            .flatten()
            .map(|raw| decode_task(&packing::unpack(Bytes::from(raw))?))
            .collect()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let _: String = redis::cmd("PING")
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    fn charged_saves(&self) -> Option<&dyn ChargedSaves> {
        Some(self)
    }
}

#[async_trait]
impl ChargedSaves for RedisStore {
    async fn save_charged(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        charge: &BucketCharge,
    ) -> Result<ChargedSaveOutcome, StoreError> {
        let record = MessageRecord {
            task_id: task.id.clone(),
        };
        let mut invocation = self.save_invocation(owner, task, message_key, &record, true)?;
        invocation
            .key(&charge.key)
            .arg(charge.interval_ps)
            .arg(charge.limit);
        let mut connection = self.connection.clone();
        let reply: Vec<Value> = invocation.invoke_async(&mut connection).await?;
        let unexpected = || StoreError::Corrupt(format!("unexpected charged save reply {reply:?}"));
        let key = Self::key(owner, "msg", message_key);
        match reply.as_slice() {
            [Value::Int(0), existing] => {
                connection.acknowledge_existing(&key).await?;
                Ok(ChargedSaveOutcome::Seen(seen(existing)?))
            }
            [Value::Int(status @ (1 | 2)), gcra @ ..] => {
                if *status == 1 {
                    connection.acknowledge(&key).await?;
                }
                let numbers = gcra
                    .iter()
                    .map(|value| match value {
                        Value::Int(number) => Some(*number),
                        _ => None,
                    })
                    .collect::<Option<Vec<i64>>>()
                    .ok_or_else(unexpected)?;
                let gcra = GcraReply::parse(&numbers).ok_or_else(unexpected)?;
                if gcra.allowed != (*status == 1) {
                    return Err(unexpected());
                }
                Ok(ChargedSaveOutcome::Charged(gcra))
            }
            _ => Err(unexpected()),
        }
    }
}

/// A task's JSON as it is written to Redis: compressed when `compressed`, else as it is.
pub(crate) fn stored_form(json: &Bytes, compressed: bool) -> Result<Bytes, StoreError> {
    if compressed {
        packing::pack(json)
    } else {
        Ok(json.clone())
    }
}

/// The record of a message the save script found already seen.
fn seen(existing: &Value) -> Result<MessageRecord, StoreError> {
    let task_id: String = redis::from_redis_value(existing.clone())
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    Ok(MessageRecord { task_id })
}
