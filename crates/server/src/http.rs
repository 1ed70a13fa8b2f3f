//! The HTTP face: routes, the order of checks of SPEC §2, CORS, and the mapping of a call's
//! outcome to status, headers and a JSON-RPC body.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Extension, Request, State};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceBuilder;
use tower::util::MapRequestLayer;
use tower_http::request_id::{
    MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use a2a_types::jsonrpc::{self, BorrowedRequest, Id, Response as RpcResponse};
use a2a_types::{AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill};

use crate::auth::{AuthError, Authenticator, Principal};
use crate::body_deadline::{self, DeadlineBody};
use crate::card::ServedCards;
use crate::config::{AuthMode, Settings};
use crate::conformance::{self, Kit, Scenario};
use crate::error::ApiError;
use crate::guard::{self, BudgetSpent, Guard};
use crate::limits::Decision;
use crate::loopback;
use crate::metrics::Metrics;
use crate::push::{self, Push};
use crate::serve;
use crate::service::{A2aService, ACCEPT_LANGUAGE, Params, Reply, ServiceCall};
use crate::store::TaskStore;
use crate::telemetry::UserText;
use crate::v1::{self, Wire};

/// The JSON-RPC endpoint path.
pub const RPC_PATH: &str = "/api/v1/a2a";
const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const EXPOSED_HEADERS: &str =
    "Retry-After, WWW-Authenticate, RateLimit, RateLimit-Policy, X-Request-Id";

/// Everything the handlers share.
pub struct AppState {
    /// The methods.
    pub service: A2aService,
    /// Token verification (shared with the conformance kit's routes).
    pub authenticator: Arc<Authenticator>,
    /// The store, for readiness.
    pub store: Arc<dyn TaskStore>,
    /// Metrics registry.
    pub metrics: Arc<Metrics>,
    /// The agent card in both forms, serialised once.
    pub cards: ServedCards,
    /// The protected-resource metadata, serialised once.
    pub resource_metadata: Bytes,
    /// `WWW-Authenticate` without an error, for requests without a token.
    pub challenge: String,
    /// Largest accepted body.
    pub max_body_bytes: usize,
    /// How long a whole body may take to arrive (named in the refusal).
    pub body_read_timeout: Duration,
    /// The client conformance kit, when enabled.
    pub kit: Option<Arc<Kit>>,
    /// Push notifications: configs, queue, and the key whose JWK set is served.
    pub push: Arc<Push>,
}

/// The layers that [`router`] puts around the routes besides its own: the server's protection
/// (load shedding, the per-address budget of failed tokens) and the body read deadline.
pub struct OuterLayers {
    /// Load shedding and failed-authentication limits.
    pub guard: Arc<Guard>,
    /// How long a whole request body may take to arrive, from the end of its head.
    pub body_read_timeout: Duration,
    /// Refuse requests not addressed to a loopback host from a loopback origin (auth-off
    /// mode, see [`crate::loopback`]).
    pub loopback_only: bool,
}

/// The router with every route and layer.
///
/// The layers wrap the routes once, as one stack, rather than each route (`Router::layer`
/// boxes every layer into every route, and each request then clones that nest of boxes:
/// 34 clones and 43 allocations a call, measured with bench/profile). Every response, the
/// guard's refusals and unknown paths included, allows any origin and exposes the headers a
/// browser client needs to read. The body deadline is outermost, so every reader of a body is
/// bound by it.
pub fn router(state: Arc<AppState>, outer: OuterLayers) -> Router {
    // The endpoint's URL also answers GET with the card (clients that follow the card's `url`),
    // and its trailing-slash form serves the same (clients that treat the URL as a base).
    let rpc = get(serve_card)
        .post(rpc_handler)
        .options(preflight)
        .fallback(method_not_allowed);
    let kit = state.kit.clone();
    let authenticator = Arc::clone(&state.authenticator);
    let jwks = push::jwks_routes(state.push.keys());
    let routes = Router::new()
        .route(RPC_PATH, rpc.clone())
        .route(&format!("{RPC_PATH}/"), rpc)
        .route("/.well-known/agent.json", get(serve_card))
        .route("/.well-known/agent-card.json", get(serve_card))
        .route(
            "/.well-known/oauth-protected-resource",
            get(resource_metadata),
        )
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .with_state(state)
        .merge(jwks);
    let routes = match kit {
        Some(kit) => routes.merge(conformance::routes(kit, authenticator)),
        None => routes,
    };
    let body_read_timeout = outer.body_read_timeout;
    let stack = ServiceBuilder::new()
        .option_layer(
            outer
                .loopback_only
                .then(|| middleware::from_fn(loopback::only_loopback)),
        )
        .layer(MapRequestLayer::new(move |request: Request| {
            request.map(|body| Body::new(DeadlineBody::new(body, body_read_timeout)))
        }))
        .map_response(|response: Response<_>| response.map(Body::new))
        .layer(SetSensitiveRequestHeadersLayer::new([header::AUTHORIZATION]))
        .layer(SetRequestIdLayer::new(X_REQUEST_ID, MakeRequestUuid))
        .layer(TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
            let request_id = request
                .extensions()
                .get::<RequestId>()
                .and_then(|id| id.header_value().to_str().ok())
                .unwrap_or("-");
            tracing::info_span!("request", request_id, method = %UserText(request.method().as_str()), path = %UserText(request.uri().path()))
        }))
        .layer(PropagateRequestIdLayer::new(X_REQUEST_ID))
        .layer(SetResponseHeaderLayer::overriding(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static(EXPOSED_HEADERS),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        ))
        .layer(middleware::from_fn_with_state(outer.guard, guard::protect))
        .service(routes);
    Router::new().fallback_service(stack)
}

/// Builds the agent card from the settings and the registered skills. It declares exactly the
/// authentication that is enforced: none when `auth.mode` is `none`.
pub fn agent_card(settings: &Settings, base_url: &str, service: &A2aService) -> AgentCard {
    let (security_schemes, security) = match settings.auth.mode {
        AuthMode::None => (serde_json::Map::new(), Vec::new()),
        AuthMode::Hs256 | AuthMode::Jwks => bearer_security(base_url),
    };
    let modes = vec!["text/plain".to_string(), "application/json".to_string()];
    AgentCard {
        protocol_version: settings.agent.protocol_version.clone(),
        name: settings.agent.name.clone(),
        description: settings.agent.description.clone(),
        url: format!("{base_url}{RPC_PATH}"),
        preferred_transport: "JSONRPC".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        provider: Some(AgentProvider {
            organization: settings.agent.provider_organization.clone(),
            url: settings.agent.provider_url.clone(),
        }),
        documentation_url: settings.agent.documentation_url.clone(),
        capabilities: AgentCapabilities {
            streaming: false,
            push_notifications: false,
            state_transition_history: true,
            extensions: if settings.conformance.enabled {
                vec![conformance::card_extension(&settings.conformance)]
            } else {
                Vec::new()
            },
        },
        default_input_modes: modes.clone(),
        default_output_modes: modes.clone(),
        security_schemes,
        security,
        skills: service
            .skills()
            .iter()
            .map(|skill| {
                let info = skill.info();
                AgentSkill {
                    id: info.id.into(),
                    name: info.name.into(),
                    description: info.description.into(),
                    tags: info.tags.iter().map(|t| t.to_string()).collect(),
                    examples: info.examples.iter().map(|e| e.to_string()).collect(),
                    input_modes: modes.clone(),
                    output_modes: modes.clone(),
                }
            })
            .collect(),
        supports_authenticated_extended_card: false,
        supported_interfaces: vec![
            AgentInterface {
                url: format!("{base_url}{RPC_PATH}"),
                protocol_binding: "JSONRPC".into(),
                protocol_version: a2a_types::v1::PROTOCOL_VERSION.into(),
            },
            AgentInterface {
                url: format!("{base_url}{RPC_PATH}"),
                protocol_binding: "JSONRPC".into(),
                protocol_version: settings.agent.protocol_version.clone(),
            },
        ],
    }
}

/// The bearer scheme (a JWT, discovered through the protected-resource metadata) and the
/// requirement that every call satisfies it, in the card's 0.3 form.
fn bearer_security(
    base_url: &str,
) -> (
    serde_json::Map<String, Value>,
    Vec<serde_json::Map<String, Value>>,
) {
    let mut schemes = serde_json::Map::new();
    schemes.insert(
        "bearer".into(),
        json!({
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "JWT",
            "description": format!(
                "An OAuth-issued access token (JWT) of a paid plan, sent as `Authorization: Bearer <token>`. Discovery: {base_url}/.well-known/oauth-protected-resource"
            ),
        }),
    );
    let mut requirement = serde_json::Map::new();
    requirement.insert("bearer".into(), json!([]));
    (schemes, vec![requirement])
}

/// RFC 9728 metadata: which authorization servers issue tokens for this resource.
pub fn protected_resource_metadata(settings: &Settings, base_url: &str) -> Value {
    let mut servers = settings.auth.authorization_servers.clone();
    if servers.is_empty()
        && let Some(issuer) = &settings.auth.issuer
    {
        servers.push(issuer.clone());
    }
    json!({
        "resource": base_url,
        "authorization_servers": servers,
        "bearer_methods_supported": ["header"],
        "resource_name": settings.agent.name,
    })
}

/// The `WWW-Authenticate` challenge for requests without a token.
pub fn challenge(base_url: &str) -> String {
    format!(
        "Bearer realm=\"magisterium-a2a\", resource_metadata=\"{base_url}/.well-known/oauth-protected-resource\""
    )
}

async fn preflight() -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (header::ACCESS_CONTROL_ALLOW_METHODS, "POST, OPTIONS"),
            (
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "Content-Type, Authorization",
            ),
            (header::ACCESS_CONTROL_MAX_AGE, "86400"),
        ],
    )
        .into_response()
}

async fn method_not_allowed(
    State(state): State<Arc<AppState>>,
    method: Method,
    headers: HeaderMap,
) -> Response {
    let error = ApiError::InvalidRequest {
        message: format!(
            "Invalid request: {method} is not allowed on {RPC_PATH}; use POST (GET reads the agent card)"
        ),
        status: StatusCode::METHOD_NOT_ALLOWED,
    };
    let wire = Wire::select(version_header(&headers), None);
    let mut response = error_response(&state, None, &error, "-", &wire);
    response.headers_mut().insert(
        header::ALLOW,
        HeaderValue::from_static("GET, POST, OPTIONS"),
    );
    response
}

async fn serve_card(
    State(state): State<Arc<AppState>>,
    uri: axum::http::Uri,
    request_id: Option<Extension<RequestId>>,
    headers: HeaderMap,
) -> Response {
    if let Some(kit) = &state.kit
        && let Some(owner) =
            conformance::token_digest(&headers).and_then(|token| kit.recorder().owner_of(&token))
    {
        let request_id = request_id
            .and_then(|Extension(id)| id.header_value().to_str().ok().map(str::to_owned))
            .unwrap_or_else(|| "-".into());
        let run = conformance::run_name(&headers);
        kit.recorder().card(
            &owner,
            &run,
            uri.path(),
            &conformance::truncated(&request_id, conformance::KEPT_CHARS),
        );
    }
    state.cards.respond(&headers)
}

async fn resource_metadata(State(state): State<Arc<AppState>>) -> Response {
    json_bytes(
        StatusCode::OK,
        state.resource_metadata.clone(),
        Some("public, max-age=3600"),
    )
}

async fn healthz() -> Response {
    json_bytes(
        StatusCode::OK,
        Bytes::from_static(br#"{"status":"ok"}"#),
        None,
    )
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    match tokio::time::timeout(Duration::from_secs(2), state.store.ping()).await {
        Ok(Ok(())) => json_bytes(
            StatusCode::OK,
            Bytes::from_static(br#"{"status":"ready"}"#),
            None,
        ),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "store not ready");
            json_bytes(
                StatusCode::SERVICE_UNAVAILABLE,
                Bytes::from_static(
                    br#"{"status":"unavailable","reason":"task store unreachable"}"#,
                ),
                None,
            )
        }
        Err(_) => json_bytes(
            StatusCode::SERVICE_UNAVAILABLE,
            Bytes::from_static(br#"{"status":"unavailable","reason":"task store timed out"}"#),
            None,
        ),
    }
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

fn json_bytes(status: StatusCode, body: Bytes, cache: Option<&'static str>) -> Response {
    let mut response = (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    if let Some(cache) = cache {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    }
    response
}

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

/// The `A2A-Version` request header, when it is readable text.
fn version_header(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(v1::VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
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
async fn rpc_handler(
    State(state): State<Arc<AppState>>,
    request_id: Option<Extension<RequestId>>,
    budget_spent: Option<Extension<BudgetSpent>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let started = Instant::now();
    let request_id = request_id
        .and_then(|Extension(id)| id.header_value().to_str().ok().map(str::to_owned))
        .unwrap_or_else(|| "-".into());
    let budget_spent = budget_spent.map(|Extension(spent)| spent);
    let answered = answer(&state, &headers, body, budget_spent).await;
    let Some(kit) = state.kit.as_deref() else {
        return answered.finish(&state, &request_id, started);
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
        let mut outcome =
            conformance::outcome_of(&answered.method, &answered.outcome, answered.simulated);
        outcome.content_type = answered.content_type.clone();
        outcome.envelope = answered.envelope.clone();
        kit.recorder().call(owner, &exchange, &outcome);
    }
    let simulated = answered.simulated.then_some(answered.scenario).flatten();
    let mut response = answered.finish(&state, &request_id, started);
    if let Some(scenario) = simulated {
        tracing::info!(
            scenario = scenario.name(),
            "simulated by the conformance kit"
        );
        response
            .extensions_mut()
            .insert(conformance::Simulated(scenario));
    }
    match simulated {
        Some(Scenario::Disconnect) => {
            response.extensions_mut().insert(serve::DropConnection);
            response
        }
        Some(Scenario::MalformedResponse) => cut_in_half(response).await,
        _ => response,
    }
}

/// The answer with its body cut in half: the `malformed_response` scenario.
async fn cut_in_half(response: Response) -> Response {
    let (mut parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let half = bytes.slice(..bytes.len() / 2);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(half))
}

/// What the endpoint decided for one call, before it is written as a response.
struct Answered {
    method: String,
    id: Option<Id>,
    wire: Wire,
    outcome: Result<Reply, ApiError>,
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
    /// The `A2A-Version` the call asked for, when this server does not speak it.
    unsupported_version: Option<String>,
}

impl Answered {
    fn refused(wire: Wire, id: Option<Id>, error: ApiError) -> Self {
        Answered {
            method: "-".into(),
            id,
            wire,
            outcome: Err(error),
            principal: None,
            scenario: None,
            simulated: false,
            content_type: None,
            envelope: None,
            unsupported_version: None,
        }
    }

    fn finish(self, state: &AppState, request_id: &str, started: Instant) -> Response {
        if let Some(version) = &self.unsupported_version {
            let refusal = v1::version_not_supported(version);
            state
                .metrics
                .request(&self.method, refusal.reason, started.elapsed());
            return rpc_body(
                refusal.status,
                &RpcResponse::failure(self.id, refusal.object),
            );
        }
        let call = Finished {
            method: &self.method,
            simulated: self.simulated,
            request_id,
            started,
            wire: &self.wire,
        };
        finish(state, &call, self.id, self.outcome)
    }
}

/// The order of checks: a simulated `unauthorized` (from the header), the token and the plan
/// from the headers, then the body: media type and envelope, the other simulated refusals, and
/// the call.
async fn answer(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
    budget_spent: Option<BudgetSpent>,
) -> Answered {
    let header_wire = Wire::select(version_header(headers), None);
    let kit = state.kit.as_deref();
    let from_header = kit.and_then(|kit| kit.scenario(headers, None));
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
    let read = read_body(body, headers, state.max_body_bytes).await;
    let body = ParsedBody::of(&read);
    let (id_hint, method_hint) = body.hints();
    answered.wire = Wire::select(version_header(headers), method_hint.as_deref());
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
    answered.method = request.method.clone();
    answered.id = request.id.clone();
    if let Wire::Unsupported(version) = &answered.wire {
        answered.unsupported_version = Some(version.clone());
        return answered;
    }
    if request.id.is_none() {
        // A notification is checked like any call (method, then params) and only then refused:
        // every A2A call expects an answer, so nothing is run without one.
        let checked = match &answered.wire {
            Wire::V1 => v1::check(&request.method, request.params),
            _ => ServiceCall::parse(&request.method, request.params).map(drop),
        };
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
        if let Some(kit) = kit
            && let Some(delay) = scenario.delay(Duration::from_millis(kit.settings().max_slow_ms))
        {
            tokio::time::sleep(delay).await;
        }
    }
    let is_send = matches!(request.method.as_str(), "message/send" | "SendMessage");
    if let Some(Scenario::RateLimited { retry_after_secs }) = scenario
        && !is_send
    {
        answered.simulated = true;
        answered.outcome = Err(ApiError::RateLimited {
            retry_after_secs,
            bucket: "default",
            limit: None,
        });
        return answered;
    }
    let simulation = scenario.and_then(Scenario::in_service).filter(|_| is_send);
    answered.simulated = simulation.is_some()
        || matches!(
            scenario,
            Some(Scenario::Disconnect | Scenario::MalformedResponse)
        );
    tracing::debug!(method = %UserText(&request.method), user = %UserText(&principal.sub), plan = principal.plan.as_str(), "call");
    let accept_language = headers
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.chars().take(256).collect::<String>());
    answered.outcome = match &answered.wire {
        Wire::V1 => {
            ACCEPT_LANGUAGE
                .scope(
                    accept_language,
                    v1::call(
                        &state.service,
                        &principal,
                        &request.method,
                        request.params,
                        simulation,
                    ),
                )
                .await
        }
        _ => {
            ACCEPT_LANGUAGE
                .scope(
                    accept_language,
                    state
                        .service
                        .call(&principal, &request.method, request.params, simulation),
                )
                .await
        }
    };
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

/// What the metrics and logs say of a finished call.
struct Finished<'a> {
    method: &'a str,
    simulated: bool,
    request_id: &'a str,
    started: Instant,
    wire: &'a Wire,
}

/// Counts the call (simulated answers under the outcome `simulated`) and writes the response.
fn finish(
    state: &AppState,
    call: &Finished<'_>,
    id: Option<Id>,
    outcome: Result<Reply, ApiError>,
) -> Response {
    let label = |real: &'static str| if call.simulated { "simulated" } else { real };
    match outcome {
        Ok(reply) => {
            state
                .metrics
                .request(call.method, label("ok"), call.started.elapsed());
            let body = jsonrpc::success_body(id.as_ref(), &reply.result);
            let mut response = json_bytes(StatusCode::OK, Bytes::from(body), None);
            if let Some((decision, bucket)) = reply.rate {
                rate_headers(response.headers_mut(), decision, bucket.as_str());
            }
            response
        }
        Err(error) => {
            state
                .metrics
                .request(call.method, label(error.outcome()), call.started.elapsed());
            error_response(state, id, &error, call.request_id, call.wire)
        }
    }
}

fn error_response(
    state: &AppState,
    id: Option<Id>,
    error: &ApiError,
    request_id: &str,
    wire: &Wire,
) -> Response {
    match error {
        ApiError::Internal(detail) => {
            tracing::error!(request_id, detail = %UserText(detail), "internal error")
        }
        other => {
            tracing::info!(code = other.code().code(), reason = %UserText(&other.to_string()), "refused")
        }
    }
    let mut response = if wire.is_v1() {
        let mapped = v1::error(error, request_id);
        rpc_body(mapped.status, &RpcResponse::failure(id, mapped.object))
    } else {
        rpc_body(
            error.status(),
            &RpcResponse::failure(id, error.to_object(request_id)),
        )
    };
    let headers = response.headers_mut();
    if let ApiError::Unauthorized(reason) = error
        && let Ok(value) = HeaderValue::from_str(&www_authenticate(&state.challenge, reason))
    {
        headers.insert(header::WWW_AUTHENTICATE, value);
    }
    if let Some(secs) = error.retry_after_secs() {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let ApiError::RateLimited {
        retry_after_secs,
        bucket,
        limit: Some(limit),
    } = error
    {
        let refused = Decision::Limited {
            limit: *limit,
            retry_after: Duration::from_secs(*retry_after_secs),
        };
        rate_headers(headers, refused, bucket);
    }
    response
}

fn www_authenticate(challenge: &str, reason: &AuthError) -> String {
    if !reason.token_presented() {
        return challenge.to_string();
    }
    let description: String = reason
        .to_string()
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control() && *c != '"' && *c != '\\')
        .collect();
    format!("{challenge}, error=\"invalid_token\", error_description=\"{description}\"")
}

fn rate_headers(headers: &mut HeaderMap, decision: Decision, bucket: &str) {
    let (limit, remaining, reset) = match decision {
        Decision::Allowed {
            limit,
            remaining,
            reset_after,
        } => (limit, remaining, reset_after),
        Decision::Limited { limit, retry_after } => (limit, 0, retry_after),
        Decision::Unavailable | Decision::Unmetered => return,
    };
    let policy = format!("\"{bucket}\";q={limit};w=60");
    let current = format!(
        "\"{bucket}\";r={remaining};t={}",
        reset.as_millis().div_ceil(1000)
    );
    for (name, value) in [("ratelimit-policy", policy), ("ratelimit", current)] {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    }
}

fn rpc_body(status: StatusCode, body: &RpcResponse) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => json_bytes(status, Bytes::from(bytes), None),
        Err(_) => json_bytes(
            StatusCode::OK,
            Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error","data":{"name":"INTERNAL_ERROR"}}}"#,
            ),
            None,
        ),
    }
}

/// The address a listener is bound to, for logs and the default public URL.
pub fn describe_bind(addr: SocketAddr) -> String {
    format!("http://{addr}{RPC_PATH}")
}
