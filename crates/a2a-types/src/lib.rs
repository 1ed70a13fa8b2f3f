//! Wire types of the A2A 0.3 JSON-RPC binding, as this server speaks it, and in [`v1`] those of
//! the 1.0 binding with their conversions to and from the 0.3 forms ([`v1_push`] for push configs).
//!
//! This crate knows nothing of HTTP, storage or skills: it is the vocabulary of the server and its
//! tests (no other crate of the workspace uses it), so that a field name is spelt in exactly one
//! place.

pub mod card;
pub mod event;
pub mod jsonrpc;
pub mod push;
pub mod task;
pub mod v1;
pub mod v1_push;

pub use card::{AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill};
pub use event::{StreamEvent, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
pub use jsonrpc::{ErrorCode, ErrorObject, Id, Response};
pub use push::{
    DeleteTaskPushNotificationConfigParams, GetTaskPushNotificationConfigParams,
    ListTaskPushNotificationConfigParams, PushNotificationAuthenticationInfo,
    PushNotificationConfig, TaskPushNotificationConfig,
};
pub use task::{
    Artifact, Message, MessageSendParams, Part, Role, Task, TaskIdParams, TaskQueryParams,
    TaskState, TaskStatus,
};
