//! The runtime's state in Redis, shared by every replica. Per owner (the owner's hash tag, the
//! slot of their stored tasks): the working records, the running tasks and the open streams,
//! so that ending a task and storing it is one script. Per task (a hash tag of its own): the
//! event log, a stream with its counters. Across the deployment: one sorted set of leases for
//! the reapers, and one pub/sub channel for signals (`PUBLISH` reaches every node of a
//! cluster), which each replica listens to on a connection of its own.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures::StreamExt;
use redis::{Script, Value};
use tokio::sync::broadcast;
use tokio::task::AbortHandle;

use super::backend::{
    Appended, Begin, Ending, Finish, LogCaps, LogCursor, RuntimeBackend, Signal, Starting, TaskKey,
};
use crate::redis_conn::RedisConnection;
use crate::store::{CONTEXT_CAP, OWNER_INDEX_CAP, Owner, RedisStore, StoreError, stored_form};

/// The channel every replica listens to.
const SIGNAL_CHANNEL: &str = "a2a:v1:signals";
/// The leases of every working task: member `<owner>\t<taskId>`, score the lease's end (ms).
const LEASES_KEY: &str = "a2a:v1:leases";
/// How many signals a lagging runtime may miss before it resynchronises.
const SIGNAL_BUFFER: usize = 4096;

/// The Redis backend: the store's connection for commands, a listener for signals.
pub struct RedisBackend {
    connection: RedisConnection,
    task_ttl_secs: u64,
    begin_script: Script,
    renew_script: Script,
    finish_script: Script,
    append_script: Script,
    stream_script: Script,
    signals: broadcast::Sender<Signal>,
    listener: AbortHandle,
    compressed_writes: bool,
}

impl Drop for RedisBackend {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl RedisBackend {
    /// A backend over `connection`, listening for signals on the first node of `url` (any node
    /// of a cluster hears every `PUBLISH`), or on the primary the sentinels name, asked again at
    /// each reconnection; terminal tasks are kept `task_ttl`.
    pub async fn connect(
        connection: RedisConnection,
        url: Option<&str>,
        task_ttl: Duration,
    ) -> Result<Self, StoreError> {
        let signals = broadcast::channel(SIGNAL_BUFFER).0;
        // The first subscription is made here, so a signal sent after `connect` returns is heard.
        let source = SignalSource {
            connection: connection.clone(),
            url: url.map(str::to_string),
        };
        let pubsub = source.subscribe().await?;
        let listener = tokio::spawn(listen(source, pubsub, signals.clone())).abort_handle();
        Ok(RedisBackend {
            connection,
            task_ttl_secs: task_ttl.as_secs().max(1),
            begin_script: Script::new(include_str!(
                "../../../../migrations/scripts/begin_task.lua"
            )),
            renew_script: Script::new(include_str!(
                "../../../../migrations/scripts/renew_task.lua"
            )),
            finish_script: Script::new(concat!(
                include_str!("../../../../migrations/scripts/store_task.lua"),
                include_str!("../../../../migrations/scripts/finish_task.lua"),
            )),
            append_script: Script::new(include_str!(
                "../../../../migrations/scripts/append_event.lua"
            )),
            stream_script: Script::new(include_str!(
                "../../../../migrations/scripts/open_stream.lua"
            )),
            signals,
            listener,
            compressed_writes: false,
        })
    }

    /// Writes finished tasks compressed when `on`, as [`RedisStore::with_compressed_writes`].
    pub fn with_compressed_writes(mut self, on: bool) -> Self {
        self.compressed_writes = on;
        self
    }

    fn working_key(owner: &Owner, task_id: &str) -> String {
        RedisStore::key(owner, "working", task_id)
    }

    fn running_key(owner: &Owner) -> String {
        format!("a2a:v1:{{o:{}}}:running", owner.as_str())
    }

    fn streams_key(owner: &Owner) -> String {
        format!("a2a:v1:{{o:{}}}:streams", owner.as_str())
    }

    fn log_key(key: &TaskKey) -> String {
        format!("a2a:v1:{{t:{}}}:events", key.as_str())
    }

    fn log_counters_key(key: &TaskKey) -> String {
        format!("a2a:v1:{{t:{}}}:log", key.as_str())
    }

    fn lease_member(owner: &Owner, task_id: &str) -> String {
        format!("{}\t{task_id}", owner.as_str())
    }

    fn now_ms() -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64)
    }

    async fn publish(&self, signal: String) -> Result<(), StoreError> {
        let _: i64 = redis::cmd("PUBLISH")
            .arg(SIGNAL_CHANNEL)
            .arg(signal)
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }
}

/// Where the signal listener subscribes: the connection's Redis, found again at each call.
struct SignalSource {
    connection: RedisConnection,
    url: Option<String>,
}

impl SignalSource {
    async fn subscribe(&self) -> redis::RedisResult<redis::aio::PubSub> {
        let client = self
            .connection
            .subscriber_client(self.url.as_deref())
            .await?;
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(SIGNAL_CHANNEL).await?;
        Ok(pubsub)
    }
}

/// Forwards signals from Redis to this replica's runtimes, reconnecting after a failure or when
/// the commands' primary was replaced (and then asking every subscriber and runner to look
/// again, since signals may have been lost).
async fn listen(
    source: SignalSource,
    mut pubsub: redis::aio::PubSub,
    signals: broadcast::Sender<Signal>,
) {
    let mut replacements = source.connection.replacements();
    loop {
        {
            let mut messages = pubsub.on_message();
            loop {
                let message = tokio::select! {
                    message = messages.next() => message,
                    () = primary_replaced(&mut replacements) => None,
                };
                let Some(message) = message else {
                    break;
                };
                let Ok(payload) = message.get_payload::<String>() else {
                    continue;
                };
                let signal = match payload.split_once(':') {
                    Some(("a", key)) => Signal::Appended(TaskKey::from_signal(key)),
                    Some(("c", key)) => Signal::Cancel(TaskKey::from_signal(key)),
                    _ => continue,
                };
                let _ = signals.send(signal);
            }
        }
        tracing::warn!("the task signal listener lost its Redis primary; subscribing again");
        pubsub = loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            match source.subscribe().await {
                Ok(pubsub) => break pubsub,
                Err(error) => tracing::warn!(%error, "task signal listener: reconnecting"),
            }
        };
        let _ = signals.send(Signal::Resync);
    }
}

/// Returns when the commands' primary was given up; never without a primary to follow.
async fn primary_replaced(replacements: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let replaced = match replacements {
        Some(replacements) => replacements.changed().await.is_ok(),
        None => false,
    };
    if !replaced {
        std::future::pending::<()>().await;
    }
}

#[async_trait]
impl RuntimeBackend for RedisBackend {
    async fn begin(
        &self,
        starting: &Starting<'_>,
        lease: Duration,
        max_running: usize,
    ) -> Result<Begin, StoreError> {
        let Starting {
            owner,
            task_id,
            message_key,
            runner,
            task_json,
        } = *starting;
        let mut connection = self.connection.clone();
        // The lease entry goes first: a replica stopping between the two leaves an entry the
        // reaper drops, never a record no reaper would find.
        let member = Self::lease_member(owner, task_id);
        let _: i64 = redis::cmd("ZADD")
            .arg(LEASES_KEY)
            .arg(Self::now_ms() + lease.as_millis() as u64)
            .arg(&member)
            .query_async(&mut connection)
            .await?;
        let reply: Vec<Value> = self
            .begin_script
            .key(Self::working_key(owner, task_id))
            .key(Self::running_key(owner))
            .key(RedisStore::key(owner, "msg", message_key))
            .arg(runner)
            .arg(task_json.as_ref())
            .arg(lease.as_millis() as u64)
            .arg(max_running)
            .arg(task_id)
            .arg(self.task_ttl_secs)
            .invoke_async(&mut connection)
            .await?;
        let begin = match reply.as_slice() {
            [Value::Int(1)] => {
                connection
                    .acknowledge(&Self::working_key(owner, task_id))
                    .await?;
                Begin::Started
            }
            [Value::Int(0 | -1)] => Begin::Busy,
            [Value::Int(2), seen] => {
                connection
                    .acknowledge_existing(&RedisStore::key(owner, "msg", message_key))
                    .await?;
                Begin::Seen(
                    redis::from_redis_value(seen.clone())
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                )
            }
            other => {
                return Err(StoreError::Corrupt(format!(
                    "unexpected begin reply {other:?}"
                )));
            }
        };
        // Not started: the entry goes, unless it is that of the task already running (the
        // same member, only renewed by the ZADD above).
        let already_runs = matches!(reply.as_slice(), [Value::Int(-1)])
            || matches!(&begin, Begin::Seen(seen) if seen == task_id);
        if begin != Begin::Started && !already_runs {
            let _: i64 = redis::cmd("ZREM")
                .arg(LEASES_KEY)
                .arg(&member)
                .query_async(&mut connection)
                .await?;
        }
        Ok(begin)
    }

    async fn renew(
        &self,
        owner: &Owner,
        task_id: &str,
        runner: &str,
        task_json: Option<&Bytes>,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let mut connection = self.connection.clone();
        let renewed: i64 = self
            .renew_script
            .key(Self::working_key(owner, task_id))
            .key(Self::running_key(owner))
            .arg(runner)
            .arg(lease.as_millis() as u64)
            .arg(task_id)
            .arg(task_json.map_or(&[][..], |json| json.as_ref()))
            .invoke_async(&mut connection)
            .await?;
        if renewed == 1 {
            let _: i64 = redis::cmd("ZADD")
                .arg(LEASES_KEY)
                .arg(Self::now_ms() + lease.as_millis() as u64)
                .arg(Self::lease_member(owner, task_id))
                .query_async(&mut connection)
                .await?;
        }
        Ok(renewed == 1)
    }

    async fn working(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        let raw: Option<Vec<u8>> = redis::cmd("HGET")
            .arg(Self::working_key(owner, task_id))
            .arg("task")
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(raw.map(Bytes::from))
    }

    async fn finish(
        &self,
        owner: &Owner,
        task_id: &str,
        ending: Ending<'_>,
        finish: &Finish,
    ) -> Result<bool, StoreError> {
        let (mode, runner) = match ending {
            Ending::Runner(runner) => ("runner", runner),
            Ending::Cancel => ("cancel", ""),
            Ending::Expired => ("expired", ""),
        };
        let stored = &finish.stored;
        let task_form = stored_form(&stored.json, self.compressed_writes)?;
        let mut connection = self.connection.clone();
        let reply: Vec<i64> = self
            .finish_script
            .key(Self::working_key(owner, task_id))
            .key(RedisStore::key(owner, "task", &stored.id))
            .key(RedisStore::key(
                owner,
                "ctx",
                &crate::store::short_hash(&stored.context_id),
            ))
            .key(RedisStore::owner_index(owner))
            .key(Self::running_key(owner))
            .arg("")
            .arg(task_form.as_ref())
            .arg(self.task_ttl_secs)
            .arg(&stored.id)
            .arg(if finish.new_in_context { "1" } else { "0" })
            .arg(CONTEXT_CAP)
            .arg(OWNER_INDEX_CAP)
            .arg(stored.entry.encode())
            .arg(mode)
            .arg(runner)
            .invoke_async(&mut connection)
            .await?;
        let ended = reply.first() == Some(&1);
        if ended {
            // No call waits on the end but a cancel's and a blocking send's with a push
            // config; a wait that falls short is logged, not undone (docs/deployment.md).
            let key = RedisStore::key(owner, "task", &stored.id);
            if let Err(error) = connection.acknowledge(&key).await {
                tracing::warn!(%error, "a task's end is not on its replicas yet");
            }
            self.forget_lease(owner, task_id).await?;
        }
        Ok(ended)
    }

    async fn expired(&self, limit: usize) -> Result<Vec<(Owner, String)>, StoreError> {
        let members: Vec<String> = redis::cmd("ZRANGEBYSCORE")
            .arg(LEASES_KEY)
            .arg("-inf")
            .arg(Self::now_ms())
            .arg("LIMIT")
            .arg(0)
            .arg(limit)
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(members
            .iter()
            .filter_map(|member| member.split_once('\t'))
            .map(|(owner, task_id)| (Owner::from_hash(owner), task_id.to_string()))
            .collect())
    }

    async fn forget_lease(&self, owner: &Owner, task_id: &str) -> Result<(), StoreError> {
        let _: i64 = redis::cmd("ZREM")
            .arg(LEASES_KEY)
            .arg(Self::lease_member(owner, task_id))
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    async fn hold_stream(
        &self,
        owner: &Owner,
        stream_id: &str,
        hold: Duration,
        max_streams: usize,
    ) -> Result<bool, StoreError> {
        let held: i64 = self
            .stream_script
            .key(Self::streams_key(owner))
            .arg(stream_id)
            .arg(hold.as_millis() as u64)
            .arg(max_streams)
            .invoke_async(&mut self.connection.clone())
            .await?;
        Ok(held == 1)
    }

    async fn release_stream(&self, owner: &Owner, stream_id: &str) -> Result<(), StoreError> {
        let _: i64 = redis::cmd("ZREM")
            .arg(Self::streams_key(owner))
            .arg(stream_id)
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    async fn append(
        &self,
        _owner: &Owner,
        key: &TaskKey,
        event: &Bytes,
        is_final: bool,
        caps: LogCaps,
    ) -> Result<Appended, StoreError> {
        let reply: Value = self
            .append_script
            .key(Self::log_key(key))
            .key(Self::log_counters_key(key))
            .arg(event.as_ref())
            .arg(if is_final { "1" } else { "0" })
            .arg(caps.max_events)
            .arg(caps.max_bytes)
            .arg(caps.ttl.as_secs().max(1))
            .arg(SIGNAL_CHANNEL)
            .arg(format!("a:{}", key.as_str()))
            .invoke_async(&mut self.connection.clone())
            .await?;
        match reply {
            Value::Int(0) => Ok(Appended::Closed),
            Value::Int(-1) => Ok(Appended::Full),
            Value::BulkString(_) | Value::SimpleString(_) => Ok(Appended::Added),
            other => Err(StoreError::Corrupt(format!(
                "unexpected append reply {other:?}"
            ))),
        }
    }

    async fn clear_log(&self, key: &TaskKey) -> Result<(), StoreError> {
        let _: i64 = redis::cmd("DEL")
            .arg(Self::log_key(key))
            .arg(Self::log_counters_key(key))
            .query_async(&mut self.connection.clone())
            .await?;
        Ok(())
    }

    async fn read(
        &self,
        key: &TaskKey,
        after: &LogCursor,
        max: usize,
    ) -> Result<Vec<(String, Bytes)>, StoreError> {
        let start = after
            .as_ref()
            .map_or_else(|| "-".to_string(), |id| format!("({id}"));
        let entries: Vec<(String, Vec<(String, Vec<u8>)>)> = redis::cmd("XRANGE")
            .arg(Self::log_key(key))
            .arg(start)
            .arg("+")
            .arg("COUNT")
            .arg(max)
            .query_async(&mut self.connection.clone())
            .await?;
        entries
            .into_iter()
            .map(|(id, fields)| {
                let event = fields
                    .into_iter()
                    .find(|(name, _)| name == "e")
                    .map(|(_, value)| Bytes::from(value))
                    .ok_or_else(|| StoreError::Corrupt(format!("event {id} has no body")))?;
                Ok((id, event))
            })
            .collect()
    }

    async fn signal_cancel(&self, key: &TaskKey) -> Result<(), StoreError> {
        self.publish(format!("c:{}", key.as_str())).await
    }

    fn signals(&self) -> broadcast::Receiver<Signal> {
        self.signals.subscribe()
    }
}
