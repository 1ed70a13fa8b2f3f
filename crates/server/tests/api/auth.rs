//! Bearer tokens: every way a token can be wrong, plans, and RS256/ES256 from a JWKS served by a
//! real HTTP server, including key rotation and the bounded refresh on unknown key ids.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use base64::Engine;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::AuthMode;
use serde_json::{Value, json};

use crate::helpers::{SECRET, call, spawn_app};

pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn claims(sub: &str, plan: &str) -> Value {
    json!({"sub": sub, "plan": plan, "iat": now(), "exp": now() + 600})
}

pub fn hs256(claims: &Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret(secret.as_bytes()).unwrap(),
    )
    .unwrap()
}

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/api/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

pub fn signed(alg: Algorithm, pem: &str, kid: Option<&str>, claims: &Value) -> String {
    let key = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(pem.as_bytes()).unwrap(),
        _ => EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap(),
    };
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, &key).unwrap()
}

pub async fn status_and_code(app: &crate::helpers::TestApp, token: &str) -> (u16, i64, String) {
    let reply = app
        .rpc(Some(token), &call("tasks/get", json!({"id": "none"})))
        .await;
    let message = reply.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (reply.status.as_u16(), reply.code(), message)
}

#[tokio::test]
async fn hs256_tokens_are_checked_in_every_way() {
    let app = spawn_app(|s| {
        s.auth.issuer = Some("https://issuer.example".into());
        s.auth.audience = Some("a2a".into());
    })
    .await;
    let good = |extra: Value| {
        let mut c = json!({"sub": "u1", "plan": "pro", "iss": "https://issuer.example", "aud": "a2a", "exp": now() + 600});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        c
    };
    let ok = hs256(&good(json!({})), SECRET);
    assert_eq!(
        status_and_code(&app, &ok).await.1,
        -32001,
        "a good token reaches the method"
    );

    let none_alg = {
        let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"alg":"none","typ":"JWT"}"#);
        let body =
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(good(json!({})).to_string());
        format!("{header}.{body}.")
    };
    let cases = vec![
        ("garbage", "garbage".to_string(), "well-formed"),
        (
            "expired",
            hs256(&good(json!({"exp": now() - 3600})), SECRET),
            "expired",
        ),
        (
            "not yet valid",
            hs256(&good(json!({"nbf": now() + 3600})), SECRET),
            "not valid yet",
        ),
        (
            "wrong signature",
            hs256(&good(json!({})), "another-secret-another-secret-0000"),
            "signature",
        ),
        ("alg none", none_alg, "token"),
        (
            "wrong issuer",
            hs256(&good(json!({"iss": "https://evil.example"})), SECRET),
            "issuer",
        ),
        (
            "wrong audience",
            hs256(&good(json!({"aud": "other"})), SECRET),
            "audience",
        ),
        ("no exp", hs256(&good(json!({"exp": null})), SECRET), "exp"),
        ("no sub", hs256(&good(json!({"sub": null})), SECRET), "sub"),
        (
            "rs256 on an hs256 server",
            signed(
                Algorithm::RS256,
                &fixture("rsa1.pem"),
                None,
                &good(json!({})),
            ),
            "algorithm",
        ),
    ];
    for (name, token, why) in cases {
        let (status, code, message) = status_and_code(&app, &token).await;
        assert_eq!((status, code), (401, -32004), "{name}");
        assert!(message.contains(why), "{name}: {message}");
        assert!(
            !message.contains(&token),
            "{name}: the token is never echoed"
        );
    }

    for header in ["Basic dXNlcjpwYXNz", "Bearer", "Token abc"] {
        let response = app
            .client
            .post(format!("{}/api/v1/a2a", app.base))
            .header("authorization", header)
            .header("content-type", "application/json")
            .body(call("tasks/get", json!({"id": "x"})).to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 401, "{header}");
    }

    for (plan, status, code) in [
        ("free", 403, -32005),
        ("platinum", 403, -32005),
        ("organization", 200, -32001),
        ("enterprise", 200, -32001),
    ] {
        let token = hs256(&good(json!({"plan": plan})), SECRET);
        let (s, c, _) = status_and_code(&app, &token).await;
        assert_eq!((s, c), (status, code), "plan {plan}");
    }
    let token = hs256(&good(json!({"plan": null})), SECRET);
    assert_eq!(
        status_and_code(&app, &token).await.1,
        -32005,
        "no plan claim counts as free"
    );
}

#[tokio::test]
async fn the_plan_claim_name_is_configurable() {
    let app = spawn_app(|s| s.auth.plan_claim = "https://example.org/plan".into()).await;
    let token = app.token("claims", Plan::Enterprise);
    assert_eq!(status_and_code(&app, &token).await.1, -32001);
    let plain = hs256(&claims("claims", "pro"), SECRET);
    assert_eq!(
        status_and_code(&app, &plain).await.1,
        -32005,
        "`plan` is not the configured claim"
    );
}

pub struct Jwks {
    pub keys: RwLock<Vec<Value>>,
    pub fetches: AtomicUsize,
}

async fn serve_jwks(State(jwks): State<Arc<Jwks>>) -> axum::Json<Value> {
    jwks.fetches.fetch_add(1, Ordering::SeqCst);
    axum::Json(json!({"keys": *jwks.keys.read().unwrap()}))
}

/// The same key set, padded past the server's 1 MiB cap on a JWKS response.
async fn serve_oversized_jwks(State(jwks): State<Arc<Jwks>>) -> axum::Json<Value> {
    let padding = "x".repeat(1024 * 1024 + 1);
    axum::Json(json!({"keys": *jwks.keys.read().unwrap(), "padding": padding}))
}

/// A JWKS server on loopback: `/jwks.json` serves the keys (counting fetches),
/// `/moved.json` redirects there, `/oversized.json` serves them padded past 1 MiB.
pub async fn spawn_jwks(keys: Vec<Value>) -> (String, Arc<Jwks>) {
    let state = Arc::new(Jwks {
        keys: RwLock::new(keys),
        fetches: AtomicUsize::new(0),
    });
    let router = Router::new()
        .route("/jwks.json", get(serve_jwks))
        .route(
            "/moved.json",
            get(|| async { axum::response::Redirect::temporary("/jwks.json") }),
        )
        .route("/oversized.json", get(serve_oversized_jwks))
        .with_state(Arc::clone(&state));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, state)
}

#[tokio::test]
async fn rs256_and_es256_from_a_jwks_with_rotation() {
    let jwks_fixture: Value = serde_json::from_str(&fixture("jwks.json")).unwrap();
    let (url, jwks) = spawn_jwks(vec![
        jwks_fixture["rsa1"].clone(),
        jwks_fixture["ec1"].clone(),
    ])
    .await;
    let app = spawn_app(move |s| {
        s.auth.mode = AuthMode::Jwks;
        s.auth.jwks_url = Some(url);
        s.auth.hs256_secret = None;
        s.auth.jwks_min_refresh_secs = 1;
    })
    .await;
    assert_eq!(
        jwks.fetches.load(Ordering::SeqCst),
        1,
        "fetched once at start"
    );

    let rsa = signed(
        Algorithm::RS256,
        &fixture("rsa1.pem"),
        Some("rsa1"),
        &claims("jw", "pro"),
    );
    assert_eq!(status_and_code(&app, &rsa).await.1, -32001);
    let ec = signed(
        Algorithm::ES256,
        &fixture("ec1.pem"),
        Some("ec1"),
        &claims("jw", "pro"),
    );
    assert_eq!(status_and_code(&app, &ec).await.1, -32001);

    // Key confusion: an HS256 token whose "secret" is the public key material.
    let confused = {
        let mut header = Header::new(Algorithm::HS256);
        header.kid = Some("rsa1".into());
        let secret = jwks_fixture["rsa1"]["n"].as_str().unwrap();
        jsonwebtoken::encode(
            &header,
            &claims("jw", "pro"),
            &EncodingKey::from_secret(secret.as_bytes()).unwrap(),
        )
        .unwrap()
    };
    assert_eq!(status_and_code(&app, &confused).await.0, 401);
    // A token claiming RS256 but naming the EC key.
    let mismatched = signed(
        Algorithm::RS256,
        &fixture("rsa1.pem"),
        Some("ec1"),
        &claims("jw", "pro"),
    );
    assert_eq!(status_and_code(&app, &mismatched).await.0, 401);
    // Two keys and no kid: ambiguous.
    let no_kid = signed(
        Algorithm::RS256,
        &fixture("rsa1.pem"),
        None,
        &claims("jw", "pro"),
    );
    assert_eq!(status_and_code(&app, &no_kid).await.0, 401);

    // Rotation: the issuer publishes rsa2; a token with kid rsa2 triggers a refresh.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    *jwks.keys.write().unwrap() = vec![jwks_fixture["rsa2"].clone()];
    let rotated = signed(
        Algorithm::RS256,
        &fixture("rsa2.pem"),
        Some("rsa2"),
        &claims("jw", "pro"),
    );
    let before = jwks.fetches.load(Ordering::SeqCst);
    assert_eq!(
        status_and_code(&app, &rotated).await.1,
        -32001,
        "the new key is fetched"
    );
    assert_eq!(jwks.fetches.load(Ordering::SeqCst), before + 1);
    // rsa1 vanished from the set: its tokens no longer verify.
    assert_eq!(status_and_code(&app, &rsa).await.0, 401);

    // A flood of unknown kids costs at most one fetch per interval (1 s here).
    let before = jwks.fetches.load(Ordering::SeqCst);
    let flood_started = std::time::Instant::now();
    for i in 0..20 {
        let forged = signed(
            Algorithm::RS256,
            &fixture("rsa1.pem"),
            Some(&format!("forged-{i}")),
            &claims("jw", "pro"),
        );
        assert_eq!(status_and_code(&app, &forged).await.0, 401);
    }
    let intervals = flood_started.elapsed().as_secs() as usize + 1;
    let fetched = jwks.fetches.load(Ordering::SeqCst) - before;
    assert!(
        fetched <= intervals,
        "no fetch storm: {fetched} fetches for 20 forged tokens in {intervals} intervals"
    );
    // With a single key, a token without kid is accepted.
    let single = signed(
        Algorithm::RS256,
        &fixture("rsa2.pem"),
        None,
        &claims("jw", "pro"),
    );
    assert_eq!(status_and_code(&app, &single).await.1, -32001);
}

#[tokio::test]
async fn auth_off_mode_acts_as_the_configured_user() {
    let app = spawn_app(|s| {
        s.auth.mode = AuthMode::None;
        s.auth.none_plan = Plan::Enterprise;
    })
    .await;
    let reply = app.rpc(None, &call("tasks/get", json!({"id": "x"}))).await;
    assert_eq!(reply.code(), -32001);
    let sent = app
        .rpc(
            None,
            &crate::helpers::send_body("test_echo", "hi", "m-none"),
        )
        .await;
    assert_eq!(sent.result()["status"]["state"], "completed");
}

/// The claims of a token for the configured issuer and audience, without the claims named in
/// `dropped`.
fn claims_without(dropped: &[&str]) -> Value {
    let mut claims = json!({"sub": "aud-iss", "plan": "pro", "iss": "https://issuer.example", "aud": "a2a", "exp": now() + 600});
    for claim in dropped {
        claims.as_object_mut().unwrap().remove(*claim);
    }
    claims
}

/// A token without `iss`, without `aud` or without both is refused as a wrong one is, in
/// `hs256` and in `jwks` mode, once `A2A__AUTH__ISSUER` and `A2A__AUTH__AUDIENCE` are set.
#[tokio::test]
async fn iss_and_aud_are_required_when_configured() {
    let expected = |s: &mut magisterium_a2a::config::Settings| {
        s.auth.issuer = Some("https://issuer.example".into());
        s.auth.audience = Some("a2a".into());
    };
    let missing = [
        (vec!["aud"], "aud"),
        (vec!["iss"], "iss"),
        (vec!["iss", "aud"], "the token has no"),
    ];
    let hs256_app = spawn_app(expected).await;
    assert_eq!(
        status_and_code(&hs256_app, &hs256(&claims_without(&[]), SECRET))
            .await
            .1,
        -32001,
        "a token with both reaches the method"
    );
    for (dropped, why) in &missing {
        let token = hs256(&claims_without(dropped), SECRET);
        let (status, code, message) = status_and_code(&hs256_app, &token).await;
        assert_eq!((status, code), (401, -32004), "hs256 without {dropped:?}");
        assert!(
            message.contains(why),
            "hs256 without {dropped:?}: {message}"
        );
    }

    let jwks_fixture: Value = serde_json::from_str(&fixture("jwks.json")).unwrap();
    let (url, _) = spawn_jwks(vec![jwks_fixture["rsa1"].clone()]).await;
    let jwks_app = spawn_app(move |s| {
        expected(s);
        s.auth.mode = AuthMode::Jwks;
        s.auth.jwks_url = Some(url);
        s.auth.hs256_secret = None;
    })
    .await;
    let rsa = |claims: &Value| signed(Algorithm::RS256, &fixture("rsa1.pem"), Some("rsa1"), claims);
    assert_eq!(
        status_and_code(&jwks_app, &rsa(&claims_without(&[])))
            .await
            .1,
        -32001,
        "a token with both reaches the method"
    );
    for (dropped, why) in &missing {
        let (status, code, message) =
            status_and_code(&jwks_app, &rsa(&claims_without(dropped))).await;
        assert_eq!((status, code), (401, -32004), "jwks without {dropped:?}");
        assert!(message.contains(why), "jwks without {dropped:?}: {message}");
    }
}
