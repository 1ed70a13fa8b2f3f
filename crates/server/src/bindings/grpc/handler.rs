//! The gRPC endpoint: one call through the pipeline's steps in their one order (the token, the
//! plan, the user's slot from the metadata alone, then the RPC and the version, the message, the
//! kit's refusals, the call, the kit's delay), with only this binding's framing here: tonic reads
//! the request message and writes the response, its trailers and its errors; the message goes
//! to the 1.0 row as its ProtoJSON tree, and the rendered 1.0 result comes back as the RPC's
//! response message or, for a streaming RPC, a stream of `StreamResponse` messages.

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::http::header::{self, HeaderValue};
use axum::response::Response;
use prost_reflect::DynamicMessage;
use tonic::Status;
use tonic::metadata::MetadataMap;
use tonic::server::Grpc;
use tower::service_fn;
use tower_http::request_id::RequestId;
use tracing::Instrument;

use crate::auth::Principal;
use crate::bindings::grpc::codec::{Encoded, ServerCodec};
use crate::bindings::grpc::framing::FramedBody;
use crate::bindings::grpc::schema::{self, Rpc};
use crate::bindings::grpc::status::{status, trailers_only};
use crate::bindings::grpc::stream::{self, EventStream};
use crate::bindings::jsonrpc::methods::{self, Answer};
use crate::bindings::jsonrpc::params::Params;
use crate::bindings::rest::handler::version;
use crate::bindings::{self, AppState};
use crate::conformance::layer::HeaderScenario;
use crate::edge::guard::BudgetSpent;
use crate::error::ApiError;
use crate::limits::Decision;
use crate::limits::user_slots::UserSlot;
use crate::pipeline::Pipeline;
use crate::pipeline::call;
use crate::pipeline::kit::{Exchanged, KitHook, Staged};
use crate::respond::rate_headers;
use crate::telemetry::{UserText, traces};
use crate::wire::{Version, Wire};

/// The label the binding's calls are counted under.
pub(crate) const BINDING: &str = "grpc";

/// Answers an RPC of the A2A service.
pub(crate) async fn grpc_handler(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let extensions = request.extensions();
    let request_id = extensions
        .get::<RequestId>()
        .and_then(|id| id.header_value().to_str().ok())
        .map_or_else(|| "-".to_string(), str::to_owned);
    let budget_spent = extensions.get::<BudgetSpent>().copied();
    let from_header = extensions.get::<HeaderScenario>().cloned().map(Extension);
    let headers = request.headers().clone();
    let path = request.uri().path().to_string();
    let call = Call {
        state: &state,
        rpc: schema::rpc(&path),
        path: &path,
        headers: &headers,
        request_id: &request_id,
        started: Instant::now(),
        span: traces::call_span(BINDING, &request_id, &headers),
    };
    let mut staged = KitHook::stage(from_header);
    let span = call.span.clone();
    let mut response = Box::pin(call.answer(&mut staged, request, budget_spent))
        .instrument(span)
        .await;
    state.pipeline.kit.mark(&staged, &mut response);
    response
}

/// One call and what its answer is accounted with.
struct Call<'a> {
    state: &'a AppState,
    rpc: Option<&'static Rpc>,
    path: &'a str,
    headers: &'a HeaderMap,
    request_id: &'a str,
    started: Instant,
    span: tracing::Span,
}

impl Call<'_> {
    /// The checks from the metadata, then the RPC served by tonic over the request's body.
    async fn answer(
        &self,
        staged: &mut Staged,
        request: Request,
        budget_spent: Option<BudgetSpent>,
    ) -> Response {
        let mut principal = None;
        let admitted = self.admit(staged, &mut principal, budget_spent).await;
        let (rpc, _slot) = match admitted {
            Ok(admitted) => admitted,
            Err(error) => {
                let status = self.status(&error);
                self.account(staged, principal.as_ref(), &Err(error));
                return trailers_only(status);
            }
        };
        let Some(principal) = principal else {
            return trailers_only(Status::internal("the caller was not kept"));
        };
        let principal = &principal;
        let mut staged = Some(staged);
        let limits = self.state.body_limits;
        let request = request.map(|body| Body::new(FramedBody::new(body, limits)));
        let mut grpc = Grpc::new(ServerCodec::new(rpc.input.clone()))
            .max_decoding_message_size(limits.max_bytes);
        let response = if rpc.row.streams() {
            let service =
                service_fn(move |request| self.streamed(rpc, principal, staged.take(), request));
            grpc.server_streaming(service, request).await
        } else {
            let service =
                service_fn(move |request| self.unary(rpc, principal, staged.take(), request));
            grpc.unary(service, request).await
        };
        response.map(Body::new)
    }

    /// The steps that need no message: the kit's staged `unauthorized`, the token, the plan and
    /// the user's slot (held until the answer is made), then the RPC and `a2a-version`.
    async fn admit(
        &self,
        staged: &mut Staged,
        principal_seen: &mut Option<Principal>,
        budget_spent: Option<BudgetSpent>,
    ) -> Result<(&'static Rpc, UserSlot<'_>), ApiError> {
        let pipeline = &self.state.pipeline;
        KitHook::unauthorized(staged)?;
        let authorization = self
            .headers
            .get(header::AUTHORIZATION)
            .map(HeaderValue::as_bytes);
        let principal = pipeline.authenticate(authorization, budget_spent).await?;
        *principal_seen = Some(principal.clone());
        Pipeline::plan(&principal)?;
        let slot = pipeline.slot(&principal)?;
        let rpc = self
            .rpc
            .ok_or_else(|| ApiError::MethodNotFound(format!("POST {}", self.path)))?;
        version(self.headers)?;
        Ok((rpc, slot))
    }

    /// A unary RPC: the rest of the steps, and the result as the RPC's response message, with
    /// the `RateLimit` metadata of a charged call.
    async fn unary(
        &self,
        rpc: &'static Rpc,
        principal: &Principal,
        staged: Option<&mut Staged>,
        request: tonic::Request<DynamicMessage>,
    ) -> Result<tonic::Response<Encoded>, Status> {
        let staged = staged.ok_or_else(|| Status::internal("the call was answered already"))?;
        let checked = self
            .checks(rpc, principal, staged, request.into_inner())
            .await;
        let (checked, message) = match checked {
            Ok(Answer::Reply(reply)) => match schema::encode_answer(&reply.result, &rpc.output) {
                Ok(message) => (Ok(Answer::Reply(reply)), Some(message)),
                Err(error) => (Err(error), None),
            },
            other => (other, None),
        };
        self.account(staged, Some(principal), &checked);
        match (checked, message) {
            (Ok(Answer::Reply(reply)), Some(message)) => {
                let mut response = tonic::Response::new(message);
                *response.metadata_mut() = rate_metadata(reply.rate);
                Ok(response)
            }
            (Err(error), _) => Err(self.status(&error)),
            _ => Err(self.status(&ApiError::Internal(format!(
                "{} answered with a stream",
                rpc.row.name
            )))),
        }
    }

    /// A server-streaming RPC: the rest of the steps, and the task's events as messages.
    async fn streamed(
        &self,
        rpc: &'static Rpc,
        principal: &Principal,
        staged: Option<&mut Staged>,
        request: tonic::Request<DynamicMessage>,
    ) -> Result<tonic::Response<EventStream>, Status> {
        let staged = staged.ok_or_else(|| Status::internal("the call was answered already"))?;
        let checked = self
            .checks(rpc, principal, staged, request.into_inner())
            .await;
        self.account(staged, Some(principal), &checked);
        match checked {
            Ok(Answer::Stream(streamed)) => {
                let events = stream::events(
                    streamed.subscription,
                    rpc.output.clone(),
                    self.request_id.to_string(),
                );
                let mut response = tonic::Response::new(events);
                *response.metadata_mut() = rate_metadata(streamed.rate);
                Ok(response)
            }
            Ok(Answer::Reply(_)) => Err(self.status(&ApiError::Internal(format!(
                "{} answered without a stream",
                rpc.row.name
            )))),
            Err(error) => Err(self.status(&error)),
        }
    }

    /// The steps after the message is read, as on the other bindings: the kit's scenario and
    /// refusals, the 1.0 row's parse of the message's ProtoJSON tree, the caller's context from
    /// the metadata (`accept-language`, `last-event-id`), the call, and the kit's delay.
    async fn checks(
        &self,
        rpc: &'static Rpc,
        principal: &Principal,
        staged: &mut Staged,
        message: DynamicMessage,
    ) -> Result<Answer, ApiError> {
        let pipeline = &self.state.pipeline;
        let row = rpc.row;
        let params = schema::to_tree(&message)?;
        let runs_a_skill = row.runs_a_skill(pipeline.capabilities);
        pipeline
            .kit
            .select(staged, self.headers, || Some(params.clone()));
        let params_tree = KitHook::wants_params(staged).then(|| params.clone());
        KitHook::refusals(staged, params_tree, runs_a_skill)?;
        let simulation = KitHook::simulation(staged, self.headers, runs_a_skill);
        let mut call = row.parse(Params::Tree(params), pipeline.capabilities)?;
        call.with_caller(bindings::caller(self.headers, None, simulation))?;
        tracing::debug!(method = row.name, binding = BINDING, user = %UserText(&principal.sub), plan = principal.plan.as_str(), "call");
        let outcome = call::serve(&pipeline.service, principal, call)
            .await
            .and_then(|served| methods::render(Version::V1, served, self.state.agent_cards()));
        let streamed = matches!(outcome, Ok(Answer::Stream(_)));
        pipeline
            .kit
            .answered(staged, outcome.is_ok(), streamed)
            .await;
        outcome
    }

    /// Counts the call in the metrics under its method, the binding and the outcome
    /// (`simulated` for the kit's), writes it on its span, and tells the kit.
    fn account(
        &self,
        staged: &Staged,
        principal: Option<&Principal>,
        checked: &Result<Answer, ApiError>,
    ) {
        let row = self.rpc.map(|rpc| rpc.row);
        bindings::trace_call(&self.span, row, principal, checked);
        let outcome = match checked {
            _ if staged.simulated() => "simulated",
            Ok(_) => "ok",
            Err(error) => error.outcome(),
        };
        self.state.metrics.request(
            BINDING,
            methods::label(row),
            outcome,
            self.started.elapsed(),
        );
        let hook = &self.state.pipeline.kit;
        if hook.kit().is_some() {
            let mut stand_in = None;
            let call = Exchanged {
                request_id: self.request_id,
                request: format!("POST {}", self.path),
                id: None,
                method: row.map_or("-", |row| row.name),
                wire: Wire::V1.label(),
                binding: BINDING,
                principal,
                outcome: methods::recorded(checked, &mut stand_in),
                content_type: None,
                envelope: None,
            };
            hook.record(staged, self.headers, call);
        }
    }

    fn status(&self, error: &ApiError) -> Status {
        status(error, self.request_id, Some(&self.state.challenge))
    }
}

/// The `RateLimit` headers of a charged call, as response metadata.
fn rate_metadata(rate: Option<(Decision, skills::Bucket)>) -> MetadataMap {
    let mut headers = HeaderMap::new();
    if let Some((decision, bucket)) = rate {
        rate_headers(&mut headers, decision, bucket.as_str());
    }
    MetadataMap::from_headers(headers)
}
