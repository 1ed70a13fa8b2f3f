//! The client conformance kit: every error path of the endpoint on demand, and a report of
//! what a client did wrong, for a client author's tests and CI.
//!
//! Enabled only by configuration (`A2A__CONFORMANCE__ENABLED=true`), and only with the
//! `development` or `test` profile unless `A2A__CONFORMANCE__ALLOW_WITH_PRODUCTION_PROFILE`
//! is also set. When disabled nothing of it exists: no header is read, nothing is recorded,
//! its routes answer 404.
//!
//! - **Simulation.** A request header `A2A-Simulate` (or `message.metadata.simulate` of a
//!   `message/send`) selects one [`Scenario`] for that call. The endpoint parses it into a typed
//!   value and applies it where the real condition arises: `unauthorized` before the token is
//!   checked, every other scenario only after it was verified; `rate_limited` and
//!   `skill_failed` are passed to the service as an explicit parameter. A simulated answer is
//!   marked [`Simulated`], so the guards do not count it and logs and metrics say so.
//! - **Report.** Each call of a verified token's owner is checked against what a well-behaved
//!   client does, per run (`A2A-Client-Run`); `GET /conformance/report` shows a caller the
//!   runs of its own token's owner, and nothing else (see [`routes`]).
//!
//! - **Webhooks.** `push_retried` and `push_undelivered` let a sent message's task run as
//!   usual and fail its push notifications on purpose; the push worker tells the kit what each
//!   attempt came to (`webhooks`), and the run's report shows it.
//!
//! The kit is a layer ([`layer`]) inside the guard and the body deadline: it hands the endpoint
//! the header's scenario as a typed value and cuts off the answers of `disconnect` and
//! `malformed_response`; the endpoint tells the recorder what happened.

pub mod layer;
mod page;
mod recorder;
pub mod render;
pub mod report;
mod routes;
pub mod rules;
pub mod scenario;
mod webhooks;

use axum::http::{HeaderMap, header};
use serde_json::{Value, json};

use a2a_types::jsonrpc::Id;

use crate::error::ApiError;
use crate::service::Reply;

pub use crate::config::ConformanceSettings;
pub use recorder::{CallOutcome, Digest16, Exchange, KEPT_CHARS, Recorder, SentDigest, digest};
pub use routes::routes;
pub use rules::{RULES, Rule};
pub use scenario::{SIMULATE_HEADER, SIMULATE_METADATA, Scenario, truncated};

/// The header that names a client run.
pub const RUN_HEADER: &str = "a2a-client-run";
/// The run a call without `A2A-Client-Run` belongs to.
pub const DEFAULT_RUN: &str = "default";

/// Marks a response the kit produced (a simulated refusal), in its extensions: the failed-auth
/// budget does not count it.
#[derive(Debug, Clone, Copy)]
pub struct Simulated(pub Scenario);

/// The kit: its settings and its recorder.
pub struct Kit {
    settings: ConformanceSettings,
    recorder: Recorder,
}

impl Kit {
    /// A kit with these settings.
    pub fn new(settings: ConformanceSettings) -> Self {
        Kit {
            recorder: Recorder::new(settings.clone()),
            settings,
        }
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &ConformanceSettings {
        &self.settings
    }

    /// The recorder.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// The scenario a call selects: the `A2A-Simulate` header, else the message metadata.
    /// `Err` names what is wrong with the text.
    pub fn scenario(
        &self,
        headers: &HeaderMap,
        metadata: Option<&str>,
    ) -> Option<Result<Scenario, String>> {
        let text = headers
            .get(SIMULATE_HEADER)
            .and_then(|v| v.to_str().ok())
            .or(metadata)?;
        Some(text.parse())
    }

    /// The kit's view of one call, from its headers and the envelope's hints; the caller sets
    /// the binding that answered it, the scenario and whether it was simulated.
    pub fn exchange(
        &self,
        headers: &HeaderMap,
        request: String,
        request_id: &str,
        rpc_id: Option<&Id>,
        method: Option<&str>,
        wire: &'static str,
    ) -> Exchange {
        Exchange {
            run: run_name(headers),
            token: token_digest(headers),
            request,
            request_id: truncated(request_id, KEPT_CHARS),
            rpc_id: rpc_id
                .and_then(|id| serde_json::to_string(id).ok())
                .map(|id| truncated(&id, KEPT_CHARS)),
            method: method.map(|m| truncated(m, KEPT_CHARS)),
            wire,
            binding: "-",
            scenario: None,
            simulated: false,
        }
    }
}

/// The run a request names (truncated), or [`DEFAULT_RUN`].
pub fn run_name(headers: &HeaderMap) -> String {
    headers
        .get(RUN_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| truncated(v, KEPT_CHARS))
        .unwrap_or_else(|| DEFAULT_RUN.into())
}

/// The hash of the bearer token a request carries.
pub fn token_digest(headers: &HeaderMap) -> Option<Digest16> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .map(|(_, token)| digest(token.trim()))
}

/// What a call's result tells the kit (the rules that depend on the answer).
pub fn outcome_of(method: &str, result: Result<&Reply, &ApiError>, simulated: bool) -> CallOutcome {
    let mut outcome = CallOutcome::default();
    match result {
        Ok(reply) => {
            outcome.limiter_bucket = reply.rate.as_ref().map(|(_, bucket)| bucket.as_str());
            if matches!(method, "tasks/get" | "GetTask") {
                outcome.terminal_task = terminal_task(&reply.result);
            }
            outcome.sent_message = reply.sent.as_ref().map(|sent| SentDigest {
                message_id: truncated(&sent.message_id, KEPT_CHARS),
                id: digest(&sent.message_id),
                content: digest(&sent.content_hash),
            });
        }
        Err(ApiError::Unauthorized(_)) => outcome.token_refused = !simulated,
        Err(ApiError::Unsupported { .. }) => outcome.unsupported = true,
        Err(ApiError::RateLimited {
            retry_after_secs,
            bucket,
            ..
        }) => {
            outcome.limiter_bucket = Some(bucket);
            outcome.retry_after = Some((bucket, *retry_after_secs));
        }
        Err(_) => {}
    }
    outcome
}

/// The id of the task a `tasks/get` answered, when it is terminal (either wire's shape).
fn terminal_task(result: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(result).ok()?;
    let task = if value["task"].is_object() {
        &value["task"]
    } else {
        &value
    };
    let terminal = matches!(
        task["status"]["state"].as_str()?,
        "completed"
            | "failed"
            | "canceled"
            | "rejected"
            | "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
    );
    terminal.then(|| task["id"].as_str().map(str::to_string))?
}

/// The agent card's entry for the kit: how to reach each scenario.
pub fn card_extension(settings: &ConformanceSettings) -> Value {
    json!({
        "uri": "https://magisterium-a2a.invalid/extensions/conformance-kit/v1",
        "description": format!(
            "Client conformance kit: send the header `A2A-Simulate` (or message.metadata.simulate) with one of {} to reach that error path on purpose; name a run with `A2A-Client-Run`; read your runs at /conformance/report with your bearer token.",
            Scenario::NAMES.join(", ")
        ),
        "required": false,
        "params": {"scenarios": Scenario::NAMES, "maxSlowMs": settings.max_slow_ms},
    })
}
