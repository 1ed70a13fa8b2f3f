//! The conformance kit's one hook on the pipeline: a scenario goes in (the `A2A-Simulate`
//! header, read by the kit's layer, or the message's `metadata.simulate`), the steps the kit
//! stages come out where the real condition arises, and the exchange is recorded for the
//! kit's report. The production path names the kit here only; with the kit off every step is
//! a no-op.

use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::http::header::{self, HeaderMap};
use axum::response::Response;
use serde_json::Value;

use a2a_types::jsonrpc::Id;

use crate::auth::Principal;
use crate::conformance::layer::HeaderScenario;
use crate::conformance::{self, Kit, Scenario};
use crate::edge::guard::NotCounted;
use crate::error::ApiError;
use crate::service::{Reply, Simulation};

/// The scenario the kit's layer read from the request's header, as a handler extracts it.
pub(crate) type FromHeader = Option<Extension<HeaderScenario>>;

/// The kit, when it is on.
pub(crate) struct KitHook(Option<Arc<Kit>>);

/// What the kit staged for one call so far.
#[derive(Default)]
pub(crate) struct Staged {
    /// The scenario the header selected (`Err`: what is wrong with its text).
    from_header: Option<Result<Scenario, String>>,
    /// The scenario the call selected, the header's or the message's.
    selected: Option<Result<Scenario, String>>,
    /// The scenario the call asked for, when it parsed.
    scenario: Option<Scenario>,
    /// Whether the scenario decided the answer (a refusal or the service's override).
    simulated: bool,
}

impl Staged {
    /// Whether the scenario decided the answer (its outcome is counted as `simulated`).
    pub(crate) fn simulated(&self) -> bool {
        self.simulated
    }
}

/// One call as the kit records it, from the binding that answered it.
pub(crate) struct Exchanged<'a> {
    /// The request's id (the server's, not the binding's).
    pub(crate) request_id: &'a str,
    /// The request line the kit reports (`POST /api/v1/a2a`).
    pub(crate) request: String,
    /// The call's id in its binding, when it had one.
    pub(crate) id: Option<&'a Id>,
    /// The method as the call named it (`-` when it named none).
    pub(crate) method: &'a str,
    /// The wire the call was answered in.
    pub(crate) wire: &'static str,
    /// The binding that answered it (its metrics label: `jsonrpc`, `http+json`).
    pub(crate) binding: &'static str,
    /// The verified caller, when the token was accepted.
    pub(crate) principal: Option<&'a Principal>,
    /// The answer (a stream's stands as an empty reply with its charge).
    pub(crate) outcome: Result<&'a Reply, &'a ApiError>,
    /// A wrong `Content-Type`, as sent.
    pub(crate) content_type: Option<String>,
    /// The exact envelope fault.
    pub(crate) envelope: Option<String>,
}

impl KitHook {
    /// The hook over the kit, or a hook that stages nothing.
    pub(crate) fn new(kit: Option<Arc<Kit>>) -> Self {
        KitHook(kit)
    }

    /// The kit, for the router that mounts its routes and layer.
    pub(crate) fn kit(&self) -> Option<&Arc<Kit>> {
        self.0.as_ref()
    }

    /// Starts a call's staging from the scenario its header selected.
    pub(crate) fn stage(from_header: FromHeader) -> Staged {
        Staged {
            from_header: from_header.and_then(|Extension(HeaderScenario(selected))| selected),
            ..Staged::default()
        }
    }

    /// The staged `unauthorized`, refused before the token is read.
    pub(crate) fn unauthorized(staged: &mut Staged) -> Result<(), ApiError> {
        if let Some(Ok(Scenario::Unauthorized)) = staged.from_header
            && let Some(error) = Scenario::Unauthorized.refusal(None)
        {
            staged.scenario = Some(Scenario::Unauthorized);
            staged.simulated = true;
            return Err(error);
        }
        Ok(())
    }

    /// The scenario the call selects: the header's, else the message's `metadata.simulate`
    /// (`params` gives the call's params, `None` when its body could not be read).
    pub(crate) fn select(
        &self,
        staged: &mut Staged,
        headers: &HeaderMap,
        params: impl FnOnce() -> Option<Value>,
    ) {
        staged.selected = match (self.0.as_deref(), staged.from_header.take()) {
            (None, _) => None,
            (Some(_), Some(selected)) => Some(selected),
            (Some(kit), None) => {
                let metadata = params().and_then(|params| {
                    params["message"]["metadata"][conformance::SIMULATE_METADATA]
                        .as_str()
                        .map(str::to_owned)
                });
                kit.scenario(headers, metadata.as_deref())
            }
        };
        staged.scenario = staged
            .selected
            .as_ref()
            .and_then(|s| s.as_ref().ok().copied());
    }

    /// Whether the staged refusal names the task of the call's params (`task_not_found`).
    pub(crate) fn wants_params(staged: &Staged) -> bool {
        matches!(staged.selected, Some(Ok(Scenario::TaskNotFound)))
    }

    /// The kit's refusals after the binding's own: a scenario that does not parse, a scenario
    /// that refuses the call, and `rate_limited` of a call that runs no skill.
    pub(crate) fn refusals(
        staged: &mut Staged,
        params: Option<Value>,
        runs_a_skill: bool,
    ) -> Result<(), ApiError> {
        let scenario = match staged.selected.take() {
            None => return Ok(()),
            Some(Err(why)) => return Err(ApiError::InvalidParams(format!("A2A-Simulate: {why}"))),
            Some(Ok(scenario)) => scenario,
        };
        let task_id = params
            .as_ref()
            .and_then(|p| p.get("id"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        if let Some(error) = scenario.refusal(task_id) {
            staged.simulated = true;
            return Err(error);
        }
        if let Scenario::RateLimited { retry_after_secs } = scenario
            && !runs_a_skill
        {
            staged.simulated = true;
            return Err(ApiError::RateLimited {
                retry_after_secs,
                bucket: "default",
                limit: None,
            });
        }
        Ok(())
    }

    /// The part of the scenario the service applies to a call that runs a skill.
    pub(crate) fn simulation(
        staged: &mut Staged,
        headers: &HeaderMap,
        runs_a_skill: bool,
    ) -> Option<Simulation> {
        let scenario = staged.scenario?;
        let simulation = scenario
            .in_service(&conformance::run_name(headers))
            .filter(|_| runs_a_skill);
        staged.simulated = simulation.is_some()
            || matches!(scenario, Scenario::Disconnect | Scenario::MalformedResponse);
        simulation
    }

    /// After the call ran: a stream scenario shapes an answered stream only (any other answer
    /// is the real one), and `slow` delays an answer the call earned, charged (whichever path
    /// charged it) and run. A refusal, the rate limiter's included, is answered at once.
    pub(crate) async fn answered(&self, staged: &mut Staged, earned: bool, streamed: bool) {
        let Some(scenario) = staged.scenario else {
            return;
        };
        if scenario.shapes_a_stream() && streamed {
            staged.simulated = true;
        }
        if let (Some(kit), true) = (self.0.as_deref(), earned)
            && let Some(delay) = scenario.delay(Duration::from_millis(kit.settings().max_slow_ms))
        {
            tokio::time::sleep(delay).await;
        }
    }

    /// Records the call for its owner's report, when the kit is on and the caller is known
    /// (by a verified token, or one verified before).
    pub(crate) fn record(&self, staged: &Staged, headers: &HeaderMap, call: Exchanged<'_>) {
        let Some(kit) = self.0.as_deref() else {
            return;
        };
        let named = (call.method != "-").then_some(call.method);
        let mut exchange = kit.exchange(
            headers,
            call.request,
            call.request_id,
            call.id,
            named,
            call.wire,
        );
        exchange.binding = call.binding;
        exchange.scenario = staged.scenario;
        exchange.simulated = staged.simulated;
        let owner = match call.principal {
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
            let mut outcome = conformance::outcome_of(call.method, call.outcome, staged.simulated);
            outcome.content_type = call.content_type;
            outcome.envelope = call.envelope;
            kit.recorder().call(owner, &exchange, &outcome);
        }
    }

    /// Records a fetch of the agent card by a caller the kit knows (by a token verified
    /// before).
    pub(crate) fn card_fetched(&self, headers: &HeaderMap, path: &str, request_id: Option<&str>) {
        let Some(kit) = self.0.as_deref() else {
            return;
        };
        let Some(owner) =
            conformance::token_digest(headers).and_then(|token| kit.recorder().owner_of(&token))
        else {
            return;
        };
        let run = conformance::run_name(headers);
        kit.recorder().card(
            &owner,
            &run,
            path,
            &conformance::truncated(request_id.unwrap_or("-"), conformance::KEPT_CHARS),
        );
    }

    /// Marks a response the scenario decided, for the kit's layer (which cuts or paces it)
    /// and the guard (which does not count a staged 401).
    pub(crate) fn mark(&self, staged: &Staged, response: &mut Response) {
        if self.0.is_none() || !staged.simulated {
            return;
        }
        if let Some(scenario) = staged.scenario {
            tracing::info!(
                scenario = scenario.name(),
                "simulated by the conformance kit"
            );
            response
                .extensions_mut()
                .insert(conformance::Simulated(scenario));
            response.extensions_mut().insert(NotCounted);
        }
    }
}

/// How a wrong `Content-Type` is told in the kit's report.
pub(crate) fn wrong_media(headers: &HeaderMap) -> String {
    match headers.get(header::CONTENT_TYPE) {
        Some(media) => format!(
            "Content-Type: {}",
            conformance::truncated(
                &String::from_utf8_lossy(media.as_bytes()),
                conformance::KEPT_CHARS
            )
        ),
        None => "no Content-Type header".into(),
    }
}
