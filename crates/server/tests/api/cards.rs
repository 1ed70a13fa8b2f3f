//! The authenticated extended card on every binding (the caller's plan, charged as a read) and
//! signed agent cards (A2A 1.0 §8.4), verified with the published key over the canonical form.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey};
use magisterium_a2a::app::Application;
use magisterium_a2a::auth::Plan;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{
    ECHO, EXPENSIVE_ECHO, Reply, TestApp, call, registry, reply, spawn_app, test_settings,
};
use crate::push::fixture;

const PLAN_EXTENSION: &str = "https://magisterium-a2a.invalid/extensions/plan/v1";

/// A JSON-RPC call to `path` with `token`, naming the 1.0 wire when `v1`.
async fn rpc_at(app: &TestApp, path: &str, token: Option<&str>, method: &str, v1: bool) -> Reply {
    let mut request = app
        .client
        .post(format!("{}{path}", app.base))
        .header("content-type", "application/json")
        .body(call(method, json!({})).to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if v1 {
        request = request.header("A2A-Version", "1.0");
    }
    reply(request).await
}

/// `GET /api/v1/a2a/rest/extendedAgentCard` with `token`.
async fn rest_card(app: &TestApp, token: Option<&str>) -> Reply {
    let mut request = app.client.request(
        Method::GET,
        format!("{}/api/v1/a2a/rest/extendedAgentCard", app.base),
    );
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    reply(request).await
}

/// The plan extension's params of an extended card.
fn plan_of(card: &Value) -> &Value {
    let extensions = card["capabilities"]["extensions"]
        .as_array()
        .expect("extensions");
    &extensions
        .iter()
        .find(|extension| extension["uri"] == PLAN_EXTENSION)
        .expect("the plan's extension")["params"]
}

/// The three ways of reading the extended card, each answering the card itself.
async fn extended_cards(app: &TestApp, token: &str) -> [Value; 3] {
    let v03 = rpc_at(
        app,
        "/api/v1/a2a",
        Some(token),
        "agent/getAuthenticatedExtendedCard",
        false,
    )
    .await;
    assert_eq!(v03.status.as_u16(), 200, "{}", v03.body);
    let v1 = rpc_at(
        app,
        "/api/v1/a2a",
        Some(token),
        "GetExtendedAgentCard",
        true,
    )
    .await;
    assert_eq!(v1.status.as_u16(), 200, "{}", v1.body);
    let rest = rest_card(app, Some(token)).await;
    assert_eq!(rest.status.as_u16(), 200, "{}", rest.body);
    assert!(
        rest.header("ratelimit")
            .is_some_and(|v| v.starts_with("\"read\""))
    );
    [
        v03.body["result"].clone(),
        v1.body["result"].clone(),
        rest.body,
    ]
}

#[tokio::test]
async fn the_extended_card_shows_the_plan_in_each_form_and_is_charged_as_a_read() {
    let app = spawn_app(|s| s.limits.reads_per_minute = 10).await;
    let token = app.token("extended", Plan::Pro);
    let [v03, v1, rest] = extended_cards(&app, &token).await;
    // 0.3: the superset card, declaring the method.
    assert_eq!(v03["protocolVersion"], "0.3.0");
    assert_eq!(v03["supportsAuthenticatedExtendedCard"], true);
    // 1.0 (JSON-RPC and HTTP+JSON): the strict card, declaring it as a capability.
    for strict in [&v1, &rest] {
        assert!(strict.get("protocolVersion").is_none());
        assert!(strict.get("supportsAuthenticatedExtendedCard").is_none());
        assert_eq!(strict["capabilities"]["extendedAgentCard"], true);
        assert!(strict["supportedInterfaces"].is_array());
    }
    for card in [&v03, &v1, &rest] {
        let plan = plan_of(card);
        assert_eq!(plan["plan"], "pro");
        assert_eq!(plan["limitsApply"], true);
        assert_eq!(plan["buckets"]["default"]["perMinute"], 15);
        assert_eq!(plan["buckets"]["expensive"]["perMinute"], 2);
        assert_eq!(plan["buckets"]["read"]["perMinute"], 10);
        let default_skills = plan["buckets"]["default"]["skills"].as_array().unwrap();
        assert!(default_skills.contains(&json!(ECHO.id)));
        assert!(!default_skills.contains(&json!(EXPENSIVE_ECHO.id)));
        let skills = plan["skills"].as_array().unwrap();
        assert!(skills.contains(&json!(ECHO.id)) && skills.contains(&json!(EXPENSIVE_ECHO.id)));
    }
    // Each read of the card drew one call from the read bucket, in the order made.
    let left: Vec<u64> = [&v03, &v1, &rest]
        .iter()
        .map(|card| plan_of(card)["remaining"]["read"].as_u64().unwrap())
        .collect();
    assert_eq!(left, [9, 8, 7]);
    // A charged read in between (tasks/get) shows in the next card.
    let get = app
        .rpc(
            Some(&token),
            &call("tasks/get", json!({"id": "no-such-task"})),
        )
        .await;
    assert_eq!(get.code(), -32001, "a read of an unknown task is charged");
    let after = rest_card(&app, Some(&token)).await;
    assert_eq!(plan_of(&after.body)["remaining"]["read"], 5);
}

#[tokio::test]
async fn a_plan_with_a_closed_bucket_may_not_call_its_skills() {
    let app = spawn_app(|s| s.limits.pro.expensive_per_minute = 0).await;
    let token = app.token("closed", Plan::Pro);
    let card = rest_card(&app, Some(&token)).await.body;
    let plan = plan_of(&card);
    assert_eq!(plan["buckets"]["expensive"]["perMinute"], 0);
    let skills = plan["skills"].as_array().unwrap();
    assert!(skills.contains(&json!(ECHO.id)));
    assert!(!skills.contains(&json!(EXPENSIVE_ECHO.id)));
}

#[tokio::test]
async fn the_extended_card_is_refused_to_a_free_plan_and_without_a_token() {
    let app = spawn_app(|_| {}).await;
    let free = app.token("free", Plan::Free);
    for token in [Some(free.as_str()), None] {
        let status = if token.is_some() { 403 } else { 401 };
        let v03 = rpc_at(
            &app,
            "/api/v1/a2a",
            token,
            "agent/getAuthenticatedExtendedCard",
            false,
        )
        .await;
        assert_eq!(v03.status.as_u16(), status);
        assert!(v03.body["result"].is_null());
        if token.is_some() {
            assert_eq!(v03.code(), -32005);
        }
        let v1 = rpc_at(&app, "/api/v1/a2a", token, "GetExtendedAgentCard", true).await;
        assert_eq!(v1.status.as_u16(), status);
        assert!(v1.body["result"].is_null());
        let rest = rest_card(&app, token).await;
        assert_eq!(rest.status.as_u16(), status);
        assert!(rest.body["error"].is_object(), "{}", rest.body);
        assert!(rest.body.get("capabilities").is_none());
    }
    let v03 = rpc_at(
        &app,
        "/api/v1/a2a",
        Some(&free),
        "agent/getAuthenticatedExtendedCard",
        false,
    )
    .await;
    assert_eq!(
        v03.body["error"]["message"]
            .as_str()
            .map(|m| m.starts_with("Paid plan required")),
        Some(true)
    );
}

#[tokio::test]
async fn the_public_cards_declare_the_extended_card() {
    let app = spawn_app(|_| {}).await;
    let v03 = app.get("/.well-known/agent-card.json").await.body;
    assert_eq!(v03["supportsAuthenticatedExtendedCard"], true);
    let strict = reply(
        app.client
            .get(format!("{}/.well-known/agent-card.json", app.base))
            .header("A2A-Version", "1.0"),
    )
    .await
    .body;
    assert_eq!(strict["capabilities"]["extendedAgentCard"], true);
    assert!(
        v03["capabilities"]["extensions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|extension| extension["uri"] != PLAN_EXTENSION),
        "the public card says nothing of a plan"
    );
}

#[tokio::test]
async fn a_skill_agent_answers_its_own_extended_card() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("agent-card", Plan::Organization);
    let path = format!("/agents/{}", ECHO.id);
    for (method, v1) in [
        ("agent/getAuthenticatedExtendedCard", false),
        ("GetExtendedAgentCard", true),
    ] {
        let answer = rpc_at(&app, &path, Some(&token), method, v1).await;
        assert_eq!(answer.status.as_u16(), 200, "{}", answer.body);
        let card = &answer.body["result"];
        let skills = card["skills"].as_array().unwrap();
        assert_eq!(skills.len(), 1);
        assert_eq!(skills[0]["id"], ECHO.id);
        assert!(card["name"].as_str().unwrap().contains(ECHO.name));
        assert_eq!(plan_of(card)["plan"], "organization");
    }
}

/// The JWK set the server publishes.
async fn published_keys(app: &TestApp) -> JwkSet {
    let answer = app.get("/.well-known/jwks.json").await;
    serde_json::from_value(answer.body).expect("a JWK set")
}

/// Checks the card's one signature with the published key over the card's canonical form
/// (RFC 8785; the card's member names are ASCII and its numbers integers, so serde_json's
/// sorted compact form is that form), and returns the signature.
fn verify(card: &Value, keys: &JwkSet) -> String {
    let signatures = card["signatures"].as_array().expect("signatures");
    assert_eq!(signatures.len(), 1);
    let protected = signatures[0]["protected"].as_str().unwrap();
    let signature = signatures[0]["signature"].as_str().unwrap();
    let header: Value =
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(protected).unwrap()).unwrap();
    assert_eq!(header["alg"], "ES256");
    assert!(
        header["jku"]
            .as_str()
            .unwrap()
            .ends_with("/.well-known/jwks.json")
    );
    let jwk = keys
        .find(header["kid"].as_str().unwrap())
        .expect("the kid is published");
    let mut unsigned = card.clone();
    unsigned.as_object_mut().unwrap().remove("signatures");
    let canonical = serde_json::to_vec(&unsigned).unwrap();
    let input = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(canonical));
    let key = DecodingKey::from_jwk(jwk).unwrap();
    assert!(
        jsonwebtoken::crypto::verify(signature, input.as_bytes(), &key, Algorithm::ES256).unwrap(),
        "the signature verifies"
    );
    signature.to_string()
}

/// Every path that serves a card, in both forms: (path, A2A-Version) → (card, ETag).
async fn every_card(app: &TestApp) -> Vec<(String, Value, String)> {
    let agent = format!("/agents/{}", ECHO.id);
    let paths = [
        "/.well-known/agent-card.json".to_string(),
        "/.well-known/agent.json".to_string(),
        "/api/v1/a2a".to_string(),
        format!("{agent}/.well-known/agent-card.json"),
        format!("{agent}/.well-known/agent.json"),
        agent,
    ];
    let mut cards = Vec::new();
    for path in paths {
        for version in [None, Some("1.0")] {
            let mut request = app.client.get(format!("{}{path}", app.base));
            if let Some(version) = version {
                request = request.header("A2A-Version", version);
            }
            let answer = reply(request).await;
            assert_eq!(answer.status.as_u16(), 200, "{path}");
            let etag = answer.header("etag").expect("an ETag").to_string();
            cards.push((format!("{path} {version:?}"), answer.body, etag));
        }
    }
    cards
}

fn with_key(s: &mut magisterium_a2a::config::Settings) {
    s.push.signing_key_path = Some(fixture("ec1.pem"));
    s.server.public_url = Some("https://a2a.example".into());
}

#[tokio::test]
async fn every_card_is_signed_with_the_published_key_and_replicas_agree() {
    let one = spawn_app(with_key).await;
    let two = spawn_app(with_key).await;
    let keys = published_keys(&one).await;
    let first = every_card(&one).await;
    let second = every_card(&two).await;
    let mut signatures = std::collections::BTreeSet::new();
    for ((path, card, etag), (_, twin, twin_etag)) in first.iter().zip(&second) {
        let signature = verify(card, &keys);
        assert!(
            path.contains("None") != card.get("protocolVersion").is_none(),
            "{path}"
        );
        assert_eq!(card, twin, "{path}: both replicas serve the same card");
        assert_eq!(etag, twin_etag, "{path}: and the same ETag");
        signatures.insert(signature);
    }
    // Four cards (the whole agent's and the skill's, each in two forms), three paths each.
    assert_eq!(signatures.len(), 4);
    // The extended card is signed too, in its own forms.
    let token = one.token("signed", Plan::Pro);
    for card in extended_cards(&one, &token).await {
        verify(&card, &keys);
    }
}

#[tokio::test]
async fn cards_are_unsigned_without_a_key_file_or_when_switched_off() {
    let unsigned = spawn_app(|_| {}).await;
    let off = spawn_app(|s| {
        with_key(s);
        s.agent.sign_card = Some(false);
    })
    .await;
    for app in [&unsigned, &off] {
        for (path, card, _) in every_card(app).await {
            assert!(card.get("signatures").is_none(), "{path}");
        }
    }
    let mut settings = test_settings();
    settings.agent.sign_card = Some(true);
    let refused = Application::build_with_skills(settings.clone(), registry(&settings))
        .await
        .err()
        .expect("sign_card without a key does not start");
    let message = refused.to_string();
    assert!(message.contains("agent.sign_card"), "{message}");
    assert!(message.contains("push.signing_key_path"), "{message}");
}
