//! The magisterium-a2a server: an A2A JSON-RPC endpoint with bearer-token auth, plans, per-user
//! rate limits, and task stores in memory or Redis, wired to the skills of the `skills` crate.
//!
//! Layout: [`config`] (typed, layered settings) → [`app`] (start-up) → [`http`] (routes, layers
//! and the order of checks) → [`dispatch`] (the method table of both wires) → [`service`] (the
//! methods) and [`listing`] (`ListTasks` pages) → [`store`], [`limits`], [`auth`]; every failure
//! is an [`error::ApiError`], answered by [`error::Failure`] in the caller's wire.

pub mod app;
pub mod auth;
pub mod body_deadline;
pub mod card;
pub mod cli;
pub mod config;
pub mod conformance;
pub mod data;
pub mod dispatch;
pub mod error;
pub mod gcra;
pub mod guard;
pub mod hashing;
pub mod http;
pub mod huge_pages;
pub mod limits;
pub mod linger;
pub mod listing;
pub mod loopback;
pub mod metrics;
pub mod params;
pub mod paths;
pub mod progress;
pub mod push;
pub mod redis_conn;
pub mod respond;
pub mod runtime;
pub mod serve;
pub mod service;
pub mod serving_threads;
pub mod skill_stream;
pub mod sse;
pub mod store;
pub mod telemetry;
pub mod user_slots;
pub mod v1;
pub mod wire;
