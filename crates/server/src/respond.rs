//! The pieces every answer of a call shares: the JSON body with its media type, the `RateLimit`
//! headers of a charged call (RFC 9745 draft fields, as the hosted reference sends them), and
//! the answer to a browser's preflight.

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::limits::Decision;

/// The request headers a browser's call may carry on either binding: the token, the body's
/// media type, A2A's service parameters, the conformance kit's scenario and run, a language.
pub const ALLOWED_REQUEST_HEADERS: &str = "Content-Type, Authorization, A2A-Version, \
    A2A-Extensions, A2A-Simulate, A2A-Client-Run, Accept-Language";

/// The answer to a browser's preflight of a call: the `methods` the path takes and
/// [`ALLOWED_REQUEST_HEADERS`], cached for a day. Any origin is allowed by the router's layer.
pub fn preflight(methods: &'static str) -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (header::ACCESS_CONTROL_ALLOW_METHODS, methods),
            (
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                ALLOWED_REQUEST_HEADERS,
            ),
            (header::ACCESS_CONTROL_MAX_AGE, "86400"),
        ],
    )
        .into_response()
}

/// A JSON body already serialised, with its status and, when given, a `Cache-Control`.
pub fn json_bytes(status: StatusCode, body: Bytes, cache: Option<&'static str>) -> Response {
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(cache) = cache {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    }
    response
}

/// `RateLimit-Policy` and `RateLimit` for a decision of the limiter in `bucket`; nothing for a
/// call the limiter did not decide.
pub fn rate_headers(headers: &mut HeaderMap, decision: Decision, bucket: &str) {
    let (limit, remaining, reset) = match decision {
        Decision::Allowed {
            limit,
            remaining,
            reset_after,
        } => (limit, remaining, reset_after),
        Decision::Limited { limit, retry_after } => (limit, 0, retry_after),
        Decision::Unavailable | Decision::Unmetered => return,
    };
    let policy = format!("\"{bucket}\";q={limit};w=60");
    let current = format!(
        "\"{bucket}\";r={remaining};t={}",
        reset.as_millis().div_ceil(1000)
    );
    for (name, value) in [("ratelimit-policy", policy), ("ratelimit", current)] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}
