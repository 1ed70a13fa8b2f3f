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
pub(crate) mod public;
pub mod schema;
pub(crate) mod status;
pub(crate) mod stream;
pub(crate) mod transcode;

use std::sync::Arc;

use axum::Router;
use axum::response::Response;
use axum::routing::any;
use tonic::Status;

use crate::bindings::AppState;
use crate::error::ApiError;
use crate::paths::GRPC_SERVICE;

pub(crate) use status::is_grpc;

/// The binding's routes: the A2A service's RPCs and the public services ([`public`]); any
/// other service or RPC is `UNIMPLEMENTED`, as a gRPC server answers it.
pub(crate) fn routes(state: Arc<AppState>) -> Router {
    let public = public::routes(state.body_limits, state.max_reflection_streams);
    Router::new()
        .route(
            &format!("/{GRPC_SERVICE}/{{rpc}}"),
            any(handler::grpc_handler),
        )
        .merge(public)
        .fallback(unimplemented)
        .with_state(state)
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
