//! The runtime's state in this process, beside the memory task store: the same behaviour as
//! Redis for one process (and for several runtimes sharing one backend, as the tests do).
//!
//! Event logs are counted in bytes into the memory store's total, and each owner's within a
//! share as large as its share of stored tasks: an event that would pass either is left out of
//! its log as the log's own caps leave it out (the final status always goes in), so one owner's
//! logs never crowd out another's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use moka::sync::Cache;
use tokio::sync::broadcast;

use super::backend::{
    Appended, Begin, Ending, Finish, LogCaps, LogCursor, RuntimeBackend, Signal, Starting, TaskKey,
};
use crate::store::{MemoryStore, MessageRecord, Owner, StoreError};

/// How many signals a lagging runtime may miss before it resynchronises.
const SIGNAL_BUFFER: usize = 4096;

/// Working records, stream places and event logs, behind one lock each.
pub struct MemoryBackend {
    store: Arc<MemoryStore>,
    log_bytes: Arc<LogBytes>,
    working: Mutex<HashMap<(Owner, String), Record>>,
    streams: Mutex<HashMap<Owner, HashMap<String, Instant>>>,
    logs: Cache<TaskKey, Arc<Mutex<Log>>>,
    signals: broadcast::Sender<Signal>,
}

struct Record {
    runner: String,
    task_json: Bytes,
    lease_end: Instant,
    /// Set by the one ending let through, while it stores the terminal task: readers still see
    /// the working task until the stored one is there.
    ending: bool,
}

struct Log {
    events: Vec<Bytes>,
    bytes: usize,
    closed: bool,
    owner: Owner,
    ledger: Arc<LogBytes>,
}

impl Drop for Log {
    /// A log leaving (expired, evicted, cleared, and no reader holding it) gives its bytes back.
    fn drop(&mut self) {
        self.ledger.give_back(&self.owner, self.bytes);
    }
}

/// The bytes of the event logs, per owner, counted into the memory store's total.
struct LogBytes {
    store: Arc<MemoryStore>,
    by_owner: Mutex<HashMap<Owner, usize>>,
}

impl LogBytes {
    /// Counts `bytes` more of the owner's logs, unless they would pass the owner's share or the
    /// store's total (then `false`, nothing counted); `always` counts them regardless (a final
    /// status).
    fn take(&self, owner: &Owner, bytes: usize, always: bool) -> bool {
        let mut by_owner = self.by_owner.lock().unwrap_or_else(PoisonError::into_inner);
        let held = by_owner.get(owner).copied().unwrap_or(0);
        if always {
            self.store.force_log_bytes(bytes);
        } else if held + bytes > self.store.owner_share() || !self.store.take_log_bytes(bytes) {
            return false;
        }
        *by_owner.entry(owner.clone()).or_insert(0) += bytes;
        true
    }

    fn give_back(&self, owner: &Owner, bytes: usize) {
        if bytes == 0 {
            return;
        }
        self.store.give_back_log_bytes(bytes);
        let mut by_owner = self.by_owner.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = by_owner.get_mut(owner) {
            *held = held.saturating_sub(bytes);
            if *held == 0 {
                by_owner.remove(owner);
            }
        }
    }
}

impl MemoryBackend {
    /// A backend storing terminal tasks in `store`; `log_ttl` bounds how long an idle event log
    /// is kept and `max_logs` how many (the least recently used go first).
    pub fn new(store: Arc<MemoryStore>, log_ttl: Duration, max_logs: u64) -> Self {
        MemoryBackend {
            log_bytes: Arc::new(LogBytes {
                store: Arc::clone(&store),
                by_owner: Mutex::default(),
            }),
            store,
            working: Mutex::default(),
            streams: Mutex::default(),
            logs: Cache::builder()
                .max_capacity(max_logs)
                .time_to_idle(log_ttl)
                .build(),
            signals: broadcast::channel(SIGNAL_BUFFER).0,
        }
    }

    fn working_records(&self) -> MutexGuard<'_, HashMap<(Owner, String), Record>> {
        self.working.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn signal(&self, signal: Signal) {
        // No receiver (no runtime listening) is not an error.
        let _ = self.signals.send(signal);
    }
}

#[async_trait]
impl RuntimeBackend for MemoryBackend {
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
        // One critical section: a resend reading the message's record finds the task working.
        let mut working = self.working_records();
        if let Some(seen) = self.store.recorded_message(owner, message_key) {
            return Ok(Begin::Seen(seen.task_id));
        }
        let now = Instant::now();
        let running = working
            .iter()
            .filter(|((o, _), r)| o == owner && r.lease_end > now)
            .count();
        let key = (owner.clone(), task_id.to_string());
        if running >= max_running || working.contains_key(&key) {
            return Ok(Begin::Busy);
        }
        let record = MessageRecord {
            task_id: task_id.to_string(),
        };
        // A blocking send of the same message may have saved its task meanwhile.
        if let Some(seen) = self.store.record_message(owner, message_key, &record) {
            return Ok(Begin::Seen(seen.task_id));
        }
        working.insert(
            key,
            Record {
                runner: runner.to_string(),
                task_json: task_json.clone(),
                lease_end: now + lease,
                ending: false,
            },
        );
        Ok(Begin::Started)
    }

    async fn renew(
        &self,
        owner: &Owner,
        task_id: &str,
        runner: &str,
        task_json: Option<&Bytes>,
        lease: Duration,
    ) -> Result<bool, StoreError> {
        let mut working = self.working_records();
        match working.get_mut(&(owner.clone(), task_id.to_string())) {
            Some(record) if record.runner == runner && !record.ending => {
                record.lease_end = Instant::now() + lease;
                if let Some(json) = task_json {
                    record.task_json = json.clone();
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn working(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        Ok(self
            .working_records()
            .get(&(owner.clone(), task_id.to_string()))
            .map(|record| record.task_json.clone()))
    }

    async fn finish(
        &self,
        owner: &Owner,
        task_id: &str,
        ending: Ending<'_>,
        finish: &Finish,
    ) -> Result<bool, StoreError> {
        let key = (owner.clone(), task_id.to_string());
        {
            let mut working = self.working_records();
            let Some(record) = working.get_mut(&key) else {
                return Ok(false);
            };
            let allowed = !record.ending
                && match ending {
                    Ending::Runner(runner) => record.runner == runner,
                    Ending::Cancel => true,
                    Ending::Expired => record.lease_end <= Instant::now(),
                };
            if !allowed {
                return Ok(false);
            }
            record.ending = true;
        }
        self.store
            .save_finished(owner, &finish.stored, finish.new_in_context)?;
        self.working_records().remove(&key);
        Ok(true)
    }

    async fn expired(&self, limit: usize) -> Result<Vec<(Owner, String)>, StoreError> {
        let now = Instant::now();
        Ok(self
            .working_records()
            .iter()
            .filter(|(_, record)| record.lease_end <= now && !record.ending)
            .map(|(key, _)| key.clone())
            .take(limit)
            .collect())
    }

    async fn forget_lease(&self, _owner: &Owner, _task_id: &str) -> Result<(), StoreError> {
        // The lease lives in the record itself: nothing is left behind.
        Ok(())
    }

    async fn hold_stream(
        &self,
        owner: &Owner,
        stream_id: &str,
        hold: Duration,
        max_streams: usize,
    ) -> Result<bool, StoreError> {
        let mut streams = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let held = streams.entry(owner.clone()).or_default();
        held.retain(|_, end| *end > now);
        if !held.contains_key(stream_id) && held.len() >= max_streams {
            return Ok(false);
        }
        held.insert(stream_id.to_string(), now + hold);
        Ok(true)
    }

    async fn release_stream(&self, owner: &Owner, stream_id: &str) -> Result<(), StoreError> {
        let mut streams = self.streams.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = streams.get_mut(owner) {
            held.remove(stream_id);
            if held.is_empty() {
                streams.remove(owner);
            }
        }
        Ok(())
    }

    async fn append(
        &self,
        owner: &Owner,
        key: &TaskKey,
        event: &Bytes,
        is_final: bool,
        caps: LogCaps,
    ) -> Result<Appended, StoreError> {
        let log = self.logs.get_with(key.clone(), || {
            Arc::new(Mutex::new(Log {
                events: Vec::new(),
                bytes: 0,
                closed: false,
                owner: owner.clone(),
                ledger: Arc::clone(&self.log_bytes),
            }))
        });
        {
            let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
            if log.closed {
                return Ok(Appended::Closed);
            }
            if is_final {
                log.closed = true;
            } else if log.events.len() + 1 >= caps.max_events
                || log.bytes + event.len() > caps.max_bytes
            {
                return Ok(Appended::Full);
            }
            if !self.log_bytes.take(&log.owner, event.len(), is_final) {
                return Ok(Appended::Full);
            }
            log.bytes += event.len();
            log.events.push(event.clone());
        }
        self.signal(Signal::Appended(key.clone()));
        Ok(Appended::Added)
    }

    async fn clear_log(&self, key: &TaskKey) -> Result<(), StoreError> {
        self.logs.invalidate(key);
        Ok(())
    }

    async fn read(
        &self,
        key: &TaskKey,
        after: &LogCursor,
        max: usize,
    ) -> Result<Vec<(String, Bytes)>, StoreError> {
        let Some(log) = self.logs.get(key) else {
            return Ok(Vec::new());
        };
        let start = match after {
            None => 0,
            Some(cursor) => {
                cursor
                    .parse::<usize>()
                    .map_err(|_| StoreError::Corrupt(format!("event cursor `{cursor}`")))?
                    + 1
            }
        };
        let log = log.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(log
            .events
            .iter()
            .enumerate()
            .skip(start)
            .take(max)
            .map(|(at, event)| (at.to_string(), event.clone()))
            .collect())
    }

    async fn signal_cancel(&self, key: &TaskKey) -> Result<(), StoreError> {
        self.signal(Signal::Cancel(key.clone()));
        Ok(())
    }

    fn signals(&self) -> broadcast::Receiver<Signal> {
        self.signals.subscribe()
    }
}
