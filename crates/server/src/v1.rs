//! The A2A 1.0 JSON-RPC wire beside 0.3 on the same endpoint: which wire a request speaks, the
//! 1.0 methods over the same [`A2aService`] (so one store and one registry serve both), and the
//! mapping of every [`ApiError`] to a 1.0 error (code, `google.rpc.ErrorInfo` reason, HTTP status).
//!
//! The 0.3 wire keeps this project's documented codes; 1.0 clients get the 1.0 codes, so that
//! their SDKs raise the right error classes (`-32002` is "task not cancelable" there, never
//! "skill not found"). Conditions A2A does not define (unauthorized, plan required, rate limited)
//! (and a shed overload) use the implementation-defined JSON-RPC code `-32000`, outside the range
//! A2A reserves, and are told apart by the HTTP status and the `reason`.

use a2a_types::jsonrpc::ErrorObject;
use a2a_types::v1::{
    self, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse,
    SendMessageRequest, SendMessageResponse, V1Role, V1Task, V1TaskState,
};
use a2a_types::{MessageSendParams, TaskIdParams, TaskQueryParams, TaskState};
use axum::http::StatusCode;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::auth::Principal;
use crate::error::ApiError;
use crate::listing::{Cursor, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TaskQuery};
use crate::service::{
    A2aService, FinishedTask, Params, Reply, Simulation, parse_params, validate_user_message,
};
use crate::store::decode_task;

/// The request header that names the A2A version a client speaks (absent means 0.3).
pub const VERSION_HEADER: &str = "a2a-version";

/// The 1.0 methods this server implements.
pub const METHODS: [&str; 4] = ["SendMessage", "GetTask", "CancelTask", "ListTasks"];

/// 1.0 methods this synchronous server does not offer, with the 1.0 error each one gets.
const UNSUPPORTED_METHODS: [(&str, Unsupported); 9] = [
    ("SendStreamingMessage", Unsupported::Operation),
    ("SubscribeToTask", Unsupported::Operation),
    ("CreateTaskPushNotificationConfig", Unsupported::Push),
    ("GetTaskPushNotificationConfig", Unsupported::Push),
    ("ListTaskPushNotificationConfigs", Unsupported::Push),
    ("DeleteTaskPushNotificationConfig", Unsupported::Push),
    ("GetExtendedAgentCard", Unsupported::ExtendedCard),
    ("SetTaskPushNotificationConfig", Unsupported::Push),
    ("ListTaskPushNotificationConfig", Unsupported::Push),
];

#[derive(Debug, Clone, Copy)]
enum Unsupported {
    Operation,
    Push,
    ExtendedCard,
}

/// The 0.3 method names, which keep a request on the 0.3 wire whatever its header says.
const V03_METHODS: [&str; 9] = [
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
];

/// Which JSON-RPC wire a request speaks, and so how its answer (errors included) is spelt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wire {
    /// A2A 0.3 (`message/send`, `kind`-tagged objects, this project's error codes).
    V03,
    /// A2A 1.0 (`SendMessage`, no `kind`, wrapped results, `ErrorInfo` errors).
    V1,
    /// The `A2A-Version` header names a version this server does not speak; answered in 1.0
    /// terms with `VersionNotSupportedError`.
    Unsupported(String),
}

impl Wire {
    /// Chooses the wire. A method name of either version decides; otherwise (unknown methods,
    /// unreadable bodies, refusals before the body is read) the `A2A-Version` header does, a
    /// missing header meaning 0.3 as A2A 1.0 prescribes.
    pub fn select(version_header: Option<&str>, method: Option<&str>) -> Wire {
        let by_header = match version_header.map(str::trim) {
            None | Some("") => Wire::V03,
            Some(version) => match major_minor(version) {
                Some((0, _)) => Wire::V03,
                Some((1, 0)) => Wire::V1,
                _ => Wire::Unsupported(version.to_string()),
            },
        };
        if matches!(by_header, Wire::Unsupported(_)) {
            return by_header;
        }
        match method {
            Some(m) if is_v1_method(m) => Wire::V1,
            Some(m) if V03_METHODS.contains(&m) => Wire::V03,
            _ => by_header,
        }
    }

    /// Whether answers are spelt in 1.0 terms.
    pub fn is_v1(&self) -> bool {
        !matches!(self, Wire::V03)
    }

    /// The version a call was answered in, for the conformance kit's report.
    pub fn label(&self) -> &'static str {
        match self {
            Wire::V03 => "0.3",
            Wire::V1 => "1.0",
            Wire::Unsupported(_) => "unsupported",
        }
    }
}

fn is_v1_method(method: &str) -> bool {
    METHODS.contains(&method) || UNSUPPORTED_METHODS.iter().any(|(name, _)| *name == method)
}

fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = match parts.next() {
        Some(minor) => minor.trim().parse().ok()?,
        None => 0,
    };
    Some((major, minor))
}

/// A 1.0 call whose method exists and whose params are valid, in the service's terms.
enum V1Call {
    Send(MessageSendParams),
    Get(TaskQueryParams),
    Cancel(TaskIdParams),
    List {
        query: TaskQuery,
        include_artifacts: bool,
    },
}

impl V1Call {
    /// Reads a 1.0 method and its params: `-32601` for an unknown method, `-32602` for params
    /// that do not fit, `-32005` for file parts. Nothing runs.
    fn parse(method: &str, params: Params<'_>) -> Result<V1Call, ApiError> {
        match method {
            "SendMessage" => {
                let request: SendMessageRequest = parse_params(params)?;
                if request.message.role != V1Role::User {
                    return Err(ApiError::InvalidParams(
                        "message.role must be ROLE_USER".into(),
                    ));
                }
                let params = MessageSendParams::try_from(request)
                    .map_err(|e| ApiError::InvalidParams(e.to_string()))?;
                validate_user_message(&params.message)?;
                Ok(V1Call::Send(params))
            }
            "GetTask" => {
                let request: GetTaskRequest = parse_params(params)?;
                Ok(V1Call::Get(request.into()))
            }
            "CancelTask" => {
                let request: CancelTaskRequest = parse_params(params)?;
                Ok(V1Call::Cancel(request.into()))
            }
            "ListTasks" => {
                let request: ListTasksRequest = parse_params(params)?;
                Ok(V1Call::List {
                    include_artifacts: request.include_artifacts.unwrap_or(false),
                    query: task_query(request)?,
                })
            }
            other => Err(ApiError::MethodNotFound(other.to_string())),
        }
    }
}

/// Checks a 1.0 call without running it (a notification is checked this way before its
/// refusal): the error the call would get for its method or params, if any.
pub fn check(method: &str, params: Params<'_>) -> Result<(), ApiError> {
    V1Call::parse(method, params).map(drop)
}

/// Runs one 1.0 method over the service, which keeps tasks in their 0.3 form, and spells the
/// result in 1.0 terms. `simulation` is the conformance kit's override.
pub async fn call(
    service: &A2aService,
    principal: &Principal,
    method: &str,
    params: Params<'_>,
    simulation: Option<Simulation>,
) -> Result<Reply, ApiError> {
    match V1Call::parse(method, params)? {
        V1Call::Send(params) => {
            let reply = service
                .send(principal, params, FinishedTask::Refuse, simulation)
                .await?;
            let task = v1_task(&reply.result)?;
            Ok(Reply {
                result: to_json(&SendMessageResponse { task })?,
                ..reply
            })
        }
        V1Call::Get(params) => {
            let result = service
                .get_task(principal, &params.id, params.history_length)
                .await?;
            Ok(Reply {
                result: to_json(&v1_task(&result)?)?,
                rate: None,
                sent: None,
            })
        }
        V1Call::Cancel(params) => {
            let result = service.cancel_task(principal, &params.id).await?;
            Ok(Reply {
                result: to_json(&v1_task(&result)?)?,
                rate: None,
                sent: None,
            })
        }
        V1Call::List {
            query,
            include_artifacts,
        } => {
            let page = service.list_tasks(principal, &query).await?;
            let tasks: Vec<V1Task> = page
                .tasks
                .into_iter()
                .map(|task| {
                    let mut task = V1Task::from(task);
                    if !include_artifacts {
                        task.artifacts.clear();
                    }
                    task
                })
                .collect();
            let response = ListTasksResponse {
                page_size: u32::try_from(tasks.len()).unwrap_or(u32::MAX),
                tasks,
                next_page_token: page.next.map(|cursor| cursor.token()).unwrap_or_default(),
                total_size: u32::try_from(page.total).unwrap_or(u32::MAX),
            };
            Ok(Reply {
                result: to_json(&response)?,
                rate: None,
                sent: None,
            })
        }
    }
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
        Some(token) => match Cursor::from_token(token) {
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

/// The JSON-RPC code Magisterium-only refusals use on the 1.0 wire: implementation-defined,
/// outside the `-32001..-32099` range that A2A keeps for its own errors.
pub const SERVER_ERROR_CODE: i64 = -32000;

/// A 1.0 error: its code, reason and HTTP status, and the error object to send.
#[derive(Debug, Clone, PartialEq)]
pub struct V1Error {
    /// The HTTP status of the response.
    pub status: StatusCode,
    /// The `ErrorInfo` reason, also the metrics label.
    pub reason: &'static str,
    /// The JSON-RPC error object.
    pub object: ErrorObject,
}

/// The 1.0 form of a failure. `request_id` is attached to internal errors so an operator can
/// find the logged cause.
pub fn error(error: &ApiError, request_id: &str) -> V1Error {
    let mut metadata = Map::new();
    let (code, reason, status, message) = match error {
        ApiError::Parse(message) => (-32700, "PARSE_ERROR", StatusCode::OK, message.clone()),
        ApiError::InvalidRequest { message, status } => {
            (-32600, "INVALID_REQUEST", *status, message.clone())
        }
        ApiError::MethodNotFound(method) => {
            metadata.insert("method".into(), Value::String(method.clone()));
            match UNSUPPORTED_METHODS.iter().find(|(name, _)| name == method) {
                Some((_, Unsupported::Operation)) => (
                    -32004,
                    "UNSUPPORTED_OPERATION",
                    StatusCode::OK,
                    format!(
                        "This operation is not supported: {method}; SendMessage answers with a finished task, and nothing is streamed"
                    ),
                ),
                Some((_, Unsupported::Push)) => (
                    -32003,
                    "PUSH_NOTIFICATION_NOT_SUPPORTED",
                    StatusCode::OK,
                    format!("Push Notification is not supported: {method}"),
                ),
                Some((_, Unsupported::ExtendedCard)) => (
                    -32007,
                    "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                    StatusCode::OK,
                    "Extended agent card is not configured: the public card is complete".into(),
                ),
                None => (
                    -32601,
                    "METHOD_NOT_FOUND",
                    StatusCode::OK,
                    error.to_string(),
                ),
            }
        }
        ApiError::InvalidParams(_) => (-32602, "INVALID_PARAMS", StatusCode::OK, error.to_string()),
        ApiError::ContentTypeNotSupported(why) => (
            -32005,
            "CONTENT_TYPE_NOT_SUPPORTED",
            StatusCode::OK,
            format!("Incompatible content types: {why}"),
        ),
        ApiError::TaskFinished { task_id, state } => {
            metadata.insert("taskId".into(), Value::String(task_id.clone()));
            metadata.insert("state".into(), Value::String((*state).into()));
            (
                -32004,
                "UNSUPPORTED_OPERATION",
                StatusCode::OK,
                format!("This operation is not supported: {error}"),
            )
        }
        ApiError::InvalidStateTransition(state) => {
            metadata.insert("state".into(), Value::String((*state).into()));
            (
                -32002,
                "TASK_NOT_CANCELABLE",
                StatusCode::OK,
                format!("Task cannot be canceled: the task is already {state}"),
            )
        }
        ApiError::TaskNotFound(id) => {
            metadata.insert("taskId".into(), Value::String(id.clone()));
            (-32001, "TASK_NOT_FOUND", StatusCode::OK, error.to_string())
        }
        ApiError::SkillNotFound {
            requested,
            available,
        } => {
            metadata.insert("skillId".into(), Value::String(requested.clone()));
            metadata.insert("availableSkills".into(), Value::from(available.clone()));
            (
                -32602,
                "SKILL_NOT_FOUND",
                StatusCode::OK,
                format!(
                    "Invalid params: skill not found: {requested}; available skills: {}",
                    available.join(", ")
                ),
            )
        }
        ApiError::RateLimited {
            retry_after_secs,
            bucket,
            ..
        } => {
            metadata.insert("retryAfter".into(), Value::from(*retry_after_secs));
            metadata.insert("bucket".into(), Value::String((*bucket).into()));
            (
                SERVER_ERROR_CODE,
                "RATE_LIMITED",
                StatusCode::TOO_MANY_REQUESTS,
                error.to_string(),
            )
        }
        ApiError::Overloaded { retry_after_secs } => {
            metadata.insert("retryAfter".into(), Value::from(*retry_after_secs));
            (
                SERVER_ERROR_CODE,
                "OVERLOADED",
                StatusCode::SERVICE_UNAVAILABLE,
                error.to_string(),
            )
        }
        ApiError::Unauthorized(reason) => (
            SERVER_ERROR_CODE,
            "UNAUTHORIZED",
            StatusCode::UNAUTHORIZED,
            format!("Unauthorized: {reason}"),
        ),
        ApiError::PlanRequired => (
            SERVER_ERROR_CODE,
            "PLAN_REQUIRED",
            StatusCode::FORBIDDEN,
            format!("Paid plan required: {error}"),
        ),
        ApiError::Internal(_) => {
            metadata.insert("requestId".into(), Value::String(request_id.into()));
            (
                -32603,
                "INTERNAL_ERROR",
                StatusCode::OK,
                "Internal error: an unexpected fault occurred; it has been logged".into(),
            )
        }
    };
    V1Error {
        status,
        reason,
        object: ErrorObject {
            code,
            message,
            data: Some(v1::error_info(reason, &metadata)),
        },
    }
}

/// The answer to a request whose `A2A-Version` this server does not speak.
pub fn version_not_supported(version: &str) -> V1Error {
    let mut metadata = Map::new();
    metadata.insert("requestedVersion".into(), Value::String(version.into()));
    metadata.insert(
        "supportedVersions".into(),
        Value::String(format!("0.3,{}", v1::PROTOCOL_VERSION)),
    );
    let reason = "VERSION_NOT_SUPPORTED";
    V1Error {
        status: StatusCode::OK,
        reason,
        object: ErrorObject {
            code: -32009,
            message: format!(
                "Version not supported: A2A-Version `{version}`; this server speaks 0.3 and 1.0"
            ),
            data: Some(v1::error_info(reason, &metadata)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthError;

    #[test]
    fn wire_follows_the_method_then_the_header() {
        assert_eq!(Wire::select(None, Some("SendMessage")), Wire::V1);
        assert_eq!(Wire::select(Some("0.3"), Some("GetTask")), Wire::V1);
        assert_eq!(Wire::select(Some("1.0"), Some("message/send")), Wire::V03);
        assert_eq!(Wire::select(None, Some("nope")), Wire::V03);
        assert_eq!(Wire::select(Some("1.0"), Some("nope")), Wire::V1);
        assert_eq!(Wire::select(Some("1.0.1"), None), Wire::V1);
        assert_eq!(Wire::select(Some(" 0.3 "), None), Wire::V03);
        assert_eq!(Wire::select(Some(""), None), Wire::V03);
        assert_eq!(
            Wire::select(Some("2.0"), Some("SendMessage")),
            Wire::Unsupported("2.0".into())
        );
        assert_eq!(
            Wire::select(Some("banana"), None),
            Wire::Unsupported("banana".into())
        );
        assert!(Wire::Unsupported("9".into()).is_v1());
        assert!(!Wire::V03.is_v1());
    }

    #[test]
    fn every_error_has_its_1_0_code_reason_and_status() {
        let cases = [
            (ApiError::Parse("x".into()), -32700, "PARSE_ERROR", 200),
            (
                ApiError::InvalidRequest {
                    message: "x".into(),
                    status: StatusCode::PAYLOAD_TOO_LARGE,
                },
                -32600,
                "INVALID_REQUEST",
                413,
            ),
            (
                ApiError::MethodNotFound("Nope".into()),
                -32601,
                "METHOD_NOT_FOUND",
                200,
            ),
            (
                ApiError::MethodNotFound("SendStreamingMessage".into()),
                -32004,
                "UNSUPPORTED_OPERATION",
                200,
            ),
            (
                ApiError::MethodNotFound("CreateTaskPushNotificationConfig".into()),
                -32003,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                200,
            ),
            (
                ApiError::MethodNotFound("GetExtendedAgentCard".into()),
                -32007,
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                200,
            ),
            (
                ApiError::InvalidParams("x".into()),
                -32602,
                "INVALID_PARAMS",
                200,
            ),
            (
                ApiError::InvalidStateTransition("completed"),
                -32002,
                "TASK_NOT_CANCELABLE",
                200,
            ),
            (
                ApiError::TaskNotFound("t".into()),
                -32001,
                "TASK_NOT_FOUND",
                200,
            ),
            (
                ApiError::ContentTypeNotSupported("files".into()),
                -32005,
                "CONTENT_TYPE_NOT_SUPPORTED",
                200,
            ),
            (
                ApiError::TaskFinished {
                    task_id: "t".into(),
                    state: "completed",
                },
                -32004,
                "UNSUPPORTED_OPERATION",
                200,
            ),
            (
                ApiError::SkillNotFound {
                    requested: "nope".into(),
                    available: vec!["a", "b"],
                },
                -32602,
                "SKILL_NOT_FOUND",
                200,
            ),
            (
                ApiError::RateLimited {
                    retry_after_secs: 4,
                    bucket: "default",
                    limit: None,
                },
                -32000,
                "RATE_LIMITED",
                429,
            ),
            (
                ApiError::Unauthorized(AuthError::Missing),
                -32000,
                "UNAUTHORIZED",
                401,
            ),
            (ApiError::PlanRequired, -32000, "PLAN_REQUIRED", 403),
            (
                ApiError::Overloaded {
                    retry_after_secs: 2,
                },
                -32000,
                "OVERLOADED",
                503,
            ),
            (
                ApiError::Internal("secret".into()),
                -32603,
                "INTERNAL_ERROR",
                200,
            ),
        ];
        for (api_error, code, reason, status) in cases {
            let mapped = error(&api_error, "req-1");
            assert_eq!(mapped.object.code, code, "{api_error:?}");
            assert_eq!(mapped.reason, reason);
            assert_eq!(mapped.status.as_u16(), status, "{api_error:?}");
            let data = mapped.object.data.unwrap();
            assert_eq!(data[0]["reason"], reason);
            assert_eq!(data[0]["domain"], "a2a-protocol.org");
            assert_eq!(data[0]["@type"], v1::ERROR_INFO_TYPE);
        }
        let skill = error(
            &ApiError::SkillNotFound {
                requested: "nope".into(),
                available: vec!["a", "b"],
            },
            "-",
        );
        assert_eq!(
            skill.object.data.unwrap()[0]["metadata"]["availableSkills"],
            "a,b"
        );
        let internal = error(&ApiError::Internal("secret".into()), "req-9");
        assert!(!internal.object.message.contains("secret"));
        assert_eq!(
            internal.object.data.unwrap()[0]["metadata"]["requestId"],
            "req-9"
        );
        let version = version_not_supported("2.0");
        assert_eq!(version.object.code, -32009);
    }
}
