//! End-to-end tests: the real server on a random loopback port, spoken to over HTTP.

mod abuse;
mod auth;
mod bad_input;
mod conformance;
mod edge;
mod errors;
mod faults;
mod helpers;
mod isolation;
mod lifecycle;
mod limits;
mod modules;
mod operations;
mod properties;
mod push;
mod push_methods;
mod resends;
mod scale;
mod security;
mod skills;
mod stores;
mod stream_scenarios;
mod streaming;
mod suites;
mod v1;
