//! The events of a streamed task (A2A 0.3): what `message/stream` and `tasks/resubscribe` send
//! after the task itself, one JSON-RPC response each.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::task::{Artifact, Task, TaskStatus};

/// One event of a stream, as the 0.3 wire carries it in `result`: the task first, then its
/// status and artifact updates.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The task as it stands (the stream's first event).
    Task(Task),
    /// A status change.
    Status(TaskStatusUpdateEvent),
    /// An artifact or a chunk of one.
    Artifact(TaskArtifactUpdateEvent),
}

impl StreamEvent {
    /// Reads an event's JSON by its `kind`.
    pub fn from_json(json: &[u8]) -> Result<Self, serde_json::Error> {
        let value: Value = serde_json::from_slice(json)?;
        match value.get("kind").and_then(Value::as_str) {
            Some("status-update") => serde_json::from_value(value).map(StreamEvent::Status),
            Some("artifact-update") => serde_json::from_value(value).map(StreamEvent::Artifact),
            _ => serde_json::from_value(value).map(StreamEvent::Task),
        }
    }

    /// Whether the stream ends with this event.
    pub fn is_final(&self) -> bool {
        matches!(self, StreamEvent::Status(event) if event.is_final)
    }
}

/// A change of a task's status. The last event of every stream is one with `final: true`,
/// carrying the terminal state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// Always `"status-update"`.
    pub kind: String,
    /// The task.
    pub task_id: String,
    /// The task's context.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// Whether this is the stream's last event.
    #[serde(rename = "final")]
    pub is_final: bool,
}

impl TaskStatusUpdateEvent {
    /// The event of a task moving to `status`.
    pub fn new(task_id: &str, context_id: &str, status: TaskStatus, is_final: bool) -> Self {
        TaskStatusUpdateEvent {
            kind: "status-update".into(),
            task_id: task_id.to_string(),
            context_id: context_id.to_string(),
            status,
            is_final,
        }
    }
}

/// An artifact, whole or a chunk of it: with `append` the parts extend the artifact of the same
/// id sent before; `lastChunk` marks its last piece.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// Always `"artifact-update"`.
    pub kind: String,
    /// The task.
    pub task_id: String,
    /// The task's context.
    pub context_id: String,
    /// The artifact or its next chunk.
    pub artifact: Artifact,
    /// Whether the parts extend an artifact sent before.
    pub append: bool,
    /// Whether this is the artifact's last chunk.
    pub last_chunk: bool,
}

impl TaskArtifactUpdateEvent {
    /// The event carrying `artifact` (or a chunk of it).
    pub fn new(
        task_id: &str,
        context_id: &str,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Self {
        TaskArtifactUpdateEvent {
            kind: "artifact-update".into(),
            task_id: task_id.to_string(),
            context_id: context_id.to_string(),
            artifact,
            append,
            last_chunk,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::{Part, TaskState};
    use serde_json::json;

    #[test]
    fn events_are_read_back_by_kind() {
        let status = TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: None,
        };
        let event = TaskStatusUpdateEvent::new("t", "c", status, false);
        let json = serde_json::to_vec(&event).unwrap();
        assert_eq!(
            StreamEvent::from_json(&json).unwrap(),
            StreamEvent::Status(event)
        );
        let task = json!({"kind": "task", "id": "t", "contextId": "c",
                          "status": {"state": "submitted"}});
        let read = StreamEvent::from_json(task.to_string().as_bytes()).unwrap();
        assert!(matches!(read, StreamEvent::Task(ref t) if t.id == "t"));
        assert!(!read.is_final());
        assert!(StreamEvent::from_json(b"{\"kind\": \"status-update\"}").is_err());
    }

    #[test]
    fn events_have_the_0_3_field_names() {
        let status = TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some("2026-12-01T10:00:00.000Z".into()),
        };
        let event = TaskStatusUpdateEvent::new("t", "c", status, true);
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                   "status": {"state": "completed", "timestamp": "2026-12-01T10:00:00.000Z"},
                   "final": true})
        );
        let artifact = Artifact {
            artifact_id: "a".into(),
            name: None,
            parts: vec![Part::text("chunk")],
        };
        let event = TaskArtifactUpdateEvent::new("t", "c", artifact, true, false);
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"kind": "artifact-update", "taskId": "t", "contextId": "c",
                   "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "chunk"}]},
                   "append": true, "lastChunk": false})
        );
    }
}
