//! The kit's routes. Every one but the page's empty shell needs a bearer token, and shows or
//! clears only the runs of that token's owner: a run's name alone opens nothing.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;

use super::Kit;
use super::page;
use crate::auth::Authenticator;
use crate::paths;
use crate::store::Owner;

#[derive(Clone)]
struct KitState {
    kit: Arc<Kit>,
    authenticator: Arc<Authenticator>,
}

/// `?run=NAME`: one run instead of all the owner's runs.
#[derive(Debug, Deserialize)]
struct RunQuery {
    run: Option<String>,
}

/// The report as JSON (`GET`, `DELETE` clears), the page's findings as an HTML fragment, and
/// the page itself.
pub fn routes(kit: Arc<Kit>, authenticator: Arc<Authenticator>) -> Router {
    Router::new()
        .route(paths::CONFORMANCE_REPORT, get(report).delete(clear))
        .route(paths::CONFORMANCE_FINDINGS, get(findings))
        .route(paths::CONFORMANCE, get(shell))
        .with_state(KitState { kit, authenticator })
}

/// The owner of the request's bearer token, or the 401 to answer.
async fn owner(state: &KitState, headers: &HeaderMap) -> Result<Owner, Response> {
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    match state.authenticator.authenticate(authorization).await {
        Ok(principal) => Ok(principal.owner),
        Err(error) => {
            let body = json!({"error": format!("Unauthorized: {error}; the report shows the runs of the token's owner")});
            Err((
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer realm=\"magisterium-a2a\"")],
                axum::Json(body),
            )
                .into_response())
        }
    }
}

async fn report(
    State(state): State<KitState>,
    Query(query): Query<RunQuery>,
    headers: HeaderMap,
) -> Response {
    match owner(&state, &headers).await {
        Ok(owner) => {
            axum::Json(state.kit.recorder().report(&owner, query.run.as_deref())).into_response()
        }
        Err(refusal) => refusal,
    }
}

async fn clear(
    State(state): State<KitState>,
    Query(query): Query<RunQuery>,
    headers: HeaderMap,
) -> Response {
    match owner(&state, &headers).await {
        Ok(owner) => {
            state.kit.recorder().clear(&owner, query.run.as_deref());
            StatusCode::NO_CONTENT.into_response()
        }
        Err(refusal) => refusal,
    }
}

async fn findings(
    State(state): State<KitState>,
    Query(query): Query<RunQuery>,
    headers: HeaderMap,
) -> Response {
    match owner(&state, &headers).await {
        Ok(owner) => {
            let report = state.kit.recorder().report(&owner, query.run.as_deref());
            Html(page::fragment(&report)).into_response()
        }
        Err(refusal) => refusal,
    }
}

async fn shell() -> Response {
    Html(page::SHELL).into_response()
}
