//! The edge: what stands between a socket and a binding. The accept loop and its connection
//! limits ([`serve`]), per-core serving threads, lingering closes, the body deadline, the
//! guard's load shedding and failed-token budget, the loopback check of auth-off mode, and the
//! `Connection: close` of an answer given with its request's body unread ([`unread`]).
//! The edge decides a refusal; the binding the request is for writes it ([`RenderRefusal`]).

pub(crate) mod body_deadline;
pub(crate) mod guard;
pub(crate) mod huge_pages;
pub(crate) mod linger;
pub(crate) mod loopback;
pub(crate) mod serve;
pub(crate) mod serving_threads;
pub(crate) mod unread;

use axum::http::HeaderMap;
use axum::response::Response;

use crate::error::ApiError;

/// How a binding writes the edge's refusal of a request on its paths, before the body is read:
/// a JSON-RPC error for the JSON-RPC binding, a `google.rpc.Status` body for the HTTP+JSON one,
/// chosen by the request's path. The router hands it to the guard and the loopback check.
pub(crate) type RenderRefusal = fn(ApiError, &str, &HeaderMap) -> Response;
