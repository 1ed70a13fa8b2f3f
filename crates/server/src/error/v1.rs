//! The 1.0 form of every failure: code, `google.rpc.ErrorInfo` reason and HTTP status.
//!
//! The 0.3 wire keeps this project's documented codes; 1.0 clients get the 1.0 codes, so that
//! their SDKs raise the right error classes (`-32002` is "task not cancelable" there, never
//! "skill not found"). Conditions A2A does not define (unauthorized, plan required, rate limited,
//! a shed overload) use the implementation-defined JSON-RPC code `-32000`, outside the range
//! A2A reserves, and are told apart by the HTTP status and the `reason`.

use a2a_types::jsonrpc::ErrorObject;
use a2a_types::v1::{PROTOCOL_VERSION, error_info};
use axum::http::StatusCode;
use serde_json::{Map, Value};

use super::{ApiError, Refusal};

/// The reason (and metrics outcome) of a request whose `A2A-Version` is not spoken here.
pub const VERSION_NOT_SUPPORTED: &str = "VERSION_NOT_SUPPORTED";

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
    if let ApiError::VersionNotSupported(version) = error {
        return version_not_supported(version);
    }
    let mut metadata = Map::new();
    let (code, reason, status, message) = call_error(error, &mut metadata)
        .unwrap_or_else(|| server_error(error, request_id, &mut metadata));
    V1Error {
        status,
        reason,
        object: ErrorObject {
            code,
            message,
            data: Some(error_info(reason, &metadata)),
        },
    }
}

/// A failure's 1.0 code, reason, HTTP status and message.
type Spelt = (i64, &'static str, StatusCode, String);

/// The 1.0 form of a failure of the call itself (its envelope, method, params or task), with
/// its `ErrorInfo` metadata; `None` for the server's own failures.
fn call_error(error: &ApiError, metadata: &mut Map<String, Value>) -> Option<Spelt> {
    Some(match error {
        ApiError::Parse(message) => (-32700, "PARSE_ERROR", StatusCode::OK, message.clone()),
        ApiError::InvalidRequest { message, status } => {
            (-32600, "INVALID_REQUEST", *status, message.clone())
        }
        ApiError::MethodNotFound(method) => {
            metadata.insert("method".into(), Value::String(method.clone()));
            (
                -32601,
                "METHOD_NOT_FOUND",
                StatusCode::OK,
                error.to_string(),
            )
        }
        ApiError::Unsupported { method, refusal } => {
            metadata.insert("method".into(), Value::String((*method).into()));
            unsupported(method, *refusal)
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
        _ => return None,
    })
}

/// The 1.0 form of a method refused today.
fn unsupported(method: &str, refusal: Refusal) -> Spelt {
    match refusal {
        Refusal::Operation => (
            -32004,
            "UNSUPPORTED_OPERATION",
            StatusCode::OK,
            format!(
                "This operation is not supported: {method}; SendMessage answers with a finished task, and nothing is streamed"
            ),
        ),
        Refusal::Push => (
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
            StatusCode::OK,
            format!("Push Notification is not supported: {method}"),
        ),
    }
}

/// The 1.0 form of a failure of the server's limits, its authentication or itself, with its
/// `ErrorInfo` metadata; `request_id` names an internal error's logged cause.
fn server_error(error: &ApiError, request_id: &str, metadata: &mut Map<String, Value>) -> Spelt {
    match error {
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
        ApiError::OverBudget {
            budget,
            retry_after_secs,
        } => {
            metadata.insert("retryAfter".into(), Value::from(*retry_after_secs));
            metadata.insert("budget".into(), Value::String((*budget).into()));
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
        // `Internal`, and the call's failures `call_error` spells first.
        _ => {
            metadata.insert("requestId".into(), Value::String(request_id.into()));
            (
                -32603,
                "INTERNAL_ERROR",
                StatusCode::OK,
                "Internal error: an unexpected fault occurred; it has been logged".into(),
            )
        }
    }
}

/// The HTTP status of a failure on the HTTP+JSON binding, as A2A 1.0.1's §5.4 gives it:
/// 404 for a task not found and a route or method that does not exist, 400 for the other A2A
/// errors and a request that does not parse or fit (1.0.1 answers a task not cancelable and an
/// unsupported content type with 400, where 1.0.0 gave 409 and 415), 500 for an internal
/// error. The server's own refusals keep the status they have on JSON-RPC (401, 403, 429, 503,
/// and 405/408/413/415 for a request refused before its body was read).
pub fn http_status(error: &ApiError) -> StatusCode {
    let spelt = self::error(error, "-");
    if spelt.status != StatusCode::OK {
        return spelt.status;
    }
    match spelt.reason {
        "TASK_NOT_FOUND" | "METHOD_NOT_FOUND" => StatusCode::NOT_FOUND,
        "INTERNAL_ERROR" => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    }
}

/// The canonical `google.rpc.Code` name of an HTTP status, for the `status` member of a
/// `google.rpc.Status` body (the mapping of Google's API design guide, AIP-193).
pub fn status_name(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 415 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        405 | 501 => "UNIMPLEMENTED",
        408 | 504 => "DEADLINE_EXCEEDED",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}

/// The answer to a request whose `A2A-Version` this server does not speak.
pub fn version_not_supported(version: &str) -> V1Error {
    let mut metadata = Map::new();
    metadata.insert("requestedVersion".into(), Value::String(version.into()));
    metadata.insert(
        "supportedVersions".into(),
        Value::String(format!("0.3,{PROTOCOL_VERSION}")),
    );
    let reason = VERSION_NOT_SUPPORTED;
    V1Error {
        status: StatusCode::OK,
        reason,
        object: ErrorObject {
            code: -32009,
            message: format!(
                "Version not supported: A2A-Version `{version}`; this server speaks 0.3 and 1.0"
            ),
            data: Some(error_info(reason, &metadata)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthError;

    /// A failure, and the 1.0 code, reason and HTTP status it is answered with.
    type Case = (ApiError, i64, &'static str, u16);

    /// The failures of a call's envelope, method and params.
    fn call_cases() -> Vec<Case> {
        vec![
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
                ApiError::Unsupported {
                    method: "SendStreamingMessage",
                    refusal: Refusal::Operation,
                },
                -32004,
                "UNSUPPORTED_OPERATION",
                200,
            ),
            (
                ApiError::Unsupported {
                    method: "CreateTaskPushNotificationConfig",
                    refusal: Refusal::Push,
                },
                -32003,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                200,
            ),
            (
                ApiError::InvalidParams("x".into()),
                -32602,
                "INVALID_PARAMS",
                200,
            ),
        ]
    }

    /// The failures of a call's task and skill, and of the server's limits, its
    /// authentication and itself.
    fn server_cases() -> Vec<Case> {
        vec![
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
        ]
    }

    #[test]
    fn every_error_has_its_1_0_code_reason_and_status() {
        for (api_error, code, reason, status) in call_cases().into_iter().chain(server_cases()) {
            let mapped = error(&api_error, "req-1");
            assert_eq!(mapped.object.code, code, "{api_error:?}");
            assert_eq!(mapped.reason, reason);
            assert_eq!(mapped.status.as_u16(), status, "{api_error:?}");
            let data = mapped.object.data.unwrap();
            assert_eq!(data[0]["reason"], reason);
            assert_eq!(data[0]["domain"], "a2a-protocol.org");
            assert_eq!(data[0]["@type"], a2a_types::v1::ERROR_INFO_TYPE);
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
