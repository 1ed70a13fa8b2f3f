//! The JSON-RPC endpoint: one call through the pipeline's steps (docs/architecture.md), with
//! only JSON-RPC's framing here — the envelope and its id, the wire the answer is spelt in, and
//! the writing of a reply, a failure or an event stream.

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use tower_http::request_id::RequestId;
use tracing::Instrument;

use a2a_types::jsonrpc::{self, Id};

use crate::auth::Principal;
use crate::bindings::jsonrpc::envelope::{self, Framed, ParsedBody};
use crate::bindings::jsonrpc::methods::{self, Answer, Method};
use crate::bindings::jsonrpc::sse::{self, EventWire};
use crate::bindings::{self, AppState};
use crate::edge::guard::BudgetSpent;
use crate::error::{ApiError, Failure};
use crate::paths::RPC_PATH;
use crate::pipeline::Pipeline;
use crate::pipeline::call::{self, Call};
use crate::pipeline::kit::{self, Exchanged, FromHeader, KitHook, Staged};
use crate::respond::{json_bytes, rate_headers};
use crate::telemetry::{UserText, traces};
use crate::wire::{Wire, version_header};

/// The label the binding's calls are counted under.
pub(crate) const BINDING: &str = "jsonrpc";

/// Answers a call. The token and the plan are checked from the headers alone, before the body
/// is read, so a request without a valid token is answered at once (with `id` null) and never
/// holds a slot while its body arrives. With the conformance kit on, the call is then told to
/// it, with what it was answered.
pub(crate) async fn rpc_handler(
    State(state): State<Arc<AppState>>,
    request_id: Option<Extension<RequestId>>,
    budget_spent: Option<Extension<BudgetSpent>>,
    header_scenario: FromHeader,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let extensions = (request_id, budget_spent, header_scenario);
    handle(&state, None, extensions, headers, body).await
}

/// Answers a call to a skill's own agent (`/agents/{skill_id}`) as [`rpc_handler`] does, a
/// message without `metadata.skillId` going to that skill; a path naming no skill is a 404.
pub(crate) async fn skill_rpc_handler(
    State(state): State<Arc<AppState>>,
    skill: Result<Path<String>, PathRejection>,
    request_id: Option<Extension<RequestId>>,
    budget_spent: Option<Extension<BudgetSpent>>,
    header_scenario: FromHeader,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let skill = bindings::skill_in_path(skill);
    let Some((&skill_id, _)) = state.skill_cards.get_key_value(skill.as_str()) else {
        return bindings::no_skill_agent(&state, &skill);
    };
    let extensions = (request_id, budget_spent, header_scenario);
    handle(&state, Some(skill_id), extensions, headers, body).await
}

/// The JSON-RPC form of the edge's refusals (load shedding, the loopback check): answered
/// before the body is read, so with `id` null, in the wire the `A2A-Version` header names.
pub(crate) fn edge_refusal(error: ApiError, _path: &str, headers: &HeaderMap) -> Response {
    let wire = Wire::from_header(version_header(headers));
    Failure::new(error, wire, None, "-").into_response()
}

/// The request's extensions the endpoint reads: its id, a spent failed-authentication budget,
/// and the conformance kit's scenario from the header.
type CallExtensions = (
    Option<Extension<RequestId>>,
    Option<Extension<BudgetSpent>>,
    FromHeader,
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
    let mut answered = Answered::new(
        methods::select(version_header(&headers), None),
        KitHook::stage(header_scenario),
    );
    // On the heap: the handler's own future stays small, and the layers above it move it
    // several times per call (a large future inline cost ~11 k instructions of copying a call).
    let span = traces::call_span(BINDING, &request_id, &headers);
    let checked = Box::pin(checks(
        &mut answered,
        state,
        default_skill,
        &headers,
        body,
        budget_spent,
    ))
    .instrument(span.clone())
    .await;
    bindings::trace_call(&span, answered.row, answered.principal.as_ref(), &checked);
    answered.outcome = checked;
    let hook = &state.pipeline.kit;
    if hook.kit().is_some() {
        answered.record(hook, &headers, &request_id);
    }
    let staged = std::mem::take(&mut answered.staged);
    let mut response = answered.finish(state, &request_id, started, staged.simulated());
    hook.mark(&staged, &mut response);
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
    /// What the conformance kit staged.
    staged: Staged,
    /// A wrong `Content-Type`, as sent (for the kit).
    content_type: Option<String>,
    /// The exact envelope fault (for the kit).
    envelope: Option<String>,
}

/// The order of checks: a simulated `unauthorized` (from the header), the token and the plan
/// from the headers, the user's in-flight slot (held until the answer is made), then the body:
/// media type and envelope, the version and notification refusals, the other simulated
/// refusals, and the call; last, a `slow` delay of an answer the call earned.
async fn checks(
    answered: &mut Answered,
    state: &AppState,
    default_skill: Option<&'static str>,
    headers: &HeaderMap,
    body: Body,
    budget_spent: Option<BudgetSpent>,
) -> Result<Answer, ApiError> {
    let pipeline = &state.pipeline;
    KitHook::unauthorized(&mut answered.staged)?;
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let principal = pipeline.authenticate(authorization, budget_spent).await?;
    answered.principal = Some(principal.clone());
    Pipeline::plan(&principal)?;
    let _slot = pipeline.slot(&principal)?;
    let read = envelope::read_body(body, headers, state.body_limits.max_bytes).await;
    let body = ParsedBody::of(&read);
    answered.hints(&body, headers);
    pipeline
        .kit
        .select(&mut answered.staged, headers, || match &body {
            ParsedBody::Unread(_) => None,
            parsed => Some(parsed.params_tree()),
        });
    answered.media_type(headers)?;
    let params_tree = KitHook::wants_params(&answered.staged).then(|| body.params_tree());
    let request = answered.frame(envelope::into_call(body, state.body_limits))?;
    let row = answered.row;
    let runs_a_skill = row.is_some_and(|row| row.runs_a_skill(pipeline.capabilities));
    answered.version()?;
    let request = answered.notification(request, pipeline)?;
    KitHook::refusals(&mut answered.staged, params_tree, runs_a_skill)?;
    let simulation = KitHook::simulation(&mut answered.staged, headers, runs_a_skill);
    let (row, mut call) = answered.call(request, pipeline)?;
    call.with_caller(bindings::caller(headers, default_skill, simulation))?;
    tracing::debug!(method = row.name, user = %UserText(&principal.sub), plan = principal.plan.as_str(), "call");
    let outcome = call::serve(&pipeline.service, &principal, call)
        .await
        .and_then(|served| methods::render(row.version, served, state.agent_cards()));
    let streamed = matches!(outcome, Ok(Answer::Stream(_)));
    pipeline
        .kit
        .answered(&mut answered.staged, outcome.is_ok(), streamed)
        .await;
    outcome
}

impl Answered {
    fn new(wire: Wire, staged: Staged) -> Self {
        Answered {
            method: "-".into(),
            row: None,
            id: None,
            wire,
            outcome: Err(ApiError::Internal("the call was not checked".into())),
            principal: None,
            staged,
            content_type: None,
            envelope: None,
        }
    }

    /// The id, method and wire, as far as the body parses: the id is echoed even on refusals,
    /// and the method chooses the wire the refusal is spelt in.
    fn hints(&mut self, body: &ParsedBody<'_>, headers: &HeaderMap) {
        let (id_hint, method_hint) = body.hints();
        self.row = method_hint.as_deref().and_then(methods::find);
        self.wire = methods::select(version_header(headers), self.row);
        self.id = id_hint;
        if let Some(method) = method_hint {
            self.method = method;
        }
    }

    /// The media type: JSON only (415).
    fn media_type(&mut self, headers: &HeaderMap) -> Result<(), ApiError> {
        if envelope::is_json(headers) {
            return Ok(());
        }
        self.content_type = Some(kit::wrong_media(headers));
        Err(ApiError::InvalidRequest {
            message:
                "Invalid request: Content-Type must be application/json or application/a2a+json"
                    .into(),
            status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
        })
    }

    /// The envelope: the framed call, whose method and id are now the call's own.
    fn frame<'a>(
        &mut self,
        framed: Result<Framed<'a>, (Option<Id>, ApiError)>,
    ) -> Result<Framed<'a>, ApiError> {
        let request = match framed {
            Ok(request) => request,
            Err((id, error)) => {
                if matches!(
                    error,
                    ApiError::InvalidRequest {
                        status: StatusCode::OK,
                        ..
                    } | ApiError::Parse(_)
                ) {
                    self.envelope = Some(error.to_string());
                }
                self.id = id;
                return Err(error);
            }
        };
        if request.method != self.method {
            self.row = methods::find(&request.method);
        }
        self.method.clone_from(&request.method);
        self.id.clone_from(&request.id);
        Ok(request)
    }

    /// An `A2A-Version` this server does not speak.
    fn version(&self) -> Result<(), ApiError> {
        match &self.wire {
            Wire::Unsupported(version) => Err(ApiError::VersionNotSupported(version.clone())),
            Wire::V03 | Wire::V1 => Ok(()),
        }
    }

    /// A notification is checked like any call (method, then params) and only then refused:
    /// every A2A call expects an answer, so nothing is run without one.
    fn notification<'a>(
        &mut self,
        request: Framed<'a>,
        pipeline: &Pipeline,
    ) -> Result<Framed<'a>, ApiError> {
        if request.id.is_some() {
            return Ok(request);
        }
        let checked = match self.row {
            Some(row) => row.parse(request.params, pipeline.capabilities).map(drop),
            None => Err(ApiError::MethodNotFound(self.method.clone())),
        };
        let missing_id = ApiError::InvalidRequest {
            message: "Invalid request: `id` is missing; notifications are not supported, every A2A call is answered".into(),
            status: StatusCode::OK,
        };
        self.envelope = Some(missing_id.to_string());
        Err(checked.err().unwrap_or(missing_id))
    }

    /// The method's typed request, or the refusal of its method or params.
    fn call(
        &self,
        request: Framed<'_>,
        pipeline: &Pipeline,
    ) -> Result<(&'static Method, Call), ApiError> {
        let row = self
            .row
            .ok_or_else(|| ApiError::MethodNotFound(self.method.clone()))?;
        Ok((row, row.parse(request.params, pipeline.capabilities)?))
    }

    /// Tells the kit the call, with what it was answered.
    fn record(&self, hook: &KitHook, headers: &HeaderMap, request_id: &str) {
        let mut stand_in = None;
        let outcome = methods::recorded(&self.outcome, &mut stand_in);
        let call = Exchanged {
            request_id,
            request: format!("POST {RPC_PATH}"),
            id: self.id.as_ref(),
            method: &self.method,
            wire: self.wire.label(),
            binding: BINDING,
            principal: self.principal.as_ref(),
            outcome,
            content_type: self.content_type.clone(),
            envelope: self.envelope.clone(),
        };
        hook.record(&self.staged, headers, call);
    }

    /// Counts the call (simulated answers under the outcome `simulated`) and writes the
    /// response: a success's result spliced into the envelope as it is, a failure through the
    /// one renderer.
    fn finish(
        self,
        state: &AppState,
        request_id: &str,
        started: Instant,
        simulated: bool,
    ) -> Response {
        let label = |real: &'static str| if simulated { "simulated" } else { real };
        let method = methods::label(self.row);
        match self.outcome {
            Ok(Answer::Stream(streamed)) => {
                state
                    .metrics
                    .request(BINDING, method, label("ok"), started.elapsed());
                event_stream(streamed, self.wire.is_v1(), self.id, request_id)
            }
            Ok(Answer::Reply(reply)) => {
                state
                    .metrics
                    .request(BINDING, method, label("ok"), started.elapsed());
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
                    .request(BINDING, method, label(error.outcome()), started.elapsed());
                let failure = Failure::new(error, self.wire, self.id, request_id)
                    .with_challenge(&state.challenge);
                if self.row.is_some_and(Method::streams) {
                    failure.into_event_stream()
                } else {
                    failure.into_response()
                }
            }
        }
    }
}

/// A streamed answer: each event a JSON-RPC response with the call's id, in its wire; a
/// stream that cannot be read on, or that is refused for its budget, ends with that failure.
fn event_stream(
    streamed: crate::service::Streamed,
    v1: bool,
    id: Option<Id>,
    request_id: &str,
) -> Response {
    let (wire, events) = if v1 {
        (Wire::V1, EventWire::V1)
    } else {
        (Wire::V03, EventWire::V03)
    };
    let failure = Failure::new(
        ApiError::Internal("a task's events could not be read on".into()),
        wire,
        id.clone(),
        request_id,
    )
    .body();
    let (refusal_id, request_id) = (id.clone(), request_id.to_string());
    let retry_after_secs = streamed.subscription.keepalive().as_secs();
    let refusal: sse::Refusal = Box::new(move |budget| {
        let error = ApiError::OverBudget {
            budget,
            retry_after_secs,
        };
        let wire = if v1 { Wire::V1 } else { Wire::V03 };
        Failure::new(error, wire, refusal_id.clone(), &request_id).body()
    });
    let endings = sse::Endings { failure, refusal };
    let mut response = sse::event_stream(streamed.subscription, id, events, endings);
    if let Some((decision, bucket)) = streamed.rate {
        rate_headers(response.headers_mut(), decision, bucket.as_str());
    }
    response
}
