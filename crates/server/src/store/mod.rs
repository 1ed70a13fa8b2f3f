//! Where finished tasks are kept for their TTL, scoped to their owner.
//!
//! A task is stored once, when it is terminal. Beside it the store keeps two indexes: the
//! client's `messageId` → task (so a retried send returns the same task instead of running the
//! skill again), and `contextId` → tasks (so a follow-up question sees the earlier turns).

mod memory;
mod redis;

use async_trait::async_trait;
use bytes::Bytes;
use sha2::{Digest, Sha256};

use a2a_types::Task;

pub use memory::MemoryStore;
pub use redis::{RedisStore, apply_migrations};

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
}

/// 128 bits of SHA-256, hex: collision-free in practice, short in keys.
pub fn short_hash(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    hex::encode(&digest[..16])
}

/// What the store remembers about a client message id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageRecord {
    /// A hash of the whole message as first sent: a retry must be the same message.
    pub fingerprint: String,
    /// The task the message produced.
    pub task_id: String,
}

impl MessageRecord {
    fn encode(&self) -> String {
        format!("{}:{}", self.fingerprint, self.task_id)
    }

    fn decode(raw: &str) -> Option<Self> {
        let (fingerprint, task_id) = raw.split_once(':')?;
        Some(MessageRecord {
            fingerprint: fingerprint.into(),
            task_id: task_id.into(),
        })
    }
}

/// A terminal task as the stores keep it: its JSON text, serialised once when the task is
/// made, so that reading it back answers `tasks/get` without parsing or serialising it again;
/// and the ids the indexes need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTask {
    /// The task id.
    pub id: String,
    /// The task's context id.
    pub context_id: String,
    /// The whole task, as JSON text.
    pub json: Bytes,
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

    /// What the owner's message id produced, if it was seen within the TTL.
    async fn message(
        &self,
        owner: &Owner,
        message_id: &str,
    ) -> Result<Option<MessageRecord>, StoreError>;

    /// Stores a terminal task with its message record (only if the message id is new), and
    /// appends it to its context when `new_in_context`. The TTL starts again.
    async fn save(
        &self,
        owner: &Owner,
        task: &StoredTask,
        message_id: &str,
        record: &MessageRecord,
        new_in_context: bool,
    ) -> Result<SaveOutcome, StoreError>;

    /// The owner's most recent tasks of a context, oldest first, at most `limit`.
    async fn context(
        &self,
        owner: &Owner,
        context_id: &str,
        limit: usize,
    ) -> Result<Vec<Task>, StoreError>;

    /// Whether the backend answers (readiness).
    async fn ping(&self) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn message_record_round_trip() {
        let r = MessageRecord {
            fingerprint: "ab".into(),
            task_id: "t-1:x".into(),
        };
        assert_eq!(MessageRecord::decode(&r.encode()), Some(r));
        assert_eq!(MessageRecord::decode("nocolon"), None);
    }
}
