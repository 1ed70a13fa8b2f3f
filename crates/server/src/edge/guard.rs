//! Protection of the JSON-RPC endpoint against overload and abuse, in front of the handler:
//!
//! - load shedding: at most `max_in_flight` calls run at once; one more is answered at once
//!   with 503 and `-32603` ("busy, retry after 1 s") instead of queueing without bound;
//! - the client address: the peer, or, when the peer is a trusted proxy, the rightmost
//!   `X-Forwarded-For` hop that is not a trusted proxy (as nginx's `real_ip_recursive`), so a
//!   client cannot choose the address it is budgeted under;
//! - a per-address budget of failed authentications (IPv6 per /64): once an address has spent
//!   it, its requests whose token does not verify are answered 429 `-32003` (bucket
//!   `unauthenticated`). A request whose token verifies is never refused by it, so clients
//!   behind one proxy or NAT cannot lock each other out. The conformance kit's simulated refusals
//!   never spend it.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use ipnet::IpNet;
use moka::sync::Cache;
use tokio::sync::Semaphore;

use super::RenderRefusal;
use crate::error::ApiError;
use crate::limits::Decision;
use crate::paths;

type IpLimiter =
    RateLimiter<IpAddr, DefaultKeyedStateStore<IpAddr>, DefaultClock, StateInformationMiddleware>;

const FORWARDED_FOR: &str = "x-forwarded-for";

/// Put in a 401 response's extensions when the refusal was staged (the conformance kit's
/// `unauthorized`): the guard does not count it against the client's failed-token budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NotCounted;

/// Set on a request whose client address has spent its failed-authentication budget: the
/// handler answers 429 instead of 401 if the token does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetSpent {
    /// Whole seconds until the address may fail again.
    pub retry_after_secs: u64,
    /// The budget, failed authentications per minute.
    pub per_minute: u32,
}

/// The endpoint's guard rails.
pub struct Guard {
    in_flight: Arc<Semaphore>,
    failures: Option<IpLimiter>,
    failed_auth_per_minute: u32,
    blocked: Cache<IpAddr, Instant>,
    trusted_proxies: Vec<IpNet>,
}

impl Guard {
    /// `max_in_flight` concurrent calls; `failed_auth_per_minute` failed authentications per
    /// client address (0 turns the budget off); `trusted_proxies`: the proxies whose
    /// `X-Forwarded-For` is believed.
    pub fn new(
        max_in_flight: usize,
        failed_auth_per_minute: u32,
        trusted_proxies: Vec<IpNet>,
    ) -> Self {
        Guard {
            in_flight: Arc::new(Semaphore::new(max_in_flight.max(1))),
            failures: NonZeroU32::new(failed_auth_per_minute)
                .map(|n| RateLimiter::keyed(Quota::per_minute(n)).with_middleware()),
            failed_auth_per_minute,
            blocked: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(60))
                .build(),
            trusted_proxies,
        }
    }

    /// Drops idle per-address state (called with the limiter sweep).
    pub fn forget_idle(&self) {
        if let Some(failures) = &self.failures {
            failures.retain_recent();
            failures.shrink_to_fit();
        }
    }

    fn is_trusted(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }

    /// The client's address: the peer, unless it is a trusted proxy; then `X-Forwarded-For`
    /// walked from the right, skipping trusted proxies. A hop that is not an address stops the
    /// walk at the last trusted one; a header of trusted proxies only gives its leftmost.
    fn client_address(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let mut client = peer;
        if !self.is_trusted(client) {
            return client;
        }
        let values: Vec<&str> = headers
            .get_all(FORWARDED_FOR)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        for hop in values.iter().rev().flat_map(|v| v.rsplit(',')) {
            let Ok(ip) = hop.trim().parse::<IpAddr>() else {
                return client;
            };
            client = ip;
            if !self.is_trusted(ip) {
                return client;
            }
        }
        client
    }

    /// Charges one failed authentication to `ip`; blocks the address once its budget is spent.
    fn failed_auth(&self, ip: IpAddr) {
        let Some(failures) = &self.failures else {
            return;
        };
        let key = budget_key(ip);
        // The failure that spends the last of the budget blocks the address, so the next
        // request whose token fails is refused.
        let wait = match failures.check_key(&key) {
            Ok(snapshot) if snapshot.remaining_burst_capacity() == 0 => {
                snapshot.quota().replenish_interval()
            }
            Ok(_) => return,
            Err(not_until) => not_until.wait_time_from(failures.clock().now()),
        };
        self.blocked.insert(key, Instant::now() + wait);
        tracing::warn!(address = %key, retry_after_secs = Decision::retry_after_secs(wait), "too many failed authentications: address blocked");
    }

    /// How long `ip` stays blocked, if it is.
    fn blocked_for(&self, ip: IpAddr) -> Option<Duration> {
        let until = self.blocked.get(&budget_key(ip))?;
        until.checked_duration_since(Instant::now())
    }
}

/// The key an address is budgeted under: IPv4 as is, IPv6 by its /64 (one subscriber's
/// prefix: a client holds billions of addresses within it).
fn budget_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(prefix))
        }
        v4 => v4,
    }
}

/// The middleware: applies to calls only (`POST` on the JSON-RPC endpoints, the whole agent's
/// and each skill's agent's, with or without a trailing slash, which the router serves alike;
/// any request to the HTTP+JSON binding). It
/// sheds load, tells the handler when the client address has spent its failed-authentication
/// budget, and charges a 401 to that budget.
pub async fn protect(
    State((guard, render)): State<(Arc<Guard>, RenderRefusal)>,
    mut request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if !paths::is_call(request.method(), path) {
        return next.run(request).await;
    }
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| guard.client_address(peer.ip(), request.headers()));
    if let Some(wait) = client.and_then(|client| guard.blocked_for(client)) {
        request.extensions_mut().insert(BudgetSpent {
            retry_after_secs: Decision::retry_after_secs(wait),
            per_minute: guard.failed_auth_per_minute,
        });
    }
    let Ok(permit) = Arc::clone(&guard.in_flight).try_acquire_owned() else {
        return render(
            ApiError::Overloaded {
                retry_after_secs: 1,
            },
            request.uri().path(),
            request.headers(),
        );
    };
    let response = next.run(request).await;
    drop(permit);
    if refused_token(&response)
        && response.extensions().get::<NotCounted>().is_none()
        && let Some(client) = client
    {
        guard.failed_auth(client);
    }
    response
}

/// Whether an answer refused the caller's token: a 401, or a gRPC `UNAUTHENTICATED` (code 16)
/// answered in the head (a trailers-only answer, as every refusal before the message is read).
fn refused_token(response: &Response) -> bool {
    response.status() == StatusCode::UNAUTHORIZED
        || response
            .headers()
            .get(GRPC_STATUS)
            .is_some_and(|code| code == "16")
}

const GRPC_STATUS: &str = "grpc-status";

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn failed_authentications_block_an_address_until_the_budget_refills() {
        let guard = Guard::new(8, 3, Vec::new());
        let other = ip("192.0.2.8");
        for _ in 0..2 {
            guard.failed_auth(ip("192.0.2.7"));
            assert!(guard.blocked_for(ip("192.0.2.7")).is_none());
        }
        guard.failed_auth(ip("192.0.2.7"));
        let wait = guard.blocked_for(ip("192.0.2.7")).expect("blocked");
        assert!(
            wait <= Duration::from_secs(20),
            "3 a minute frees one every 20 s: {wait:?}"
        );
        assert!(guard.blocked_for(other).is_none());
        let off = Guard::new(8, 0, Vec::new());
        for _ in 0..100 {
            off.failed_auth(ip("192.0.2.7"));
        }
        assert!(off.blocked_for(ip("192.0.2.7")).is_none());
    }

    #[test]
    fn the_forwarded_walk_stops_at_the_first_untrusted_hop_from_the_right() {
        let guard = Guard::new(8, 3, vec!["10.0.0.0/8".parse().unwrap()]);
        let mut headers = HeaderMap::new();
        headers.append(FORWARDED_FOR, HeaderValue::from_static("1.1.1.1, 2.2.2.2"));
        headers.append(FORWARDED_FOR, HeaderValue::from_static("3.3.3.3, 10.1.1.1"));
        assert_eq!(
            guard.client_address(ip("10.0.0.1"), &headers),
            ip("3.3.3.3")
        );
        assert_eq!(
            guard.client_address(ip("192.0.2.1"), &headers),
            ip("192.0.2.1"),
            "an untrusted peer is the client whatever it forwards"
        );
        let mut garbage = HeaderMap::new();
        garbage.insert(
            FORWARDED_FOR,
            HeaderValue::from_static("nonsense, 10.2.2.2"),
        );
        assert_eq!(
            guard.client_address(ip("10.0.0.1"), &garbage),
            ip("10.2.2.2")
        );
        let mut trusted_only = HeaderMap::new();
        trusted_only.insert(
            FORWARDED_FOR,
            HeaderValue::from_static("10.3.3.3, 10.2.2.2"),
        );
        assert_eq!(
            guard.client_address(ip("10.0.0.1"), &trusted_only),
            ip("10.3.3.3")
        );
        assert_eq!(
            guard.client_address(ip("::ffff:10.0.0.1"), &headers),
            ip("3.3.3.3"),
            "an IPv4 proxy seen on an IPv6 socket is still trusted"
        );
    }

    #[test]
    fn ipv6_addresses_share_the_budget_of_their_64() {
        assert_eq!(
            budget_key(ip("2001:db8::1")),
            budget_key(ip("2001:db8::ffff:1"))
        );
        assert_ne!(
            budget_key(ip("2001:db8::1")),
            budget_key(ip("2001:db8:0:1::1"))
        );
        assert_eq!(budget_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }
}
