//! Signed agent cards (A2A 1.0 §8.4): each form of each card carries, in `signatures`, a
//! detached JWS over the RFC 8785 canonical form of the card without `signatures` ([`jcs`]),
//! signed with the key whose public half `/.well-known/jwks.json` serves. The key is a file
//! every replica shares (`push.signing_key_path`), and ES256 is signed deterministically, so
//! every replica serves the same signature, and so the same bytes and the same `ETag`.

use std::sync::Arc;

use serde::ser::Error as _;
use serde_json::{Value, json};

use super::jcs;
use crate::push::signing::SigningKeys;

/// Signs cards with the shared key, naming where its public half is published.
pub struct CardSigner {
    keys: Arc<SigningKeys>,
    jku: String,
}

impl CardSigner {
    /// A signer with `keys`, whose JWK set is served at `jku` (the server's public URL of
    /// `/.well-known/jwks.json`).
    pub fn new(keys: Arc<SigningKeys>, jku: String) -> Self {
        CardSigner { keys, jku }
    }

    /// Replaces the card's `signatures` with one signature of this key over its canonical form
    /// without them. A card that is not a JSON object is left as it is.
    pub fn sign(&self, card: &mut Value) -> Result<(), serde_json::Error> {
        let Some(members) = card.as_object_mut() else {
            return Ok(());
        };
        members.remove("signatures");
        let payload = jcs::canonical(card)?;
        let (protected, signature) = self
            .keys
            .sign_detached(&self.jku, &payload)
            .map_err(serde_json::Error::custom)?;
        if let Some(members) = card.as_object_mut() {
            members.insert(
                "signatures".into(),
                json!([{"protected": protected, "signature": signature}]),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::jwk::JwkSet;
    use jsonwebtoken::{Algorithm, DecodingKey};

    fn signing_input(protected: &str, card: &Value) -> String {
        let payload = URL_SAFE_NO_PAD.encode(jcs::canonical(card).unwrap());
        format!("{protected}.{payload}")
    }

    #[test]
    fn a_signed_card_verifies_over_its_canonical_form_and_signs_alike_twice() {
        let keys = Arc::new(SigningKeys::generate().unwrap());
        let signer = CardSigner::new(Arc::clone(&keys), "https://a2a.example/jwks".into());
        let mut card = json!({"name": "n", "skills": [{"id": "s"}], "signatures": ["old"]});
        signer.sign(&mut card).unwrap();
        let mut again = card.clone();
        signer.sign(&mut again).unwrap();
        assert_eq!(
            card, again,
            "RFC 6979: the same key signs the same bytes alike"
        );
        let signature = &card["signatures"][0];
        let protected = signature["protected"].as_str().unwrap();
        let header: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(protected).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["kid"], keys.kid());
        assert_eq!(header["jku"], "https://a2a.example/jwks");
        let mut unsigned = card.clone();
        unsigned.as_object_mut().unwrap().remove("signatures");
        let set: JwkSet = serde_json::from_slice(keys.jwks_json()).unwrap();
        let key = DecodingKey::from_jwk(set.find(keys.kid()).unwrap()).unwrap();
        let sig = signature["signature"].as_str().unwrap();
        let input = signing_input(protected, &unsigned);
        assert!(
            jsonwebtoken::crypto::verify(sig, input.as_bytes(), &key, Algorithm::ES256).unwrap()
        );
        unsigned["name"] = json!("m");
        let tampered = signing_input(protected, &unsigned);
        assert!(
            !jsonwebtoken::crypto::verify(sig, tampered.as_bytes(), &key, Algorithm::ES256)
                .unwrap_or(false)
        );
    }
}
