//! The paths this server answers on, in one leaf module: the router, the guard, the kit's routes
//! and the start-up messages all name them from here.

/// The JSON-RPC endpoint (both wires); `GET` on it serves the agent card.
pub const RPC_PATH: &str = "/api/v1/a2a";
/// The endpoint with a trailing slash, for clients that treat the card's URL as a base.
pub const RPC_PATH_SLASH: &str = "/api/v1/a2a/";
/// The HTTP+JSON (REST) binding of A2A 1.0: its operations at the specification's resource
/// URLs below this base (`{base}/message:send`, `{base}/tasks/{id}`, …).
pub const REST_PATH: &str = "/api/v1/a2a/rest";
/// The agent card where A2A 0.3 and later look for it.
pub const AGENT_CARD: &str = "/.well-known/agent-card.json";
/// The agent card at its earlier well-known name, still read by older clients.
pub const AGENT_CARD_LEGACY: &str = "/.well-known/agent.json";
/// RFC 9728 protected-resource metadata: which authorization servers issue tokens.
pub const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource";
/// The public keys that verify this server's push notifications (a JWK set).
pub const JWKS: &str = "/.well-known/jwks.json";
/// Liveness.
pub const HEALTHZ: &str = "/healthz";
/// Readiness (the store answers).
pub const READYZ: &str = "/readyz";
/// The Prometheus exposition.
pub const METRICS: &str = "/metrics";
/// The conformance kit's page.
pub const CONFORMANCE: &str = "/conformance";
/// The conformance kit's report of the caller's runs.
pub const CONFORMANCE_REPORT: &str = "/conformance/report";
/// The conformance kit's findings of the caller's runs.
pub const CONFORMANCE_FINDINGS: &str = "/conformance/findings";
/// Where each skill is served as an agent of its own: `/agents/{skill_id}` is its JSON-RPC
/// endpoint (with or without a trailing slash), `/agents/{skill_id}/` its base URL (its card at
/// `{base}.well-known/agent-card.json`).
pub const SKILL_AGENTS: &str = "/agents";
/// The gRPC binding's service (A2A 1.0 §10, `a2a.proto`): each RPC is a `POST` to
/// `/{GRPC_SERVICE}/{Rpc}`, on the same port as HTTP.
pub const GRPC_SERVICE: &str = "lf.a2a.v1.A2AService";

/// The RPC a path of the gRPC binding's service names (`SendMessage`, …), as the path spells
/// it; `None` for any other path.
pub fn grpc_rpc(path: &str) -> Option<&str> {
    path.strip_prefix('/')?
        .strip_prefix(GRPC_SERVICE)?
        .strip_prefix('/')
}

/// Whether `path` is the HTTP+JSON binding's: the whole agent's or a skill's agent's, its base
/// or below it.
pub fn is_rest(path: &str) -> bool {
    rest_target(path).is_some()
}

/// Where a path of the HTTP+JSON binding points: the skill whose own agent it is for (`None`:
/// the whole agent), as the path spells it, and the part below the binding's base
/// (`/message:send`, `/tasks/{id}`, …; empty at the base itself). `None` for any other path.
pub fn rest_target(path: &str) -> Option<(Option<&str>, &str)> {
    fn below_base(rest: &str) -> Option<&str> {
        (rest.is_empty() || rest.starts_with('/')).then_some(rest)
    }
    if let Some(rest) = path.strip_prefix(REST_PATH) {
        return below_base(rest).map(|below| (None, below));
    }
    let (skill, rest) = path
        .strip_prefix(SKILL_AGENTS)?
        .strip_prefix('/')?
        .split_once('/')?;
    let below = below_base(rest.strip_prefix(SKILL_REST)?)?;
    (!skill.is_empty()).then_some((Some(skill), below))
}

/// The HTTP+JSON binding of a skill's own agent, below its endpoint: `/agents/{id}/rest`.
pub fn skill_rest(skill_id: &str) -> String {
    format!("{SKILL_AGENTS}/{skill_id}/{SKILL_REST}")
}

/// The segment below a skill's agent where its HTTP+JSON binding is.
const SKILL_REST: &str = "rest";

/// Whether a request is a call of a binding (a `POST` to a JSON-RPC endpoint or to an RPC of the
/// gRPC binding's service, any request to the HTTP+JSON binding), which the guard and the
/// conformance kit's layer watch.
pub fn is_call(method: &axum::http::Method, path: &str) -> bool {
    (method == axum::http::Method::POST && (is_rpc_endpoint(path) || grpc_rpc(path).is_some()))
        || is_rest(path)
}

/// The endpoint path of the agent of one skill: its card's `url`.
pub fn skill_agent(skill_id: &str) -> String {
    format!("{SKILL_AGENTS}/{skill_id}")
}

/// The base URL path of the agent of one skill, as the main card gives it. It ends with a slash
/// so that a client resolving the relative card path `.well-known/agent-card.json` against it
/// (the A2A JavaScript SDK, and so Google ADK for JavaScript) finds the skill's card instead of
/// `/agents/.well-known/agent-card.json`; clients that append `/.well-known/agent-card.json`
/// to it without its trailing slash (the Python SDK) find the same card.
pub fn skill_agent_base(skill_id: &str) -> String {
    format!("{SKILL_AGENTS}/{skill_id}/")
}

/// Whether `path` is a JSON-RPC endpoint: the whole agent's, or a skill's agent's (each with or
/// without a trailing slash), so that every layer guarding calls guards them all alike.
pub fn is_rpc_endpoint(path: &str) -> bool {
    if path == RPC_PATH || path == RPC_PATH_SLASH {
        return true;
    }
    path.strip_prefix(SKILL_AGENTS)
        .and_then(|rest| rest.strip_prefix('/'))
        .map(|rest| rest.strip_suffix('/').unwrap_or(rest))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}
