//! The HTTP+JSON (REST) binding of A2A 1.0 (§11 of the specification): each operation at its
//! resource URL below [`crate::paths::REST_PATH`], with ProtoJSON bodies and query parameters.
//! Only the framing is here: a request becomes the params of the operation's row in the
//! method table ([`routes`]), runs through the same pipeline as its JSON-RPC twin, and its
//! outcome is written as the bare 1.0 result, a `google.rpc.Status` error or an event stream
//! ([`handler`]).

pub(crate) mod handler;
pub(crate) mod routes;
