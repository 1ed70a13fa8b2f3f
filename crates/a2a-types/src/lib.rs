//! Wire types of the A2A 0.3 JSON-RPC binding, as this server speaks it.
//!
//! This crate knows nothing of HTTP, storage or skills: it is the vocabulary that the server, the
//! skills and the tests share, so that a field name is spelt in exactly one place.

pub mod card;
pub mod jsonrpc;
pub mod task;

pub use card::{AgentCapabilities, AgentCard, AgentProvider, AgentSkill};
pub use jsonrpc::{ErrorCode, ErrorObject, Id, Response};
pub use task::{
    Artifact, Message, MessageSendParams, Part, Role, Task, TaskIdParams, TaskQueryParams,
    TaskState, TaskStatus,
};
