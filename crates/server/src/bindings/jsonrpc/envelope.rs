//! The JSON-RPC envelope: a request body read within its limits, parsed once, and checked into
//! a framed call (id, method, params), or the refusal that names what is wrong with it.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap};
use http_body_util::BodyExt;
use serde_json::Value;

use a2a_types::jsonrpc::{self, BorrowedRequest, Id};

use crate::bindings::jsonrpc::params::Params;
use crate::edge::body_deadline;
use crate::error::ApiError;

/// The limits a body is read within, named in their refusals.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimits {
    /// Largest accepted body.
    pub(crate) max_bytes: usize,
    /// How long a whole body may take to arrive.
    pub(crate) read_timeout: Duration,
}

/// Why a body could not be read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BodyFault {
    TooLarge,
    TooSlow,
    Broken,
}

pub(crate) async fn read_body(
    body: Body,
    headers: &HeaderMap,
    limit: usize,
) -> Result<Bytes, BodyFault> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(BodyFault::TooLarge);
    }
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(BodyFault::TooLarge),
        Err(e) if body_deadline::passed(&*e) => Err(BodyFault::TooSlow),
        Err(_) => Err(BodyFault::Broken),
    }
}

/// A request body parsed once: the parse serves the id and method hints before
/// authentication and the envelope checks after it. A well-formed call keeps its params as raw
/// text; anything else is parsed into a tree so that the refusal names what is wrong.
pub(crate) enum ParsedBody<'a> {
    Call(BorrowedRequest<'a>),
    Tree(Result<Value, serde_json::Error>),
    Unread(BodyFault),
}

impl<'a> ParsedBody<'a> {
    pub(crate) fn of(read: &'a Result<Bytes, BodyFault>) -> Self {
        match read {
            Ok(bytes) => match jsonrpc::parse_request_borrowed(bytes) {
                Some(call) => ParsedBody::Call(call),
                None => ParsedBody::Tree(serde_json::from_slice(bytes)),
            },
            Err(fault) => ParsedBody::Unread(*fault),
        }
    }

    /// The id and method, as far as the body parses.
    pub(crate) fn hints(&self) -> (Option<Id>, Option<String>) {
        match self {
            ParsedBody::Call(call) => (Some(call.id.clone()), Some(call.method.clone())),
            ParsedBody::Tree(Ok(value)) => peek_id_and_method(value),
            _ => (None, None),
        }
    }

    /// The `params` member as a tree, for the conformance kit's rare paths.
    pub(crate) fn params_tree(&self) -> Value {
        match self {
            ParsedBody::Call(call) => Params::Raw(call.params).into_tree(),
            ParsedBody::Tree(Ok(value)) => value["params"].clone(),
            _ => Value::Null,
        }
    }
}

/// Whether the request's `Content-Type` is JSON: `application/json`, or A2A 1.0's
/// `application/a2a+json`, with any parameters.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(str::trim)
        .is_some_and(|media| {
            media.eq_ignore_ascii_case("application/json")
                || media.eq_ignore_ascii_case("application/a2a+json")
        })
}

/// The id and method of a body, as far as it parses: the id is echoed even on refusals, and
/// the method chooses the wire the refusal is spelt in.
fn peek_id_and_method(value: &Value) -> (Option<Id>, Option<String>) {
    let id = match value.get("id") {
        Some(Value::String(s)) => Some(Id::Str(s.clone())),
        Some(Value::Number(n)) => Some(Id::Num(n.clone())),
        _ => None,
    };
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    (id, method)
}

/// A call that passed the envelope checks; without an id it is a notification.
pub(crate) struct Framed<'a> {
    /// The call's id; `None`: a notification.
    pub(crate) id: Option<Id>,
    /// The method as named.
    pub(crate) method: String,
    /// The params as the request carried them.
    pub(crate) params: Params<'a>,
}

/// The envelope checks: the call, or the id to echo and the refusal.
pub(crate) fn into_call<'a>(
    body: ParsedBody<'a>,
    limits: BodyLimits,
) -> Result<Framed<'a>, (Option<Id>, ApiError)> {
    let unread = |message: String, status: StatusCode| {
        Err((None, ApiError::InvalidRequest { message, status }))
    };
    match body {
        ParsedBody::Call(call) => Ok(Framed {
            id: Some(call.id),
            method: call.method,
            params: Params::Raw(call.params),
        }),
        ParsedBody::Tree(Ok(value)) => match jsonrpc::request_from_value(value) {
            Ok(request) => Ok(Framed {
                id: request.id,
                method: request.method,
                params: Params::Tree(request.params),
            }),
            Err(envelope) => Err((
                envelope.id,
                ApiError::InvalidRequest {
                    message: envelope.error.message,
                    status: StatusCode::OK,
                },
            )),
        },
        ParsedBody::Tree(Err(e)) => Err((None, ApiError::Parse(format!("Parse error: {e}")))),
        ParsedBody::Unread(BodyFault::TooLarge) => unread(
            format!(
                "Invalid request: the body is larger than the limit of {} bytes",
                limits.max_bytes
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        ParsedBody::Unread(BodyFault::TooSlow) => unread(
            format!(
                "Invalid request: the body did not arrive within {} seconds",
                limits.read_timeout.as_secs()
            ),
            StatusCode::REQUEST_TIMEOUT,
        ),
        ParsedBody::Unread(BodyFault::Broken) => unread(
            "Invalid request: the body could not be read".into(),
            StatusCode::BAD_REQUEST,
        ),
    }
}
