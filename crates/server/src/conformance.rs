//! The client conformance kit: every error path of the endpoint on demand, and a report of
//! what a client did wrong.
//!
//! Enabled only by configuration (`A2A__CONFORMANCE__ENABLED=true`). When disabled the
//! middleware is not installed: no header is read and nothing is recorded.
//!
//! - **Simulation.** A request header `A2A-Simulate` (or, for clients that cannot set headers,
//!   `message.metadata.simulate` in `message/send`) selects one scenario for that request:
//!   `unauthorized`, `plan_required`, `rate_limited` (optionally `rate_limited;retry_after=N`),
//!   `internal_error`, `skill_failed`, `slow;ms=N`, `task_not_found`. Each answers as the real
//!   condition does: same code, HTTP status, headers and body shape; `skill_failed` stores a
//!   real `failed` task.
//! - **Report.** Each client run (the `A2A-Client-Run` header, else the token's `sub`, else the
//!   client address) is checked against what a well-behaved client does; findings are served at
//!   `GET /conformance/report` (JSON), `GET /conformance` (HTML), and cleared by
//!   `DELETE /conformance/report`. Memory is bounded: runs, findings and remembered ids are capped.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use base64::Engine;
use chrono::{SecondsFormat, Utc};
use http_body_util::BodyExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::auth::AuthError;
use crate::error::ApiError;
use crate::http::RPC_PATH;

/// The header that selects a scenario.
pub const SIMULATE_HEADER: &str = "a2a-simulate";
/// The header that names a client run.
pub const RUN_HEADER: &str = "a2a-client-run";
/// The message metadata key that selects a scenario.
pub const SIMULATE_METADATA: &str = "simulate";

/// Settings of the kit (`[conformance]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConformanceSettings {
    /// Turns the kit on (`A2A__CONFORMANCE__ENABLED`).
    pub enabled: bool,
    /// The second, explicit key needed to enable the kit with the production profile.
    pub allow_with_production_profile: bool,
    /// Longest `slow;ms=N` delay honoured.
    pub max_slow_ms: u64,
    /// A client polling a terminal task more often than this is reported.
    pub min_poll_interval_ms: u64,
    /// Most client runs remembered (oldest dropped first).
    pub max_runs: usize,
    /// Most findings kept per run (oldest dropped first).
    pub max_findings_per_run: usize,
}

impl Default for ConformanceSettings {
    fn default() -> Self {
        ConformanceSettings {
            enabled: false,
            allow_with_production_profile: false,
            max_slow_ms: 10_000,
            min_poll_interval_ms: 1_000,
            max_runs: 1_000,
            max_findings_per_run: 200,
        }
    }
}

/// One simulated condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// 401 `-32004`.
    Unauthorized,
    /// 403 `-32005`.
    PlanRequired,
    /// 429 `-32003` with this `retryAfter`.
    RateLimited {
        /// Seconds the client is told to wait.
        retry_after_secs: u64,
    },
    /// `-32603`.
    InternalError,
    /// A stored `failed` task.
    SkillFailed,
    /// The real answer, this much later.
    Slow {
        /// The delay in milliseconds (bounded by configuration).
        ms: u64,
    },
    /// `-32001`.
    TaskNotFound,
}

impl Scenario {
    /// The scenario names, for errors and the agent card.
    pub const NAMES: [&'static str; 7] = [
        "unauthorized",
        "plan_required",
        "rate_limited;retry_after=N",
        "internal_error",
        "skill_failed",
        "slow;ms=N",
        "task_not_found",
    ];
}

impl FromStr for Scenario {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let mut params = HashMap::new();
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}` is not key=value"))?;
            let value: u64 = value
                .trim()
                .parse()
                .map_err(|_| format!("`{}` must be a whole number", key.trim()))?;
            params.insert(key.trim().to_ascii_lowercase(), value);
        }
        let scenario = match name.as_str() {
            "unauthorized" => Scenario::Unauthorized,
            "plan_required" => Scenario::PlanRequired,
            "rate_limited" => Scenario::RateLimited {
                retry_after_secs: params.remove("retry_after").unwrap_or(30).max(1),
            },
            "internal_error" => Scenario::InternalError,
            "skill_failed" => Scenario::SkillFailed,
            "slow" => Scenario::Slow {
                ms: params.remove("ms").unwrap_or(2_000),
            },
            "task_not_found" => Scenario::TaskNotFound,
            other => {
                return Err(format!(
                    "unknown scenario `{other}`; use one of: {}",
                    Scenario::NAMES.join(", ")
                ));
            }
        };
        if let Some(key) = params.keys().next() {
            return Err(format!("`{key}` does not apply to `{name}`"));
        }
        Ok(scenario)
    }
}

/// What the kit decided for one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Simulation {
    /// Answer with this error instead of running the call.
    Fail(SimulatedError),
    /// Run the call, after a delay.
    Delay(Duration),
    /// Run the call; the skill fails (the service sees `metadata.simulate`).
    SkillFailed,
    /// The scenario text is not valid.
    Invalid(String),
}

/// The errors a scenario answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimulatedError {
    /// 401.
    Unauthorized,
    /// 403.
    PlanRequired,
    /// 429.
    RateLimited {
        /// Seconds to wait.
        retry_after_secs: u64,
    },
    /// `-32603`.
    Internal,
    /// `-32001`.
    TaskNotFound,
}

impl SimulatedError {
    /// The error the endpoint answers with, built like the real one.
    pub fn to_api_error(self, task_id: Option<String>) -> ApiError {
        match self {
            SimulatedError::Unauthorized => ApiError::Unauthorized(AuthError::Invalid(
                "the token is not accepted (simulated: unauthorized)".into(),
            )),
            SimulatedError::PlanRequired => ApiError::PlanRequired,
            SimulatedError::RateLimited { retry_after_secs } => ApiError::RateLimited {
                retry_after_secs,
                bucket: "default",
                limit: None,
            },
            SimulatedError::Internal => ApiError::Internal("simulated: internal_error".into()),
            SimulatedError::TaskNotFound => {
                ApiError::TaskNotFound(task_id.unwrap_or_else(|| "simulated".into()))
            }
        }
    }
}

/// Marks a `message/send` so the service fails its skill (`skill_failed` from the header).
pub fn mark_skill_failed(params: &mut Value) {
    if let Some(message) = params.get_mut("message").and_then(Value::as_object_mut) {
        let metadata = message.entry("metadata").or_insert_with(|| json!({}));
        if let Some(metadata) = metadata.as_object_mut() {
            metadata.insert(
                SIMULATE_METADATA.into(),
                Value::String("skill_failed".into()),
            );
        }
    }
}

/// The task id a call names, for `task_not_found`.
pub fn task_id_of(params: &Value) -> Option<String> {
    params.get("id").and_then(Value::as_str).map(str::to_string)
}

/// A rule a well-behaved client follows.
#[derive(Debug, Clone, Copy)]
struct Rule {
    id: &'static str,
    why: &'static str,
}

const CONTENT_TYPE: Rule = Rule {
    id: "content-type",
    why: "JSON-RPC calls must be sent with Content-Type: application/json; servers refuse anything else with 415.",
};
const MALFORMED_ENVELOPE: Rule = Rule {
    id: "malformed-envelope",
    why: "A JSON-RPC 2.0 request needs \"jsonrpc\": \"2.0\", a string or number id and a method; without them the server cannot match its reply to the request.",
};
const MESSAGE_ID_REUSED: Rule = Rule {
    id: "message-id-reused",
    why: "A messageId names one message: reusing it for a different message makes retries ambiguous, and servers refuse it with -32602. Use a fresh id per message and the same id only to retry the same message.",
};
const RETRY_TOO_SOON: Rule = Rule {
    id: "retry-too-soon",
    why: "The server said how long to wait (error.data.retryAfter and Retry-After); retrying sooner is refused again and wastes the client's budget.",
};
const REFUSED_TOKEN_REUSED: Rule = Rule {
    id: "refused-token-reused",
    why: "A token refused with 401 stays refused: obtain a new token (see WWW-Authenticate and the protected-resource metadata) before calling again.",
};
const UNSUPPORTED_METHOD: Rule = Rule {
    id: "unsupported-method",
    why: "The agent card says this server does not stream and has no push notifications (capabilities.streaming and pushNotifications are false); check the card before calling those methods.",
};
const CARD_REFETCH: Rule = Rule {
    id: "card-refetched-early",
    why: "The agent card is sent with Cache-Control: public, max-age=3600; a client should cache it for that long instead of fetching it again.",
};
const POLLING_TERMINAL_TASK: Rule = Rule {
    id: "polling-terminal-task",
    why: "The task is already in a terminal state (completed, failed or canceled) and will never change; stop polling it.",
};

const CARD_MAX_AGE: Duration = Duration::from_secs(3600);
const REMEMBERED_IDS: usize = 10_000;

/// One misbehaviour seen.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// The rule's id, e.g. `retry-too-soon`.
    pub rule: &'static str,
    /// When, RFC 3339.
    pub at: String,
    /// The request it was seen on, e.g. `POST /api/v1/a2a message/send`.
    pub request: String,
    /// What exactly happened.
    pub detail: String,
    /// Why it matters.
    pub why: &'static str,
}

#[derive(Default)]
struct Run {
    requests: u64,
    findings: VecDeque<Finding>,
    refused_tokens: HashSet<String>,
    retry_not_before: Option<Instant>,
    messages: HashMap<String, String>,
    card_fetched_at: Option<Instant>,
    terminal_polls: HashMap<String, Instant>,
}

/// The report of one client run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The run's key.
    pub run: String,
    /// Requests seen.
    pub requests: u64,
    /// Findings, oldest first.
    pub findings: Vec<Finding>,
}

/// The kit: simulation and the behaviour recorder.
pub struct Kit {
    settings: ConformanceSettings,
    runs: Mutex<(HashMap<String, Run>, VecDeque<String>)>,
    max_body_bytes: usize,
}

/// What the middleware learned from a request before running it.
struct Observed {
    run: String,
    summary: String,
    token_hash: Option<String>,
    rpc: Option<RpcRequest>,
}

struct RpcRequest {
    method: String,
    message_id: Option<(String, String)>,
    task_id: Option<String>,
    simulate: Option<String>,
}

impl Kit {
    /// A kit with these settings; bodies larger than `max_body_bytes` are not inspected.
    pub fn new(settings: ConformanceSettings, max_body_bytes: usize) -> Self {
        Kit {
            settings,
            runs: Mutex::new((HashMap::new(), VecDeque::new())),
            max_body_bytes,
        }
    }

    /// The scenario a request selects, if any.
    pub fn simulation(&self, header: Option<&str>, metadata: Option<&str>) -> Option<Simulation> {
        let text = header.or(metadata)?;
        Some(match text.parse::<Scenario>() {
            Err(why) => Simulation::Invalid(why),
            Ok(Scenario::Unauthorized) => Simulation::Fail(SimulatedError::Unauthorized),
            Ok(Scenario::PlanRequired) => Simulation::Fail(SimulatedError::PlanRequired),
            Ok(Scenario::RateLimited { retry_after_secs }) => {
                Simulation::Fail(SimulatedError::RateLimited { retry_after_secs })
            }
            Ok(Scenario::InternalError) => Simulation::Fail(SimulatedError::Internal),
            Ok(Scenario::TaskNotFound) => Simulation::Fail(SimulatedError::TaskNotFound),
            Ok(Scenario::SkillFailed) => Simulation::SkillFailed,
            Ok(Scenario::Slow { ms }) => {
                Simulation::Delay(Duration::from_millis(ms.min(self.settings.max_slow_ms)))
            }
        })
    }

    /// The scenario a call selects, from the `A2A-Simulate` header or the message metadata.
    pub fn scenario(&self, headers: &HeaderMap, body: &[u8]) -> Option<Simulation> {
        let header = headers.get(SIMULATE_HEADER).and_then(|v| v.to_str().ok());
        let metadata = parse_rpc(body).and_then(|rpc| rpc.simulate);
        self.simulation(header, metadata.as_deref())
    }

    fn with_run<T>(&self, key: &str, f: impl FnOnce(&mut Run) -> T) -> T {
        let mut guard = match self.runs.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let (runs, order) = &mut *guard;
        if !runs.contains_key(key) {
            if runs.len() >= self.settings.max_runs.max(1)
                && let Some(oldest) = order.pop_front()
            {
                runs.remove(&oldest);
            }
            order.push_back(key.to_string());
        }
        f(runs.entry(key.to_string()).or_default())
    }

    fn find(&self, run: &mut Run, rule: Rule, request: &str, detail: String) {
        if run.findings.len() >= self.settings.max_findings_per_run.max(1) {
            run.findings.pop_front();
        }
        run.findings.push_back(Finding {
            rule: rule.id,
            at: Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
            request: request.to_string(),
            detail,
            why: rule.why,
        });
    }

    /// Every run's findings.
    pub fn report(&self) -> Vec<RunReport> {
        let guard = match self.runs.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        let (runs, order) = &*guard;
        order
            .iter()
            .filter_map(|key| {
                runs.get(key).map(|run| RunReport {
                    run: key.clone(),
                    requests: run.requests,
                    findings: run.findings.iter().cloned().collect(),
                })
            })
            .collect()
    }

    /// Forgets every run: a new run starts.
    pub fn clear(&self) {
        let mut guard = match self.runs.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        guard.0.clear();
        guard.1.clear();
    }

    fn observe_card(&self, run: &str) {
        self.with_run(run, |r| {
            r.requests += 1;
            let now = Instant::now();
            if let Some(at) = r.card_fetched_at
                && now.duration_since(at) < CARD_MAX_AGE
            {
                let detail = format!(
                    "fetched again after {} s, within max-age=3600",
                    now.duration_since(at).as_secs()
                );
                self.find(r, CARD_REFETCH, "GET /.well-known/agent.json", detail);
            }
            r.card_fetched_at = Some(now);
        });
    }

    fn observe_request(&self, headers: &HeaderMap, body: &[u8], observed: &Observed) {
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let is_json = content_type
            .split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"));
        self.with_run(&observed.run, |r| {
            r.requests += 1;
            if !is_json {
                let detail = if content_type.is_empty() {
                    "no Content-Type header".to_string()
                } else {
                    format!("Content-Type: {content_type}")
                };
                self.find(r, CONTENT_TYPE, &observed.summary, detail);
            }
            if let Some(hash) = &observed.token_hash
                && r.refused_tokens.contains(hash)
            {
                self.find(
                    r,
                    REFUSED_TOKEN_REUSED,
                    &observed.summary,
                    "the same bearer token was already refused with 401".into(),
                );
            }
            let Some(rpc) = &observed.rpc else {
                let detail = if serde_json::from_slice::<Value>(body).is_ok() {
                    "the body is JSON but not a JSON-RPC 2.0 request object".to_string()
                } else {
                    "the body is not JSON".to_string()
                };
                self.find(r, MALFORMED_ENVELOPE, &observed.summary, detail);
                return;
            };
            let unsupported = rpc.method == "message/stream"
                || rpc.method == "tasks/resubscribe"
                || rpc.method.starts_with("tasks/pushNotificationConfig/")
                || rpc.method == "agent/getAuthenticatedExtendedCard"
                || rpc.method == "SendStreamingMessage"
                || rpc.method == "SubscribeToTask"
                || rpc.method.ends_with("TaskPushNotificationConfig")
                || rpc.method == "ListTaskPushNotificationConfigs";
            if unsupported {
                let detail = format!("called `{}`", rpc.method);
                self.find(r, UNSUPPORTED_METHOD, &observed.summary, detail);
            }
            if matches!(rpc.method.as_str(), "message/send" | "SendMessage") {
                if let Some(not_before) = r.retry_not_before
                    && Instant::now() < not_before
                {
                    let early = not_before.duration_since(Instant::now());
                    let detail = format!(
                        "sent {:.1} s before retryAfter had passed",
                        early.as_secs_f64()
                    );
                    self.find(r, RETRY_TOO_SOON, &observed.summary, detail);
                }
                if let Some((message_id, fingerprint)) = &rpc.message_id {
                    match r.messages.get(message_id) {
                        Some(seen) if seen != fingerprint => {
                            let detail = format!(
                                "messageId `{message_id}` was first used for a different message"
                            );
                            self.find(r, MESSAGE_ID_REUSED, &observed.summary, detail);
                        }
                        Some(_) => {}
                        None => {
                            if r.messages.len() >= REMEMBERED_IDS {
                                r.messages.clear();
                            }
                            r.messages.insert(message_id.clone(), fingerprint.clone());
                        }
                    }
                }
            }
            if matches!(rpc.method.as_str(), "tasks/get" | "GetTask")
                && let Some(task_id) = &rpc.task_id
                && let Some(last) = r.terminal_polls.get(task_id)
            {
                let since = last.elapsed();
                if since < Duration::from_millis(self.settings.min_poll_interval_ms) {
                    let detail = format!(
                        "task `{task_id}` polled again {} ms after it was seen terminal",
                        since.as_millis()
                    );
                    self.find(r, POLLING_TERMINAL_TASK, &observed.summary, detail);
                }
            }
        });
    }

    fn observe_response(&self, observed: &Observed, status: StatusCode, body: &Value) {
        self.with_run(&observed.run, |r| {
            if status == StatusCode::UNAUTHORIZED
                && let Some(hash) = &observed.token_hash
            {
                if r.refused_tokens.len() >= REMEMBERED_IDS {
                    r.refused_tokens.clear();
                }
                r.refused_tokens.insert(hash.clone());
            }
            if let Some(retry) = body["error"]["data"]["retryAfter"].as_u64() {
                r.retry_not_before = Some(Instant::now() + Duration::from_secs(retry));
            }
            let Some(rpc) = &observed.rpc else {
                return;
            };
            let task = if body["result"]["task"].is_object() {
                &body["result"]["task"]
            } else {
                &body["result"]
            };
            let state = task["status"]["state"].as_str().unwrap_or_default();
            let terminal = matches!(
                state,
                "completed"
                    | "failed"
                    | "canceled"
                    | "rejected"
                    | "TASK_STATE_COMPLETED"
                    | "TASK_STATE_FAILED"
                    | "TASK_STATE_CANCELED"
                    | "TASK_STATE_REJECTED"
            );
            if matches!(rpc.method.as_str(), "tasks/get" | "GetTask")
                && terminal
                && let Some(task_id) = &rpc.task_id
            {
                if r.terminal_polls.len() >= REMEMBERED_IDS {
                    r.terminal_polls.clear();
                }
                r.terminal_polls.insert(task_id.clone(), Instant::now());
            }
        });
    }

    fn observe(&self, request: &Request, body: &[u8]) -> Observed {
        let headers = request.headers();
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .map(|(_, token)| token.trim().to_string());
        let run = headers
            .get(RUN_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(|v| format!("run:{}", v.trim()))
            .or_else(|| {
                token
                    .as_deref()
                    .and_then(token_subject)
                    .map(|sub| format!("sub:{sub}"))
            })
            .or_else(|| {
                request
                    .extensions()
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|ConnectInfo(addr)| format!("ip:{}", addr.ip()))
            })
            .unwrap_or_else(|| "anonymous".into());
        let rpc = parse_rpc(body);
        let summary = match &rpc {
            Some(rpc) => format!(
                "{} {} {}",
                request.method(),
                request.uri().path(),
                rpc.method
            ),
            None => format!("{} {}", request.method(), request.uri().path()),
        };
        Observed {
            run,
            summary,
            token_hash: token.map(|t| hex::encode(&Sha256::digest(t.as_bytes())[..12])),
            rpc,
        }
    }
}

/// The `sub` of a JWT, read without verifying it: only a label for the report.
fn token_subject(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims["sub"].as_str().map(str::to_string)
}

fn parse_rpc(body: &[u8]) -> Option<RpcRequest> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object()?;
    if object.get("jsonrpc")?.as_str()? != "2.0" {
        return None;
    }
    object
        .get("id")
        .filter(|id| id.is_string() || id.is_number())?;
    let method = object.get("method")?.as_str()?.to_string();
    let params = object.get("params");
    let message = params.and_then(|p| p.get("message"));
    let message_id = message
        .and_then(|m| m.get("messageId"))
        .and_then(Value::as_str)
        .map(|id| {
            let fingerprint = message.map(|m| {
                let mut m = m.clone();
                if let Some(metadata) = m.get_mut("metadata").and_then(Value::as_object_mut) {
                    metadata.remove(SIMULATE_METADATA);
                }
                hex::encode(&Sha256::digest(m.to_string().as_bytes())[..12])
            });
            (id.to_string(), fingerprint.unwrap_or_default())
        });
    let simulate = message
        .and_then(|m| m.get("metadata"))
        .and_then(|m| m.get(SIMULATE_METADATA))
        .and_then(Value::as_str)
        .map(str::to_string);
    let task_id = params
        .and_then(|p| p.get("id"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Some(RpcRequest {
        method,
        message_id,
        task_id,
        simulate,
    })
}

/// The agent card's entry for the kit: how to reach each scenario.
pub fn card_extension(settings: &ConformanceSettings) -> Value {
    json!({
        "uri": "https://magisterium-a2a.invalid/extensions/conformance-kit/v1",
        "description": format!(
            "Client conformance kit: send the header `A2A-Simulate` (or message.metadata.simulate) with one of {} to reach that error path on purpose; name a run with `A2A-Client-Run`; read the report at /conformance/report.",
            Scenario::NAMES.join(", ")
        ),
        "required": false,
        "params": {"scenarios": Scenario::NAMES, "maxSlowMs": settings.max_slow_ms},
    })
}

/// The kit's own routes: the report as JSON and as a page.
pub fn routes(kit: Arc<Kit>) -> axum::Router {
    axum::Router::new()
        .route(
            "/conformance/report",
            axum::routing::get(report).delete(clear),
        )
        .route("/conformance", axum::routing::get(page))
        .with_state(kit)
}

/// The middleware: records every request and what it was answered. Scenarios themselves are
/// applied by the endpoint (see [`Kit::scenario`]), so their answers are the real ones.
pub async fn observe(State(kit): State<Arc<Kit>>, request: Request, next: Next) -> Response {
    // The endpoint is served with and without a trailing slash, and its GET is the card.
    let path = request.uri().path();
    let endpoint = path.strip_suffix('/').unwrap_or(path) == RPC_PATH;
    if request.method() == Method::GET
        && (endpoint || path == "/.well-known/agent.json" || path == "/.well-known/agent-card.json")
    {
        let observed = kit.observe(&request, b"");
        kit.observe_card(&observed.run);
        return next.run(request).await;
    }
    if !endpoint || request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match http_body_util::Limited::new(body, kit.max_body_bytes)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    let observed = kit.observe(&request, &bytes);
    kit.observe_request(request.headers(), &bytes, &observed);
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    kit.observe_response(&observed, parts.status, &value);
    Response::from_parts(parts, Body::from(bytes))
}

/// `GET /conformance/report`.
pub async fn report(State(kit): State<Arc<Kit>>) -> Response {
    axum::Json(json!({"runs": kit.report()})).into_response()
}

/// `DELETE /conformance/report`.
pub async fn clear(State(kit): State<Arc<Kit>>) -> Response {
    kit.clear();
    StatusCode::NO_CONTENT.into_response()
}

/// `GET /conformance`: the same report as a page.
pub async fn page(State(kit): State<Arc<Kit>>) -> Response {
    let mut html = String::from(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>A2A client conformance report</title>\
         <style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}table{border-collapse:collapse;width:100%}\
         td,th{border:1px solid #ccc;padding:.4rem;text-align:left;vertical-align:top}th{background:#f3f3f3}\
         .rule{font-family:monospace;color:#a00}.ok{color:#070}</style></head><body>\
         <h1>A2A client conformance report</h1>",
    );
    let runs = kit.report();
    if runs.is_empty() {
        html.push_str("<p class=\"ok\">No client requests recorded yet.</p>");
    }
    for run in runs {
        html.push_str(&format!(
            "<h2>{}</h2><p>{} requests, {} findings</p>",
            escape(&run.run),
            run.requests,
            run.findings.len()
        ));
        if run.findings.is_empty() {
            html.push_str("<p class=\"ok\">No misbehaviour seen.</p>");
            continue;
        }
        html.push_str("<table><tr><th>rule</th><th>when</th><th>request</th><th>what</th><th>why it matters</th></tr>");
        for f in &run.findings {
            html.push_str(&format!(
                "<tr class=\"finding\"><td class=\"rule\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(f.rule),
                escape(&f.at),
                escape(&f.request),
                escape(&f.detail),
                escape(f.why)
            ));
        }
        html.push_str("</table>");
    }
    html.push_str("</body></html>");
    Html(html).into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_parse() {
        assert_eq!("unauthorized".parse(), Ok(Scenario::Unauthorized));
        assert_eq!(
            "rate_limited;retry_after=7".parse(),
            Ok(Scenario::RateLimited {
                retry_after_secs: 7
            })
        );
        assert_eq!(" Slow ; ms = 250 ".parse(), Ok(Scenario::Slow { ms: 250 }));
        assert!("slow;ms=soon".parse::<Scenario>().is_err());
        assert!(
            "explode"
                .parse::<Scenario>()
                .unwrap_err()
                .contains("task_not_found")
        );
        assert!("internal_error;ms=3".parse::<Scenario>().is_err());
    }

    #[test]
    fn slow_is_bounded_and_header_wins() {
        let kit = Kit::new(
            ConformanceSettings {
                max_slow_ms: 500,
                ..Default::default()
            },
            1024,
        );
        assert_eq!(
            kit.simulation(Some("slow;ms=99999"), None),
            Some(Simulation::Delay(Duration::from_millis(500)))
        );
        assert_eq!(
            kit.simulation(Some("plan_required"), Some("unauthorized")),
            Some(Simulation::Fail(SimulatedError::PlanRequired))
        );
        assert_eq!(kit.simulation(None, None), None);
    }

    #[test]
    fn runs_are_bounded() {
        let kit = Kit::new(
            ConformanceSettings {
                max_runs: 2,
                ..Default::default()
            },
            1024,
        );
        for run in ["a", "b", "c"] {
            kit.observe_card(run);
        }
        let runs: Vec<String> = kit.report().into_iter().map(|r| r.run).collect();
        assert_eq!(runs, vec!["b", "c"]);
        kit.clear();
        assert!(kit.report().is_empty());
    }

    #[test]
    fn token_subject_is_read_without_verification() {
        let payload =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"sub":"alice"}"#);
        assert_eq!(
            token_subject(&format!("h.{payload}.s")),
            Some("alice".into())
        );
        assert_eq!(token_subject("garbage"), None);
    }
}
