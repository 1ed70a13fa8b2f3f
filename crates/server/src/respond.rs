//! The pieces every JSON answer shares: the body with its media type, and the `RateLimit`
//! headers of a charged call (RFC 9745 draft fields, as the hosted reference sends them).

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};

use crate::limits::Decision;

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
