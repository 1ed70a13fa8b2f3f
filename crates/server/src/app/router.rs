//! The HTTP face: the routes of every binding and document and the layers around them, composed
//! in this one place ([`router`]). The JSON-RPC binding's handlers are in
//! `bindings::jsonrpc::handler`; the documents the server publishes (card, resource metadata,
//! challenge) are built in `app::documents`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, Request, State};
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use tower::util::MapRequestLayer;
use tower::{ServiceBuilder, ServiceExt, service_fn};
use tower_http::request_id::{
    MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer,
};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::bindings::grpc;
use crate::bindings::jsonrpc::handler;
use crate::bindings::jsonrpc::methods;
use crate::bindings::rest::handler::{self as rest, rest_handler};
use crate::bindings::{AppState, no_skill_agent, skill_in_path};
use crate::conformance::{self, Kit};
use crate::edge::RenderRefusal;
use crate::edge::body_deadline::DeadlineBody;
use crate::edge::guard::{self, Guard};
use crate::edge::loopback;
use crate::edge::unread;
use crate::error::{ApiError, Failure};
use crate::paths::{self, RPC_PATH};
use crate::push;
use crate::respond::{self, json_bytes};
use crate::telemetry::UserText;
use crate::wire::{self, VERSION_HEADER, version_header};

const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const EXPOSED_HEADERS: &str =
    "Retry-After, WWW-Authenticate, RateLimit, RateLimit-Policy, X-Request-Id";

/// The layers that [`router`] puts around the routes besides its own: the server's protection
/// (load shedding, the per-address budget of failed tokens) and the body read deadline.
pub struct OuterLayers {
    /// Load shedding and failed-authentication limits.
    pub guard: Arc<Guard>,
    /// How long a whole request body may take to arrive, from the end of its head.
    pub body_read_timeout: Duration,
    /// Refuse requests not addressed to a loopback host from a loopback origin (auth-off
    /// mode, see [`crate::edge::loopback`]).
    pub loopback_only: bool,
}

/// The router with every route and layer.
///
/// The layers wrap the routes once, as one stack, rather than each route (`Router::layer`
/// boxes every layer into every route, and each request then clones that nest of boxes:
/// 34 clones and 43 allocations a call, measured with bench/profile). Every response, the
/// guard's refusals and unknown paths included, allows any origin and exposes the headers a
/// browser client needs to read. The loopback check (auth-off mode only) is outermost; the body
/// deadline comes next, so every reader of a body is bound by it; then the watch on the body
/// that closes the connection of an answer given with the body unread.
pub fn router(state: Arc<AppState>, outer: OuterLayers) -> Router {
    let kit = state.pipeline.kit.kit().cloned();
    let routes = by_binding(
        grpc::routes(Arc::clone(&state)),
        routes(state, kit.as_ref()),
    );
    let body_read_timeout = outer.body_read_timeout;
    // The edge's refusals, written by the binding of the request's path.
    let render: RenderRefusal = edge_refusal;
    let stack = ServiceBuilder::new()
        .option_layer(
            outer
                .loopback_only
                .then(|| middleware::from_fn_with_state(render, loopback::only_loopback)),
        )
        .layer(MapRequestLayer::new(move |request: Request| {
            request.map(|body| Body::new(DeadlineBody::new(body, body_read_timeout)))
        }))
        .layer(middleware::from_fn(unread::close_if_unread))
        .map_response(|response: Response<_>| response.map(Body::new))
        .layer(MapRequestLayer::new(version_from_query))
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
        .layer(middleware::from_fn_with_state((outer.guard, render), guard::protect))
        .option_layer(kit.map(|kit| middleware::from_fn_with_state(kit, conformance::layer::simulate)))
        .service(routes);
    Router::new().fallback_service(stack)
}

/// The gRPC binding's routes for a request whose `content-type` is `application/grpc`, every
/// other route for the rest: the bindings share the port and every layer of the edge.
fn by_binding(
    grpc: Router,
    http: Router,
) -> impl tower::Service<
    Request,
    Response = Response,
    Error = std::convert::Infallible,
    Future: Send + 'static,
> + Clone
+ Send
+ Sync
+ 'static {
    service_fn(move |request: Request| {
        let router = if grpc::is_grpc(request.headers()) {
            grpc.clone()
        } else {
            http.clone()
        };
        router.oneshot(request)
    })
}

/// Every route: the JSON-RPC and HTTP+JSON bindings' endpoints, each skill's agent, the cards, health, metrics, the
/// push signing keys and, when on, the kit's pages.
fn routes(state: Arc<AppState>, kit: Option<&Arc<Kit>>) -> Router {
    // The endpoint's URL also answers GET with the card (clients that follow the card's `url`),
    // and its trailing-slash form serves the same (clients that treat the URL as a base).
    let rpc = get(serve_card)
        .post(handler::rpc_handler)
        .options(preflight)
        .fallback(method_not_allowed);
    let authenticator = Arc::clone(&state.pipeline.authenticator);
    let skill_rpc = get(serve_skill_card)
        .post(handler::skill_rpc_handler)
        .options(preflight)
        .fallback(method_not_allowed);
    let skill_agent = format!("{}/{{skill}}", paths::SKILL_AGENTS);
    let skill_rest = paths::skill_rest("{skill}");
    let jwks = push::jwks_routes(state.push.keys());
    let routes = Router::new()
        .route(RPC_PATH, rpc.clone())
        .route(paths::RPC_PATH_SLASH, rpc)
        .route(&skill_agent, skill_rpc.clone())
        .route(&format!("{skill_agent}/"), skill_rpc)
        .route(
            &format!("{skill_agent}{}", paths::AGENT_CARD),
            get(serve_skill_card),
        )
        .route(
            &format!("{skill_agent}{}", paths::AGENT_CARD_LEGACY),
            get(serve_skill_card),
        )
        .route(paths::REST_PATH, any(rest_handler))
        .route(
            &format!("{}/{{*operation}}", paths::REST_PATH),
            any(rest_handler),
        )
        .route(&skill_rest, any(rest_handler))
        .route(&format!("{skill_rest}/{{*operation}}"), any(rest_handler))
        .route(paths::AGENT_CARD_LEGACY, get(serve_card))
        .route(paths::AGENT_CARD, get(serve_card))
        .route(paths::RESOURCE_METADATA, get(resource_metadata))
        .route(paths::HEALTHZ, get(healthz))
        .route(paths::READYZ, get(readyz))
        .route(paths::METRICS, get(metrics))
        .with_state(state)
        .merge(jwks);
    match kit {
        Some(kit) => routes.merge(conformance::routes(Arc::clone(kit), authenticator)),
        None => routes,
    }
}

/// A version given as the `A2A-Version` query parameter becomes the header it stands for when
/// the request has none, so every binding and the edge read the version in one place; the
/// header wins when both are given.
fn version_from_query(mut request: Request) -> Request {
    if !request.headers().contains_key(VERSION_HEADER)
        && let Some(version) = request.uri().query().and_then(wire::query_version)
        && let Ok(value) = HeaderValue::from_str(&version)
    {
        request.headers_mut().insert(VERSION_HEADER, value);
    }
    request
}

/// The edge's refusal in the terms of the binding whose path the request is for.
fn edge_refusal(error: ApiError, path: &str, headers: &HeaderMap) -> Response {
    if grpc::is_grpc(headers) {
        grpc::edge_refusal(error)
    } else if paths::is_rest(path) {
        rest::edge_refusal(error, headers)
    } else {
        handler::edge_refusal(error, path, headers)
    }
}

/// The preflight of a call of the JSON-RPC binding.
async fn preflight() -> Response {
    respond::preflight("POST, OPTIONS")
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
    let wire = methods::select(version_header(&headers), None);
    let mut response = Failure::new(error, wire, None, "-")
        .with_challenge(&state.challenge)
        .into_response();
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
    let request_id = request_id
        .as_ref()
        .and_then(|Extension(id)| id.header_value().to_str().ok());
    state
        .pipeline
        .kit
        .card_fetched(&headers, uri.path(), request_id);
    state.cards.respond(&headers)
}

/// The card of a skill's own agent, or a JSON 404 naming the skills that have one.
async fn serve_skill_card(
    State(state): State<Arc<AppState>>,
    skill: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    let skill = skill_in_path(skill);
    match state.skill_cards.get(skill.as_str()) {
        Some(cards) => cards.respond(&headers),
        None => no_skill_agent(&state, &skill),
    }
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

/// The address a listener is bound to, for logs and the default public URL.
pub fn describe_bind(addr: SocketAddr) -> String {
    format!("http://{addr}{RPC_PATH}")
}
