//! Messages, parts, tasks and artifacts (A2A 0.3, the `kind`-tagged JSON-RPC forms).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The calling client.
    User,
    /// This server.
    Agent,
}

/// One piece of a message or artifact. Unknown fields are ignored, as A2A allows extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Part {
    /// Natural-language text.
    Text {
        /// The text.
        text: String,
        /// Optional part metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// Structured input or output.
    Data {
        /// The structured value; always an object.
        data: Map<String, Value>,
        /// Optional part metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
    /// A file; accepted by the wire format, refused by every skill of this server.
    File {
        /// The file object (`bytes` or `uri`), kept opaque.
        file: Value,
        /// Optional part metadata.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        metadata: Option<Map<String, Value>>,
    },
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text {
            text: text.into(),
            metadata: None,
        }
    }

    /// A data part.
    pub fn data(data: Map<String, Value>) -> Self {
        Part::Data {
            data,
            metadata: None,
        }
    }
}

/// A message from the user or the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Always `"message"`.
    pub kind: String,
    /// The client's id for this message; it names one message (idempotency key).
    pub message_id: String,
    /// `user` for requests, `agent` for this server's replies.
    pub role: Role,
    /// At least one part.
    pub parts: Vec<Part>,
    /// The task this message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The conversation this message belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Other tasks the client refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<String>>,
    /// Extension URIs the message uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Free-form metadata; `skillId` selects the skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Message {
    /// An agent message with one text part.
    pub fn agent_text(message_id: String, text: impl Into<String>) -> Self {
        Message {
            kind: "message".into(),
            message_id,
            role: Role::Agent,
            parts: vec![Part::text(text)],
            task_id: None,
            context_id: None,
            reference_task_ids: None,
            extensions: None,
            metadata: None,
        }
    }

    /// The `metadata.skillId` value, if it is a string.
    pub fn skill_id(&self) -> Option<&str> {
        self.metadata.as_ref()?.get("skillId")?.as_str()
    }

    /// The text of all text parts, joined with blank lines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n\n")
    }
}

/// The lifecycle state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    /// Received, not started: the first state of a task that runs after the call returns.
    Submitted,
    /// Running.
    Working,
    /// Waiting for the user (never produced by this server).
    InputRequired,
    /// Finished with artifacts.
    Completed,
    /// Canceled by the client.
    Canceled,
    /// The skill could not do the work; `status.message` says why.
    Failed,
    /// Refused by the agent (never produced by this server).
    Rejected,
    /// Needs authentication (never produced by this server).
    AuthRequired,
    /// Unknown.
    Unknown,
}

impl TaskState {
    /// Whether no further transition is possible.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Canceled | TaskState::Failed | TaskState::Rejected
        )
    }

    /// The wire name, e.g. `completed`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Submitted => "submitted",
            TaskState::Working => "working",
            TaskState::InputRequired => "input-required",
            TaskState::Completed => "completed",
            TaskState::Canceled => "canceled",
            TaskState::Failed => "failed",
            TaskState::Rejected => "rejected",
            TaskState::AuthRequired => "auth-required",
            TaskState::Unknown => "unknown",
        }
    }
}

/// The state of a task at a moment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// An agent message; set on `failed` with the reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// RFC 3339 UTC with milliseconds, e.g. `2026-11-30T12:00:00.000Z`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// A fresh UUID per artifact.
    pub artifact_id: String,
    /// The skill's artifact name, e.g. `saints`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A text part first, then a data part.
    pub parts: Vec<Part>,
}

/// A unit of work: terminal once stored; `submitted` or `working` while it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Always `"task"`.
    pub kind: String,
    /// The task id (UUID).
    pub id: String,
    /// The conversation id (the caller's, or a UUID made by the server).
    pub context_id: String,
    /// The current status.
    pub status: TaskStatus,
    /// The outputs; empty on a failed task.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    /// User and agent messages in order; always present.
    #[serde(default)]
    pub history: Vec<Message>,
    /// `{"skillId": …}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

impl Task {
    /// The skill that produced this task.
    pub fn skill_id(&self) -> Option<&str> {
        self.metadata.as_ref()?.get("skillId")?.as_str()
    }

    /// Keeps only the last `length` history messages.
    pub fn trim_history(&mut self, length: usize) {
        let len = self.history.len();
        if length < len {
            self.history.drain(..len - length);
        }
    }
}

/// Params of `message/send`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageSendParams {
    /// The user's message.
    pub message: Message,
    /// `blocking` and `pushNotificationConfig` are read by the server; the rest is accepted
    /// and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<Value>,
    /// Request metadata, accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Params of `tasks/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskQueryParams {
    /// The task id.
    pub id: String,
    /// Keep only the last N history messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<u64>,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// Params of `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskIdParams {
    /// The task id.
    pub id: String,
    /// Accepted and ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn message_round_trips_and_ignores_unknown_fields() {
        let v = json!({"kind":"message","messageId":"m1","role":"user","futureField":1,
            "parts":[{"kind":"text","text":"hi","x":2},{"kind":"data","data":{"date":"2026-12-08"}}],
            "metadata":{"skillId":"saints_of_the_day"}});
        let m: Message = serde_json::from_value(v).unwrap();
        assert_eq!(m.skill_id(), Some("saints_of_the_day"));
        assert_eq!(m.text(), "hi");
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["parts"][1]["data"]["date"], "2026-12-08");
        assert!(back.get("futureField").is_none());
    }

    #[test]
    fn task_state_wire_names() {
        assert_eq!(
            serde_json::to_string(&TaskState::InputRequired).unwrap(),
            "\"input-required\""
        );
        assert!(TaskState::Failed.is_terminal());
        assert!(!TaskState::Working.is_terminal());
    }

    #[test]
    fn trim_history_keeps_the_tail() {
        let mut t = Task {
            kind: "task".into(),
            id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: None,
                timestamp: None,
            },
            artifacts: vec![],
            history: (0..5)
                .map(|i| Message::agent_text(i.to_string(), "x"))
                .collect(),
            metadata: None,
        };
        t.trim_history(2);
        assert_eq!(t.history.len(), 2);
        assert_eq!(t.history[0].message_id, "3");
        t.trim_history(0);
        assert!(t.history.is_empty());
    }
}
