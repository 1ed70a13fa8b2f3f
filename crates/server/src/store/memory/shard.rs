//! One shard of the memory store: everything of the owners whose hash falls in it (tasks,
//! message records, contexts, owner indexes) in plain maps, and the queue of its saves.
//!
//! Every entry lives for the same TTL, so the order of saves is the order of expiry: the queue's
//! front is always the next save to leave, whether for its age or for the cap. A save leaving
//! takes what it wrote with it: its message record, and its task (with the task's context
//! membership and owner-index entry) unless the task was saved again since, which a sequence
//! number tells. Everything kept is accounted for by a queued save (an owner's index by the
//! owner's tasks), so the queue bounds it all.
//!
//! Each owner's tasks are also counted in bytes (their JSON and a fixed cost per task), and kept
//! within the owner's share: a save that takes an owner past it takes that owner's own oldest
//! tasks away, never another owner's.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};

use bytes::Bytes;

use super::keys::{Digest, MessageKey, PackedTaskKey, hex_bytes, short_digest};
use super::listed::Listed;
use crate::hashing::DerivedKeys;
use crate::store::{CONTEXT_CAP, MessageRecord, OWNER_INDEX_CAP, StoredTask};

/// What a stored task costs beside its JSON, in bytes: its map entry, its save in the queue,
/// its index entry and its context membership, rounded up.
pub(super) const TASK_OVERHEAD_BYTES: usize = 256;

/// The tasks, message records, contexts and owner indexes of the shard's owners, keyed by the
/// owner's hash first: no two owners share an entry, whatever ids they chose.
#[derive(Default)]
pub(super) struct Shard {
    tasks: HashMap<(Digest, PackedTaskKey), Kept, DerivedKeys>,
    messages: HashMap<(Digest, MessageKey), Recorded, DerivedKeys>,
    contexts: HashMap<(Digest, Digest), Members, DerivedKeys>,
    owners: HashMap<Digest, Owned, DerivedKeys>,
    saves: VecDeque<Save>,
    next_save: u64,
    /// Bytes of the shard's tasks ([`Kept::bytes`], added up).
    bytes: usize,
}

/// When an operation runs and when what it writes expires, in nanoseconds of the store's clock.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    /// Now.
    pub now: u64,
    /// Now plus the TTL.
    pub expires: u64,
    /// The bytes one owner's tasks may hold: a save past it takes the owner's oldest away.
    pub owner_share: usize,
}

/// A task to keep, with its stored form ([`crate::store::packing`]), made before the shard's
/// lock is taken.
pub(super) struct TaskToKeep<'a> {
    /// The task, for its ids and index entry.
    pub task: &'a StoredTask,
    /// Its stored form.
    pub packed: Bytes,
}

/// A stored task.
struct Kept {
    /// Its stored form ([`crate::store::packing`]).
    packed: Bytes,
    expires: u64,
    /// The save that wrote it: an earlier save of the same task leaving finds another number.
    save: u64,
    context: Digest,
}

impl Kept {
    /// What the task costs, in bytes.
    fn bytes(&self) -> usize {
        self.packed.len() + TASK_OVERHEAD_BYTES
    }
}

/// What a message produced or started. A record replaces only an expired one, so a later
/// record always expires later: the expiry tells which save wrote it.
struct Recorded {
    task: PackedTaskKey,
    expires: u64,
}

/// One owner's tasks: how many are kept, their bytes, and their index (the most recently
/// saved last).
struct Owned {
    tasks: usize,
    bytes: usize,
    index: VecDeque<Listed>,
}

/// The tasks of one context, oldest first; most contexts hold one, kept without allocating.
enum Members {
    One(PackedTaskKey),
    Many(Vec<PackedTaskKey>),
}

/// One save, in the queue: what it wrote, to be taken away when it leaves.
struct Save {
    owner: Digest,
    expires: u64,
    message: Option<MessageKey>,
    task: Option<SavedTask>,
}

/// The task a save wrote.
struct SavedTask {
    key: PackedTaskKey,
    /// The save's number (`u64::MAX`, which no save has, when it holds only a context's
    /// membership).
    save: u64,
    /// The context the save added the task to, if it did: the task leaves it with this save
    /// unless the task is still of that context, and then with the task.
    appended: Option<Digest>,
}

impl Shard {
    /// The owner's task, unless it expired.
    pub(super) fn task(&self, owner: Digest, key: PackedTaskKey, now: u64) -> Option<Bytes> {
        self.live_task(owner, key, now)
            .map(|kept| kept.packed.clone())
    }

    fn live_task(&self, owner: Digest, key: PackedTaskKey, now: u64) -> Option<&Kept> {
        self.tasks
            .get(&(owner, key))
            .filter(|kept| kept.expires > now)
    }

    /// What the owner's message produced or started, unless it expired.
    pub(super) fn message(
        &self,
        owner: Digest,
        key: MessageKey,
        now: u64,
    ) -> Option<MessageRecord> {
        self.messages
            .get(&(owner, key))
            .filter(|record| record.expires > now)
            .map(|record| MessageRecord {
                task_id: record.task.id(),
            })
    }

    /// Records the owner's message as the one that started `task`, unless a live record is
    /// there: then that one.
    pub(super) fn record(
        &mut self,
        owner: Digest,
        message: MessageKey,
        task: PackedTaskKey,
        clock: Clock,
    ) -> Option<MessageRecord> {
        let earlier = self.record_once(owner, &message, task, clock);
        if earlier.is_none() {
            self.saves.push_back(Save {
                owner,
                expires: clock.expires,
                message: Some(message),
                task: None,
            });
        }
        earlier
    }

    /// Stores a task with the message that produced it, in one save, unless a live record of
    /// the message is there: then that record, and nothing is written.
    pub(super) fn save(
        &mut self,
        owner: Digest,
        message: MessageKey,
        record: PackedTaskKey,
        task: TaskToKeep<'_>,
        new_in_context: bool,
        clock: Clock,
    ) -> Option<MessageRecord> {
        let earlier = self.record_once(owner, &message, record, clock);
        if earlier.is_none() {
            self.keep(owner, task, Some(message), new_in_context, clock);
        }
        earlier
    }

    /// Stores a task whose message was recorded when it started.
    pub(super) fn save_finished(
        &mut self,
        owner: Digest,
        task: TaskToKeep<'_>,
        new_in_context: bool,
        clock: Clock,
    ) {
        self.keep(owner, task, None, new_in_context, clock);
    }

    fn record_once(
        &mut self,
        owner: Digest,
        message: &MessageKey,
        task: PackedTaskKey,
        clock: Clock,
    ) -> Option<MessageRecord> {
        let fresh = Recorded {
            task,
            expires: clock.expires,
        };
        match self.messages.entry((owner, message.clone())) {
            Entry::Occupied(record) if record.get().expires > clock.now => Some(MessageRecord {
                task_id: record.get().task.id(),
            }),
            Entry::Occupied(mut expired) => {
                expired.insert(fresh);
                None
            }
            Entry::Vacant(slot) => {
                slot.insert(fresh);
                None
            }
        }
    }

    /// Stores the task in its stored form (its TTL starting again), adds it to its context when
    /// `new_in_context`, moves it to the newest end of the owner's index, and queues the save.
    fn keep(
        &mut self,
        owner: Digest,
        TaskToKeep { task, packed }: TaskToKeep<'_>,
        message: Option<MessageKey>,
        new_in_context: bool,
        clock: Clock,
    ) {
        let key = PackedTaskKey::of(&task.id);
        // The entry carries the context id's hash already; a hand-made entry may carry any
        // text there, and then the context id is hashed here.
        let context =
            hex_bytes(&task.entry.context_hash).unwrap_or_else(|| short_digest(&task.context_id));
        let save = self.next_save;
        self.next_save += 1;
        let kept = Kept {
            packed,
            expires: clock.expires,
            save,
            context,
        };
        let added = kept.bytes();
        let previous = self.tasks.insert((owner, key.clone()), kept);
        let removed = previous.as_ref().map_or(0, Kept::bytes);
        self.bytes = self.bytes + added - removed;
        let previous_context = previous.as_ref().map(|previous| previous.context);
        let appended = self.join_context(
            owner,
            &key,
            context,
            previous_context,
            new_in_context,
            clock.expires,
        );
        let owned = self.owners.entry(owner).or_insert_with(|| Owned {
            tasks: 0,
            bytes: 0,
            // Most owners keep few tasks: the index grows from one entry, not four.
            index: VecDeque::with_capacity(1),
        });
        if previous.is_none() {
            owned.tasks += 1;
        }
        owned.bytes = owned.bytes + added - removed;
        if !new_in_context
            && let Some(at) = owned.index.iter().rposition(|listed| listed.task() == key)
        {
            // A continued task leaves its earlier entry (usually among the newest: looked for
            // from the back).
            owned.index.remove(at);
        }
        owned.index.push_back(Listed::of(&task.entry));
        if owned.index.len() > OWNER_INDEX_CAP {
            owned.index.pop_front();
        }
        self.saves.push_back(Save {
            owner,
            expires: clock.expires,
            message,
            task: Some(SavedTask {
                key,
                save,
                appended,
            }),
        });
        self.keep_within_share(owner, clock.owner_share);
    }

    /// Adds a kept task to its context's members when it is new there, and queues the leaving
    /// of the context it moved from, if any; the context it joined.
    fn join_context(
        &mut self,
        owner: Digest,
        key: &PackedTaskKey,
        context: Digest,
        previous_context: Option<Digest>,
        new_in_context: bool,
        expires: u64,
    ) -> Option<Digest> {
        if let Some(previous_context) = previous_context
            && previous_context != context
        {
            // The task moves to another context (the server never does that; a caller storing
            // its own tasks may). The earlier context keeps the task as before, until a save of
            // its own leaves: the memberships the task held there are not left behind.
            self.saves.push_back(Save {
                owner,
                expires,
                message: None,
                task: Some(SavedTask {
                    key: key.clone(),
                    save: u64::MAX,
                    appended: Some(previous_context),
                }),
            });
        }
        new_in_context.then(|| {
            match self.contexts.entry((owner, context)) {
                Entry::Occupied(mut members) => members.get_mut().push(key.clone()),
                Entry::Vacant(slot) => {
                    slot.insert(Members::One(key.clone()));
                }
            }
            context
        })
    }

    /// Takes the owner's oldest saved tasks away, from the front of its index, while its tasks
    /// hold more than `share` bytes (the newest, just saved, always stays). Their saves stay
    /// queued, and find them gone when they leave. (An owner with more tasks than its index
    /// keeps loses the oldest it lists; those older still leave with their saves.)
    fn keep_within_share(&mut self, owner: Digest, share: usize) {
        loop {
            let Some(owned) = self.owners.get_mut(&owner) else {
                return;
            };
            if owned.bytes <= share || owned.index.len() <= 1 {
                return;
            }
            let Some(oldest) = owned.index.front().map(Listed::task) else {
                return;
            };
            let slot = (owner, oldest);
            match self.tasks.remove(&slot) {
                Some(kept) => {
                    self.bytes -= kept.bytes();
                    self.leave_context(owner, kept.context, &slot.1);
                    self.leave_index(owner, kept.bytes());
                }
                None => {
                    owned.index.pop_front();
                }
            }
        }
    }

    /// The owner's index entries whose tasks are live, oldest saved first.
    pub(super) fn owned_index(&self, owner: Digest, now: u64) -> Vec<Listed> {
        let Some(owned) = self.owners.get(&owner) else {
            return Vec::new();
        };
        owned
            .index
            .iter()
            .filter(|listed| self.live_task(owner, listed.task(), now).is_some())
            .cloned()
            .collect()
    }

    /// The owner's newest live tasks of a context, at most `limit`, oldest first.
    pub(super) fn context(
        &self,
        owner: Digest,
        context: Digest,
        limit: usize,
        now: u64,
    ) -> Vec<Bytes> {
        let Some(members) = self.contexts.get(&(owner, context)) else {
            return Vec::new();
        };
        let mut tasks: Vec<Bytes> = members
            .keys()
            .iter()
            .rev()
            .filter_map(|key| self.task(owner, key.clone(), now))
            .take(limit)
            .collect();
        tasks.reverse();
        tasks
    }

    /// When the oldest save expires (`u64::MAX`: no save).
    pub(super) fn front_expiry(&self) -> u64 {
        self.saves.front().map_or(u64::MAX, |save| save.expires)
    }

    /// How many tasks and saves the shard holds, and the tasks' bytes.
    pub(super) fn sizes(&self) -> (usize, usize, usize) {
        (self.tasks.len(), self.saves.len(), self.bytes)
    }

    /// Takes away the saves that expired by `now`, at most `most` of them.
    pub(super) fn expire(&mut self, now: u64, most: usize) {
        for _ in 0..most {
            if self.front_expiry() > now {
                return;
            }
            self.pop_oldest();
        }
    }

    /// Takes away the oldest save and what it wrote that no later save rewrote.
    pub(super) fn pop_oldest(&mut self) {
        let Some(save) = self.saves.pop_front() else {
            return;
        };
        let owner = save.owner;
        if let Some(message) = save.message
            && let Entry::Occupied(record) = self.messages.entry((owner, message))
            && record.get().expires == save.expires
        {
            record.remove();
        }
        let Some(saved) = save.task else {
            return;
        };
        let slot = (owner, saved.key);
        let current = self
            .tasks
            .get(&slot)
            .map(|kept| (kept.save == saved.save, kept.context));
        let (_, key) = &slot;
        match current {
            Some((true, context)) => {
                let bytes = self.tasks.remove(&slot).map_or(0, |kept| kept.bytes());
                self.bytes -= bytes;
                self.leave_context(owner, context, key);
                self.leave_index(owner, bytes);
            }
            // Saved again since: the later save holds the task. The context this save added
            // it to keeps it only while the task is still of that context.
            current => {
                if let Some(appended) = saved.appended
                    && current.is_none_or(|(_, context)| context != appended)
                {
                    self.leave_context(owner, appended, key);
                }
            }
        }
    }

    /// Removes the task from the context, and the context when nothing is left of it.
    fn leave_context(&mut self, owner: Digest, context: Digest, key: &PackedTaskKey) {
        if let Entry::Occupied(mut members) = self.contexts.entry((owner, context))
            && members.get_mut().remove(key)
        {
            members.remove();
        }
    }

    /// Counts a task of `bytes` out of its owner's index: entries of tasks that left go from
    /// the front (a task leaving is the owner's oldest saved, so its entry, unless the cap
    /// dropped it, is the first), and an owner with no task left leaves entirely.
    fn leave_index(&mut self, owner: Digest, bytes: usize) {
        let Entry::Occupied(mut owned) = self.owners.entry(owner) else {
            return;
        };
        let entry = owned.get_mut();
        entry.tasks = entry.tasks.saturating_sub(1);
        entry.bytes = entry.bytes.saturating_sub(bytes);
        if entry.tasks == 0 {
            owned.remove();
            return;
        }
        while let Some(first) = entry.index.front()
            && !self.tasks.contains_key(&(owner, first.task()))
        {
            entry.index.pop_front();
        }
    }

    /// What the shard holds, for the tests of bounds.
    #[cfg(test)]
    pub(super) fn census(&self) -> super::Census {
        super::Census {
            tasks: self.tasks.len(),
            messages: self.messages.len(),
            contexts: self.contexts.len(),
            owners: self.owners.len(),
            index_entries: self.owners.values().map(|owned| owned.index.len()).sum(),
            saves: self.saves.len(),
        }
    }
}

impl Members {
    /// The tasks, oldest first.
    fn keys(&self) -> &[PackedTaskKey] {
        match self {
            Members::One(key) => std::slice::from_ref(key),
            Members::Many(keys) => keys,
        }
    }

    /// Adds the newest task; beyond [`CONTEXT_CAP`] the oldest is dropped.
    fn push(&mut self, key: PackedTaskKey) {
        match self {
            Members::One(first) => *self = Members::Many(vec![first.clone(), key]),
            Members::Many(keys) => {
                keys.push(key);
                if keys.len() > CONTEXT_CAP {
                    keys.remove(0);
                }
            }
        }
    }

    /// Removes the task (every time it is there); whether nothing is left.
    fn remove(&mut self, key: &PackedTaskKey) -> bool {
        match self {
            Members::One(only) => only == key,
            Members::Many(keys) => {
                keys.retain(|member| member != key);
                keys.is_empty()
            }
        }
    }
}
