//! Failures in the binding's terms: the gRPC status A2A 1.0 gives each error (§5.4's gRPC
//! column, §10.6), with a `google.rpc.ErrorInfo` (the 1.0 reason, domain `a2a-protocol.org`
//! and the error's metadata) in the details, `google.rpc.RetryInfo` when the client should wait,
//! and, for an edge refusal, a trailers-only answer.

use std::collections::HashMap;
use std::time::Duration;

use a2a_types::v1::ERROR_DOMAIN;
use axum::body::Body;
use axum::http::HeaderValue;
use axum::http::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::response::Response;
use serde_json::Value;
use tonic::metadata::MetadataMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::error::{self, ApiError, v1};

/// The gRPC status of a failure; `request_id` names an internal error's logged cause,
/// `challenge` is sent as `www-authenticate` with an unauthenticated answer.
pub(crate) fn status(error: &ApiError, request_id: &str, challenge: Option<&str>) -> Status {
    error::log(error, request_id);
    let spelt = v1::error(error, request_id);
    let mut details = ErrorDetails::new();
    details.set_error_info(spelt.reason, ERROR_DOMAIN, info_metadata(&spelt));
    if let Some(secs) = error.retry_after_secs() {
        details.set_retry_info(Some(Duration::from_secs(secs)));
    }
    let mut metadata = MetadataMap::new();
    if let (ApiError::Unauthorized(_), Some(challenge)) = (error, challenge)
        && let Ok(value) = challenge.parse()
    {
        metadata.insert(WWW_AUTHENTICATE.as_str(), value);
    }
    Status::with_error_details_and_metadata(
        code(error, spelt.reason),
        spelt.object.message,
        details,
        metadata,
    )
}

/// The `ErrorInfo` metadata of the 1.0 error (each value already text).
fn info_metadata(spelt: &v1::V1Error) -> HashMap<String, String> {
    spelt
        .object
        .data
        .as_ref()
        .and_then(|data| data[0]["metadata"].as_object())
        .map(|metadata| {
            metadata
                .iter()
                .map(|(key, value)| {
                    let text = match value {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    (key.clone(), text)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The status code of a 1.0 reason: the A2A errors as §5.4 maps them, the request's faults
/// `INVALID_ARGUMENT` (a body too large `RESOURCE_EXHAUSTED`, too slow `DEADLINE_EXCEEDED`),
/// and the server's own refusals by their class: `UNAUTHENTICATED` for the token,
/// `PERMISSION_DENIED` for the plan, `RESOURCE_EXHAUSTED` for a limit, `UNAVAILABLE` when shed.
fn code(error: &ApiError, reason: &str) -> Code {
    match reason {
        "TASK_NOT_FOUND" => Code::NotFound,
        "TASK_NOT_CANCELABLE"
        | "PUSH_NOTIFICATION_NOT_SUPPORTED"
        | "UNSUPPORTED_OPERATION"
        | v1::VERSION_NOT_SUPPORTED => Code::FailedPrecondition,
        "CONTENT_TYPE_NOT_SUPPORTED" | "INVALID_PARAMS" | "SKILL_NOT_FOUND" | "PARSE_ERROR" => {
            Code::InvalidArgument
        }
        "INVALID_REQUEST" => match error.status().as_u16() {
            413 => Code::ResourceExhausted,
            408 => Code::DeadlineExceeded,
            405 => Code::Unimplemented,
            _ => Code::InvalidArgument,
        },
        "METHOD_NOT_FOUND" => Code::Unimplemented,
        "UNAUTHORIZED" => Code::Unauthenticated,
        "PLAN_REQUIRED" => Code::PermissionDenied,
        "RATE_LIMITED" => Code::ResourceExhausted,
        "OVERLOADED" => Code::Unavailable,
        _ => Code::Internal,
    }
}

/// Whether a request is a gRPC call (`content-type: application/grpc`, with or without a
/// `+proto` or other suffix).
pub(crate) fn is_grpc(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .is_some_and(|media| media.as_bytes().starts_with(b"application/grpc"))
}

/// A refusal as a trailers-only answer (HTTP 200, `content-type: application/grpc`,
/// `grpc-status`, `grpc-message` and the details in the head): the edge's refusals of a gRPC
/// request, and a failure found before the request's message was read.
pub(crate) fn trailers_only(status: Status) -> Response {
    let mut response: Response = status.into_http::<Body>();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/grpc"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::AuthError;
    use crate::error::Refusal;

    #[test]
    fn every_error_has_its_grpc_code_and_error_info() {
        let cases = [
            (ApiError::TaskNotFound("t".into()), Code::NotFound),
            (
                ApiError::InvalidStateTransition("completed"),
                Code::FailedPrecondition,
            ),
            (
                ApiError::Unsupported {
                    method: "CreateTaskPushNotificationConfig",
                    refusal: Refusal::Push,
                },
                Code::FailedPrecondition,
            ),
            (
                ApiError::TaskFinished {
                    task_id: "t".into(),
                    state: "completed",
                },
                Code::FailedPrecondition,
            ),
            (
                ApiError::VersionNotSupported("2.0".into()),
                Code::FailedPrecondition,
            ),
            (
                ApiError::ContentTypeNotSupported("files".into()),
                Code::InvalidArgument,
            ),
            (ApiError::InvalidParams("x".into()), Code::InvalidArgument),
            (ApiError::MethodNotFound("X".into()), Code::Unimplemented),
            (
                ApiError::Unauthorized(AuthError::Missing),
                Code::Unauthenticated,
            ),
            (ApiError::PlanRequired, Code::PermissionDenied),
            (
                ApiError::RateLimited {
                    retry_after_secs: 3,
                    bucket: "default",
                    limit: None,
                },
                Code::ResourceExhausted,
            ),
            (
                ApiError::Overloaded {
                    retry_after_secs: 1,
                },
                Code::Unavailable,
            ),
            (ApiError::Internal("secret".into()), Code::Internal),
        ];
        for (error, expected) in cases {
            let status = status(&error, "req-1", Some("Bearer realm=\"x\""));
            assert_eq!(status.code(), expected, "{error:?}");
            let details = status.get_error_details();
            let info = details.error_info().expect("an ErrorInfo");
            assert_eq!(info.domain, "a2a-protocol.org");
            assert_eq!(info.reason, v1::error(&error, "-").reason);
            assert_eq!(
                details.retry_info().is_some(),
                error.retry_after_secs().is_some(),
                "{error:?}"
            );
            assert!(!status.message().contains("secret"));
        }
        let missing = status(&ApiError::TaskNotFound("t-9".into()), "-", None);
        let details = missing.get_error_details();
        assert_eq!(details.error_info().unwrap().metadata["taskId"], "t-9");
    }
}
