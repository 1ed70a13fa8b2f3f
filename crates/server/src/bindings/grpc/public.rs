//! The services beside the A2A service, which answer without a token: the health service's
//! `Check` and server reflection (v1 and v1alpha). Each is bounded in what an anonymous
//! caller can make the server hold: a request message of a few kilobytes at most, reflection
//! streams capped on the replica (`grpc.max_reflection_streams`; one more is `UNAVAILABLE`
//! at once), and the health service's `Watch` not served, since it is a stream that lasts as
//! long as the server and would hold a connection per caller (a client health-checking with
//! `Watch` takes `UNIMPLEMENTED` as "no health checks").

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use axum::routing::any;
use futures::FutureExt;
use http_body_util::BodyExt;
use tokio::sync::Semaphore;
use tonic::Status;
use tonic::server::NamedService;
use tonic_health::ServingStatus;
use tower::{Service, ServiceBuilder, ServiceExt, service_fn};

use crate::bindings::grpc::framing::FramedBody;
use crate::bindings::grpc::{schema, status};
use crate::bindings::jsonrpc::envelope::BodyLimits;
use crate::error::ApiError;
use crate::paths::GRPC_SERVICE;

/// The largest request message of the public services: a service or symbol name is some tens
/// of bytes.
const MESSAGE_BYTES: usize = 4096;

/// The public services' routes; their messages are read within `limits`' deadline.
pub(super) fn routes<S: Clone + Send + Sync + 'static>(
    limits: BodyLimits,
    max_reflection_streams: usize,
) -> Router<S> {
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
    let limits = BodyLimits {
        max_bytes: MESSAGE_BYTES,
        read_timeout: limits.read_timeout,
    };
    let framed =
        move |request: Request| request.map(|body| Body::new(FramedBody::new(body, limits)));
    let streams = Arc::new(Semaphore::new(max_reflection_streams.max(1)));
    let health_name = name_of(&health);
    Router::new()
        .route_service(
            &format!("/{health_name}/Check"),
            ServiceBuilder::new().map_request(framed).service(health),
        )
        .route(&format!("/{health_name}/Watch"), any(watch_not_served))
        .route_service(
            &below(name_of(&reflection_v1)),
            capped(
                ServiceBuilder::new()
                    .map_request(framed)
                    .service(reflection_v1),
                Arc::clone(&streams),
            ),
        )
        .route_service(
            &below(name_of(&reflection_v1alpha)),
            capped(
                ServiceBuilder::new()
                    .map_request(framed)
                    .service(reflection_v1alpha),
                streams,
            ),
        )
}

fn name_of<N: NamedService>(_: &N) -> &'static str {
    N::NAME
}

/// Every RPC path of a service.
fn below(service: &str) -> String {
    format!("/{service}/{{*rpc}}")
}

async fn watch_not_served() -> Response {
    status::trailers_only(Status::unimplemented(
        "grpc.health.v1.Health/Watch is not served here; ask Check",
    ))
}

/// `service` holding one of `streams` for as long as its answer lives (its stream open); a
/// call when none is free is `UNAVAILABLE` at once, with the A2A `ErrorInfo` and a retry hint.
fn capped<T, B>(
    service: T,
    streams: Arc<Semaphore>,
) -> impl Service<Request, Response = Response, Error = Infallible, Future: Send> + Clone + Send
where
    T: Service<Request, Response = axum::http::Response<B>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    T::Future: Send,
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    service_fn(move |request: Request| {
        let service = service.clone();
        let permit = Arc::clone(&streams).try_acquire_owned();
        async move {
            let Ok(permit) = permit else {
                let busy = ApiError::Overloaded {
                    retry_after_secs: 1,
                };
                return Ok(status::trailers_only(status::status(&busy, "-", None)));
            };
            let response = service.oneshot(request).await?;
            Ok(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _held = &permit;
                    frame
                }))
            }))
        }
    })
}
