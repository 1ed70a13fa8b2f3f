//! Wire types of the A2A 1.0 JSON-RPC binding, and their conversions to and from the 0.3 types.
//!
//! The server stores and runs everything in the 0.3 shapes of this crate; a 1.0 call is
//! translated on the way in and the result on the way out, so one task store and one skill
//! registry serve both wires and a task reads the same through either. The 1.0 forms differ in
//! spelling only where this server is concerned: no `kind` discriminators (a part is whichever
//! of `text`, `data`, `url`, `raw` it carries), enums as `ROLE_USER` / `TASK_STATE_COMPLETED`,
//! and `SendMessage` results wrapped as `{"task": …}`.
//!
//! A request's fields are read by their ProtoJSON (camelCase) names and, as ProtoJSON parsers
//! must accept them, by their proto (snake_case) names: `taskId` or `task_id`. Answers use the
//! camelCase names only.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::event::StreamEvent;
use crate::task::{
    Artifact, Message, MessageSendParams, Part, Role, Task, TaskIdParams, TaskQueryParams,
    TaskState, TaskStatus,
};

/// The `A2A-Version` value of this binding.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The `@type` of the `google.rpc.ErrorInfo` detail that 1.0 errors carry in `error.data`.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// The `domain` of the `ErrorInfo` details this server sends.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";

/// Why a 1.0 value could not be turned into its 0.3 form: the caller sent something this
/// binding does not allow, so it becomes an invalid-params error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionError(pub String);

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConversionError {}

/// Who wrote a message, in 1.0 enum spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum V1Role {
    /// Not set; never valid in a request.
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The calling client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The server.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

impl From<Role> for V1Role {
    fn from(role: Role) -> Self {
        match role {
            Role::User => V1Role::User,
            Role::Agent => V1Role::Agent,
        }
    }
}

/// A task state, in 1.0 enum spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum V1TaskState {
    /// Unknown (0.3 `unknown`).
    TaskStateUnspecified,
    /// Received, not started.
    TaskStateSubmitted,
    /// Running.
    TaskStateWorking,
    /// Finished with artifacts.
    TaskStateCompleted,
    /// The skill could not do the work.
    TaskStateFailed,
    /// Canceled by the client.
    TaskStateCanceled,
    /// Waiting for the user.
    TaskStateInputRequired,
    /// Refused by the agent.
    TaskStateRejected,
    /// Needs authentication.
    TaskStateAuthRequired,
}

impl From<TaskState> for V1TaskState {
    fn from(state: TaskState) -> Self {
        match state {
            TaskState::Submitted => V1TaskState::TaskStateSubmitted,
            TaskState::Working => V1TaskState::TaskStateWorking,
            TaskState::InputRequired => V1TaskState::TaskStateInputRequired,
            TaskState::Completed => V1TaskState::TaskStateCompleted,
            TaskState::Canceled => V1TaskState::TaskStateCanceled,
            TaskState::Failed => V1TaskState::TaskStateFailed,
            TaskState::Rejected => V1TaskState::TaskStateRejected,
            TaskState::AuthRequired => V1TaskState::TaskStateAuthRequired,
            TaskState::Unknown => V1TaskState::TaskStateUnspecified,
        }
    }
}

impl From<V1TaskState> for TaskState {
    fn from(state: V1TaskState) -> Self {
        match state {
            V1TaskState::TaskStateSubmitted => TaskState::Submitted,
            V1TaskState::TaskStateWorking => TaskState::Working,
            V1TaskState::TaskStateInputRequired => TaskState::InputRequired,
            V1TaskState::TaskStateCompleted => TaskState::Completed,
            V1TaskState::TaskStateCanceled => TaskState::Canceled,
            V1TaskState::TaskStateFailed => TaskState::Failed,
            V1TaskState::TaskStateRejected => TaskState::Rejected,
            V1TaskState::TaskStateAuthRequired => TaskState::AuthRequired,
            V1TaskState::TaskStateUnspecified => TaskState::Unknown,
        }
    }
}

/// One piece of content. 1.0 has no `kind`: the member that is set says what the part is.
/// Unknown fields are ignored, as the binding allows extension.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Part {
    /// Natural-language text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Inline file bytes, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A file by reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// The file name of a file part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The media type of the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "media_type")]
    pub media_type: Option<String>,
}

impl From<Part> for V1Part {
    fn from(part: Part) -> Self {
        match part {
            Part::Text { text, metadata } => V1Part {
                text: Some(text),
                metadata,
                ..V1Part::default()
            },
            Part::Data { data, metadata } => V1Part {
                data: Some(Value::Object(data)),
                metadata,
                ..V1Part::default()
            },
            Part::File { file, metadata } => {
                let field = |name: &str| file.get(name).and_then(Value::as_str).map(str::to_owned);
                V1Part {
                    raw: field("bytes"),
                    url: field("uri"),
                    filename: field("name"),
                    media_type: field("mimeType"),
                    metadata,
                    ..V1Part::default()
                }
            }
        }
    }
}

impl TryFrom<V1Part> for Part {
    type Error = ConversionError;

    fn try_from(part: V1Part) -> Result<Self, Self::Error> {
        let members = [
            part.text.is_some(),
            part.data.is_some(),
            part.url.is_some(),
            part.raw.is_some(),
        ];
        if members.iter().filter(|set| **set).count() != 1 {
            return Err(ConversionError(
                "a part must carry exactly one of `text`, `data`, `url` or `raw`".into(),
            ));
        }
        let metadata = part.metadata;
        if let Some(text) = part.text {
            return Ok(Part::Text { text, metadata });
        }
        if let Some(data) = part.data {
            return match data {
                Value::Object(data) => Ok(Part::Data { data, metadata }),
                _ => Err(ConversionError(
                    "a `data` part must hold a JSON object".into(),
                )),
            };
        }
        let mut file = Map::new();
        if let Some(url) = part.url {
            file.insert("uri".into(), Value::String(url));
        }
        if let Some(raw) = part.raw {
            file.insert("bytes".into(), Value::String(raw));
        }
        if let Some(name) = part.filename {
            file.insert("name".into(), Value::String(name));
        }
        if let Some(media_type) = part.media_type {
            file.insert("mimeType".into(), Value::String(media_type));
        }
        Ok(Part::File {
            file: Value::Object(file),
            metadata,
        })
    }
}

/// A message in 1.0 form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Message {
    /// The client's id for this message.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// The conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// The task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "task_id")]
    pub task_id: Option<String>,
    /// Who wrote it.
    pub role: V1Role,
    /// The content.
    pub parts: Vec<V1Part>,
    /// Free-form metadata; `skillId` selects the skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Other tasks the client refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "reference_task_ids")]
    pub reference_task_ids: Option<Vec<String>>,
}

impl From<Message> for V1Message {
    fn from(message: Message) -> Self {
        V1Message {
            message_id: message.message_id,
            context_id: message.context_id,
            task_id: message.task_id,
            role: message.role.into(),
            parts: message.parts.into_iter().map(V1Part::from).collect(),
            metadata: message.metadata,
            extensions: message.extensions,
            reference_task_ids: message.reference_task_ids,
        }
    }
}

impl TryFrom<V1Message> for Message {
    type Error = ConversionError;

    fn try_from(message: V1Message) -> Result<Self, Self::Error> {
        let role = match message.role {
            V1Role::User => Role::User,
            V1Role::Agent => Role::Agent,
            V1Role::Unspecified => {
                return Err(ConversionError(
                    "message.role must be ROLE_USER or ROLE_AGENT".into(),
                ));
            }
        };
        let parts = message
            .parts
            .into_iter()
            .enumerate()
            .map(|(index, part)| {
                Part::try_from(part)
                    .map_err(|e| ConversionError(format!("message.parts[{index}]: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Message {
            kind: "message".into(),
            message_id: message.message_id,
            role,
            parts,
            task_id: message.task_id,
            context_id: message.context_id,
            reference_task_ids: message.reference_task_ids,
            extensions: message.extensions,
            metadata: message.metadata,
        })
    }
}

/// A task status in 1.0 form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct V1TaskStatus {
    /// The state.
    pub state: V1TaskState,
    /// The agent's message (set on failure with the reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<V1Message>,
    /// RFC 3339 UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// An artifact in 1.0 form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Artifact {
    /// The artifact id.
    pub artifact_id: String,
    /// The skill's artifact name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A text part, then a data part.
    pub parts: Vec<V1Part>,
}

impl From<TaskStatus> for V1TaskStatus {
    fn from(status: TaskStatus) -> Self {
        V1TaskStatus {
            state: status.state.into(),
            message: status.message.map(V1Message::from),
            timestamp: status.timestamp,
        }
    }
}

impl From<Artifact> for V1Artifact {
    fn from(artifact: Artifact) -> Self {
        V1Artifact {
            artifact_id: artifact.artifact_id,
            name: artifact.name,
            parts: artifact.parts.into_iter().map(V1Part::from).collect(),
        }
    }
}

/// A task in 1.0 form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Task {
    /// The task id.
    pub id: String,
    /// The conversation id.
    pub context_id: String,
    /// The current status.
    pub status: V1TaskStatus,
    /// The outputs.
    #[serde(default)]
    pub artifacts: Vec<V1Artifact>,
    /// User and agent messages in order.
    #[serde(default)]
    pub history: Vec<V1Message>,
    /// `{"skillId": …}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl From<Task> for V1Task {
    fn from(task: Task) -> Self {
        V1Task {
            id: task.id,
            context_id: task.context_id,
            status: task.status.into(),
            artifacts: task.artifacts.into_iter().map(V1Artifact::from).collect(),
            history: task.history.into_iter().map(V1Message::from).collect(),
            metadata: task.metadata,
        }
    }
}

impl TryFrom<V1Task> for Task {
    type Error = ConversionError;

    fn try_from(task: V1Task) -> Result<Self, Self::Error> {
        let parts = |parts: Vec<V1Part>| {
            parts
                .into_iter()
                .map(Part::try_from)
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Task {
            kind: "task".into(),
            id: task.id,
            context_id: task.context_id,
            status: TaskStatus {
                state: task.status.state.into(),
                message: task.status.message.map(Message::try_from).transpose()?,
                timestamp: task.status.timestamp,
            },
            artifacts: task
                .artifacts
                .into_iter()
                .map(|a| {
                    Ok(Artifact {
                        artifact_id: a.artifact_id,
                        name: a.name,
                        parts: parts(a.parts)?,
                    })
                })
                .collect::<Result<Vec<_>, ConversionError>>()?,
            history: task
                .history
                .into_iter()
                .map(Message::try_from)
                .collect::<Result<Vec<_>, _>>()?,
            metadata: task.metadata,
        })
    }
}

/// A task's status change in 1.0 form: 1.0 has no `final`; a stream ends after the event of a
/// terminal state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// The task's context.
    pub context_id: String,
    /// The new status.
    pub status: V1TaskStatus,
}

/// An artifact or a chunk of one, in 1.0 form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct V1TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// The task's context.
    pub context_id: String,
    /// The artifact or its next chunk.
    pub artifact: V1Artifact,
    /// Whether the parts extend the artifact of the same id sent before.
    pub append: bool,
    /// Whether this is the artifact's last chunk.
    pub last_chunk: bool,
}

/// One result of `SendStreamingMessage` or `SubscribeToTask`: the member's name says what it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum V1StreamResponse {
    /// The task as it stands.
    Task(V1Task),
    /// A status change.
    StatusUpdate(V1TaskStatusUpdateEvent),
    /// An artifact or a chunk of one.
    ArtifactUpdate(V1TaskArtifactUpdateEvent),
}

impl From<StreamEvent> for V1StreamResponse {
    fn from(event: StreamEvent) -> Self {
        match event {
            StreamEvent::Task(task) => V1StreamResponse::Task(task.into()),
            StreamEvent::Status(event) => V1StreamResponse::StatusUpdate(V1TaskStatusUpdateEvent {
                task_id: event.task_id,
                context_id: event.context_id,
                status: event.status.into(),
            }),
            StreamEvent::Artifact(event) => {
                V1StreamResponse::ArtifactUpdate(V1TaskArtifactUpdateEvent {
                    task_id: event.task_id,
                    context_id: event.context_id,
                    artifact: event.artifact.into(),
                    append: event.append,
                    last_chunk: event.last_chunk,
                })
            }
        }
    }
}

/// Params of `SendMessage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessageRequest {
    /// A tenant path segment; this server has one tenant and ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The user's message.
    pub message: V1Message,
    /// `returnImmediately` and `taskPushNotificationConfig` are read by the server; the rest
    /// is accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<Value>,
    /// Request metadata, accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl TryFrom<SendMessageRequest> for MessageSendParams {
    type Error = ConversionError;

    fn try_from(request: SendMessageRequest) -> Result<Self, Self::Error> {
        Ok(MessageSendParams {
            message: Message::try_from(request.message)?,
            configuration: request.configuration,
            metadata: request.metadata,
        })
    }
}

/// Params of `GetTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Ignored (one tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// Keep only the last N history messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "history_length")]
    pub history_length: Option<u64>,
}

impl From<GetTaskRequest> for TaskQueryParams {
    fn from(request: GetTaskRequest) -> Self {
        TaskQueryParams {
            id: request.id,
            history_length: request.history_length,
            metadata: None,
        }
    }
}

/// Params of `CancelTask`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelTaskRequest {
    /// Ignored (one tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl From<CancelTaskRequest> for TaskIdParams {
    fn from(request: CancelTaskRequest) -> Self {
        TaskIdParams {
            id: request.id,
            metadata: request.metadata,
        }
    }
}

/// Params of `ListTasks`: the caller's tasks, filtered, a page at a time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Ignored (one tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Only tasks of this context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state (`TASK_STATE_UNSPECIFIED`: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<V1TaskState>,
    /// Tasks per page, 1 to 100 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "page_size")]
    pub page_size: Option<u32>,
    /// The previous page's `nextPageToken`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "page_token")]
    pub page_token: Option<String>,
    /// Keep only the last N history messages of each task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "history_length")]
    pub history_length: Option<u64>,
    /// Only tasks whose status changed at or after this RFC 3339 instant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "status_timestamp_after")]
    pub status_timestamp_after: Option<String>,
    /// Whether tasks carry their artifacts (default: no).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(alias = "include_artifacts")]
    pub include_artifacts: Option<bool>,
}

/// The result of `ListTasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page's tasks, newest status first.
    pub tasks: Vec<V1Task>,
    /// The token of the next page; empty on the last page.
    pub next_page_token: String,
    /// How many tasks this page holds.
    pub page_size: u32,
    /// How many tasks match, over all pages.
    pub total_size: u32,
}

/// The result of `SendMessage`: a task (this server never answers with a bare message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendMessageResponse {
    /// The finished task.
    pub task: V1Task,
}

/// The `error.data` of a 1.0 error: one `google.rpc.ErrorInfo` whose `reason` machines switch
/// on. `metadata` is a map of strings, as `ErrorInfo` defines it.
pub fn error_info(reason: &str, metadata: &Map<String, Value>) -> Value {
    let metadata: Map<String, Value> = metadata
        .iter()
        .map(|(key, value)| {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Array(items) => items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
                other => other.to_string(),
            };
            (key.clone(), Value::String(text))
        })
        .collect();
    let mut info = json!({"@type": ERROR_INFO_TYPE, "reason": reason, "domain": ERROR_DOMAIN});
    if !metadata.is_empty()
        && let Value::Object(object) = &mut info
    {
        object.insert("metadata".into(), Value::Object(metadata));
    }
    Value::Array(vec![info])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored_task() -> Task {
        serde_json::from_value(json!({"kind":"task","id":"t1","contextId":"c1",
            "status":{"state":"completed","timestamp":"2026-11-30T12:00:00.000Z"},
            "artifacts":[{"artifactId":"a1","name":"saints","parts":[
                {"kind":"text","text":"Saint Andrew"},{"kind":"data","data":{"date":"2026-11-30"}}]}],
            "history":[
                {"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"today"}],"taskId":"t1","contextId":"c1"},
                {"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"text","text":"Saint Andrew"}],"taskId":"t1","contextId":"c1"}],
            "metadata":{"skillId":"saints_of_the_day"}}))
        .unwrap()
    }

    #[test]
    fn requests_read_proto_field_names_too() {
        let send: SendMessageRequest = serde_json::from_value(json!({"message": {
            "message_id": "m1", "context_id": "c1", "task_id": "t1", "role": "ROLE_USER",
            "reference_task_ids": ["t0"],
            "parts": [{"data": {"snake_case": 1}, "media_type": "application/json"}],
            "metadata": {"skill_id": "kept as sent"}}}))
        .unwrap();
        assert_eq!(send.message.message_id, "m1");
        assert_eq!(send.message.context_id.as_deref(), Some("c1"));
        assert_eq!(send.message.task_id.as_deref(), Some("t1"));
        assert_eq!(send.message.reference_task_ids, Some(vec!["t0".into()]));
        assert_eq!(
            send.message.parts[0].media_type.as_deref(),
            Some("application/json")
        );
        let metadata = send.message.metadata.as_ref().unwrap();
        assert!(
            metadata.contains_key("skill_id"),
            "a Struct's keys are data"
        );
        let list: ListTasksRequest = serde_json::from_value(json!({
            "context_id": "c1", "page_size": 5, "page_token": "p", "history_length": 2,
            "status_timestamp_after": "2026-11-30T00:00:00Z", "include_artifacts": true}))
        .unwrap();
        assert_eq!(list.context_id.as_deref(), Some("c1"));
        assert_eq!(list.page_size, Some(5));
        assert_eq!(list.page_token.as_deref(), Some("p"));
        assert_eq!(list.history_length, Some(2));
        assert!(list.status_timestamp_after.is_some());
        assert_eq!(list.include_artifacts, Some(true));
        let get: GetTaskRequest =
            serde_json::from_value(json!({"id": "t1", "history_length": 0})).unwrap();
        assert_eq!(get.history_length, Some(0));
        let answer = serde_json::to_value(&list).unwrap();
        assert!(answer.get("pageSize").is_some() && answer.get("page_size").is_none());
    }

    #[test]
    fn stream_events_are_wrapped_by_what_they_are() {
        let task = stored_task();
        let status =
            crate::event::TaskStatusUpdateEvent::new("t1", "c1", task.status.clone(), true);
        let v1 = serde_json::to_value(V1StreamResponse::from(StreamEvent::Status(status))).unwrap();
        assert_eq!(
            v1,
            json!({"statusUpdate": {"taskId": "t1", "contextId": "c1", "status":
                {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-11-30T12:00:00.000Z"}}})
        );
        let chunk = crate::event::TaskArtifactUpdateEvent::new(
            "t1",
            "c1",
            task.artifacts[0].clone(),
            true,
            false,
        );
        let v1 =
            serde_json::to_value(V1StreamResponse::from(StreamEvent::Artifact(chunk))).unwrap();
        assert_eq!(v1["artifactUpdate"]["append"], true);
        assert_eq!(v1["artifactUpdate"]["lastChunk"], false);
        assert_eq!(
            v1["artifactUpdate"]["artifact"]["parts"][0]["text"],
            "Saint Andrew"
        );
        let v1 = serde_json::to_value(V1StreamResponse::from(StreamEvent::Task(task))).unwrap();
        assert_eq!(v1["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(v1["task"].get("kind").is_none());
    }

    #[test]
    fn task_has_no_kind_and_uses_enum_spellings() {
        let v1 = serde_json::to_value(V1Task::from(stored_task())).unwrap();
        assert!(v1.get("kind").is_none());
        assert_eq!(v1["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(v1["history"][0]["role"], "ROLE_USER");
        assert_eq!(v1["history"][1]["role"], "ROLE_AGENT");
        assert_eq!(
            v1["artifacts"][0]["parts"][0],
            json!({"text": "Saint Andrew"})
        );
        assert_eq!(
            v1["artifacts"][0]["parts"][1],
            json!({"data": {"date": "2026-11-30"}})
        );
        assert!(v1["history"][0].get("kind").is_none());
    }

    #[test]
    fn task_round_trips_through_both_wires() {
        let task = stored_task();
        let back = Task::try_from(V1Task::from(task.clone())).unwrap();
        assert_eq!(back, task);
    }

    #[test]
    fn parts_without_kind_become_0_3_parts() {
        let message: V1Message = serde_json::from_value(json!({"messageId":"m","role":"ROLE_USER",
            "parts":[{"text":"hi","futureField":1},{"data":{"date":"2026-12-08"}},{"url":"https://x/y.pdf","mediaType":"application/pdf"}]}))
        .unwrap();
        let message = Message::try_from(message).unwrap();
        assert_eq!(message.kind, "message");
        assert_eq!(message.role, Role::User);
        assert_eq!(message.parts[0], Part::text("hi"));
        assert!(
            matches!(&message.parts[1], Part::Data { data, .. } if data["date"] == "2026-12-08")
        );
        match &message.parts[2] {
            Part::File { file, .. } => {
                assert_eq!(file["uri"], "https://x/y.pdf");
                assert_eq!(file["mimeType"], "application/pdf");
            }
            other => panic!("expected a file part, got {other:?}"),
        }
    }

    #[test]
    fn malformed_parts_and_roles_are_refused() {
        let empty = Part::try_from(V1Part::default()).unwrap_err();
        assert!(empty.0.contains("exactly one"));
        let two = V1Part {
            text: Some("a".into()),
            data: Some(json!({})),
            ..V1Part::default()
        };
        assert!(Part::try_from(two).is_err());
        let scalar = V1Part {
            data: Some(json!(3)),
            ..V1Part::default()
        };
        assert!(Part::try_from(scalar).unwrap_err().0.contains("object"));
        let unspecified = V1Message {
            message_id: "m".into(),
            context_id: None,
            task_id: None,
            role: V1Role::Unspecified,
            parts: vec![],
            metadata: None,
            extensions: None,
            reference_task_ids: None,
        };
        assert!(Message::try_from(unspecified).is_err());
        assert!(serde_json::from_value::<V1Role>(json!("user")).is_err());
    }

    #[test]
    fn request_params_convert() {
        let get: GetTaskRequest =
            serde_json::from_value(json!({"id":"t","historyLength":2,"tenant":""})).unwrap();
        let get = TaskQueryParams::from(get);
        assert_eq!((get.id.as_str(), get.history_length), ("t", Some(2)));
        let cancel: CancelTaskRequest = serde_json::from_value(json!({"id":"t"})).unwrap();
        assert_eq!(TaskIdParams::from(cancel).id, "t");
        let send: SendMessageRequest = serde_json::from_value(json!({"message":{"messageId":"m",
            "role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":{"skillId":"catholic_qa"}},
            "configuration":{"returnImmediately":false}}))
        .unwrap();
        let send = MessageSendParams::try_from(send).unwrap();
        assert_eq!(send.message.skill_id(), Some("catholic_qa"));
    }

    #[test]
    fn error_info_metadata_is_strings() {
        let mut metadata = Map::new();
        metadata.insert("availableSkills".into(), json!(["a", "b"]));
        metadata.insert("retryAfter".into(), json!(7));
        let data = error_info("SKILL_NOT_FOUND", &metadata);
        assert_eq!(data[0]["@type"], ERROR_INFO_TYPE);
        assert_eq!(data[0]["domain"], ERROR_DOMAIN);
        assert_eq!(data[0]["reason"], "SKILL_NOT_FOUND");
        assert_eq!(data[0]["metadata"]["availableSkills"], "a,b");
        assert_eq!(data[0]["metadata"]["retryAfter"], "7");
        assert!(
            error_info("TASK_NOT_FOUND", &Map::new())[0]
                .get("metadata")
                .is_none()
        );
    }
}
