//! `GET /.well-known/jwks.json`: the public keys that verify this server's notifications.

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::get;
use bytes::Bytes;

use super::signing::SigningKeys;
use crate::paths;

/// The JWKS route, serving the document built once at start.
pub fn jwks_routes(keys: &SigningKeys) -> Router {
    let document = Bytes::copy_from_slice(keys.jwks_json());
    Router::new().route(
        paths::JWKS,
        get(move || {
            let document = document.clone();
            async move {
                let mut response = Response::new(Body::from(document));
                *response.status_mut() = StatusCode::OK;
                let headers = response.headers_mut();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/jwk-set+json"),
                );
                // Short, so a key replaced at a restart is picked up soon.
                headers.insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("public, max-age=300"),
                );
                response
            }
        }),
    )
}
