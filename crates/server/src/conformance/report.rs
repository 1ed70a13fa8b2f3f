//! The report's wire shape: what `GET /conformance/report` answers and what the
//! `conformance report` command reads back.

use serde::{Deserialize, Serialize};

/// The runs of one token's owner.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// Runs, oldest first.
    pub runs: Vec<RunReport>,
}

/// One misbehaviour seen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// The rule's id, e.g. `retry-too-soon`.
    pub rule: String,
    /// When, RFC 3339.
    pub at: String,
    /// The HTTP method and exact path, e.g. `POST /api/v1/a2a`.
    pub request: String,
    /// The server's request id (`X-Request-Id`), to find the call in the logs.
    pub request_id: String,
    /// The JSON-RPC id as sent (truncated), when the body had one.
    pub rpc_id: Option<String>,
    /// The JSON-RPC method (truncated), when the body had one.
    pub method: Option<String>,
    /// The wire the call was answered in (`0.3` or `1.0`).
    pub wire: String,
    /// The protocol binding that answered the call: `jsonrpc` (`POST /api/v1/a2a`),
    /// `http+json` (below `/api/v1/a2a/rest`) or `grpc`, `-` for a card fetch; the same call can
    /// be made through any of them, and a client may misbehave on one only.
    #[serde(default)]
    pub binding: String,
    /// Whether this call itself was answered by a simulation.
    pub simulated: bool,
    /// The scenario this call asked for, if any.
    pub scenario: Option<String>,
    /// The scenario of an earlier call that set up the condition (e.g. the simulated 429 a
    /// retry came too soon after); `null` when a real answer set it up.
    pub caused_by: Option<String>,
    /// What exactly happened.
    pub detail: String,
    /// Why it matters.
    pub why: String,
}

/// How often the run asked for a scenario on one method, wire and binding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exercised {
    /// The scenario's name, e.g. `rate_limited`.
    pub scenario: String,
    /// The JSON-RPC method (`other` for methods the server does not know).
    pub method: String,
    /// `0.3` or `1.0`.
    pub wire: String,
    /// `jsonrpc`, `http+json` or `grpc`: a scenario tried on one binding is not tried on another.
    #[serde(default)]
    pub binding: String,
    /// Calls.
    pub calls: u64,
}

/// The scenarios a run never tried on one method, wire and binding it called.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MethodGap {
    /// The JSON-RPC method.
    pub method: String,
    /// `0.3` or `1.0`.
    pub wire: String,
    /// `jsonrpc` or `http+json`.
    #[serde(default)]
    pub binding: String,
    /// Scenarios that apply to the method and were never asked for on it.
    pub scenarios: Vec<String>,
}

/// Which scenarios a run exercised, and which it never touched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// Scenario, method, wire and binding combinations the run asked for.
    pub exercised: Vec<Exercised>,
    /// Scenarios the run never asked for, on any method.
    pub untouched: Vec<String>,
    /// Per method, wire and binding the run called: the scenarios never tried on it.
    pub untouched_by_method: Vec<MethodGap>,
}

/// The report of one client run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    /// The run's name (`A2A-Client-Run`, else `default`).
    pub run: String,
    /// Requests seen.
    pub requests: u64,
    /// Findings dropped because the run held the most findings it may.
    pub dropped_findings: u64,
    /// Findings, oldest first.
    pub findings: Vec<Finding>,
    /// What the run exercised.
    pub coverage: Coverage,
    /// What the webhook scenarios did to the run's tasks' notifications.
    #[serde(default)]
    pub notifications: Vec<WebhookTally>,
}

/// What one webhook scenario (`push_retried`, `push_undelivered`) did to the notifications of
/// the tasks a run asked it for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookTally {
    /// The scenario.
    pub scenario: String,
    /// Attempts POSTed to the receiver.
    pub posted: u64,
    /// Attempts counted as failed because of the scenario (sent or not).
    pub failed_on_purpose: u64,
    /// Notifications delivered in the end.
    pub delivered: u64,
    /// Notifications given up.
    pub dropped: u64,
}
