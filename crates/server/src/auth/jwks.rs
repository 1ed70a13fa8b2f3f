//! The issuer's signing keys, fetched from its JWKS URL and cached.
//!
//! Keys rotate: a token signed with a `kid` we have not seen, or whose signature does not verify
//! with the key cached under its `kid` (a key rotated under the same `kid`), triggers one
//! refresh, but never more than one per `min_refresh` interval, so a flood of forged tokens
//! cannot become a flood of fetches. The keys are also fetched again every `refresh_every`, so
//! a key removed from the JWKS stops being trusted then even when no token asks for a new one.
//! A failed fetch keeps the keys we had.
//!
//! The fetch follows no redirect, reads at most [`MAX_JWKS_BYTES`], and (under the production
//! profile) speaks `https://` only; its errors are logged with the URL's scheme, host and path,
//! never its query (which may carry a credential).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, DecodingKey};

use skills::shown_url::shown_url;

use super::{AuthError, AuthSetupError};

/// The largest JWKS response read: a real key set is a few kilobytes, and an issuer (or whoever
/// answers in its place) must not make the server buffer without bound.
pub const MAX_JWKS_BYTES: usize = 1024 * 1024;

#[derive(Clone)]
struct SigningKey {
    key: DecodingKey,
    alg: Algorithm,
}

/// Cached JWKS keys by `kid`, refreshed on demand.
pub struct JwksCache {
    url: String,
    /// The URL as logs show it ([`shown_url`]): its path and query may hold a secret.
    shown_url: String,
    client: reqwest::Client,
    min_refresh: Duration,
    keys: RwLock<Arc<HashMap<String, SigningKey>>>,
    refresh: tokio::sync::Mutex<Option<Instant>>,
    generation: AtomicU64,
}

impl JwksCache {
    /// A cache for the keys at `url`, empty until the first refresh; `https_only` refuses to
    /// fetch them over anything but TLS.
    pub fn new(
        url: String,
        min_refresh: Duration,
        https_only: bool,
    ) -> Result<Self, AuthSetupError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .https_only(https_only)
            .build()
            .map_err(|e| AuthSetupError::Client(e.to_string()))?;
        Ok(JwksCache {
            shown_url: shown_url(&url),
            url,
            client,
            min_refresh,
            keys: RwLock::new(Arc::new(HashMap::new())),
            refresh: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
        })
    }

    /// Changes whenever the key set is replaced, so verifications cached under an older key
    /// set are not trusted (a key removed from the JWKS stops working at once).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn snapshot(&self) -> Arc<HashMap<String, SigningKey>> {
        match self.keys.read() {
            Ok(keys) => Arc::clone(&keys),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Fetches the key set now, unless another refresh happened within the minimum interval
    /// or is under way. Returns whether a fetch was made and succeeded. Never waits for another
    /// caller's fetch: a flood of forged tokens must not pile up behind a slow JWKS, holding
    /// places that other calls need.
    pub async fn refresh(&self) -> Result<bool, String> {
        let Ok(mut last) = self.refresh.try_lock() else {
            return Ok(false);
        };
        if let Some(at) = *last
            && at.elapsed() < self.min_refresh
        {
            return Ok(false);
        }
        *last = Some(Instant::now());
        let fetched = self.fetch().await;
        match fetched {
            Ok(keys) => {
                tracing::info!(keys = keys.len(), "JWKS refreshed");
                let mut slot = match self.keys.write() {
                    Ok(slot) => slot,
                    Err(poisoned) => poisoned.into_inner(),
                };
                *slot = Arc::new(keys);
                self.generation.fetch_add(1, Ordering::Release);
                Ok(true)
            }
            Err(e) => {
                tracing::warn!(url = %self.shown_url, error = %e, "JWKS refresh failed; keeping the cached keys");
                Err(e)
            }
        }
    }

    /// Fetches the keys again every `every` (still no more often than the minimum interval),
    /// for as long as the cache is in use.
    pub fn refresh_periodically(self: &Arc<Self>, every: Duration) {
        let cache: Weak<JwksCache> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(cache) = cache.upgrade() else {
                    return;
                };
                // A failure is logged by `refresh`, and the cached keys are kept.
                let _ = cache.refresh().await;
            }
        });
    }

    async fn fetch(&self) -> Result<HashMap<String, SigningKey>, String> {
        // `without_url`: the client's errors would otherwise print the whole URL, query and all.
        let mut response = self
            .client
            .get(&self.url)
            .send()
            .await
            .map_err(|e| format!("fetch: {}", e.without_url()))?;
        if !response.status().is_success() {
            return Err(format!(
                "status {} (redirects are not followed)",
                response.status()
            ));
        }
        if response
            .content_length()
            .is_some_and(|length| length > MAX_JWKS_BYTES as u64)
        {
            return Err(format!("the key set is larger than {MAX_JWKS_BYTES} bytes"));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| format!("body: {}", e.without_url()))?
        {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(format!("the key set is larger than {MAX_JWKS_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        let set: JwkSet = serde_json::from_slice(&body).map_err(|e| format!("body: {e}"))?;
        let mut keys = HashMap::new();
        for (index, jwk) in set.keys.iter().enumerate() {
            if let Some(usage) = &jwk.common.public_key_use
                && *usage != jsonwebtoken::jwk::PublicKeyUse::Signature
            {
                continue;
            }
            let Some(alg) = jwk
                .common
                .key_algorithm
                .map_or_else(|| implied_algorithm(&jwk.algorithm), asymmetric)
            else {
                continue;
            };
            let Ok(key) = DecodingKey::from_jwk(jwk) else {
                continue;
            };
            let kid = jwk
                .common
                .key_id
                .clone()
                .unwrap_or_else(|| format!("#{index}"));
            keys.insert(kid, SigningKey { key, alg });
        }
        Ok(keys)
    }

    /// The key for a token header: by `kid` (refreshing once when unknown), or the only key
    /// when the token names none. The algorithm comes from the key, never from the token, and
    /// must match the token's: that rules out `alg` confusion.
    pub async fn key_for(
        &self,
        kid: Option<&str>,
        token_alg: Algorithm,
    ) -> Result<(DecodingKey, Algorithm), AuthError> {
        let found = match self.lookup(kid) {
            Some(found) => found,
            None => {
                // Ignore refresh errors here: the lookup below reports the missing key.
                let _ = self.refresh().await;
                self.lookup(kid).ok_or_else(|| {
                    AuthError::Invalid("the token's signing key (kid) is not known".into())
                })?
            }
        };
        if found.alg != token_alg {
            return Err(AuthError::Invalid(
                "the token's algorithm does not match its key".into(),
            ));
        }
        Ok((found.key, found.alg))
    }

    fn lookup(&self, kid: Option<&str>) -> Option<SigningKey> {
        let keys = self.snapshot();
        match kid {
            Some(kid) => keys.get(kid).cloned(),
            None if keys.len() == 1 => keys.values().next().cloned(),
            None => None,
        }
    }
}

/// Only asymmetric signature algorithms are taken from a JWKS: an HMAC "key" published there
/// would let anyone who read it sign tokens.
fn asymmetric(alg: KeyAlgorithm) -> Option<Algorithm> {
    match alg {
        KeyAlgorithm::RS256 => Some(Algorithm::RS256),
        KeyAlgorithm::RS384 => Some(Algorithm::RS384),
        KeyAlgorithm::RS512 => Some(Algorithm::RS512),
        KeyAlgorithm::PS256 => Some(Algorithm::PS256),
        KeyAlgorithm::ES256 => Some(Algorithm::ES256),
        KeyAlgorithm::ES384 => Some(Algorithm::ES384),
        KeyAlgorithm::EdDSA => Some(Algorithm::EdDSA),
        _ => None,
    }
}

/// The algorithm a key without `alg` is used with, from its type and curve.
fn implied_algorithm(params: &AlgorithmParameters) -> Option<Algorithm> {
    match params {
        AlgorithmParameters::RSA(_) => Some(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => Some(Algorithm::ES256),
            EllipticCurve::P384 => Some(Algorithm::ES384),
            _ => None,
        },
        AlgorithmParameters::OctetKeyPair(_) => Some(Algorithm::EdDSA),
        _ => None,
    }
}
