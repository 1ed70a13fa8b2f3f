//! The HTTP+JSON endpoint: one call through the pipeline's steps in their one order (the
//! token, the plan, the user's slot, the kit's refusals, the call, the kit's delay), with only
//! this binding's framing here: the route, the body as a ProtoJSON request, the bare 1.0
//! result, the `google.rpc.Status` error and the event stream of a streaming operation.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Extension, Query, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;
use tower_http::request_id::RequestId;
use tracing::Instrument;

use crate::auth::Principal;
use crate::bindings::jsonrpc::envelope::{self, BodyFault};
use crate::bindings::jsonrpc::methods::{self, Answer};
use crate::bindings::jsonrpc::params::Params;
use crate::bindings::jsonrpc::sse::{self, EventWire};
use crate::bindings::rest::routes::{self, BodyUse, Route};
use crate::bindings::{self, AppState};
use crate::edge::guard::BudgetSpent;
use crate::error::{self, ApiError};
use crate::paths;
use crate::pipeline::Pipeline;
use crate::pipeline::call;
use crate::pipeline::kit::{Exchanged, FromHeader, KitHook, Staged};
use crate::respond::{self, json_bytes, rate_headers};
use crate::service::Streamed;
use crate::telemetry::{UserText, traces};
use crate::wire::{Version, Wire, version_header};

/// The label the binding's calls are counted under.
pub(crate) const BINDING: &str = "http+json";

/// Answers a call of the HTTP+JSON binding. The token and the plan are checked from the
/// headers alone, before the body is read, as on JSON-RPC; a route that names no operation is
/// refused after them, so a caller without a token learns nothing of the routes.
pub(crate) async fn rest_handler(
    State(state): State<Arc<AppState>>,
    (request_id, budget_spent, header_scenario): CallExtensions,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    if method == Method::OPTIONS {
        return respond::preflight("GET, POST, DELETE, OPTIONS");
    }
    let started = Instant::now();
    let request_id = request_id
        .and_then(|Extension(id)| id.header_value().to_str().ok().map(str::to_owned))
        .unwrap_or_else(|| "-".into());
    let query = Query::<Vec<(String, String)>>::try_from_uri(&uri)
        .map(|Query(pairs)| pairs)
        .map_err(|e| ApiError::InvalidParams(format!("the query does not parse: {e}")));
    let (skill, below) = paths::rest_target(uri.path()).unwrap_or((None, uri.path()));
    let agent = match skill {
        Some(skill) => match state.skill_cards.get_key_value(skill) {
            Some((&skill_id, _)) => Some(skill_id),
            None => return bindings::no_skill_agent(&state, skill),
        },
        None => None,
    };
    let route = query
        .and_then(|query| routes::resolve(&method, uri.path(), below, &query))
        .map(|route| Route { agent, ..route });
    let row = route.as_ref().ok().map(|route| route.row);
    let mut staged = KitHook::stage(header_scenario);
    let mut principal = None;
    let budget_spent = budget_spent.map(|Extension(spent)| spent);
    let span = traces::call_span(BINDING, &request_id, &headers);
    let checked = Box::pin(checks(
        &state,
        &mut staged,
        &mut principal,
        route,
        &headers,
        body,
        budget_spent,
    ))
    .instrument(span.clone())
    .await;
    bindings::trace_call(&span, row, principal.as_ref(), &checked);
    let hook = &state.pipeline.kit;
    if hook.kit().is_some() {
        let called = Called {
            request_id: &request_id,
            request: format!("{method} {}", uri.path()),
            method: row.map_or("-", |row| row.name),
            principal: principal.as_ref(),
        };
        record(hook, &staged, &headers, called, &checked);
    }
    let mut response = answer(&state, &staged, row, checked, &request_id, started);
    hook.mark(&staged, &mut response);
    response
}

/// The call's outcome in this binding's terms, counted in the metrics under its method, the
/// binding and the outcome (`simulated` for the kit's).
fn answer(
    state: &AppState,
    staged: &Staged,
    row: Option<&'static methods::Method>,
    checked: Result<Answer, ApiError>,
    request_id: &str,
    started: Instant,
) -> Response {
    let outcome = match &checked {
        _ if staged.simulated() => "simulated",
        Ok(_) => "ok",
        Err(error) => error.outcome(),
    };
    state
        .metrics
        .request(BINDING, methods::label(row), outcome, started.elapsed());
    match checked {
        Ok(Answer::Reply(reply)) => {
            let mut response = json_bytes(StatusCode::OK, reply.result, None);
            if let Some((decision, bucket)) = reply.rate {
                rate_headers(response.headers_mut(), decision, bucket.as_str());
            }
            response
        }
        Ok(Answer::Stream(streamed)) => event_stream(streamed, request_id),
        Err(error) => error::status_response(error, request_id, Some(&state.challenge)),
    }
}

/// The request's extensions the endpoint reads: its id, a spent failed-authentication budget,
/// and the conformance kit's scenario from the header.
type CallExtensions = (
    Option<Extension<RequestId>>,
    Option<Extension<BudgetSpent>>,
    FromHeader,
);

/// Who made a call and what it asked, as the kit records it.
struct Called<'a> {
    request_id: &'a str,
    request: String,
    method: &'static str,
    principal: Option<&'a Principal>,
}

/// The order of checks, as on JSON-RPC: a simulated `unauthorized`, the token and the plan
/// from the headers, the user's in-flight slot (held until the answer is made), then the
/// route, the version, the body and its media type, the kit's other refusals, and the call;
/// last, a `slow` delay of an answer the call earned.
async fn checks(
    state: &AppState,
    staged: &mut Staged,
    principal_seen: &mut Option<Principal>,
    route: Result<Route, ApiError>,
    headers: &HeaderMap,
    body: Body,
    budget_spent: Option<BudgetSpent>,
) -> Result<Answer, ApiError> {
    let pipeline = &state.pipeline;
    KitHook::unauthorized(staged)?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let principal = pipeline.authenticate(authorization, budget_spent).await?;
    *principal_seen = Some(principal.clone());
    Pipeline::plan(&principal)?;
    let _slot = pipeline.slot(&principal)?;
    let route = route?;
    let agent = route.agent;
    version(headers)?;
    let params = request(route, headers, body, state).await?;
    let runs_a_skill = params.0.runs_a_skill(pipeline.capabilities);
    let (row, params) = params;
    pipeline
        .kit
        .select(staged, headers, || Some(params.clone()));
    let params_tree = KitHook::wants_params(staged).then(|| params.clone());
    KitHook::refusals(staged, params_tree, runs_a_skill)?;
    let simulation = KitHook::simulation(staged, headers, runs_a_skill);
    let mut call = row.parse(Params::Tree(params), pipeline.capabilities)?;
    call.with_caller(bindings::caller(headers, agent, simulation))?;
    tracing::debug!(method = row.name, binding = BINDING, user = %UserText(&principal.sub), plan = principal.plan.as_str(), "call");
    let outcome = call::serve(&pipeline.service, &principal, call)
        .await
        .and_then(|served| methods::render(Version::V1, served, state.agent_cards()));
    let streamed = matches!(outcome, Ok(Answer::Stream(_)));
    pipeline
        .kit
        .answered(staged, outcome.is_ok(), streamed)
        .await;
    outcome
}

/// The binding speaks 1.0 only: no `A2A-Version` (or an empty one) is 1.0, a 1.0 version is
/// served, any other is refused (0.3's REST binding has other URLs and shapes). The gRPC
/// binding, 1.0 only too, reads its `a2a-version` metadata the same way.
pub(crate) fn version(headers: &HeaderMap) -> Result<(), ApiError> {
    match version_header(headers).map(str::trim) {
        None | Some("") => Ok(()),
        Some(version) => match Wire::from_header(Some(version)) {
            Wire::V1 => Ok(()),
            Wire::V03 | Wire::Unsupported(_) => {
                Err(ApiError::VersionNotSupported(version.to_string()))
            }
        },
    }
}

/// The operation's params: the body's members (a ProtoJSON object, when the operation reads
/// one) with the path's ids and the query's options over them.
async fn request(
    route: Route,
    headers: &HeaderMap,
    body: Body,
    state: &AppState,
) -> Result<(&'static methods::Method, Value), ApiError> {
    let Route {
        row,
        fields,
        body: use_of_body,
        ..
    } = route;
    let mut members = serde_json::Map::new();
    if use_of_body != BodyUse::None {
        let limit = state.body_limits.max_bytes;
        let read = envelope::read_body(body, headers, limit)
            .await
            .map_err(|fault| unread(fault, state))?;
        if !read.is_empty() || use_of_body == BodyUse::Required {
            media_type(headers)?;
            match serde_json::from_slice::<Value>(&read) {
                Ok(Value::Object(object)) => members = object,
                Ok(_) => {
                    return Err(ApiError::InvalidParams(
                        "the body must be a JSON object".into(),
                    ));
                }
                Err(e) => return Err(ApiError::Parse(format!("Parse error: {e}"))),
            }
        }
    }
    members.extend(fields);
    Ok((row, Value::Object(members)))
}

/// A body that could not be read within its limits.
fn unread(fault: BodyFault, state: &AppState) -> ApiError {
    let (message, status) = match fault {
        BodyFault::TooLarge => (
            format!(
                "Invalid request: the body is larger than the limit of {} bytes",
                state.body_limits.max_bytes
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        BodyFault::TooSlow => (
            format!(
                "Invalid request: the body did not arrive within {} seconds",
                state.body_limits.read_timeout.as_secs()
            ),
            StatusCode::REQUEST_TIMEOUT,
        ),
        BodyFault::Broken => (
            "Invalid request: the body could not be read".into(),
            StatusCode::BAD_REQUEST,
        ),
    };
    ApiError::InvalidRequest { message, status }
}

/// The media type of a body: `application/a2a+json` or `application/json` (415 otherwise).
fn media_type(headers: &HeaderMap) -> Result<(), ApiError> {
    if envelope::is_json(headers) {
        return Ok(());
    }
    Err(ApiError::InvalidRequest {
        message: "Invalid request: Content-Type must be application/a2a+json or application/json"
            .into(),
        status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
    })
}

/// Tells the kit the call, with what it was answered.
fn record(
    hook: &KitHook,
    staged: &Staged,
    headers: &HeaderMap,
    called: Called<'_>,
    outcome: &Result<Answer, ApiError>,
) {
    let mut stand_in = None;
    let outcome = methods::recorded(outcome, &mut stand_in);
    let call = Exchanged {
        request_id: called.request_id,
        request: called.request,
        id: None,
        method: called.method,
        wire: Wire::V1.label(),
        binding: BINDING,
        principal: called.principal,
        outcome,
        content_type: None,
        envelope: None,
    };
    hook.record(staged, headers, call);
}

/// A streamed answer: each event a 1.0 `StreamResponse`; a stream that cannot be read on, or
/// that is refused for its budget, ends with that failure as a `google.rpc.Status`.
fn event_stream(streamed: Streamed, request_id: &str) -> Response {
    let failure = error::status_body(
        &ApiError::Internal("a task's events could not be read on".into()),
        request_id,
    );
    let request_id = request_id.to_string();
    let retry_after_secs = streamed.subscription.keepalive().as_secs();
    let refusal: sse::Refusal = Box::new(move |budget| {
        let error = ApiError::OverBudget {
            budget,
            retry_after_secs,
        };
        error::status_body(&error, &request_id)
    });
    let endings = sse::Endings { failure, refusal };
    let mut response = sse::event_stream(streamed.subscription, None, EventWire::V1Bare, endings);
    if let Some((decision, bucket)) = streamed.rate {
        rate_headers(response.headers_mut(), decision, bucket.as_str());
    }
    response
}

/// The HTTP+JSON form of the edge's refusals (load shedding, the loopback check): answered
/// before the body is read.
pub(crate) fn edge_refusal(error: ApiError, _headers: &HeaderMap) -> Response {
    error::status_response(error, "-", None)
}
