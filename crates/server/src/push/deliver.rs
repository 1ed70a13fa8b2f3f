//! One delivery attempt: POST of the task's JSON to the webhook with the config's token, the
//! notification's idempotency key and a signed JWT carrying a hash of the body; the address
//! checked before connecting, no redirect followed, a deadline on the whole exchange, and no
//! more than a small part of the answer read.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use tracing::Instrument;

use super::PushError;
use super::address::forbidden_reason;
use super::queue::Delivery;
use super::resolve::{CheckedResolver, RefusedAddress};
use super::signing::{NotificationClaims, SigningKeys, body_sha256};
use crate::config::PushSettings;
use crate::telemetry::traces;

/// The header carrying the config's `token`.
pub const TOKEN_HEADER: &str = "X-A2A-Notification-Token";
/// The header carrying the notification id, the same on every attempt.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";
/// The most bytes of a receiver's answer that are read.
const MAX_RESPONSE_BYTES: usize = 4096;

/// What an attempt came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// A 2xx answer.
    Delivered(StatusCode),
    /// Worth trying again: no answer, a timeout, 408, 429 or 5xx (`Retry-After` when given).
    Retry {
        /// What happened, for the logs.
        reason: String,
        /// The receiver's `Retry-After`, in seconds.
        retry_after: Option<Duration>,
    },
    /// Not worth trying again: a refused address, a redirect, another 4xx.
    GiveUp(String),
}

/// Posts notifications: one HTTP client for every webhook, with the checked resolver.
pub struct Deliverer {
    client: reqwest::Client,
    keys: Arc<SigningKeys>,
    issuer: String,
    allow_private: bool,
    jwt_ttl: Duration,
}

impl Deliverer {
    /// A deliverer signing with `keys` as `issuer` (the server's public base URL).
    pub fn new(
        settings: &PushSettings,
        keys: Arc<SigningKeys>,
        issuer: String,
    ) -> Result<Self, PushError> {
        let timeout = Duration::from_millis(settings.delivery_timeout_ms);
        // The HTTP client needs a process-wide TLS provider; one already installed is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckedResolver {
                allow_private: settings.allow_private_targets,
            }))
            // A proxy would resolve the name itself, after the check.
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("magisterium-a2a/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| PushError::Client(e.to_string()))?;
        Ok(Deliverer {
            client,
            keys,
            issuer,
            allow_private: settings.allow_private_targets,
            jwt_ttl: Duration::from_secs(settings.jwt_ttl_secs),
        })
    }

    /// One attempt to deliver, in a span of the trace that queued it when traces are exported.
    pub async fn attempt(&self, delivery: &Delivery) -> DeliveryOutcome {
        let span = traces::delivery_span(delivery.trace.as_deref());
        self.send(delivery).instrument(span).await
    }

    /// The attempt itself: the address checked, the body signed and posted.
    async fn send(&self, delivery: &Delivery) -> DeliveryOutcome {
        let url = match Url::parse(&delivery.url) {
            Ok(url) => url,
            Err(e) => return DeliveryOutcome::GiveUp(format!("bad URL: {e}")),
        };
        // A literal address is connected to without resolving, so it is checked here.
        if !self.allow_private
            && let Some(reason) = url
                .host_str()
                .map(|h| h.trim_start_matches('[').trim_end_matches(']'))
                .and_then(|h| h.parse::<IpAddr>().ok())
                .and_then(forbidden_reason)
        {
            return DeliveryOutcome::GiveUp(format!(
                "the URL's address is {reason}, which this server does not deliver to"
            ));
        }
        let token = match self.sign(delivery) {
            Ok(token) => token,
            Err(e) => {
                return DeliveryOutcome::Retry {
                    reason: e.to_string(),
                    retry_after: None,
                };
            }
        };
        let mut request = self
            .client
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(AUTHORIZATION, format!("Bearer {token}"))
            .header(IDEMPOTENCY_HEADER, &delivery.id)
            .body(delivery.body.clone());
        if let Some(token) = &delivery.token
            && let Ok(value) = HeaderValue::from_str(token)
        {
            request = request.header(TOKEN_HEADER, value);
        }
        if let Some(traceparent) = traces::traceparent() {
            request = request.header("traceparent", traceparent);
        }
        match request.send().await {
            Ok(response) => classify(response).await,
            Err(e) => match refused_address(&e) {
                Some(refused) => DeliveryOutcome::GiveUp(refused.to_string()),
                None => DeliveryOutcome::Retry {
                    reason: describe(e),
                    retry_after: None,
                },
            },
        }
    }

    fn sign(&self, delivery: &Delivery) -> Result<String, PushError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        self.keys.sign(&NotificationClaims {
            iss: self.issuer.clone(),
            aud: delivery.url.clone(),
            iat: now,
            exp: now + self.jwt_ttl.as_secs(),
            jti: uuid::Uuid::new_v4().to_string(),
            request_body_sha256: body_sha256(&delivery.body),
        })
    }
}

/// Reads at most [`MAX_RESPONSE_BYTES`] of the answer (under the same deadline), then judges
/// its status.
async fn classify(mut response: reqwest::Response) -> DeliveryOutcome {
    let status = response.status();
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let mut read = 0;
    while read < MAX_RESPONSE_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => read += chunk.len(),
            Ok(None) | Err(_) => break,
        }
    }
    drop(response);
    if status.is_success() {
        DeliveryOutcome::Delivered(status)
    } else if status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
        || status.is_server_error()
    {
        DeliveryOutcome::Retry {
            reason: format!("the receiver answered {status}"),
            retry_after,
        }
    } else if status.is_redirection() {
        DeliveryOutcome::GiveUp(format!(
            "the receiver answered {status}; redirects are not followed"
        ))
    } else {
        DeliveryOutcome::GiveUp(format!("the receiver answered {status}"))
    }
}

/// The resolver's refusal, when that is why the request failed.
fn refused_address(error: &reqwest::Error) -> Option<&RefusedAddress> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<RefusedAddress>() {
            return Some(refused);
        }
        source = cause.source();
    }
    None
}

/// An error with its causes, for the logs, without the URL (its path and query may hold a
/// secret; the worker logs the webhook as `shown_url` shows it).
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = if error.is_timeout() {
        "timed out".to_string()
    } else {
        error.to_string()
    };
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
