//! Protection of the JSON-RPC endpoint against overload and abuse, in front of the handler:
//!
//! - load shedding: at most `max_in_flight` calls run at once; one more is answered at once
//!   with 503 and `-32603` ("busy, retry after 1 s") instead of queueing without bound;
//! - a per-IP budget of failed authentications: an address that keeps sending bad tokens is
//!   answered with 429 `-32003` (bucket `unauthenticated`) before any token work, so a flood of
//!   invalid tokens costs almost nothing. Valid calls never spend this budget.

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use moka::sync::Cache;
use tokio::sync::Semaphore;

use a2a_types::Response as RpcResponse;

use crate::error::ApiError;
use crate::http::RPC_PATH;
use crate::limits::Decision;
use crate::v1::{self, Wire};

type IpLimiter =
    RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, DefaultClock, StateInformationMiddleware>;

/// The endpoint's guard rails.
pub struct Guard {
    in_flight: Arc<Semaphore>,
    failures: Option<IpLimiter>,
    blocked: Cache<IpAddr, Instant>,
    trust_forwarded_for: bool,
}

impl Guard {
    /// `max_in_flight` concurrent calls; `failed_auth_per_minute` failed authentications per
    /// client address (0 turns the budget off); `trust_forwarded_for` reads the client address
    /// from the first `X-Forwarded-For` hop (only behind a proxy that sets it).
    pub fn new(
        max_in_flight: usize,
        failed_auth_per_minute: u32,
        trust_forwarded_for: bool,
    ) -> Self {
        Guard {
            in_flight: Arc::new(Semaphore::new(max_in_flight.max(1))),
            failures: NonZeroU32::new(failed_auth_per_minute)
                .map(|n| RateLimiter::keyed(Quota::per_minute(n)).with_middleware()),
            blocked: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(60))
                .build(),
            trust_forwarded_for,
        }
    }

    /// Drops idle per-address state (called with the limiter sweep).
    pub fn forget_idle(&self) {
        if let Some(failures) = &self.failures {
            failures.retain_recent();
            failures.shrink_to_fit();
        }
    }

    fn client_ip(&self, request: &Request) -> Option<IpAddr> {
        if self.trust_forwarded_for
            && let Some(ip) = request
                .headers()
                .get("x-forwarded-for")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(',').next())
                .and_then(|v| v.trim().parse().ok())
        {
            return Some(ip);
        }
        request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| addr.ip())
    }

    /// Charges one failed authentication to `ip`; blocks the address once its budget is spent.
    fn failed_auth(&self, ip: IpAddr) {
        let Some(failures) = &self.failures else {
            return;
        };
        // The failure that spends the last of the budget blocks the address, so the next
        // request is refused before any token work.
        let wait = match failures.check_key(&ip) {
            Ok(snapshot) if snapshot.remaining_burst_capacity() == 0 => {
                snapshot.quota().replenish_interval()
            }
            Ok(_) => return,
            Err(not_until) => not_until.wait_time_from(failures.clock().now()),
        };
        self.blocked.insert(ip, Instant::now() + wait);
        tracing::warn!(%ip, retry_after_secs = Decision::retry_after_secs(wait), "too many failed authentications: address blocked");
    }

    /// How long `ip` stays blocked, if it is.
    fn blocked_for(&self, ip: IpAddr) -> Option<Duration> {
        let until = self.blocked.get(&ip)?;
        until.checked_duration_since(Instant::now())
    }
}

/// The middleware: applies to `POST` on the JSON-RPC endpoint only.
pub async fn protect(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if request.uri().path() != RPC_PATH || request.method() != Method::POST {
        return next.run(request).await;
    }
    let ip = guard.client_ip(&request);
    if let Some(wait) = ip.and_then(|ip| guard.blocked_for(ip)) {
        let error = ApiError::RateLimited {
            retry_after_secs: Decision::retry_after_secs(wait),
            bucket: "unauthenticated",
        };
        return refusal(&error, request.headers());
    }
    let Ok(permit) = Arc::clone(&guard.in_flight).try_acquire_owned() else {
        return refusal(
            &ApiError::Overloaded {
                retry_after_secs: 1,
            },
            request.headers(),
        );
    };
    let response = next.run(request).await;
    drop(permit);
    if response.status() == StatusCode::UNAUTHORIZED
        && let Some(ip) = ip
    {
        guard.failed_auth(ip);
    }
    response
}

/// Answers before the body is read, in the wire the `A2A-Version` header names.
pub(crate) fn refusal(error: &ApiError, headers: &HeaderMap) -> Response {
    let version = headers
        .get(v1::VERSION_HEADER)
        .and_then(|v| v.to_str().ok());
    let (status, object) = if Wire::select(version, None).is_v1() {
        let mapped = v1::error(error, "-");
        (mapped.status, mapped.object)
    } else {
        (error.status(), error.to_object("-"))
    };
    let body = RpcResponse::failure(None, object);
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let mut response = (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        Body::from(Bytes::from(bytes)),
    )
        .into_response();
    if let Some(secs) = error.retry_after_secs() {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_authentications_block_an_address_until_the_budget_refills() {
        let guard = Guard::new(8, 3, false);
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        for _ in 0..2 {
            guard.failed_auth(ip);
            assert!(guard.blocked_for(ip).is_none());
        }
        guard.failed_auth(ip);
        let wait = guard.blocked_for(ip).expect("blocked");
        assert!(
            wait <= Duration::from_secs(20),
            "3 a minute frees one every 20 s: {wait:?}"
        );
        assert!(guard.blocked_for(other).is_none());
        let off = Guard::new(8, 0, false);
        for _ in 0..100 {
            off.failed_auth(ip);
        }
        assert!(off.blocked_for(ip).is_none());
    }
}
