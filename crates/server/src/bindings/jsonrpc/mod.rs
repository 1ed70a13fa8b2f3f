//! The JSON-RPC 2.0 binding (A2A 0.3 and 1.0 on one endpoint): the envelope, ids and SSE
//! framing (`envelope`, `handler`), the method table of both wires (`methods`), their params
//! (`params`), the 1.0 conversions (`v1`) and streamed answers ([`sse`]).

pub(crate) mod envelope;
pub(crate) mod handler;
pub(crate) mod methods;
pub(crate) mod params;
pub mod sse;
pub(crate) mod v1;
