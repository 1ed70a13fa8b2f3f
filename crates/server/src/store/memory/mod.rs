//! The embedded task store: in-process, bounded, with a TTL. Nothing to install; tasks vanish
//! when the process stops.
//!
//! Owners are spread over [`SHARDS`] shards by their hash, each a lock over plain maps, so all
//! of one owner's data is in one shard and a save takes one lock. Keys have a fixed size (the
//! owner's and the message's hashes, a task's UUID, a context id's SHA-256: 16 bytes each), an
//! owner-index entry is 48 bytes, a task's JSON is kept at its size and shared with the answer:
//! a stored task costs little beyond its JSON and one allocation. No key stored is a text a
//! client chose (a context id is hashed first), so the maps hash with [`DerivedKeys`].
//!
//! Every entry lives for the same TTL, so saves leave in the order they were made: from the
//! front of their shard's queue, when they expire or when the store holds more than its cap of
//! tasks (then from the shard whose front is the oldest of all: the oldest saved task leaves
//! first; reading a task does not keep it). The upkeep is done by the writes, a few entries
//! each, never a scan under a lock; reads check expiry themselves.
//!
//! The store is bounded in bytes too: each owner's tasks within the owner's share (a save past
//! it takes that owner's own oldest tasks away), and everything (the tasks and the running
//! tasks' event logs, which the runtime's memory backend counts here) within a total that a new
//! task finding it reached is refused for ([`TaskStore::over_budget`]): no one's task is pushed
//! out for another owner's load.
//!
//! [`DerivedKeys`]: crate::hashing::DerivedKeys

mod keys;
mod listed;
mod shard;

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;

use a2a_types::Task;

use self::keys::{Digest, MessageKey, PackedTaskKey, owner_digest, short_digest};
use self::shard::{Clock, Shard, TaskToKeep};
use super::{
    IndexEntry, MessageRecord, Owner, SaveOutcome, StoreError, StoredTask, TaskStore, decode_task,
    packing,
};

/// How many shards the owners are spread over: enough that two requests rarely wait for the
/// same lock, few enough that finding the oldest save reads one small array.
const SHARDS: usize = 64;

/// The most expired saves one write takes away from each shard it visits: the upkeep of a
/// write stays small after a quiet spell, and writes still take saves away faster than they add
/// them.
const EXPIRIES_PER_VISIT: usize = 16;

thread_local! {
    /// The shard the next write on this thread visits for expired saves, besides its own: in
    /// turn, so that every shard is kept clean while any owner writes.
    static NEXT_VISIT: Cell<usize> = const { Cell::new(0) };
}

/// Tasks (as JSON text), message records, contexts and owner indexes, in a fixed number of shards.
pub struct MemoryStore {
    shards: Box<[Mutex<Shard>]>,
    /// When each shard's oldest save expires (`u64::MAX`: none), read without the shard's lock
    /// to find the oldest save of all.
    fronts: Box<[AtomicU64]>,
    /// The tasks held, over all shards.
    tasks: AtomicUsize,
    /// The saves queued, over all shards.
    saves: AtomicUsize,
    /// The tasks' bytes over all shards, and the event logs' the runtime counts here.
    bytes: AtomicUsize,
    max_tasks: usize,
    /// The bytes the store may hold; a new task finding them reached is refused.
    max_bytes: usize,
    /// The bytes one owner's tasks may hold.
    owner_share: usize,
    /// The TTL, in nanoseconds (at least one).
    ttl: u64,
    /// The start of the store's clock.
    started: Instant,
}

/// What the store holds, for the tests of its bounds.
#[cfg(test)]
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Census {
    tasks: usize,
    messages: usize,
    contexts: usize,
    owners: usize,
    index_entries: usize,
    saves: usize,
}

impl MemoryStore {
    /// A store keeping each entry for `ttl`, and at most `max_tasks` tasks (the oldest saved
    /// leave first beyond that), with at most twice as many saves queued (a task continued
    /// leaves its earlier save in the queue until it reaches the front).
    pub fn new(ttl: Duration, max_tasks: u64) -> Self {
        MemoryStore {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            fronts: (0..SHARDS).map(|_| AtomicU64::new(u64::MAX)).collect(),
            tasks: AtomicUsize::new(0),
            saves: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
            max_tasks: usize::try_from(max_tasks).unwrap_or(usize::MAX),
            max_bytes: usize::MAX,
            owner_share: usize::MAX,
            ttl: u64::try_from(ttl.as_nanos()).unwrap_or(u64::MAX).max(1),
            started: Instant::now(),
        }
    }

    /// The same store bounded in bytes: at most `max_bytes` in all (a new task is refused
    /// beyond), and `owner_share` for each owner's tasks (its own oldest leave beyond).
    pub fn with_byte_budget(mut self, max_bytes: u64, owner_share: u64) -> Self {
        self.max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        self.owner_share = usize::try_from(owner_share).unwrap_or(usize::MAX);
        self
    }

    /// The bytes one owner's tasks may hold (and, separately, its event logs).
    pub fn owner_share(&self) -> usize {
        self.owner_share
    }

    /// Counts `bytes` of an event log into the store's total, unless it would pass the total:
    /// then `false`, and nothing is counted.
    pub fn take_log_bytes(&self, bytes: usize) -> bool {
        let before = self.bytes.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.max_bytes {
            self.bytes.fetch_sub(bytes, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Counts `bytes` of an event log into the store's total whatever the total (a final
    /// status, which always goes in).
    pub fn force_log_bytes(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// An event log of `bytes` (counted with [`MemoryStore::take_log_bytes`]) left.
    pub fn give_back_log_bytes(&self, bytes: usize) {
        self.bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// What the owner's message produced or started, read without waiting (see
    /// [`TaskStore::message`]).
    pub fn recorded_message(&self, owner: &Owner, message_key: &str) -> Option<MessageRecord> {
        let message = MessageKey::of(message_key);
        self.read(owner, |shard, owner, now| {
            shard.message(owner, message, now)
        })
    }

    /// Records the owner's message as the one that started `record`'s task, unless it was
    /// recorded before: then the earlier record.
    pub fn record_message(
        &self,
        owner: &Owner,
        message_key: &str,
        record: &MessageRecord,
    ) -> Option<MessageRecord> {
        let message = MessageKey::of(message_key);
        let task = PackedTaskKey::of(&record.task_id);
        self.write(owner, |shard, owner, clock| {
            shard.record(owner, message, task, clock)
        })
    }

    /// Stores a terminal task whose message was recorded when it started (a task that ran
    /// after its call returned): the task, its context and the owner's index, as
    /// [`TaskStore::save`] does after the message check.
    pub fn save_finished(
        &self,
        owner: &Owner,
        task: &StoredTask,
        new_in_context: bool,
    ) -> Result<(), StoreError> {
        let packed = TaskToKeep {
            task,
            packed: packing::pack(&task.json)?,
        };
        self.write(owner, |shard, owner, clock| {
            shard.save_finished(owner, packed, new_in_context, clock);
        });
        Ok(())
    }

    /// Nanoseconds since the store started: fine enough that saves in a row, even in different
    /// shards, have different times, and the oldest save of all is the one that expires first.
    fn now(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn shard_of(owner: &Digest) -> usize {
        usize::from(owner[0]) % SHARDS
    }

    fn lock(&self, at: usize) -> MutexGuard<'_, Shard> {
        self.shards[at]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Reads the owner's shard.
    fn read<R>(&self, owner: &Owner, read: impl FnOnce(&Shard, Digest, u64) -> R) -> R {
        let owner = owner_digest(owner);
        let now = self.now();
        read(&self.lock(Self::shard_of(&owner)), owner, now)
    }

    /// Changes the owner's shard, then does the write's share of the upkeep: expired saves of
    /// this shard and of one other, and the oldest saves beyond the cap.
    fn write<R>(&self, owner: &Owner, change: impl FnOnce(&mut Shard, Digest, Clock) -> R) -> R {
        let owner = owner_digest(owner);
        let at = Self::shard_of(&owner);
        let now = self.now();
        let clock = Clock {
            now,
            expires: now.saturating_add(self.ttl),
            owner_share: self.owner_share,
        };
        let result = self.changing(at, &mut self.lock(at), |shard| {
            let result = change(shard, owner, clock);
            shard.expire(now, EXPIRIES_PER_VISIT);
            result
        });
        let visit = NEXT_VISIT.with(|next| {
            let visit = next.get();
            next.set((visit + 1) % SHARDS);
            visit
        });
        if visit != at && self.fronts[visit].load(Ordering::Relaxed) <= now {
            self.changing(visit, &mut self.lock(visit), |shard| {
                shard.expire(now, EXPIRIES_PER_VISIT);
            });
        }
        self.evict_beyond_the_cap();
        result
    }

    /// Runs `change` on the locked shard `at`, and carries what it changed into the totals and
    /// the shard's front.
    fn changing<R>(&self, at: usize, shard: &mut Shard, change: impl FnOnce(&mut Shard) -> R) -> R {
        let (tasks, saves, bytes) = shard.sizes();
        let result = change(shard);
        let (tasks_after, saves_after, bytes_after) = shard.sizes();
        adjust(&self.tasks, tasks, tasks_after);
        adjust(&self.saves, saves, saves_after);
        adjust(&self.bytes, bytes, bytes_after);
        let front = shard.front_expiry();
        if self.fronts[at].load(Ordering::Relaxed) != front {
            self.fronts[at].store(front, Ordering::Relaxed);
        }
        result
    }

    /// While the store holds more than its cap, takes away the oldest save of all.
    fn evict_beyond_the_cap(&self) {
        while self.tasks.load(Ordering::Relaxed) > self.max_tasks
            || self.saves.load(Ordering::Relaxed) > self.max_tasks.saturating_mul(2)
        {
            let Some((at, _)) = self
                .fronts
                .iter()
                .map(|front| front.load(Ordering::Relaxed))
                .enumerate()
                .filter(|&(_, front)| front != u64::MAX)
                .min_by_key(|&(_, front)| front)
            else {
                return;
            };
            self.changing(at, &mut self.lock(at), Shard::pop_oldest);
        }
    }

    /// What the store holds, over all shards.
    #[cfg(test)]
    fn census(&self) -> Census {
        let mut total = Census::default();
        for at in 0..SHARDS {
            let shard = self.lock(at).census();
            total.tasks += shard.tasks;
            total.messages += shard.messages;
            total.contexts += shard.contexts;
            total.owners += shard.owners;
            total.index_entries += shard.index_entries;
            total.saves += shard.saves;
        }
        total
    }
}

/// Moves a total by the change of one shard's count.
fn adjust(total: &AtomicUsize, before: usize, after: usize) {
    if after > before {
        total.fetch_add(after - before, Ordering::Relaxed);
    } else if before > after {
        total.fetch_sub(before - after, Ordering::Relaxed);
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn get(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError> {
        let key = PackedTaskKey::of(task_id);
        self.read(owner, |shard, owner, now| shard.task(owner, key, now))
            .map(packing::unpack)
            .transpose()
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
        let message = MessageKey::of(message_key);
        let record = PackedTaskKey::of(&record.task_id);
        let packed = TaskToKeep {
            task,
            packed: packing::pack(&task.json)?,
        };
        let earlier = self.write(owner, |shard, owner, clock| {
            shard.save(owner, message, record, packed, new_in_context, clock)
        });
        Ok(match earlier {
            Some(existing) => SaveOutcome::Duplicate(existing),
            None => SaveOutcome::Saved,
        })
    }

    async fn owned_index(&self, owner: &Owner) -> Result<Vec<IndexEntry>, StoreError> {
        let listed = self.read(owner, |shard, owner, now| shard.owned_index(owner, now));
        Ok(listed.iter().map(|listed| listed.entry()).collect())
    }

    async fn tasks(&self, owner: &Owner, ids: &[String]) -> Result<Vec<Option<Bytes>>, StoreError> {
        let keys: Vec<PackedTaskKey> = ids.iter().map(|id| PackedTaskKey::of(id)).collect();
        let stored: Vec<Option<Bytes>> = self.read(owner, |shard, owner, now| {
            keys.into_iter()
                .map(|key| shard.task(owner, key, now))
                .collect()
        });
        stored
            .into_iter()
            .map(|stored| stored.map(packing::unpack).transpose())
            .collect()
    }

    async fn context(
        &self,
        owner: &Owner,
        context_id: &str,
        limit: usize,
    ) -> Result<Vec<Task>, StoreError> {
        let context = short_digest(context_id);
        let stored = self.read(owner, |shard, owner, now| {
            shard.context(owner, context, limit, now)
        });
        stored
            .into_iter()
            .map(|stored| decode_task(&packing::unpack(stored)?))
            .collect()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        Ok(())
    }

    fn over_budget(&self) -> Option<&'static str> {
        (self.bytes.load(Ordering::Relaxed) >= self.max_bytes).then_some(MAX_BYTES_KEY)
    }
}

/// The setting of the store's total in bytes, named when a new task is refused for it.
pub const MAX_BYTES_KEY: &str = "store.memory_max_bytes";

#[cfg(test)]
mod tests;
