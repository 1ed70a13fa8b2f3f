//! The A2A 1.0 JSON-RPC wire beside 0.3 on the same endpoint, as conversions only: a 1.0
//! request into the service's typed request, and the service's answer (a task kept in its 0.3
//! form) into the 1.0 result, so that one store and one registry serve both wires. Which method
//! is which lives in the method table (`dispatch`); the 1.0 errors in `error::v1`.

use a2a_types::v1::{
    CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, SendMessageRequest,
    SendMessageResponse, V1Role, V1Task, V1TaskState,
};
use a2a_types::v1_push::{
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    V1TaskPushNotificationConfig,
};
use a2a_types::{MessageSendParams, PushNotificationConfig, TaskPushNotificationConfig, TaskState};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::bindings::jsonrpc::params::parse_member;
use crate::error::ApiError;
use crate::service::listing::{DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageCursor, TaskPage, TaskQuery};
use crate::service::{
    CancelRequest, ConfigPage, FinishedTask, GetRequest, ListPushConfigsRequest, ListRequest,
    Reply, SendRequest, SetPushConfigRequest, validate_user_message,
};
use crate::store::decode_task;
use crate::wire::Version;

/// `SendMessage` in the service's terms: a user message (`-32602` otherwise, `-32005` for file
/// parts); a message for a finished task is refused, as 1.0 takes none. With `push` offered,
/// `configuration.taskPushNotificationConfig` (or the release candidates'
/// `pushNotificationConfig`) is the new task's push config; without, it is ignored.
pub fn send_request(request: SendMessageRequest, push: bool) -> Result<SendRequest, ApiError> {
    if request.message.role != V1Role::User {
        return Err(ApiError::InvalidParams(
            "message.role must be ROLE_USER".into(),
        ));
    }
    let params =
        MessageSendParams::try_from(request).map_err(|e| ApiError::InvalidParams(e.to_string()))?;
    validate_user_message(&params.message)?;
    let return_immediately = params
        .configuration
        .as_ref()
        .and_then(|c| member(c, "returnImmediately", "return_immediately"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let push = if push {
        params
            .configuration
            .as_ref()
            .map(inline_push_config)
            .transpose()?
            .flatten()
    } else {
        None
    };
    Ok(SendRequest {
        params,
        finished: FinishedTask::Refuse,
        simulation: None,
        language: None,
        default_skill: None,
        blocking: !return_immediately,
        push,
        wire: Version::V1,
    })
}

/// The push config inline in a 1.0 send's `configuration`: the flat
/// `taskPushNotificationConfig` of 1.0 (its `taskId` ignored: the task is the one the send
/// starts), else the release candidates' `pushNotificationConfig`.
fn inline_push_config(
    configuration: &serde_json::Value,
) -> Result<Option<PushNotificationConfig>, ApiError> {
    if let Some(config) = member(
        configuration,
        "taskPushNotificationConfig",
        "task_push_notification_config",
    ) {
        let config: V1TaskPushNotificationConfig =
            parse_member(config, "configuration.taskPushNotificationConfig")?;
        return Ok(Some(config.into_config()));
    }
    member(
        configuration,
        "pushNotificationConfig",
        "push_notification_config",
    )
    .map(|config| parse_member(config, "configuration.pushNotificationConfig"))
    .transpose()
}

/// A member of a ProtoJSON object by its camelCase name or its proto name, when set.
fn member<'a>(
    object: &'a serde_json::Value,
    camel: &str,
    proto: &str,
) -> Option<&'a serde_json::Value> {
    [camel, proto]
        .into_iter()
        .find_map(|name| object.get(name))
        .filter(|value| !value.is_null())
}

/// `CreateTaskPushNotificationConfig` in the service's terms: the flat config names its task.
pub fn set_push_request(
    config: V1TaskPushNotificationConfig,
) -> Result<SetPushConfigRequest, ApiError> {
    if config.task_id.is_empty() {
        return Err(ApiError::InvalidParams(
            "taskId is required: the task the config is for".into(),
        ));
    }
    Ok(SetPushConfigRequest {
        task_id: config.task_id.clone(),
        config: config.into_config(),
        wire: Version::V1,
    })
}

/// `ListTaskPushNotificationConfigs` in the service's terms: a page of at most `pageSize`
/// configs (all when absent or 0) after the one the `pageToken` names.
pub fn list_push_request(
    request: ListTaskPushNotificationConfigsRequest,
) -> ListPushConfigsRequest {
    ListPushConfigsRequest {
        task_id: request.task_id,
        page: ConfigPage {
            size: request
                .page_size
                .and_then(|size| usize::try_from(size).ok())
                .filter(|size| *size > 0),
            after: request.page_token.filter(|token| !token.is_empty()),
        },
    }
}

/// The answer to `ListTaskPushNotificationConfigs`: the page and the token of the next.
pub fn push_configs_reply(
    configs: Vec<TaskPushNotificationConfig>,
    next: Option<String>,
) -> Result<Reply, ApiError> {
    let response = ListTaskPushNotificationConfigsResponse {
        configs: configs
            .into_iter()
            .map(V1TaskPushNotificationConfig::from)
            .collect(),
        next_page_token: next.unwrap_or_default(),
    };
    Ok(Reply::result(to_json(&response)?))
}

/// `GetTask` in the service's terms.
pub fn get_request(request: GetTaskRequest) -> GetRequest {
    GetRequest {
        id: request.id,
        history_length: request.history_length,
    }
}

/// `CancelTask` in the service's terms.
pub fn cancel_request(request: CancelTaskRequest) -> CancelRequest {
    CancelRequest { id: request.id }
}

/// `ListTasks` in the service's terms, its bounds checked.
pub fn list_request(request: ListTasksRequest) -> Result<ListRequest, ApiError> {
    Ok(ListRequest {
        include_artifacts: request.include_artifacts.unwrap_or(false),
        query: task_query(request)?,
    })
}

/// The answer to `SendMessage`: the task, wrapped.
pub fn send_reply(reply: Reply) -> Result<Reply, ApiError> {
    let task = v1_task(&reply.result)?;
    Ok(Reply {
        result: to_json(&SendMessageResponse { task })?,
        ..reply
    })
}

/// The answer to `GetTask` and `CancelTask`: the stored task in 1.0 terms.
pub fn task_reply(stored: &[u8]) -> Result<Reply, ApiError> {
    Ok(Reply::result(to_json(&v1_task(stored)?)?))
}

/// The answer to `ListTasks`.
pub fn list_reply(page: TaskPage) -> Result<Reply, ApiError> {
    let tasks: Vec<V1Task> = page.tasks.into_iter().map(V1Task::from).collect();
    let response = ListTasksResponse {
        page_size: u32::try_from(tasks.len()).unwrap_or(u32::MAX),
        tasks,
        next_page_token: page.next.map(|cursor| cursor.token()).unwrap_or_default(),
        total_size: u32::try_from(page.total).unwrap_or(u32::MAX),
    };
    Ok(Reply::result(to_json(&response)?))
}

/// The service's query for a `ListTasks` request, its bounds checked.
fn task_query(request: ListTasksRequest) -> Result<TaskQuery, ApiError> {
    let invalid = |why: String| Err(ApiError::InvalidParams(why));
    let page_size = request.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return invalid(format!(
            "pageSize must be between 1 and {MAX_PAGE_SIZE}, not {page_size}"
        ));
    }
    let after = match request.page_token.as_deref() {
        None | Some("") => None,
        Some(token) => match PageCursor::from_token(token) {
            Some(cursor) => Some(cursor),
            None => {
                return invalid(
                    "pageToken is not a token this server gave; send the nextPageToken of the previous page".into(),
                );
            }
        },
    };
    let since = match request.status_timestamp_after.as_deref() {
        None => None,
        Some(text) => match DateTime::parse_from_rfc3339(text) {
            Ok(instant) => Some(instant.with_timezone(&Utc)),
            Err(_) => {
                return invalid(format!(
                    "statusTimestampAfter must be an RFC 3339 timestamp such as 2026-12-01T10:00:00Z, not `{text}`"
                ));
            }
        },
    };
    Ok(TaskQuery {
        context_id: request.context_id.filter(|context| !context.is_empty()),
        state: request
            .status
            .filter(|state| *state != V1TaskState::TaskStateUnspecified)
            .map(TaskState::from),
        since,
        page_size,
        after,
        history_length: request.history_length,
    })
}

fn v1_task(result: &[u8]) -> Result<V1Task, ApiError> {
    Ok(V1Task::from(decode_task(result)?))
}

fn to_json<T: Serialize>(value: &T) -> Result<Bytes, ApiError> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ApiError::Internal(e.to_string()))
}
