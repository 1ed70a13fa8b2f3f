//! The one renderer of failures: the endpoint's refusals, the guard's (before the body is read)
//! and the unsupported-version answer all become a [`Failure`], which writes the JSON-RPC error
//! in the wire's terms with its status and headers.

use std::time::Duration;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

use a2a_types::jsonrpc::{Id, Response as RpcResponse};

use super::{ApiError, v1};
use crate::auth::AuthError;
use crate::limits::Decision;
use crate::respond::{json_bytes, rate_headers};
use crate::telemetry::UserText;
use crate::wire::Wire;

/// A failed call as it is answered: the error, the wire it is spelt in, the JSON-RPC id to
/// echo and the request id an internal error names.
pub struct Failure<'a> {
    error: ApiError,
    wire: Wire,
    id: Option<Id>,
    request_id: &'a str,
    challenge: Option<&'a str>,
}

impl<'a> Failure<'a> {
    /// `error`, answered in `wire`'s terms with `id` echoed; `request_id` is named in internal
    /// errors so that an operator finds the logged cause.
    pub fn new(error: ApiError, wire: Wire, id: Option<Id>, request_id: &'a str) -> Self {
        Failure {
            error,
            wire,
            id,
            request_id,
            challenge: None,
        }
    }

    /// The `WWW-Authenticate` challenge sent with an unauthorized answer.
    pub fn with_challenge(mut self, challenge: &'a str) -> Self {
        self.challenge = Some(challenge);
        self
    }
}

impl Failure<'_> {
    /// The JSON-RPC error response alone, as JSON text: the last event of a stream that cannot
    /// go on, where no status or header can be sent any more.
    pub fn body(&self) -> Bytes {
        let object = if self.wire.is_v1() {
            v1::error(&self.error, self.request_id).object
        } else {
            self.error.to_object(self.request_id)
        };
        serde_json::to_vec(&RpcResponse::failure(self.id.clone(), object))
            .map(Bytes::from)
            .unwrap_or_default()
    }
}

impl IntoResponse for Failure<'_> {
    fn into_response(self) -> Response {
        self.respond(Framing::Json)
    }
}

/// How a failed call's JSON-RPC error is carried.
enum Framing {
    /// As the JSON body.
    Json,
    /// As the one event of an event stream.
    Event,
}

impl Failure<'_> {
    /// The failure of a streaming method, as the reference servers answer it: an event stream
    /// of one event, the JSON-RPC error, with the status and headers of the JSON answer. SDK
    /// streaming clients read the error from the stream, and report a JSON body as a wrong
    /// content type instead of the error it holds.
    pub fn into_event_stream(self) -> Response {
        self.respond(Framing::Event)
    }

    fn respond(self, framing: Framing) -> Response {
        let Failure {
            error,
            wire,
            id,
            request_id,
            challenge,
        } = self;
        log(&error, request_id);
        let (status, object) = if wire.is_v1() {
            let mapped = v1::error(&error, request_id);
            (mapped.status, mapped.object)
        } else {
            (error.status(), error.to_object(request_id))
        };
        let (status, body) = rpc_body(status, &RpcResponse::failure(id, object));
        let mut response = match framing {
            Framing::Json => json_bytes(status, body, None),
            Framing::Event => (
                status,
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                format!("data: {}\n\n", String::from_utf8_lossy(&body)),
            )
                .into_response(),
        };
        failure_headers(response.headers_mut(), &error, status, challenge);
        response
    }
}

/// A failure in the HTTP+JSON binding's terms: the status of A2A 1.0.1's table
/// ([`v1::http_status`]) and a `google.rpc.Status` body (`{"error": {"code", "status",
/// "message", "details"}}`) whose details are the 1.0 `google.rpc.ErrorInfo`, with the same
/// headers as the JSON-RPC answer (`WWW-Authenticate`, `Retry-After`, `RateLimit`).
/// `request_id` is named in internal errors, `challenge` sent with an unauthorized answer.
pub fn status_response(error: ApiError, request_id: &str, challenge: Option<&str>) -> Response {
    log(&error, request_id);
    let mut response = json_bytes(
        v1::http_status(&error),
        status_body(&error, request_id),
        None,
    );
    let status = response.status();
    failure_headers(response.headers_mut(), &error, status, challenge);
    response
}

/// The `google.rpc.Status` body of a failure alone, as JSON text: the last event of an
/// HTTP+JSON stream that cannot go on.
pub fn status_body(error: &ApiError, request_id: &str) -> Bytes {
    let spelt = v1::error(error, request_id);
    let status = v1::http_status(error);
    let body = serde_json::json!({
        "error": {
            "code": status.as_u16(),
            "status": v1::status_name(status),
            "message": spelt.object.message,
            "details": spelt.object.data,
        }
    });
    Bytes::from(body.to_string())
}

/// Logs a failure as it is answered: an internal error with its cause and the request id that
/// names it, any other as a refusal.
pub fn log(error: &ApiError, request_id: &str) {
    match error {
        ApiError::Internal(detail) => {
            tracing::error!(request_id, detail = %UserText(detail), "internal error")
        }
        other => {
            tracing::info!(code = other.code().code(), reason = %UserText(&other.to_string()), "refused")
        }
    }
}

/// The headers every binding sends with a failure: the challenge of an unauthorized answer,
/// `Retry-After` and `RateLimit` of a limited one, and `Connection: close` after a body left
/// unread.
fn failure_headers(
    headers: &mut HeaderMap,
    error: &ApiError,
    status: StatusCode,
    challenge: Option<&str>,
) {
    if let (ApiError::Unauthorized(reason), Some(challenge)) = (error, challenge)
        && let Ok(value) = HeaderValue::from_str(&www_authenticate(challenge, reason))
    {
        headers.insert(header::WWW_AUTHENTICATE, value);
    }
    if let Some(secs) = error.retry_after_secs() {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let ApiError::RateLimited {
        retry_after_secs,
        bucket,
        limit: Some(limit),
    } = *error
    {
        let refused = Decision::Limited {
            limit,
            retry_after: Duration::from_secs(retry_after_secs),
        };
        rate_headers(headers, refused, bucket);
    }
    if matches!(
        status,
        StatusCode::PAYLOAD_TOO_LARGE | StatusCode::REQUEST_TIMEOUT
    ) {
        // The body was left unread, so the connection closes after this answer (a
        // lingering close): saying so keeps a client from sending its next request on it.
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
}

fn www_authenticate(challenge: &str, reason: &AuthError) -> String {
    if !reason.token_presented() {
        return challenge.to_string();
    }
    let description: String = reason
        .to_string()
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control() && *c != '"' && *c != '\\')
        .collect();
    format!("{challenge}, error=\"invalid_token\", error_description=\"{description}\"")
}

/// The status and JSON text of a JSON-RPC error response; an internal error when it cannot be
/// written.
fn rpc_body(status: StatusCode, body: &RpcResponse) -> (StatusCode, Bytes) {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, Bytes::from(bytes)),
        Err(_) => (
            StatusCode::OK,
            Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error","data":{"name":"INTERNAL_ERROR"}}}"#,
            ),
        ),
    }
}
