//! The bindings: how a request on one A2A binding becomes a call of the pipeline, and how the
//! pipeline's outcome is written back in that binding's terms: JSON-RPC ([`jsonrpc`]),
//! HTTP+JSON (`rest`) and gRPC ([`grpc`]).

pub(crate) mod card;
pub mod grpc;
pub mod jsonrpc;
pub(crate) mod rest;

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::StatusCode;
use axum::http::header::{self, HeaderMap, HeaderName};
use axum::response::Response;

use crate::bindings::card::{AgentCards, ServedCards};
use crate::bindings::jsonrpc::envelope::BodyLimits;
use crate::metrics::Metrics;
use crate::paths;
use crate::pipeline::Pipeline;
use crate::pipeline::call::Caller;
use crate::push::Push;
use crate::respond::json_bytes;
use crate::service::Simulation;
use crate::store::TaskStore;

/// Everything the handlers share: the pipeline every binding runs, and what the bindings
/// and the documents need besides.
pub(crate) struct AppState {
    /// The steps of a call and the service they lead to.
    pub(crate) pipeline: Pipeline,
    /// The store, for readiness.
    pub(crate) store: Arc<dyn TaskStore>,
    /// Metrics registry.
    pub(crate) metrics: Arc<Metrics>,
    /// The agent card in both forms, serialised once.
    pub(crate) cards: ServedCards,
    /// The card of each skill's own agent (`/agents/{skill_id}`), by skill id.
    pub(crate) skill_cards: BTreeMap<&'static str, ServedCards>,
    /// The protected-resource metadata, serialised once.
    pub(crate) resource_metadata: Bytes,
    /// `WWW-Authenticate` without an error, for requests without a token.
    pub(crate) challenge: String,
    /// The limits a JSON-RPC body is read within.
    pub(crate) body_limits: BodyLimits,
    /// Push notifications: configs, queue, and the key whose JWK set is served.
    pub(crate) push: Arc<Push>,
    /// Server reflection streams open at once at most (`grpc.max_reflection_streams`).
    pub(crate) max_reflection_streams: usize,
}

impl AppState {
    /// Every agent's cards, of which an extended card is made.
    pub(crate) fn agent_cards(&self) -> AgentCards<'_> {
        AgentCards {
            main: &self.cards,
            skills: &self.skill_cards,
        }
    }
}

/// Writes what a call did on its span, when traces are exported: its method, its owner (the
/// store's hashed owner) and the rate limiter's decision.
pub(crate) fn trace_call(
    span: &tracing::Span,
    row: Option<&'static jsonrpc::methods::Method>,
    principal: Option<&crate::auth::Principal>,
    outcome: &Result<jsonrpc::methods::Answer, crate::error::ApiError>,
) {
    if span.is_disabled() {
        return;
    }
    let owner = principal.map(|p| p.owner.as_str());
    let method = jsonrpc::methods::label(row);
    crate::telemetry::traces::record_call(span, method, owner, rate_limit_label(outcome));
}

/// The call span's `a2a.rate_limit`: `allowed` for a charged call that ran, `limited` for a
/// call the limiter (or a byte budget) refused, `none` for a call nothing charged.
fn rate_limit_label(
    outcome: &Result<jsonrpc::methods::Answer, crate::error::ApiError>,
) -> &'static str {
    use crate::error::ApiError;
    use jsonrpc::methods::Answer;
    let rate = match outcome {
        Ok(Answer::Reply(reply)) => reply.rate.as_ref(),
        Ok(Answer::Stream(streamed)) => streamed.rate.as_ref(),
        Err(ApiError::RateLimited { .. } | ApiError::OverBudget { .. }) => return "limited",
        Err(_) => None,
    };
    match rate {
        Some((crate::limits::Decision::Allowed { .. }, _)) => "allowed",
        Some(_) => "limited",
        None => "none",
    }
}

/// The skill id a skill's agent path names; a segment that does not decode to UTF-8 names no
/// skill, and is answered as an unknown one rather than with the extractor's plain-text 400.
pub(crate) fn skill_in_path(skill: Result<Path<String>, PathRejection>) -> String {
    skill.map_or_else(|_| "(not UTF-8)".to_string(), |Path(skill)| skill)
}

/// The answer for a skill's agent path naming no skill of this server.
pub(crate) fn no_skill_agent(state: &AppState, skill: &str) -> Response {
    let known: Vec<&str> = state.skill_cards.keys().copied().collect();
    let body = serde_json::json!({
        "error": format!(
            "no skill `{}` here; the skills' agents are {}",
            skill.chars().take(64).collect::<String>(),
            known
                .iter()
                .map(|id| paths::skill_agent(id))
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    json_bytes(StatusCode::NOT_FOUND, Bytes::from(body.to_string()), None)
}

/// The header with which an event-stream client names the last event it saw.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The caller's context the headers give, beside the skill its address stands for and the
/// kit's simulation: its language preference (`Accept-Language`, at most 256 characters) and
/// the event a resumed stream saw last (`Last-Event-ID`, at most 64 characters).
pub(crate) fn caller(
    headers: &HeaderMap,
    default_skill: Option<&'static str>,
    simulation: Option<Simulation>,
) -> Caller {
    let text = |name: &HeaderName, most: usize| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(|value| value.chars().take(most).collect::<String>())
    };
    Caller {
        language: text(&header::ACCEPT_LANGUAGE, 256),
        default_skill,
        simulation,
        last_event_id: text(&LAST_EVENT_ID, 64),
    }
}
