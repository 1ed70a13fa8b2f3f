//! The server's own key for signing notifications (ES256), and its public half as a JWK set
//! for `/.well-known/jwks.json`, so a receiver can check that a notification came from this
//! server and that its body was not changed on the way.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::PushError;

/// What a notification's `Authorization` JWT says.
#[derive(Debug, Clone, Serialize)]
pub struct NotificationClaims {
    /// This server's public base URL.
    pub iss: String,
    /// The webhook URL, so a receiver cannot replay the token to another receiver.
    pub aud: String,
    /// Issued at (Unix seconds).
    pub iat: u64,
    /// Expires at (Unix seconds), `push.jwt_ttl_secs` after `iat`.
    pub exp: u64,
    /// Unique per attempt, for receivers that keep a replay cache.
    pub jti: String,
    /// SHA-256 of the exact body bytes, lowercase hex.
    pub request_body_sha256: String,
}

/// The signing key, its `kid`, and the JWK set that publishes its public half.
pub struct SigningKeys {
    encoding: EncodingKey,
    kid: String,
    jwks: Vec<u8>,
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKeys")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKeys {
    /// A new P-256 key, kept in memory only (it changes at every start).
    pub fn generate() -> Result<Self, PushError> {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .map_err(|_| PushError::Key("could not generate a P-256 key".into()))?;
        Self::from_pkcs8_der(pkcs8.as_ref())
    }

    /// The key in a PEM file (`-----BEGIN PRIVATE KEY-----`, PKCS#8, P-256), as
    /// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256` writes it.
    pub fn load(path: &Path) -> Result<Self, PushError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| PushError::Key(format!("reading {}: {e}", path.display())))?;
        let der = pem_body(&text, "PRIVATE KEY").ok_or_else(|| {
            PushError::Key(format!(
                "{} holds no `-----BEGIN PRIVATE KEY-----` block (PKCS#8)",
                path.display()
            ))
        })?;
        Self::from_pkcs8_der(&der).map_err(|e| PushError::Key(format!("{}: {e}", path.display())))
    }

    /// The key of a PKCS#8 document (DER).
    pub fn from_pkcs8_der(der: &[u8]) -> Result<Self, PushError> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|e| PushError::Key(format!("not a P-256 PKCS#8 private key: {e}")))?;
        // The public key is the uncompressed point: 0x04, then x and y, 32 bytes each.
        let point = pair.public_key().as_ref();
        let (x, y) = (
            URL_SAFE_NO_PAD.encode(&point[1..33]),
            URL_SAFE_NO_PAD.encode(&point[33..65]),
        );
        // RFC 7638 thumbprint: the same key has the same `kid` on every replica.
        let thumbprint = format!(r#"{{"crv":"P-256","kty":"EC","x":"{x}","y":"{y}"}}"#);
        let kid = URL_SAFE_NO_PAD.encode(Sha256::digest(thumbprint.as_bytes()));
        let jwks = json!({"keys": [{
            "kty": "EC", "crv": "P-256", "x": x, "y": y,
            "kid": kid, "use": "sig", "alg": "ES256",
        }]});
        Ok(SigningKeys {
            encoding: EncodingKey::from_ec_der(der),
            kid,
            jwks: serde_json::to_vec(&jwks).map_err(|e| PushError::Key(e.to_string()))?,
        })
    }

    /// The key id, in every token's header and in the JWK set.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The JWK set document served at `/.well-known/jwks.json`.
    pub fn jwks_json(&self) -> &[u8] {
        &self.jwks
    }

    /// Signs a notification's claims (ES256, with this key's `kid`).
    pub fn sign(&self, claims: &NotificationClaims) -> Result<String, PushError> {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding)
            .map_err(|e| PushError::Key(format!("signing: {e}")))
    }
}

impl SigningKeys {
    /// A JWS with a detached payload (RFC 7515 appendix F) over `payload`: the protected
    /// header (`alg` ES256, this key's `kid`, `typ` JOSE, and `jku`, where the key set is
    /// published), base64url-encoded, and the signature over `protected.payload`,
    /// base64url-encoded. ES256 is signed as RFC 6979 makes it deterministic, so every replica
    /// holding the same key signs the same bytes with the same signature.
    pub fn sign_detached(&self, jku: &str, payload: &[u8]) -> Result<(String, String), PushError> {
        let header = json!({"alg": "ES256", "jku": jku, "kid": self.kid, "typ": "JOSE"});
        let protected = URL_SAFE_NO_PAD.encode(header.to_string());
        let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
        let signature =
            jsonwebtoken::crypto::sign(input.as_bytes(), &self.encoding, Algorithm::ES256)
                .map_err(|e| PushError::Key(format!("signing: {e}")))?;
        Ok((protected, signature))
    }
}

/// The bytes of the first PEM block labelled `label`.
fn pem_body(text: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = text.find(&begin)? + begin.len();
    let stop = start + text[start..].find(&end)?;
    let body: String = text[start..stop].split_whitespace().collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

/// SHA-256 of `body`, lowercase hex: the `request_body_sha256` claim.
pub fn body_sha256(body: &[u8]) -> String {
    hex::encode(Sha256::digest(body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{DecodingKey, Validation, jwk::JwkSet};

    #[test]
    fn a_signed_token_verifies_with_the_published_key() {
        let keys = SigningKeys::generate().unwrap();
        let claims = NotificationClaims {
            iss: "https://a2a.example".into(),
            aud: "https://hooks.example/a2a".into(),
            iat: 1_700_000_000,
            exp: u64::MAX / 2,
            jti: "j".into(),
            request_body_sha256: body_sha256(b"{}"),
        };
        let token = keys.sign(&claims).unwrap();
        let set: JwkSet = serde_json::from_slice(keys.jwks_json()).unwrap();
        let jwk = set.find(keys.kid()).expect("the kid is published");
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["https://hooks.example/a2a"]);
        let decoded = jsonwebtoken::decode::<serde_json::Value>(
            &token,
            &DecodingKey::from_jwk(jwk).unwrap(),
            &validation,
        )
        .unwrap();
        assert_eq!(decoded.claims["request_body_sha256"], body_sha256(b"{}"));
    }

    #[test]
    fn the_same_key_has_the_same_kid_and_a_file_round_trips() {
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
                .unwrap();
        let a = SigningKeys::from_pkcs8_der(pkcs8.as_ref()).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("push.pem");
        std::fs::write(&path, pem).unwrap();
        assert_eq!(SigningKeys::load(&path).unwrap().kid(), a.kid());
        std::fs::write(&path, "nothing").unwrap();
        assert!(matches!(SigningKeys::load(&path), Err(PushError::Key(_))));
    }
}
