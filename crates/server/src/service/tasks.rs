//! What a message and a skill's outcome make of a task: the checks of a user message, its
//! idempotency key, the skill's view of the conversation, and the task a skill's outcome ends.

use serde_json::{Map, Value};
use skills::{SkillOutput, Speaker, Turn};
use uuid::Uuid;

use a2a_types::{Artifact, Message, MessageSendParams, Part, Role, Task, TaskState, TaskStatus};

use crate::error::ApiError;
use crate::store::{StoredTask, message_key_hash, now_timestamp};

use super::requests::{MAX_ID_CHARS, SentMessage};

/// The checks of a user message beyond its types: the params are valid once these pass.
pub fn validate_user_message(message: &Message) -> Result<(), ApiError> {
    let invalid = |why: &str| Err(ApiError::InvalidParams(why.to_string()));
    if message.kind != "message" {
        return invalid("message.kind must be \"message\"");
    }
    if message.role != Role::User {
        return invalid("message.role must be \"user\"");
    }
    if message.message_id.trim().is_empty() {
        return invalid("message.messageId must be a non-empty string");
    }
    for (field, value) in [
        ("messageId", Some(&message.message_id)),
        ("taskId", message.task_id.as_ref()),
        ("contextId", message.context_id.as_ref()),
    ] {
        if value.is_some_and(|id| id.chars().count() > MAX_ID_CHARS) {
            return invalid(&format!(
                "message.{field} is longer than the limit of {MAX_ID_CHARS} characters"
            ));
        }
    }
    if message.parts.is_empty() {
        return invalid("message.parts must hold at least one text or data part");
    }
    if message.parts.iter().any(|p| matches!(p, Part::File { .. })) {
        return Err(ApiError::ContentTypeNotSupported(
            "file parts are not supported; send text or data parts".into(),
        ));
    }
    Ok(())
}

/// Refuses a message for a task that is still running: its turn is not over.
pub(super) fn ended_already(task: &Task) -> Result<(), ApiError> {
    if task.status.state.is_terminal() {
        return Ok(());
    }
    Err(ApiError::InvalidParams(format!(
        "task `{}` is still {}; wait for it to end or cancel it before sending it another message",
        task.id,
        task.status.state.as_str()
    )))
}

/// The message a send carried, for the conformance kit.
pub(super) fn sent_message(params: &MessageSendParams) -> Result<SentMessage, ApiError> {
    Ok(SentMessage {
        message_id: params.message.message_id.clone(),
        content_hash: message_key(params)?,
    })
}

/// The idempotency key of a message: a hash of its content as the server understood it
/// (message, its id included, and configuration; unknown fields dropped), so that the same
/// message sent again is recognised and another message under a used id is one of its own.
pub(super) fn message_key(params: &MessageSendParams) -> Result<String, ApiError> {
    let content = serde_json::to_string(&(&params.message, &params.configuration))
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(message_key_hash(&content))
}

pub(super) fn merged_data(message: &Message) -> Map<String, Value> {
    let mut data = Map::new();
    for part in &message.parts {
        if let Part::Data { data: fields, .. } = part {
            data.extend(fields.clone());
        }
    }
    data
}

pub(super) fn turns(history: &[Message]) -> Vec<Turn> {
    history
        .iter()
        .map(|m| Turn {
            speaker: match m.role {
                Role::User => Speaker::User,
                Role::Agent => Speaker::Agent,
            },
            text: m.text(),
        })
        .collect()
}

pub(super) fn skill_metadata(skill_id: &str) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("skillId".into(), Value::String(skill_id.to_string()));
    metadata
}

/// A task its skill stored_ending, as it is stored, with its state (for the metrics).
pub(super) struct EndedTask {
    pub(super) task: StoredTask,
    pub(super) state: &'static str,
}

/// A `submitted` task ended with its skill's outcome, on either send path: the answer as the
/// artifact `artifact_id` (the one its chunks were streamed under, for a task that ran after
/// its call returned), the agent's reply in the history.
/// The terminal task a skill's outcome makes of `submitted`, as it is stored (both blocking
/// send paths).
pub(super) fn stored_ending(
    submitted: Task,
    outcome: Result<SkillOutput, String>,
) -> Result<EndedTask, ApiError> {
    let task = finish_task(submitted, &Uuid::new_v4().to_string(), outcome);
    Ok(EndedTask {
        task: StoredTask::of(&task)?,
        state: task.status.state.as_str(),
    })
}

pub(super) fn finish_task(
    mut task: Task,
    artifact_id: &str,
    outcome: Result<SkillOutput, String>,
) -> Task {
    let (state, reply, artifacts) = match outcome {
        Ok(output) => {
            let artifact = Artifact {
                artifact_id: artifact_id.to_string(),
                name: Some(output.artifact_name.to_string()),
                parts: vec![Part::text(output.text.clone()), Part::data(output.data)],
            };
            (TaskState::Completed, output.text, vec![artifact])
        }
        Err(reason) => (TaskState::Failed, reason, Vec::new()),
    };
    let mut agent = Message::agent_text(Uuid::new_v4().to_string(), reply);
    agent.task_id = Some(task.id.clone());
    agent.context_id = Some(task.context_id.clone());
    task.history.push(agent.clone());
    task.artifacts = artifacts;
    task.status = TaskStatus {
        state,
        message: (state == TaskState::Failed).then_some(agent),
        timestamp: Some(now_timestamp()),
    };
    task
}
