//! The JSON-RPC endpoint: the order of checks of one call (docs/architecture.md), from the
//! headers to the method table and the service, and the writing of its answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde_json::Value;
use tower_http::request_id::RequestId;

use a2a_types::jsonrpc::{self, BorrowedRequest, Id};

use super::AppState;
use crate::auth::Principal;
use crate::body_deadline;
use crate::conformance::layer::HeaderScenario;
use crate::conformance::{self, Scenario};
use crate::dispatch::{self, Answer, Method};
use crate::error::{ApiError, Failure};
use crate::guard::BudgetSpent;
use crate::params::Params;
use crate::paths::RPC_PATH;
use crate::respond::{json_bytes, rate_headers};
use crate::service::{ACCEPT_LANGUAGE, DEFAULT_SKILL, Reply};
use crate::sse::{self, EventWire};
use crate::telemetry::UserText;
use crate::wire::{Wire, version_header};

/// Why a body could not be read.
#[derive(Debug, Clone, Copy)]
enum BodyFault {
    TooLarge,
    TooSlow,
    Broken,
}

async fn read_body(body: Body, headers: &HeaderMap, limit: usize) -> Result<Bytes, BodyFault> {
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
enum ParsedBody<'a> {
    Call(BorrowedRequest<'a>),
    Tree(Result<Value, serde_json::Error>),
    Unread(BodyFault),
}

impl<'a> ParsedBody<'a> {
    fn of(read: &'a Result<Bytes, BodyFault>) -> Self {
        match read {
            Ok(bytes) => match jsonrpc::parse_request_borrowed(bytes) {
                Some(call) => ParsedBody::Call(call),
                None => ParsedBody::Tree(serde_json::from_slice(bytes)),
            },
            Err(fault) => ParsedBody::Unread(*fault),
        }
    }

    /// The id and method, as far as the body parses.
    fn hints(&self) -> (Option<Id>, Option<String>) {
        match self {
            ParsedBody::Call(call) => (Some(call.id.clone()), Some(call.method.clone())),
            ParsedBody::Tree(Ok(value)) => peek_id_and_method(value),
            _ => (None, None),
        }
    }

    /// The `params` member as a tree, for the conformance kit's rare paths.
    fn params_tree(&self) -> Value {
        match self {
            ParsedBody::Call(call) => Params::Raw(call.params).into_tree(),
            ParsedBody::Tree(Ok(value)) => value["params"].clone(),
            _ => Value::Null,
        }
    }
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
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
struct Call<'a> {
    id: Option<Id>,
    method: String,
    params: Params<'a>,
}

/// Answers a call. The token and the plan are checked from the headers alone, before the body
/// is read, so a request without a valid token is answered at once (with `id` null) and never
/// holds a slot while its body arrives. With the conformance kit on, the call is then told to
/// it, with what it was answered.
pub(super) async fn rpc_handler(
    State(state): State<Arc<AppState>>,
    request_id: Option<Extension<RequestId>>,
    budget_spent: Option<Extension<BudgetSpent>>,
    header_scenario: Option<Extension<HeaderScenario>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let extensions = (request_id, budget_spent, header_scenario);
    handle(&state, None, extensions, headers, body).await
}

/// Answers a call to a skill's own agent (`/agents/{skill_id}`) as [`rpc_handler`] does, a
/// message without `metadata.skillId` going to that skill; a path naming no skill is a 404.
pub(super) async fn skill_rpc_handler(
    State(state): State<Arc<AppState>>,
    skill: Result<Path<String>, PathRejection>,
    request_id: Option<Extension<RequestId>>,
    budget_spent: Option<Extension<BudgetSpent>>,
    header_scenario: Option<Extension<HeaderScenario>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let skill = super::skill_in_path(skill);
    let Some((&skill_id, _)) = state.skill_cards.get_key_value(skill.as_str()) else {
        return super::no_skill_agent(&state, &skill);
    };
    let extensions = (request_id, budget_spent, header_scenario);
    handle(&state, Some(skill_id), extensions, headers, body).await
}

/// The request's extensions the endpoint reads: its id, a spent failed-authentication budget,
/// and the conformance kit's scenario from the header.
type CallExtensions = (
    Option<Extension<RequestId>>,
    Option<Extension<BudgetSpent>>,
    Option<Extension<HeaderScenario>>,
);

async fn handle(
    state: &AppState,
    default_skill: Option<&'static str>,
    (request_id, budget_spent, header_scenario): CallExtensions,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    let request_id = request_id
        .and_then(|Extension(id)| id.header_value().to_str().ok().map(str::to_owned))
        .unwrap_or_else(|| "-".into());
    let budget_spent = budget_spent.map(|Extension(spent)| spent);
    let from_header = header_scenario.and_then(|Extension(HeaderScenario(selected))| selected);
    // On the heap: the handler's own future stays small, and the layers above it move it
    // several times per call (a large future inline cost ~11 k instructions of copying a call).
    let answered = Box::pin(DEFAULT_SKILL.scope(
        default_skill,
        answer(state, &headers, body, budget_spent, from_header),
    ))
    .await;
    let Some(kit) = state.kit.as_deref() else {
        return answered.finish(state, &request_id, started);
    };
    let mut exchange = kit.exchange(
        &headers,
        format!("POST {RPC_PATH}"),
        &request_id,
        answered.id.as_ref(),
        (answered.method != "-").then_some(answered.method.as_str()),
        answered.wire.label(),
    );
    exchange.scenario = answered.scenario;
    exchange.simulated = answered.simulated;
    let owner = match &answered.principal {
        Some(principal) => {
            if let Some(token) = exchange.token {
                kit.recorder().verified(token, &principal.owner);
            }
            Some(principal.owner.clone())
        }
        None => exchange
            .token
            .and_then(|token| kit.recorder().owner_of(&token)),
    };
    if let Some(owner) = &owner {
        let streamed;
        let recorded = match &answered.outcome {
            Ok(Answer::Reply(reply)) => Ok(reply),
            Ok(Answer::Stream(stream)) => {
                streamed = Reply {
                    result: Bytes::new(),
                    rate: stream.rate,
                    sent: None,
                };
                Ok(&streamed)
            }
            Err(error) => Err(error),
        };
        let mut outcome = conformance::outcome_of(&answered.method, recorded, answered.simulated);
        outcome.content_type = answered.content_type.clone();
        outcome.envelope = answered.envelope.clone();
        kit.recorder().call(owner, &exchange, &outcome);
    }
    let simulated = answered.simulated.then_some(answered.scenario).flatten();
    let mut response = answered.finish(state, &request_id, started);
    if let Some(scenario) = simulated {
        tracing::info!(
            scenario = scenario.name(),
            "simulated by the conformance kit"
        );
        response
            .extensions_mut()
            .insert(conformance::Simulated(scenario));
    }
    response
}

/// What the endpoint decided for one call, before it is written as a response.
struct Answered {
    method: String,
    /// The method's row in the method table, when the name is one of it.
    row: Option<&'static Method>,
    id: Option<Id>,
    wire: Wire,
    outcome: Result<Answer, ApiError>,
    /// The verified caller, when the token was accepted.
    principal: Option<Principal>,
    /// The scenario the call asked for (the conformance kit), when it parsed.
    scenario: Option<Scenario>,
    /// Whether the scenario decided the answer (a refusal or the service's override).
    simulated: bool,
    /// A wrong `Content-Type`, as sent (for the kit).
    content_type: Option<String>,
    /// The exact envelope fault (for the kit).
    envelope: Option<String>,
}

impl Answered {
    fn refused(wire: Wire, id: Option<Id>, error: ApiError) -> Self {
        Answered {
            method: "-".into(),
            row: None,
            id,
            wire,
            outcome: Err(error),
            principal: None,
            scenario: None,
            simulated: false,
            content_type: None,
            envelope: None,
        }
    }

    /// Counts the call (simulated answers under the outcome `simulated`) and writes the
    /// response: a success's result spliced into the envelope as it is, a failure through the
    /// one renderer.
    fn finish(self, state: &AppState, request_id: &str, started: Instant) -> Response {
        let label = |real: &'static str| if self.simulated { "simulated" } else { real };
        let method = dispatch::label(self.row);
        match self.outcome {
            Ok(Answer::Stream(streamed)) => {
                state
                    .metrics
                    .request(method, label("ok"), started.elapsed());
                let (wire, events) = if self.wire.is_v1() {
                    (Wire::V1, EventWire::V1)
                } else {
                    (Wire::V03, EventWire::V03)
                };
                let v1 = self.wire.is_v1();
                let failure = Failure::new(
                    ApiError::Internal("a task's events could not be read on".into()),
                    wire,
                    self.id.clone(),
                    request_id,
                )
                .body();
                let (id, request_id) = (self.id.clone(), request_id.to_string());
                let retry_after_secs = streamed.subscription.keepalive().as_secs();
                let refusal: sse::Refusal = Box::new(move |budget| {
                    let error = ApiError::OverBudget {
                        budget,
                        retry_after_secs,
                    };
                    let wire = if v1 { Wire::V1 } else { Wire::V03 };
                    Failure::new(error, wire, id.clone(), &request_id).body()
                });
                let endings = sse::Endings { failure, refusal };
                let mut response =
                    sse::event_stream(streamed.subscription, self.id, events, endings);
                if let Some((decision, bucket)) = streamed.rate {
                    rate_headers(response.headers_mut(), decision, bucket.as_str());
                }
                response
            }
            Ok(Answer::Reply(reply)) => {
                state
                    .metrics
                    .request(method, label("ok"), started.elapsed());
                let body = jsonrpc::success_body(self.id.as_ref(), &reply.result);
                let mut response = json_bytes(StatusCode::OK, Bytes::from(body), None);
                if let Some((decision, bucket)) = reply.rate {
                    rate_headers(response.headers_mut(), decision, bucket.as_str());
                }
                response
            }
            Err(error) => {
                state
                    .metrics
                    .request(method, label(error.outcome()), started.elapsed());
                Failure::new(error, self.wire, self.id, request_id)
                    .with_challenge(&state.challenge)
                    .into_response()
            }
        }
    }
}

/// The order of checks: a simulated `unauthorized` (from the header), the token and the plan
/// from the headers, the user's in-flight slot (held until the answer is made), then the body:
/// media type and envelope, the other simulated refusals, and the call; last, a `slow` delay
/// of an answer the call earned.
async fn answer(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    budget_spent: Option<BudgetSpent>,
    from_header: Option<Result<Scenario, String>>,
) -> Answered {
    let header_wire = dispatch::select(version_header(headers), None);
    let kit = state.kit.as_deref();
    if let Some(Ok(Scenario::Unauthorized)) = from_header
        && let Some(error) = Scenario::Unauthorized.refusal(None)
    {
        let mut answered = Answered::refused(header_wire, None, error);
        answered.scenario = Some(Scenario::Unauthorized);
        answered.simulated = true;
        return answered;
    }
    let principal = match state
        .authenticator
        .authenticate(
            headers
                .get(header::AUTHORIZATION)
                .map(HeaderValue::as_bytes),
        )
        .await
    {
        Ok(principal) => principal,
        Err(error) => {
            let error = match budget_spent {
                Some(spent) => ApiError::RateLimited {
                    retry_after_secs: spent.retry_after_secs,
                    bucket: "unauthenticated",
                    limit: Some(spent.per_minute),
                },
                None => ApiError::Unauthorized(error),
            };
            return Answered::refused(header_wire, None, error);
        }
    };
    let mut answered = Answered::refused(header_wire, None, ApiError::PlanRequired);
    answered.principal = Some(principal.clone());
    if !principal.plan.allows_a2a() {
        return answered;
    }
    // Held until the answer is made: a user trickling bodies or sleeping in `slow` holds at
    // most its share of the server's slots.
    let Some(_slot) = state.user_slots.try_hold(&principal.owner) else {
        answered.outcome = Err(ApiError::RateLimited {
            retry_after_secs: 1,
            bucket: "in_flight",
            limit: Some(state.user_slots.cap()),
        });
        return answered;
    };
    let read = read_body(body, headers, state.max_body_bytes).await;
    let body = ParsedBody::of(&read);
    let (id_hint, method_hint) = body.hints();
    answered.row = method_hint.as_deref().and_then(dispatch::find);
    answered.wire = dispatch::select(version_header(headers), answered.row);
    answered.id = id_hint;
    if let Some(method) = method_hint {
        answered.method = method;
    }
    let selected = match (kit, from_header) {
        (None, _) => None,
        (Some(_), Some(selected)) => Some(selected),
        (Some(kit), None) => {
            let metadata = match &body {
                ParsedBody::Unread(_) => None,
                parsed => parsed.params_tree()["message"]["metadata"]
                    [conformance::SIMULATE_METADATA]
                    .as_str()
                    .map(str::to_owned),
            };
            kit.scenario(headers, metadata.as_deref())
        }
    };
    answered.scenario = selected.as_ref().and_then(|s| s.as_ref().ok().copied());
    if !is_json(headers) {
        let sent = headers
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        answered.content_type = Some(match &sent {
            Some(media) => format!(
                "Content-Type: {}",
                conformance::truncated(media, conformance::KEPT_CHARS)
            ),
            None => "no Content-Type header".into(),
        });
        answered.outcome = Err(ApiError::InvalidRequest {
            message: "Invalid request: Content-Type must be application/json".into(),
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
        });
        return answered;
    }
    let params_tree =
        matches!(selected, Some(Ok(Scenario::TaskNotFound))).then(|| body.params_tree());
    let request = match into_call(body, state) {
        Ok(call) => call,
        Err((id, error)) => {
            if matches!(
                error,
                ApiError::InvalidRequest {
                    status: StatusCode::OK,
                    ..
                } | ApiError::Parse(_)
            ) {
                answered.envelope = Some(error.to_string());
            }
            answered.id = id;
            answered.outcome = Err(error);
            return answered;
        }
    };
    if request.method != answered.method {
        answered.row = dispatch::find(&request.method);
    }
    answered.method = request.method;
    answered.id = request.id.clone();
    if let Wire::Unsupported(version) = &answered.wire {
        answered.outcome = Err(ApiError::VersionNotSupported(version.clone()));
        return answered;
    }
    let row = answered.row;
    let parse = |params: Params<'_>| match row {
        Some(row) => row.parse(params, state.capabilities),
        None => Err(ApiError::MethodNotFound(answered.method.clone())),
    };
    if request.id.is_none() {
        // A notification is checked like any call (method, then params) and only then refused:
        // every A2A call expects an answer, so nothing is run without one.
        let checked = parse(request.params);
        let missing_id = ApiError::InvalidRequest {
            message: "Invalid request: `id` is missing; notifications are not supported, every A2A call is answered".into(),
            status: StatusCode::OK,
        };
        answered.envelope = Some(missing_id.to_string());
        answered.outcome = Err(checked.err().unwrap_or(missing_id));
        return answered;
    }
    let scenario = match selected {
        None => None,
        Some(Err(why)) => {
            answered.outcome = Err(ApiError::InvalidParams(format!("A2A-Simulate: {why}")));
            return answered;
        }
        Some(Ok(scenario)) => Some(scenario),
    };
    if let Some(scenario) = scenario {
        let task_id = params_tree
            .as_ref()
            .and_then(|p| p.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(error) = scenario.refusal(task_id) {
            answered.simulated = true;
            answered.outcome = Err(error);
            return answered;
        }
    }
    let runs_a_skill = row.is_some_and(|row| row.runs_a_skill(state.capabilities));
    if let Some(Scenario::RateLimited { retry_after_secs }) = scenario
        && !runs_a_skill
    {
        answered.simulated = true;
        answered.outcome = Err(ApiError::RateLimited {
            retry_after_secs,
            bucket: "default",
            limit: None,
        });
        return answered;
    }
    let simulation = scenario
        .and_then(|scenario| scenario.in_service(&conformance::run_name(headers)))
        .filter(|_| runs_a_skill);
    answered.simulated = simulation.is_some()
        || matches!(
            scenario,
            Some(Scenario::Disconnect | Scenario::MalformedResponse)
        );
    let (row, mut call) = match row.map(|row| (row, row.parse(request.params, state.capabilities)))
    {
        Some((row, Ok(call))) => (row, call),
        Some((_, Err(error))) => {
            answered.outcome = Err(error);
            return answered;
        }
        None => {
            answered.outcome = Err(ApiError::MethodNotFound(answered.method.clone()));
            return answered;
        }
    };
    call.simulate(simulation);
    tracing::debug!(method = row.name, user = %UserText(&principal.sub), plan = principal.plan.as_str(), "call");
    let accept_language = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.chars().take(256).collect::<String>());
    answered.outcome = ACCEPT_LANGUAGE
        .scope(
            accept_language,
            dispatch::run(&state.service, &principal, row.version, call),
        )
        .await;
    // A stream scenario shapes an answered stream only; any other answer is the real one.
    if scenario.is_some_and(Scenario::shapes_a_stream)
        && matches!(answered.outcome, Ok(Answer::Stream(_)))
    {
        answered.simulated = true;
    }
    // `slow` delays an answer the call earned: charged (whichever path charged it) and run. A
    // refusal, the rate limiter's included, is answered at once.
    if let (Some(kit), Some(scenario), Ok(_)) = (kit, scenario, &answered.outcome)
        && let Some(delay) = scenario.delay(Duration::from_millis(kit.settings().max_slow_ms))
    {
        tokio::time::sleep(delay).await;
    }
    answered
}

/// The envelope checks: the call, or the id to echo and the refusal.
fn into_call<'a>(
    body: ParsedBody<'a>,
    state: &AppState,
) -> Result<Call<'a>, (Option<Id>, ApiError)> {
    let unread = |message: String, status: StatusCode| {
        Err((None, ApiError::InvalidRequest { message, status }))
    };
    match body {
        ParsedBody::Call(call) => Ok(Call {
            id: Some(call.id),
            method: call.method,
            params: Params::Raw(call.params),
        }),
        ParsedBody::Tree(Ok(value)) => match jsonrpc::request_from_value(value) {
            Ok(request) => Ok(Call {
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
                state.max_body_bytes
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        ParsedBody::Unread(BodyFault::TooSlow) => unread(
            format!(
                "Invalid request: the body did not arrive within {} seconds",
                state.body_read_timeout.as_secs()
            ),
            StatusCode::REQUEST_TIMEOUT,
        ),
        ParsedBody::Unread(BodyFault::Broken) => unread(
            "Invalid request: the body could not be read".into(),
            StatusCode::BAD_REQUEST,
        ),
    }
}
