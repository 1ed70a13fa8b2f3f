//! Settings of the listening socket and its HTTP limits (`[server]`, `A2A__SERVER__*`).

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Listening socket and HTTP limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerSettings {
    /// Address to listen on (`A2A__SERVER__BIND`).
    pub bind: String,
    /// Absolute base URL clients reach this server at, e.g. `https://a2a.example.org`
    /// (`A2A__SERVER__PUBLIC_URL`); defaults to one built from the bound address.
    pub public_url: Option<String>,
    /// Largest request body accepted, in bytes; larger bodies get 413.
    pub max_body_bytes: usize,
    /// Seconds a skill may run before its task ends as `failed`.
    pub request_timeout_secs: u64,
    /// Open connections at most (`A2A__SERVER__MAX_CONNECTIONS`).
    pub max_connections: usize,
    /// Calls running at once at most; one more gets 503 at once (load shedding).
    pub max_in_flight: usize,
    /// Calls one user may have running at once, counted from the moment its token is verified
    /// (before its body is read) until its answer is made
    /// (`A2A__SERVER__MAX_IN_FLIGHT_PER_USER`): one user trickling bodies or asking for slow
    /// answers holds at most this many of the `max_in_flight` slots; one more is refused at once
    /// with 429 `-32003` (bucket `in_flight`).
    pub max_in_flight_per_user: usize,
    /// A client must send its request headers within this many seconds (slow clients).
    pub header_read_timeout_secs: u64,
    /// A client must send its whole body within this many seconds (slow clients).
    pub body_read_timeout_secs: u64,
    /// Seconds an answer in progress may wait for its client to take more of it
    /// (`A2A__SERVER__WRITE_TIMEOUT_SECS`): a response body (an event stream included) whose
    /// client accepts no bytes for this long is cut, its connection closed and its stream place
    /// and memory given back.
    pub write_timeout_secs: u64,
    /// Largest request head (line and headers) in bytes; at least 8192.
    pub max_header_bytes: usize,
    /// Failed authentications per minute per client address before it is refused with 429
    /// (0 turns this off).
    pub failed_auth_per_minute_per_ip: u32,
    /// The proxies in front of the server, as comma-separated CIDRs, e.g.
    /// `10.0.0.0/8,fd00::/8` (`A2A__SERVER__TRUSTED_PROXIES`). A request from one of them has
    /// its client address read from `X-Forwarded-For`, walked from the right to the first
    /// address that is not a trusted proxy; empty: the peer address is the client.
    pub trusted_proxies: String,
    /// Seconds shutdown waits for requests in flight.
    pub shutdown_grace_secs: u64,
    /// `per_core` or `shared` (`A2A__SERVER__THREADING`): where connections are served.
    pub threading: Threading,
    /// Serving threads under `per_core` (`A2A__SERVER__SERVING_THREADS`); 0: one per core
    /// the process may use.
    pub serving_threads: usize,
    /// Whether the process may use transparent huge pages
    /// (`A2A__SERVER__TRANSPARENT_HUGE_PAGES`); off by default: a growing memory store would
    /// clear 2 MiB at a time inside requests (the server's `edge::huge_pages`).
    pub transparent_huge_pages: bool,
}

/// Where the server serves its connections. Per-core threads keep each connection, and so each
/// request, on one thread: no cross-core wake-up per request (BENCHMARKS.md, "Serving
/// threads"); `shared` is tokio's work-stealing runtime, kept to compare against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Threading {
    /// One single-threaded runtime per serving thread, connections handed out in turn.
    PerCore,
    /// The one multi-threaded runtime of the process.
    Shared,
}

/// The most serving threads accepted: far above any core count, low enough that a typo cannot
/// start thousands of threads.
pub const MAX_SERVING_THREADS: usize = 1024;

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            bind: "127.0.0.1:8080".into(),
            public_url: None,
            max_body_bytes: 1024 * 1024,
            request_timeout_secs: 60,
            max_connections: 4096,
            max_in_flight: 512,
            max_in_flight_per_user: 64,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 15,
            write_timeout_secs: 30,
            max_header_bytes: 16 * 1024,
            failed_auth_per_minute_per_ip: 60,
            trusted_proxies: String::new(),
            shutdown_grace_secs: 30,
            threading: Threading::PerCore,
            serving_threads: 0,
            transparent_huge_pages: false,
        }
    }
}

impl ServerSettings {
    /// Checks the section's values that serde could not.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        if let Some(url) = &self.public_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            return Err(ConfigError::invalid(
                "server.public_url",
                "must be an absolute http:// or https:// URL",
            ));
        }
        if self.max_body_bytes < 1024 {
            return Err(ConfigError::invalid(
                "server.max_body_bytes",
                "must be at least 1024",
            ));
        }
        for (key, value) in [
            ("server.max_connections", self.max_connections as u64),
            ("server.max_in_flight", self.max_in_flight as u64),
            (
                "server.max_in_flight_per_user",
                self.max_in_flight_per_user as u64,
            ),
            (
                "server.header_read_timeout_secs",
                self.header_read_timeout_secs,
            ),
            ("server.body_read_timeout_secs", self.body_read_timeout_secs),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "must be at least 1"));
            }
        }
        if self.serving_threads > MAX_SERVING_THREADS {
            return Err(ConfigError::invalid(
                "server.serving_threads",
                format!("must be at most {MAX_SERVING_THREADS} (0: one per core)"),
            ));
        }
        if self.max_header_bytes < 8192 {
            return Err(ConfigError::invalid(
                "server.max_header_bytes",
                "must be at least 8192",
            ));
        }
        for (key, value) in [
            ("server.request_timeout_secs", self.request_timeout_secs),
            ("server.write_timeout_secs", self.write_timeout_secs),
        ] {
            if value == 0 {
                return Err(ConfigError::invalid(key, "must be at least 1"));
            }
        }
        Ok(())
    }
}
