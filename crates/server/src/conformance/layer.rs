//! The kit as a layer around the JSON-RPC endpoint, composed in the router only when the kit
//! is on: before the call it reads `A2A-Simulate` into a typed [`HeaderScenario`] in the
//! request's extensions; after it, a response marked [`Simulated`] with `disconnect` or
//! `malformed_response` is cut off as the scenario says. The endpoint never reads the header.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body_util::BodyExt;

use super::{Kit, Scenario, Simulated};
use crate::paths::{RPC_PATH, RPC_PATH_SLASH};
use crate::serve::DropConnection;

/// The scenario the `A2A-Simulate` header selects (`None`: no header; `Err`: what is wrong
/// with its text), for the endpoint to apply where the real condition arises.
#[derive(Debug, Clone)]
pub struct HeaderScenario(pub Option<Result<Scenario, String>>);

/// The middleware.
pub async fn simulate(State(kit): State<Arc<Kit>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if request.method() != Method::POST || (path != RPC_PATH && path != RPC_PATH_SLASH) {
        return next.run(request).await;
    }
    let selected = kit.scenario(request.headers(), None);
    request.extensions_mut().insert(HeaderScenario(selected));
    let mut response = next.run(request).await;
    match response.extensions().get::<Simulated>() {
        Some(Simulated(Scenario::Disconnect)) => {
            response.extensions_mut().insert(DropConnection);
            response
        }
        Some(Simulated(Scenario::MalformedResponse)) => cut_in_half(response).await,
        _ => response,
    }
}

/// The answer with its body cut in half: the `malformed_response` scenario.
async fn cut_in_half(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(half))
}
