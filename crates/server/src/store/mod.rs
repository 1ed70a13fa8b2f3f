//! Where finished tasks are kept for their TTL, scoped to their owner.
//!
//! A task is stored once, when it is terminal. Beside it the store keeps three indexes: the
//! message (its id and content) → task (so a retried send returns the same task instead of
//! running the skill again), `contextId` → tasks (so a follow-up question sees the earlier
//! turns), and owner → tasks (so `ListTasks` finds a user's tasks without scanning others').

mod memory;
mod packing;
mod redis;
mod traced;

use async_trait::async_trait;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use a2a_types::{Task, TaskState};

use crate::gcra::{BucketCharge, GcraReply};

pub use memory::MemoryStore;
pub(crate) use redis::stored_form;
pub use redis::{RedisStore, apply_migrations};
pub use traced::TracedStore;

/// A hashed, fixed-length owner id of the pair (issuer, `sub`): a `sub` is unique only within
/// its issuer, so two issuers' users never share tasks or limits. Keys never carry the raw
/// values (which may hold any characters, including Redis hash-tag braces, and may be personal
/// data).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner(String);

impl Owner {
    /// The owner key of a token's issuer (`iss`, empty when the token has none) and subject.
    /// The issuer is length-prefixed, so no two pairs hash the same text.
    pub fn of(issuer: &str, sub: &str) -> Self {
        Owner(short_hash(&format!("{}:{issuer}{sub}", issuer.len())))
    }

    /// The hashed form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An owner from its hashed form, as kept in a shared key (the leases of running tasks).
    pub(crate) fn from_hash(hash: &str) -> Self {
        Owner(hash.to_string())
    }
}

/// 128 bits of SHA-256, hex: collision-free in practice, short in keys. Used wherever two
/// users' values meet in one key space (owners, running tasks, the agent card's tag) or a key
/// format is shared with stored data that outlives a release (context ids).
pub fn short_hash(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    hex::encode(&digest[..16])
}

/// The idempotency key of a message's content: 128 bits of XXH3, hex, 32 characters like
/// [`short_hash`] (SHA-256 of a few hundred bytes was most of what a `message/send` spent over
/// the JSON floor under callgrind).
///
/// XXH3 is not collision-resistant against someone who chooses both inputs, and needs not be
/// here: a key is only ever looked up under its owner (the stores key it by the owner's hash
/// first), so two messages can be confused only when the same owner sent both, and a collision
/// answers the later one with the earlier one's task, which is that owner's already. An owner
/// crafting a colliding pair deceives no one but itself. Where one token speaks for many people
/// (an application forwarding its users' text), aiming a collision at another person's message
/// needs that whole message, its `messageId` included (the client's, usually a random UUID),
/// before it is sent. Chance collisions: 2⁻¹²⁸ a pair.
pub fn message_key_hash(content: &str) -> String {
    let digest = xxhash_rust::xxh3::xxh3_128(content.as_bytes());
    hex::encode(digest.to_be_bytes())
}

/// Most task ids one context keeps (the newest), in either store.
pub(crate) const CONTEXT_CAP: usize = 100;

/// The most tasks the owner index keeps per user (the newest; older ones are still readable by
/// id until they expire, but no longer listed).
pub const OWNER_INDEX_CAP: usize = 1000;

/// What the store remembers about a message (by its idempotency key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRecord {
    /// The task the message produced.
    pub task_id: String,
}

/// One entry of an owner's task index: what `ListTasks` filters and orders on, so that a
/// listing reads a small entry per task and the tasks of one page only, however large tasks
/// grow. The context id is hashed, so an entry stays small whatever id a client chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The task id.
    pub task_id: String,
    /// The status timestamp (RFC 3339 UTC, milliseconds).
    pub timestamp: String,
    /// The status state.
    pub state: TaskState,
    /// [`short_hash`] of the context id.
    pub context_hash: String,
}

impl IndexEntry {
    /// The entry of a task.
    pub fn of(task: &Task) -> Self {
        IndexEntry {
            task_id: task.id.clone(),
            timestamp: task.status.timestamp.clone().unwrap_or_default(),
            state: task.status.state,
            context_hash: short_hash(&task.context_id),
        }
    }

    /// The text form kept in Redis: the task id first, so the save script finds a task's
    /// earlier entry by prefix.
    pub fn encode(&self) -> String {
        format!(
            "{}\t{}\t{}\t{}",
            self.task_id,
            self.timestamp,
            self.state.as_str(),
            self.context_hash
        )
    }

    /// Reads [`IndexEntry::encode`]'s text.
    pub fn decode(raw: &str) -> Option<Self> {
        let mut fields = raw.split('\t');
        let entry = IndexEntry {
            task_id: fields.next()?.to_string(),
            timestamp: fields.next()?.to_string(),
            state: serde_json::from_value(fields.next()?.into()).ok()?,
            context_hash: fields.next()?.to_string(),
        };
        fields.next().is_none().then_some(entry)
    }
}

/// A terminal task as the stores keep it: its JSON text, serialised once when the task is
/// made, so that reading it back answers `tasks/get` without parsing or serialising it again;
/// and what the indexes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTask {
    /// The task id.
    pub id: String,
    /// The task's context id.
    pub context_id: String,
    /// The whole task, as JSON text.
    pub json: Bytes,
    /// Its entry in the owner's index.
    pub entry: IndexEntry,
}

impl StoredTask {
    /// Serialises a task for storing. The text is copied into an allocation of its own size:
    /// the serialiser's buffer grows by doubling, and a stored task would otherwise keep up to
    /// twice its size for its whole TTL (a 1.2 KB task sat in a 2 KB buffer).
    pub fn of(task: &Task) -> Result<Self, StoreError> {
        let json = serde_json::to_vec(task).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        Ok(StoredTask {
            id: task.id.clone(),
            context_id: task.context_id.clone(),
            entry: IndexEntry::of(task),
            json: Bytes::copy_from_slice(&json),
        })
    }
}

/// Reads a stored task's JSON text back into a task (to continue it, trim its history, or
/// translate it to another wire).
pub fn decode_task(json: &[u8]) -> Result<Task, StoreError> {
    serde_json::from_slice(json).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The result of saving a task.
#[derive(Debug, Clone, PartialEq)]
pub enum SaveOutcome {
    /// The task was stored.
    Saved,
    /// Another request with the same message id got there first; its record is returned so
    /// the caller answers with that task.
    Duplicate(MessageRecord),
}

/// What a save that carried a charge did.
#[derive(Debug, Clone, PartialEq)]
pub enum ChargedSaveOutcome {
    /// The message was seen before: nothing was charged or stored; the task it produced.
    Seen(MessageRecord),
    /// The charge was applied: the GCRA's reply; the task was stored if it was allowed, and
    /// nothing was if it was refused.
    Charged(GcraReply),
}

/// Why the store failed. Answered as an internal error; the text goes to the logs only.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Redis did not answer or refused.
    #[error("redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    /// A stored value could not be read back.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
    /// Redis' schema is newer than this server understands.
    #[error("the store's schema version {found} is newer than this server's {supported}")]
    SchemaTooNew {
        /// Version recorded in Redis.
        found: i64,
        /// Highest version this build knows.
        supported: i64,
    },
}

/// A task store backend.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// The owner's task with this id, as JSON text, if it exists and has not expired.
    async fn get(&self, owner: &Owner, task_id: &str) -> Result<Option<Bytes>, StoreError>;

    /// What the owner's message produced, if it was seen within the TTL. `message_key` is the
    /// message's idempotency key: a hash of its id and content.
    async fn message(
        &self,
        owner: &Owner,
        message_key: &str,
    ) -> Result<Option<MessageRecord>, StoreError>;

    /// Stores a terminal task with its message record (only if the message is new), appends
    /// it to its context when `new_in_context`, and moves it to the newest end of its owner's
    /// index. The TTL starts again.
    async fn save(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        record: &MessageRecord,
        new_in_context: bool,
    ) -> Result<SaveOutcome, StoreError>;

    /// The index entries of the owner's tasks saved within the TTL, at most
    /// [`OWNER_INDEX_CAP`] of the most recently saved, in no promised order.
    async fn owned_index(&self, owner: &Owner) -> Result<Vec<IndexEntry>, StoreError>;

    /// The owner's tasks with these ids, as JSON text, in the same order (`None`: expired or
    /// unknown).
    async fn tasks(&self, owner: &Owner, ids: &[String]) -> Result<Vec<Option<Bytes>>, StoreError>;

    /// The owner's most recent tasks of a context, oldest first, at most `limit`.
    async fn context(
        &self,
        owner: &Owner,
        context_id: &str,
        limit: usize,
    ) -> Result<Vec<Task>, StoreError>;

    /// Whether the backend answers (readiness).
    async fn ping(&self) -> Result<(), StoreError>;

    /// The setting of a budget in bytes the store has reached, when it has: a new task is
    /// refused then (the memory store's total). `None`, the default: there is room.
    fn over_budget(&self) -> Option<&'static str> {
        None
    }

    /// This store's saves that charge their call, when it can apply a limiter's
    /// `BucketCharge` in the same atomic step as a save (Redis, where the shared limiter's
    /// buckets may live beside the tasks). `None`, the default: the limiter charges first.
    fn charged_saves(&self) -> Option<&dyn ChargedSaves> {
        None
    }
}

/// A save that charges its call: the message check, the charge and the save of the task in one
/// atomic step, so a new message of a cheap skill, run first, is charged and stored in one round
/// trip to the store.
#[async_trait]
pub trait ChargedSaves: Send + Sync {
    /// Stores a new terminal task (the first of its own, appended to its context and to the
    /// owner's index) with its message record, as [`TaskStore::save`] does, if the message is
    /// new and `charge` is allowed. Nothing is charged when the message was seen before, and
    /// nothing is stored when it was seen or the charge is refused. An error leaves either
    /// everything done or nothing (a retry of the same message finds its task when it was).
    async fn save_charged(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_key: &str,
        charge: &BucketCharge,
    ) -> Result<ChargedSaveOutcome, StoreError>;
}

/// Now, as a task's status timestamp: RFC 3339 in UTC, to the millisecond.
pub(crate) fn now_timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_keys_are_xxh3_128_in_canonical_hex_as_long_as_short_hashes() {
        // XXH128 of the empty input, as the reference implementation prints it.
        assert_eq!(message_key_hash(""), "99aa06d3014798d86001c324468d497f");
        let key = message_key_hash(r#"[{"messageId":"m-1"},null]"#);
        assert_eq!(key.len(), short_hash("").len());
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(key, message_key_hash(r#"[{"messageId":"m-2"},null]"#));
    }

    #[test]
    fn owner_hash_is_stable_and_opaque() {
        let a = Owner::of("https://idp.example", "user{1}");
        assert_eq!(a, Owner::of("https://idp.example", "user{1}"));
        assert_ne!(a, Owner::of("https://idp.example", "user{2}"));
        assert_eq!(a.as_str().len(), 32);
        assert!(!a.as_str().contains('{'));
    }

    #[test]
    fn the_same_sub_of_two_issuers_is_two_owners() {
        let alice = Owner::of("https://idp-a.example", "alice");
        assert_ne!(alice, Owner::of("https://idp-b.example", "alice"));
        assert_ne!(alice, Owner::of("", "alice"));
        // No issuer and subject can be shifted into each other.
        assert_ne!(Owner::of("ab", "c"), Owner::of("a", "bc"));
        assert_ne!(Owner::of("", "1:ab"), Owner::of("a", "b"));
    }

    #[test]
    fn index_entries_round_trip() {
        let entry = IndexEntry {
            task_id: "t-1".into(),
            timestamp: "2026-12-01T10:00:00.000Z".into(),
            state: TaskState::Failed,
            context_hash: short_hash("ctx\twith a tab"),
        };
        assert_eq!(IndexEntry::decode(&entry.encode()), Some(entry));
        assert_eq!(IndexEntry::decode("t\t2026\tdone\tc"), None);
        assert_eq!(IndexEntry::decode("t\t2026"), None);
    }
}
