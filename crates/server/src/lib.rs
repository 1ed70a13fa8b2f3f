//! The magisterium-a2a server: an A2A JSON-RPC endpoint with bearer-token auth, plans, per-user
//! rate limits, and task stores in memory or Redis, wired to the skills of the `skills` crate.
//!
//! Layers, top first (docs/architecture.md; the module test enforces them): start-up
//! ([`app`], [`cli`]) → [`bindings`] (JSON-RPC: envelope, method table, answers; HTTP+JSON;
//! gRPC) → the call pipeline every binding runs (`pipeline`: token, plan, slot, the call) and
//! the conformance kit's one hook on it ([`conformance`]) → the edge (`edge`: accept loop,
//! deadlines, guard, loopback) → the core ([`service`], [`runtime`], [`store`], [`push`],
//! [`limits`], [`auth`], the error table) → leaves ([`config`], [`wire`], [`redis_conn`], paths,
//! metrics). Public modules are what the binary and the integration tests use.

pub mod app;
pub mod auth;
pub mod bindings;
pub mod cli;
pub mod config;
pub mod conformance;
pub(crate) mod edge;
pub(crate) mod error;
pub(crate) mod gcra;
pub(crate) mod hashing;
pub mod limits;
pub(crate) mod metrics;
pub(crate) mod paths;
pub(crate) mod pipeline;
pub mod push;
pub mod redis_conn;
pub(crate) mod respond;
pub mod runtime;
pub mod service;
pub mod store;
pub(crate) mod telemetry;
pub mod wire;
