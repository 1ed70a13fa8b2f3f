//! The magisterium-a2a server: an A2A JSON-RPC endpoint with bearer-token auth, plans, per-user
//! rate limits, and task stores in memory or Redis, wired to the skills of the `skills` crate.
//!
//! Layout: [`config`] (typed, layered settings) → [`app`] (start-up) → [`http`] (routes, layers
//! and the order of checks) → [`dispatch`] (the method table of both wires) → [`service`] (the
//! methods) and [`listing`] (`ListTasks` pages) → [`store`], [`limits`], [`auth`]; every failure
//! is an [`error::ApiError`], answered by [`error::Failure`] in the caller's wire.

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
