//! Every way a call can fail, and the one place that turns a failure into a JSON-RPC error
//! object, an HTTP status and headers: the 0.3 codes here, the 1.0 table in [`v1`], and the
//! response in [`render`] ([`Failure`], which knows its wire, JSON-RPC id and request id).

mod render;
pub mod v1;

use a2a_types::{ErrorCode, ErrorObject};
use axum::http::StatusCode;

use crate::auth::AuthError;
use crate::push::PushError;
use crate::store::StoreError;

pub use render::{Failure, log, status_body, status_response};

/// A failed call.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Bad or missing bearer token.
    #[error("{0}")]
    Unauthorized(AuthError),
    /// The plan does not include A2A.
    #[error("A2A requires a Pro, Organization or Enterprise plan")]
    PlanRequired,
    /// The body is not JSON.
    #[error("{0}")]
    Parse(String),
    /// The body is not one valid JSON-RPC request (including wrong media type and size).
    #[error("{message}")]
    InvalidRequest {
        /// What is wrong.
        message: String,
        /// The HTTP status: 200, or 413/415/405 for transport-level refusals.
        status: StatusCode,
    },
    /// Unknown method.
    #[error("Method not found: {0}")]
    MethodNotFound(String),
    /// A method of the method table that this server refuses today: on the 0.3 wire an unknown
    /// method (`-32601`), on 1.0 the error A2A 1.0 defines for it ([`Refusal`]).
    #[error("Method not found: {method}")]
    Unsupported {
        /// The method's name.
        method: &'static str,
        /// Which 1.0 error refuses it.
        refusal: Refusal,
    },
    /// The `A2A-Version` header names a version this server does not speak (answered in 1.0
    /// terms, `VersionNotSupportedError`).
    #[error("Version not supported: A2A-Version `{0}`")]
    VersionNotSupported(String),
    /// Params do not fit the method.
    #[error("Invalid params: {0}")]
    InvalidParams(String),
    /// `tasks/cancel` on a task that is already terminal.
    #[error("Invalid state transition: the task is already {0}")]
    InvalidStateTransition(&'static str),
    /// A content type the skills do not take (file parts): `-32602` on the 0.3 wire, where
    /// `-32005` means "plan required"; A2A 1.0's `ContentTypeNotSupportedError` on 1.0.
    #[error("Invalid params: {0}")]
    ContentTypeNotSupported(String),
    /// A 1.0 message for, or new subscription to, a task that is already terminal (1.0's
    /// `UnsupportedOperationError`); the 0.3 wire continues such a task, or streams its last
    /// state, instead, as the reference does.
    #[error(
        "Task {task_id} is already {state}: it takes no more messages and sends no more events (read it with GetTask; send a new message in its context)"
    )]
    TaskFinished {
        /// The task the message named.
        task_id: String,
        /// Its terminal state.
        state: &'static str,
    },
    /// Unknown, expired or foreign task.
    #[error("Task not found: {0}")]
    TaskNotFound(String),
    /// Unknown `skillId`.
    #[error("Skill not found: {requested}")]
    SkillNotFound {
        /// The id the client asked for.
        requested: String,
        /// The ids that exist.
        available: Vec<&'static str>,
    },
    /// The caller's bucket is empty.
    #[error("Rate limit exceeded for the {bucket} bucket: retry after {retry_after_secs} s")]
    RateLimited {
        /// Whole seconds until a call will be allowed.
        retry_after_secs: u64,
        /// `default`, `expensive`, `read` or `unauthenticated`.
        bucket: &'static str,
        /// Calls per minute of the bucket, for the `RateLimit` headers (`None`: not decided
        /// by a limiter).
        limit: Option<u32>,
    },
    /// The call would make the server hold more bytes than a budget allows (open streams'
    /// queued events, the memory store): `-32003` and 429 like the other caps on what one user
    /// may hold (the `streams` and `running` buckets), naming the budget's setting.
    #[error(
        "Over the byte budget `{budget}`: the server already holds as much for this as it may; retry after {retry_after_secs} s"
    )]
    OverBudget {
        /// The budget's setting key.
        budget: &'static str,
        /// Whole seconds to wait.
        retry_after_secs: u64,
    },
    /// A fault of the server; the detail is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
    /// Too many calls in flight: shed at once rather than queued.
    #[error("Server busy: retry after {retry_after_secs} s")]
    Overloaded {
        /// Whole seconds to wait.
        retry_after_secs: u64,
    },
}

impl ApiError {
    /// The public error code.
    pub fn code(&self) -> ErrorCode {
        match self {
            ApiError::Unauthorized(_) => ErrorCode::Unauthorized,
            ApiError::PlanRequired => ErrorCode::PlanRequired,
            ApiError::Parse(_) => ErrorCode::ParseError,
            ApiError::InvalidRequest { .. } => ErrorCode::InvalidRequest,
            ApiError::MethodNotFound(_) | ApiError::Unsupported { .. } => ErrorCode::MethodNotFound,
            ApiError::VersionNotSupported(_) => ErrorCode::InvalidRequest,
            ApiError::InvalidParams(_)
            | ApiError::InvalidStateTransition(_)
            | ApiError::ContentTypeNotSupported(_)
            | ApiError::TaskFinished { .. } => ErrorCode::InvalidParams,
            ApiError::TaskNotFound(_) => ErrorCode::TaskNotFound,
            ApiError::SkillNotFound { .. } => ErrorCode::SkillNotFound,
            ApiError::RateLimited { .. } | ApiError::OverBudget { .. } => ErrorCode::RateLimited,
            ApiError::Internal(_) | ApiError::Overloaded { .. } => ErrorCode::InternalError,
        }
    }

    /// The HTTP status that mirrors the error class.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::PlanRequired => StatusCode::FORBIDDEN,
            ApiError::RateLimited { .. } | ApiError::OverBudget { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::Overloaded { .. } => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::InvalidRequest { status, .. } => *status,
            _ => StatusCode::OK,
        }
    }

    /// The JSON-RPC error object. `request_id` is attached to internal errors so an operator
    /// can find the logged cause.
    pub fn to_object(&self, request_id: &str) -> ErrorObject {
        let code = self.code();
        match self {
            ApiError::Internal(_) => ErrorObject::new(
                code,
                "Internal error: an unexpected fault occurred; it has been logged",
            )
            .with_data("requestId", request_id),
            ApiError::Unauthorized(reason) => {
                ErrorObject::new(code, format!("Unauthorized: {reason}"))
            }
            ApiError::PlanRequired => ErrorObject::new(code, format!("Paid plan required: {self}")),
            ApiError::SkillNotFound { available, .. } => ErrorObject::new(code, self.to_string())
                .with_data("availableSkills", available.clone()),
            ApiError::Overloaded { retry_after_secs } => {
                ErrorObject::new(code, self.to_string()).with_data("retryAfter", *retry_after_secs)
            }
            ApiError::RateLimited {
                retry_after_secs,
                bucket,
                ..
            } => ErrorObject::new(code, self.to_string())
                .with_data("retryAfter", *retry_after_secs)
                .with_data("bucket", *bucket),
            ApiError::OverBudget {
                budget,
                retry_after_secs,
            } => ErrorObject::new(code, self.to_string())
                .with_data("retryAfter", *retry_after_secs)
                .with_data("budget", *budget),
            ApiError::TaskNotFound(id) => {
                ErrorObject::new(code, self.to_string()).with_data("taskId", id.as_str())
            }
            ApiError::InvalidStateTransition(state) => {
                ErrorObject::new(code, self.to_string()).with_data("state", *state)
            }
            _ => ErrorObject::new(code, self.to_string()),
        }
    }

    /// The `Retry-After` seconds this error tells the client to wait, if any.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            ApiError::RateLimited {
                retry_after_secs, ..
            }
            | ApiError::OverBudget {
                retry_after_secs, ..
            }
            | ApiError::Overloaded { retry_after_secs } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// A short outcome label for metrics.
    pub fn outcome(&self) -> &'static str {
        match self {
            ApiError::VersionNotSupported(_) => v1::VERSION_NOT_SUPPORTED,
            other => other.code().name(),
        }
    }
}

/// Why the method table refuses a method today, which chooses its 1.0 error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Streaming and resubscription: every task is finished inside the call
    /// (`UnsupportedOperationError`).
    Operation,
    /// Push-notification configs (`PushNotificationNotSupportedError`).
    Push,
}

impl From<PushError> for ApiError {
    /// A config that breaks a rule, or one too many, is the client's doing (`-32602`); the
    /// rest is the server's.
    fn from(error: PushError) -> Self {
        match error {
            PushError::InvalidConfig(_) | PushError::TooManyConfigs(_) => {
                ApiError::InvalidParams(error.to_string())
            }
            other => ApiError::Internal(other.to_string()),
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        ApiError::Internal(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_status() {
        let cases = [
            (ApiError::Unauthorized(AuthError::Missing), -32004, 401),
            (ApiError::PlanRequired, -32005, 403),
            (
                ApiError::RateLimited {
                    retry_after_secs: 3,
                    bucket: "default",
                    limit: Some(15),
                },
                -32003,
                429,
            ),
            (
                ApiError::OverBudget {
                    budget: "store.memory_max_bytes",
                    retry_after_secs: 60,
                },
                -32003,
                429,
            ),
            (ApiError::TaskNotFound("x".into()), -32001, 200),
            (ApiError::InvalidStateTransition("completed"), -32602, 200),
            (ApiError::Internal("boom".into()), -32603, 200),
        ];
        for (error, code, status) in cases {
            assert_eq!(error.code().code(), code);
            assert_eq!(error.status().as_u16(), status);
            let object = error.to_object("req-1");
            assert_eq!(object.data.as_ref().unwrap()["name"], error.code().name());
        }
        let internal = ApiError::Internal("secret detail".into()).to_object("req-9");
        assert!(!internal.message.contains("secret"));
        assert_eq!(internal.data.unwrap()["requestId"], "req-9");
    }
}
