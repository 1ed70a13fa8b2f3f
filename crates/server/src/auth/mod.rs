//! Bearer-token authentication and plans.
//!
//! Every call to the endpoint carries an OAuth-issued JWT. This module turns the
//! `Authorization` header into a [`Principal`] (who is calling, on which plan) or an
//! [`AuthError`] that the server answers with `-32004`.

mod jwks;

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::Serialize;
use serde_json::{Map, Value};

pub use crate::config::Plan;
use crate::config::{AuthMode, AuthSettings};
use crate::hashing::DerivedKeys;
use crate::store::Owner;
pub use jwks::JwksCache;

/// The authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's `sub`, for logs.
    pub sub: String,
    /// The plan read from the token.
    pub plan: Plan,
    /// The hashed (issuer, `sub`): tasks belong to it and limits count per it. Hashed once,
    /// when the token is verified, and cached with it.
    pub owner: Owner,
}

impl Principal {
    /// The caller with this issuer (empty when the token names none), subject and plan.
    pub fn new(issuer: &str, sub: String, plan: Plan) -> Self {
        let owner = Owner::of(issuer, &sub);
        Principal { sub, plan, owner }
    }
}

/// Why a request is not authenticated. The text is safe to show the caller: it never holds the
/// token or key material.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// No `Authorization` header.
    #[error("missing bearer token: send `Authorization: Bearer <token>`")]
    Missing,
    /// A header that is not `Bearer <token>`.
    #[error("malformed Authorization header: expected `Bearer <token>`")]
    Malformed,
    /// A token was presented but is not acceptable.
    #[error("invalid token: {0}")]
    Invalid(String),
}

impl AuthError {
    /// Whether the client presented a token (RFC 6750 adds `error="invalid_token"` only then).
    pub fn token_presented(&self) -> bool {
        !matches!(self, AuthError::Missing)
    }
}

enum Verifier {
    Hs256(Box<(DecodingKey, Validation)>),
    Jwks(Arc<JwksCache>),
    Disabled(Principal),
}

/// What every token must satisfy besides its signature.
struct ClaimChecks {
    issuer: Option<String>,
    audience: Option<String>,
    leeway: u64,
}

impl ClaimChecks {
    /// The checks for a token signed with `alg`: only that algorithm, `exp` and `sub` required,
    /// `nbf` honoured, and `iss` and `aud` required and checked when configured (a token that
    /// leaves one out is refused as one naming another issuer or audience is).
    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        if self.issuer.is_some() {
            required.push("iss");
        }
        if self.audience.is_some() {
            required.push("aud");
        }
        validation.set_required_spec_claims(&required);
        match &self.issuer {
            Some(iss) => validation.set_issuer(&[iss]),
            None => validation.iss = None,
        }
        match &self.audience {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        validation
    }
}

/// Verifies tokens according to the configured mode.
pub struct Authenticator {
    verifier: Verifier,
    plan_claim: String,
    checks: ClaimChecks,
    /// Tokens already verified, by [`TokenHasher`] (never the token itself), with their `exp`:
    /// a client sends the same token on every call, and an RS256 check costs tens of
    /// microseconds. Bounded in entries, living at most a minute, and dropped when the JWKS key
    /// set changes.
    verified: moka::sync::Cache<u128, Verified, DerivedKeys>,
    /// Tokens refused by their signature or claims, for a few seconds: a client (or a flood)
    /// repeating a bad token costs a lookup, not a signature check each time.
    refused: moka::sync::Cache<u128, Refused, DerivedKeys>,
    hasher: TokenHasher,
}

/// A keyed 128-bit hash of a token: two outputs of SipHash under a key drawn at start, so the
/// caches hold no token, and no one without the key can make two tokens share an entry. It
/// costs a small fraction of a SHA-256 of the same token, on every call.
struct TokenHasher(RandomState);

impl TokenHasher {
    fn key(&self, token: &str) -> u128 {
        let high = self.0.hash_one((0u8, token));
        let low = self.0.hash_one((1u8, token));
        (u128::from(high) << 64) | u128::from(low)
    }
}

/// A refusal remembered under one JWKS key set.
#[derive(Clone)]
struct Refused {
    error: AuthError,
    generation: u64,
}

/// How long a refused token is answered from memory. Short, so that a token refused for a
/// time-dependent reason (`nbf` in the near future) is checked again soon.
const REFUSAL_MEMORY: Duration = Duration::from_secs(10);

/// A token that verified, until its `exp`, under one JWKS key set.
#[derive(Clone)]
struct Verified {
    principal: Principal,
    expires: u64,
    generation: u64,
}

impl Authenticator {
    /// Builds the verifier. `hs256_secret` is the effective secret in `hs256` mode (configured
    /// or generated for development); `https_only` fetches the JWKS over TLS only (the
    /// production profile).
    pub fn new(
        settings: &AuthSettings,
        hs256_secret: Option<&str>,
        https_only: bool,
    ) -> Result<Self, AuthSetupError> {
        let checks = ClaimChecks {
            issuer: settings.issuer.clone(),
            audience: settings.audience.clone(),
            leeway: settings.leeway_secs,
        };
        let verifier = match settings.mode {
            AuthMode::Hs256 => {
                let secret = hs256_secret.ok_or(AuthSetupError::MissingSecret)?;
                let key = DecodingKey::from_secret(secret.as_bytes())
                    .map_err(|e| AuthSetupError::Key(e.to_string()))?;
                Verifier::Hs256(Box::new((key, checks.validation(Algorithm::HS256))))
            }
            AuthMode::Jwks => {
                let url = settings
                    .jwks_url
                    .clone()
                    .ok_or(AuthSetupError::MissingJwksUrl)?;
                Verifier::Jwks(Arc::new(JwksCache::new(
                    url,
                    Duration::from_secs(settings.jwks_min_refresh_secs),
                    https_only,
                )?))
            }
            AuthMode::None => Verifier::Disabled(Principal::new(
                "",
                settings.none_sub.clone(),
                settings.none_plan,
            )),
        };
        Ok(Authenticator {
            verifier,
            plan_claim: settings.plan_claim.clone(),
            checks,
            verified: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(60))
                .build_with_hasher(DerivedKeys::default()),
            refused: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(REFUSAL_MEMORY)
                .build_with_hasher(DerivedKeys::default()),
            hasher: TokenHasher(RandomState::new()),
        })
    }

    /// The JWKS cache, in `jwks` mode, so the server can warm it at start.
    pub fn jwks(&self) -> Option<&Arc<JwksCache>> {
        match &self.verifier {
            Verifier::Jwks(cache) => Some(cache),
            _ => None,
        }
    }

    /// Checks an `Authorization` header value and returns the caller.
    pub async fn authenticate(&self, header: Option<&[u8]>) -> Result<Principal, AuthError> {
        if let Verifier::Disabled(principal) = &self.verifier {
            return Ok(principal.clone());
        }
        let token = bearer_token(header)?;
        let digest = self.hasher.key(token);
        let generation = self.key_generation();
        if let Some(cached) = self.verified.get(&digest)
            && unix_now() < cached.expires
            && cached.generation == generation
        {
            return Ok(cached.principal);
        }
        if let Some(refused) = self.refused.get(&digest)
            && refused.generation == generation
        {
            return Err(refused.error);
        }
        let checked = match &self.verifier {
            Verifier::Disabled(principal) => return Ok(principal.clone()),
            Verifier::Hs256(hs256) => {
                let (key, validation) = hs256.as_ref();
                decode_claims(token, key, validation)
            }
            Verifier::Jwks(cache) => self.verify_with_jwks(cache, token).await?,
        };
        let verified = checked.and_then(|claims| {
            let expires = claims.get("exp").and_then(Value::as_u64);
            self.principal(claims).map(|principal| (principal, expires))
        });
        let (principal, expires) = match verified {
            Ok(verified) => verified,
            Err(error) => {
                let refused = Refused {
                    error: error.clone(),
                    generation,
                };
                self.refused.insert(digest, refused);
                return Err(error);
            }
        };
        if let Some(expires) = expires {
            let cached = Verified {
                principal: principal.clone(),
                expires,
                generation,
            };
            self.verified.insert(digest, cached);
        }
        Ok(principal)
    }

    /// Verifies a token against the issuer's keys. `Err` is a refusal not to remember: a key
    /// that cannot be found now (unknown `kid`, JWKS unreachable) may be found after the next
    /// refresh. A signature that does not verify with the key cached under its `kid` refreshes
    /// the keys once (rate-limited) and is checked again: the issuer may have rotated the key
    /// under the same `kid`.
    async fn verify_with_jwks(
        &self,
        cache: &JwksCache,
        token: &str,
    ) -> Result<Result<Map<String, Value>, AuthError>, AuthError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| AuthError::Invalid(describe(&e)))?;
        let kid = header.kid.as_deref();
        let (key, alg) = cache.key_for(kid, header.alg).await?;
        let checked = decode_claims(token, &key, &self.checks.validation(alg));
        if matches!(&checked, Err(AuthError::Invalid(why)) if why == BAD_SIGNATURE)
            && cache.refresh().await == Ok(true)
        {
            let (key, alg) = cache.key_for(kid, header.alg).await?;
            return Ok(decode_claims(token, &key, &self.checks.validation(alg)));
        }
        Ok(checked)
    }

    fn key_generation(&self) -> u64 {
        match &self.verifier {
            Verifier::Jwks(cache) => cache.generation(),
            _ => 0,
        }
    }

    fn principal(&self, claims: Map<String, Value>) -> Result<Principal, AuthError> {
        let sub = match claims.get("sub") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            _ => return Err(AuthError::Invalid("the token has no `sub` claim".into())),
        };
        let plan = claims
            .get(&self.plan_claim)
            .and_then(Value::as_str)
            .map(Plan::from_claim)
            .unwrap_or(Plan::Free);
        // Verified against `auth.issuer` when that is set (always under production).
        let issuer = claims
            .get("iss")
            .and_then(Value::as_str)
            .unwrap_or_default();
        Ok(Principal::new(issuer, sub, plan))
    }
}

/// Why the authenticator could not be built.
#[derive(Debug, thiserror::Error)]
pub enum AuthSetupError {
    /// `hs256` mode without a secret.
    #[error("auth.mode is hs256 but no secret is configured (A2A__AUTH__HS256_SECRET)")]
    MissingSecret,
    /// `jwks` mode without a URL.
    #[error("auth.mode is jwks but auth.jwks_url is not set (A2A__AUTH__JWKS_URL)")]
    MissingJwksUrl,
    /// The key material is unusable.
    #[error("unusable key: {0}")]
    Key(String),
    /// The HTTP client for JWKS could not be built.
    #[error("JWKS client: {0}")]
    Client(String),
}

fn bearer_token(header: Option<&[u8]>) -> Result<&str, AuthError> {
    let raw = header.ok_or(AuthError::Missing)?;
    let value = std::str::from_utf8(raw).map_err(|_| AuthError::Malformed)?;
    let (scheme, token) = value.trim().split_once(' ').ok_or(AuthError::Malformed)?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Malformed);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err(AuthError::Malformed);
    }
    Ok(token)
}

fn decode_claims(
    token: &str,
    key: &DecodingKey,
    validation: &Validation,
) -> Result<Map<String, Value>, AuthError> {
    jsonwebtoken::decode::<Map<String, Value>>(token, key, validation)
        .map(|data| data.claims)
        .map_err(|e| AuthError::Invalid(describe(&e)))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// Why a token whose signature does not verify is refused (and, in `jwks` mode, the cue to
/// fetch the keys again).
const BAD_SIGNATURE: &str = "the signature does not verify";

/// A short, secret-free description of a verification failure.
fn describe(error: &jsonwebtoken::errors::Error) -> String {
    use jsonwebtoken::errors::ErrorKind;
    match error.kind() {
        ErrorKind::ExpiredSignature => "the token has expired".into(),
        ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
        ErrorKind::InvalidSignature => BAD_SIGNATURE.into(),
        ErrorKind::InvalidAlgorithm | ErrorKind::InvalidAlgorithmName => {
            "the token's algorithm is not accepted".into()
        }
        ErrorKind::InvalidIssuer => "wrong issuer (iss)".into(),
        ErrorKind::InvalidAudience => "wrong audience (aud)".into(),
        ErrorKind::MissingRequiredClaim(claim) => format!("the token has no `{claim}` claim"),
        ErrorKind::InvalidToken
        | ErrorKind::Base64(_)
        | ErrorKind::Json(_)
        | ErrorKind::Utf8(_) => "the token is not a well-formed JWT".into(),
        _ => "the token could not be verified".into(),
    }
}

/// The claims of a development token.
#[derive(Debug, Serialize)]
struct DevClaims<'a> {
    sub: &'a str,
    iat: u64,
    nbf: u64,
    exp: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    iss: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aud: Option<&'a str>,
    #[serde(flatten)]
    plan: Map<String, Value>,
}

/// Signs a development HS256 token for `sub` on `plan`, valid for `ttl`, with the configured
/// issuer, audience and plan claim so the server accepts it.
pub fn mint_hs256(
    settings: &AuthSettings,
    secret: &str,
    sub: &str,
    plan: Plan,
    ttl: Duration,
) -> Result<String, AuthSetupError> {
    let now = unix_now();
    let mut plan_claim = Map::new();
    plan_claim.insert(
        settings.plan_claim.clone(),
        Value::String(plan.as_str().into()),
    );
    let claims = DevClaims {
        sub,
        iat: now,
        nbf: now,
        exp: now + ttl.as_secs(),
        iss: settings.issuer.as_deref(),
        aud: settings.audience.as_deref(),
        plan: plan_claim,
    };
    let key = EncodingKey::from_secret(secret.as_bytes())
        .map_err(|e| AuthSetupError::Key(e.to_string()))?;
    jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &key)
        .map_err(|e| AuthSetupError::Key(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_parsing() {
        assert_eq!(bearer_token(None), Err(AuthError::Missing));
        assert_eq!(bearer_token(Some(b"Basic abc")), Err(AuthError::Malformed));
        assert_eq!(bearer_token(Some(b"Bearer ")), Err(AuthError::Malformed));
        assert_eq!(bearer_token(Some(b"bearer abc")), Ok("abc"));
        assert_eq!(bearer_token(Some(&[0xff, 0xfe])), Err(AuthError::Malformed));
    }

    #[test]
    fn plan_names() {
        assert_eq!(Plan::from_claim("PRO"), Plan::Pro);
        assert_eq!(Plan::from_claim("platinum"), Plan::Free);
        assert!("gold".parse::<Plan>().is_err());
        assert!(!Plan::Free.allows_a2a());
    }

    #[tokio::test]
    async fn hs256_round_trip_and_plan_claim() {
        let settings = AuthSettings {
            plan_claim: "https://example.org/plan".into(),
            ..AuthSettings::default()
        };
        let secret = "0123456789abcdef0123456789abcdef";
        let auth = Authenticator::new(&settings, Some(secret), false).unwrap();
        let token = mint_hs256(
            &settings,
            secret,
            "alice",
            Plan::Enterprise,
            Duration::from_secs(60),
        )
        .unwrap();
        let header = format!("Bearer {token}");
        let who = auth.authenticate(Some(header.as_bytes())).await.unwrap();
        assert_eq!(who, Principal::new("", "alice".into(), Plan::Enterprise));
        let other =
            Authenticator::new(&settings, Some("ffffffffffffffffffffffffffffffff"), false).unwrap();
        let err = other
            .authenticate(Some(header.as_bytes()))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            AuthError::Invalid("the signature does not verify".into())
        );
    }
}
