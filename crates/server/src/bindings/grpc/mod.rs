//! The gRPC binding of A2A 1.0 (§10 of the specification): `A2AService` of the specification's
//! `a2a.proto`, served with tonic on the same port as HTTP (h2c, or HTTP/2 behind a TLS-ending
//! load balancer), chosen by `content-type: application/grpc`, beside the standard health
//! service (`grpc.health.v1`) and server reflection. Only the framing is here: tonic reads and
//! writes the messages ([`codec`]), each RPC is the 1.0 row of the method table by its name and
//! its message the ProtoJSON tree that row parses ([`schema`]), the pipeline runs the same steps
//! as on the other bindings (`handler`), and failures are gRPC statuses with the A2A
//! `ErrorInfo` (`status`), streams the task's `StreamResponse`s (`stream`).

pub mod codec;
pub(crate) mod framing;
pub(crate) mod handler;
pub mod schema;
pub(crate) mod status;
pub(crate) mod stream;
pub(crate) mod transcode;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::any;
use futures::FutureExt;
use tonic::Status;
use tonic::server::NamedService;
use tonic_health::ServingStatus;
use tower::ServiceBuilder;

use crate::bindings::AppState;
use crate::bindings::jsonrpc::envelope::BodyLimits;
use crate::error::ApiError;
use crate::paths::GRPC_SERVICE;

pub(crate) use status::is_grpc;

/// The largest request message of the public services (health, reflection): they need no
/// token, so what an anonymous caller can make the server hold is kept small (a service or
/// symbol name is some tens of bytes).
const PUBLIC_MESSAGE_BYTES: usize = 4096;

/// The binding's routes: the A2A service's RPCs, the health service's `Check` and server
/// reflection (v1 and v1alpha); any other service or RPC is `UNIMPLEMENTED`, as a gRPC server
/// answers it. The health service's `Watch` is not served: a stream that lasts as long as the
/// server, open to callers without a token, would hold a connection for each of them (a client
/// health-checking with `Watch` takes `UNIMPLEMENTED` as "no health checks").
pub(crate) fn routes(state: Arc<AppState>) -> Router {
    let (reporter, health) = tonic_health::server::health_reporter();
    // The reporter's lock is free while nothing else holds it, so this completes at once.
    let _ = reporter
        .set_service_status(GRPC_SERVICE, ServingStatus::Serving)
        .now_or_never();
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(schema::DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    // The descriptor sets are compiled into the server; `schema`'s tests read them.
    let reflection_v1 = reflection()
        .build_v1()
        .expect("the descriptor sets compiled into the server are valid");
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .expect("the descriptor sets compiled into the server are valid");
    let public = BodyLimits {
        max_bytes: PUBLIC_MESSAGE_BYTES,
        read_timeout: state.body_limits.read_timeout,
    };
    let framed = move |request: Request| {
        request.map(|body| Body::new(framing::FramedBody::new(body, public)))
    };
    let health_name = name_of(&health);
    Router::new()
        .route(
            &format!("/{GRPC_SERVICE}/{{rpc}}"),
            any(handler::grpc_handler),
        )
        .route_service(
            &format!("/{health_name}/Check"),
            ServiceBuilder::new().map_request(framed).service(health),
        )
        .route(&format!("/{health_name}/Watch"), any(watch_not_served))
        .route_service(
            &below(name_of(&reflection_v1)),
            ServiceBuilder::new()
                .map_request(framed)
                .service(reflection_v1),
        )
        .route_service(
            &below(name_of(&reflection_v1alpha)),
            ServiceBuilder::new()
                .map_request(framed)
                .service(reflection_v1alpha),
        )
        .fallback(unimplemented)
        .with_state(state)
}

async fn watch_not_served() -> Response {
    status::trailers_only(Status::unimplemented(
        "grpc.health.v1.Health/Watch is not served here; ask Check",
    ))
}

fn name_of<S: NamedService>(_: &S) -> &'static str {
    S::NAME
}

/// Every RPC path of a service.
fn below(service: &str) -> String {
    format!("/{service}/{{*rpc}}")
}

async fn unimplemented() -> Response {
    status::trailers_only(Status::unimplemented(
        "no such service or RPC here; this server offers lf.a2a.v1.A2AService",
    ))
}

/// The edge's refusal of a gRPC request (load shedding, the loopback check), as a trailers-only
/// answer with the refusal's status.
pub(crate) fn edge_refusal(error: ApiError) -> Response {
    status::trailers_only(status::status(&error, "-", None))
}
