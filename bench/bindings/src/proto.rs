//! The few messages of `lf.a2a.v1` (crates/server/proto/a2a.proto) the load client sends and
//! checks, with the proto's field numbers; fields it does not need are left out, which
//! protobuf decoding skips.

use std::collections::BTreeMap;

/// `google.protobuf.Struct`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Struct {
    /// The members.
    #[prost(btree_map = "string, message", tag = "1")]
    pub fields: BTreeMap<String, Value>,
}

/// `google.protobuf.Value`, its string and struct kinds.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Value {
    /// The value.
    #[prost(oneof = "Kind", tags = "3, 5")]
    pub kind: Option<Kind>,
}

/// The kinds of [`Value`] used here.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Kind {
    /// `string_value`.
    #[prost(string, tag = "3")]
    Text(String),
    /// `struct_value`.
    #[prost(message, tag = "5")]
    Object(Struct),
}

impl Struct {
    /// A struct of string members.
    pub fn of_strings(members: &[(&str, &str)]) -> Struct {
        Struct {
            fields: members
                .iter()
                .map(|(name, text)| {
                    let value = Value {
                        kind: Some(Kind::Text((*text).to_string())),
                    };
                    ((*name).to_string(), value)
                })
                .collect(),
        }
    }
}

/// `Part` with a `data` value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Part {
    /// `data`.
    #[prost(message, optional, tag = "4")]
    pub data: Option<Value>,
}

/// `Message`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Message {
    /// `message_id`.
    #[prost(string, tag = "1")]
    pub message_id: String,
    /// `role`: 1 is `ROLE_USER`.
    #[prost(int32, tag = "4")]
    pub role: i32,
    /// `parts`.
    #[prost(message, repeated, tag = "5")]
    pub parts: Vec<Part>,
    /// `metadata`.
    #[prost(message, optional, tag = "6")]
    pub metadata: Option<Struct>,
}

/// `SendMessageRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SendMessageRequest {
    /// `message`.
    #[prost(message, optional, tag = "2")]
    pub message: Option<Message>,
}

/// `GetTaskRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetTaskRequest {
    /// `id`.
    #[prost(string, tag = "2")]
    pub id: String,
}

/// `TaskStatus`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TaskStatus {
    /// `state`: 3 is `TASK_STATE_COMPLETED`.
    #[prost(int32, tag = "1")]
    pub state: i32,
}

/// `Task`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Task {
    /// `id`.
    #[prost(string, tag = "1")]
    pub id: String,
    /// `status`.
    #[prost(message, optional, tag = "3")]
    pub status: Option<TaskStatus>,
}

/// `SendMessageResponse` holding a task.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SendMessageResponse {
    /// `task`.
    #[prost(message, optional, tag = "1")]
    pub task: Option<Task>,
}

/// `TASK_STATE_COMPLETED`.
pub const COMPLETED: i32 = 3;
/// `ROLE_USER`.
pub const ROLE_USER: i32 = 1;
