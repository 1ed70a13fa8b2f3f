//! The typed requests of the service's methods and what they answer, as a binding builds
//! and reads them.

use std::sync::Arc;

use bytes::Bytes;
use skills::Bucket;

use a2a_types::{MessageSendParams, PushNotificationConfig};

use crate::limits::Decision;
use crate::push::Push;
use crate::runtime::{Subscription, TaskRuntime};
use crate::service::listing::TaskQuery;
use crate::store::TaskStore;
use crate::wire::Version;

use super::simulation::Simulation;

/// What a message naming a task (`taskId`) does to that task, which is always finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishedTask {
    /// Continues it: the reference's 0.3 behaviour, the same task with a longer history.
    Continue,
    /// Refuses the message: A2A 1.0 takes no message for a task in a terminal state;
    /// follow-ups go through `contextId` as new tasks.
    Refuse,
}

/// What a successful call returns, with the rate-limit decision when one was charged.
pub struct Reply {
    /// The JSON-RPC `result`, as JSON text (a stored task is answered as it was stored).
    pub result: Bytes,
    /// The decision and bucket of a charged `message/send`, for the `RateLimit` headers.
    pub rate: Option<(Decision, Bucket)>,
    /// The message a `message/send` carried, for the conformance kit.
    pub sent: Option<SentMessage>,
}

impl Reply {
    /// A result that charged no limit and carried no message (reads).
    pub fn result(result: Bytes) -> Reply {
        Reply {
            result,
            rate: None,
            sent: None,
        }
    }
}

/// The message a `message/send` carried, as the conformance kit reads it: the A2A docs call a
/// `messageId` unique, and another message under a used id is served as a new message, so the
/// kit compares the content hash against the one it saw before under the same id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    /// The message's `messageId` as sent.
    pub message_id: String,
    /// The hash of the message and its configuration (the key a retry is recognised by).
    pub content_hash: String,
}

/// The sizes in bytes the service keeps what it stores and answers within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeCaps {
    /// The largest stored task (`store.max_task_bytes`): a continuation past it is refused.
    pub max_task_bytes: usize,
    /// The stored tasks one `ListTasks` page reads at most (`store.max_list_page_bytes`).
    pub max_list_page_bytes: usize,
}

/// Longest `messageId`, `taskId` and `contextId` accepted, in characters: they become store
/// keys and log fields, and a UUID has 36.
pub const MAX_ID_CHARS: usize = 256;

/// `message/send` and `SendMessage`: a user message that passed [`validate_user_message`](super::validate_user_message).
#[derive(Debug)]
pub struct SendRequest {
    /// The message and its configuration.
    pub params: MessageSendParams,
    /// What the message does to the finished task it names, which differs per wire.
    pub finished: FinishedTask,
    /// The conformance kit's override, when a scenario simulates a condition of the service.
    pub simulation: Option<Simulation>,
    /// Whether the answer waits for the task to end (0.3 `configuration.blocking`, the
    /// default; 1.0 `returnImmediately` is its opposite).
    pub blocking: bool,
    /// A push config for the task the message starts, stored before it starts so that its
    /// first change is pushed too (`None` when push notifications are not offered).
    pub push: Option<PushNotificationConfig>,
    /// The wire the message came over: an inline push config is told in its terms.
    pub wire: Version,
    /// The caller's language preference, for skills that answer in several languages.
    pub language: Option<String>,
    /// The skill a message without `metadata.skillId` goes to, when the call came through a
    /// skill's own agent (`/agents/{skill_id}`).
    pub default_skill: Option<&'static str>,
}

/// `tasks/get` and `GetTask`.
#[derive(Debug)]
pub struct GetRequest {
    /// The task's id.
    pub id: String,
    /// Keep only the last this many messages of the history.
    pub history_length: Option<u64>,
}

/// `tasks/cancel` and `CancelTask`.
#[derive(Debug)]
pub struct CancelRequest {
    /// The task's id.
    pub id: String,
}

/// `ListTasks`: one page of the caller's tasks.
#[derive(Debug)]
pub struct ListRequest {
    /// Filters, page size and position.
    pub query: TaskQuery,
    /// Whether the tasks keep their artifacts (1.0's `includeArtifacts`).
    pub include_artifacts: bool,
}

/// `tasks/resubscribe` and `SubscribeToTask`.
#[derive(Debug)]
pub struct SubscribeRequest {
    /// The task's id.
    pub id: String,
    /// The place in the task's log of the last event the client saw, when it resumes a stream:
    /// the events after it follow.
    pub resume_after: Option<u64>,
    /// Whether a new subscription (not a resumed one) to a task already finished is refused
    /// (A2A 1.0's `UnsupportedOperationError`: nothing more will happen to it) rather than
    /// answered with its last state (0.3).
    pub refuse_finished: bool,
}

/// A task's events, answered as a stream, with the rate-limit decision when one was charged.
pub struct Streamed {
    /// The events, from the task's first.
    pub subscription: Subscription,
    /// The decision and bucket of a charged send, for the `RateLimit` headers.
    pub rate: Option<(Decision, Bucket)>,
}

/// `tasks/pushNotificationConfig/set` and `CreateTaskPushNotificationConfig`.
#[derive(Debug)]
pub struct SetPushConfigRequest {
    /// The caller's task, working or kept.
    pub task_id: String,
    /// The config; without an id it takes the task's id, replacing the config of that id.
    pub config: PushNotificationConfig,
    /// The wire of the method that sets it: the config's notifications are in its terms.
    pub wire: Version,
}

/// `tasks/pushNotificationConfig/get` and `GetTaskPushNotificationConfig`.
#[derive(Debug)]
pub struct GetPushConfigRequest {
    /// The caller's task.
    pub task_id: String,
    /// The config; `None` (0.3 only): the task's first.
    pub config_id: Option<String>,
}

/// `tasks/pushNotificationConfig/list` and `ListTaskPushNotificationConfigs`.
#[derive(Debug)]
pub struct ListPushConfigsRequest {
    /// The caller's task.
    pub task_id: String,
    /// Which of the task's configs, ordered by id.
    pub page: ConfigPage,
}

/// A page of a task's push configs, ordered by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigPage {
    /// At most this many; `None`: all.
    pub size: Option<usize>,
    /// Only those whose id sorts after this one (the previous page's last).
    pub after: Option<String>,
}

/// `tasks/pushNotificationConfig/delete` and `DeleteTaskPushNotificationConfig`.
#[derive(Debug)]
pub struct DeletePushConfigRequest {
    /// The caller's task.
    pub task_id: String,
    /// The config to remove.
    pub config_id: String,
}

/// Where tasks live: the store of finished tasks and the runtime of running ones, over the
/// same backing.
pub struct Tasks {
    /// Finished tasks, kept 24 h.
    pub store: Arc<dyn TaskStore>,
    /// Tasks that run after their call returned.
    pub runtime: Arc<TaskRuntime>,
    /// Each task's push configs, when push notifications are offered (the runtime is given
    /// the same, to push every change).
    pub push: Option<Arc<Push>>,
}
