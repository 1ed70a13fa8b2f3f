//! Micro-benchmarks of the per-request work that does not depend on the network: token
//! verification (a repeated token, which the authenticator's cache answers, and the signature
//! and claims check a new token costs), the limiter check, the envelope parse and task
//! (de)serialisation. The load
//! benchmark (`bench/run`) says how much they weigh in a whole request; these say which of them
//! moved when a change lands.

use std::hint::black_box;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use a2a_types::{Artifact, Message, Part, Role, Task, TaskState, TaskStatus};
use axum::Router;
use axum::routing::get;
use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode};
use magisterium_a2a::auth::{Authenticator, Plan, mint_hs256};
use magisterium_a2a::config::{AuthMode, AuthSettings, LimitSettings, PlanLimits};
use magisterium_a2a::limits::{Decision, LocalLimiter, RateLimiter};
use magisterium_a2a::store::Owner;
use serde_json::{Map, Value, json};
use skills::Bucket;

const SECRET: &str = "a-benchmark-secret-of-at-least-32-characters";
/// The test suite's RSA key; a fixed key keeps the figures comparable between runs.
const RSA_PEM: &str = include_str!("../tests/api/fixtures/rsa1.pem");

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn bearer(token: &str) -> Vec<u8> {
    format!("Bearer {token}").into_bytes()
}

fn hs256_verification(c: &mut Criterion) {
    let rt = runtime();
    let settings = AuthSettings::default();
    let authenticator = Authenticator::new(&settings, Some(SECRET), false).expect("hs256 verifier");
    let token = mint_hs256(
        &settings,
        SECRET,
        "bench-user",
        Plan::Enterprise,
        Duration::from_secs(3600),
    )
    .expect("a token");
    let header = bearer(&token);
    let principal = rt
        .block_on(authenticator.authenticate(Some(&header)))
        .expect("the token verifies");
    assert_eq!(principal.plan, Plan::Enterprise);
    c.bench_function("auth/hs256_verify_repeated_token", |b| {
        b.iter(|| rt.block_on(authenticator.authenticate(black_box(Some(&header)))))
    });
    let key = DecodingKey::from_secret(SECRET.as_bytes()).expect("the HS256 key");
    let validation = Validation::new(Algorithm::HS256);
    c.bench_function("auth/hs256_signature_and_claims", |b| {
        b.iter(|| decode::<Value>(black_box(&token), &key, &validation))
    });
}

/// Serves the JWKS of the fixed key on a loopback port, as an issuer would.
async fn serve_jwks(jwks: String) -> String {
    let app = Router::new().route("/jwks.json", get(move || async move { jwks }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("the bound address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/jwks.json")
}

fn rs256_verification(c: &mut Criterion) {
    let rt = runtime();
    let key = EncodingKey::from_rsa_pem(RSA_PEM.as_bytes()).expect("the RSA fixture");
    let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256).expect("a JWK");
    jwk.common.key_id = Some("bench".into());
    let public = DecodingKey::from_jwk(&jwk).expect("the public key");
    let jwks = serde_json::to_string(&JwkSet { keys: vec![jwk] }).expect("the JWKS");
    let url = rt.block_on(serve_jwks(jwks));
    let settings = AuthSettings {
        mode: AuthMode::Jwks,
        jwks_url: Some(url),
        ..AuthSettings::default()
    };
    magisterium_a2a::app::install_tls_provider();
    let authenticator = Authenticator::new(&settings, None, false).expect("jwks verifier");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("a clock after 1970")
        .as_secs();
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("bench".into());
    let claims = json!({"sub": "bench-user", "plan": "enterprise", "iat": now, "exp": now + 3600});
    let token = jsonwebtoken::encode(&header, &claims, &key).expect("an RS256 token");
    let header = bearer(&token);
    let principal = rt
        .block_on(authenticator.authenticate(Some(&header)))
        .expect("the token verifies");
    assert_eq!(principal.plan, Plan::Enterprise);
    c.bench_function("auth/rs256_verify_repeated_token", |b| {
        b.iter(|| rt.block_on(authenticator.authenticate(black_box(Some(&header)))))
    });
    let validation = Validation::new(Algorithm::RS256);
    c.bench_function("auth/rs256_signature_and_claims", |b| {
        b.iter(|| decode::<Value>(black_box(&token), &public, &validation))
    });
}

fn limiter_check(c: &mut Criterion) {
    let rt = runtime();
    let settings = LimitSettings {
        enterprise: PlanLimits {
            default_per_minute: 100_000_000,
            expensive_per_minute: 100_000_000,
        },
        ..LimitSettings::default()
    };
    let limiter = LocalLimiter::new(&settings);
    let users: Vec<Owner> = (0..1024)
        .map(|i| Owner::of("", &format!("user-{i}")))
        .collect();
    let first = rt.block_on(limiter.check(&users[0], Plan::Enterprise, Bucket::Default));
    assert!(matches!(first, Decision::Allowed { .. }));
    let mut next = 0usize;
    c.bench_function("limits/local_check", |b| {
        b.iter(|| {
            next = (next + 1) % users.len();
            rt.block_on(limiter.check(black_box(&users[next]), Plan::Enterprise, Bucket::Default))
        })
    });
}

fn send_body() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": "req-1",
        "method": "message/send",
        "params": {"message": {
            "kind": "message",
            "messageId": "5f0c9d1e-bench-0000-0000-000000000001",
            "role": "user",
            "parts": [{"kind": "data", "data": {"date": "2026-12-08"}}],
            "metadata": {"skillId": "saints_of_the_day"}
        }}
    }))
    .expect("a request body")
}

fn envelope_parse(c: &mut Criterion) {
    let body = send_body();
    let request = a2a_types::jsonrpc::parse_request(&body).expect("a valid envelope");
    assert_eq!(request.method, "message/send");
    c.bench_function("jsonrpc/parse_request", |b| {
        b.iter(|| a2a_types::jsonrpc::parse_request(black_box(&body)))
    });
    let borrowed =
        a2a_types::jsonrpc::parse_request_borrowed(&body).expect("a well-formed envelope");
    assert_eq!(borrowed.method, "message/send");
    c.bench_function("jsonrpc/parse_request_borrowed", |b| {
        b.iter(|| a2a_types::jsonrpc::parse_request_borrowed(black_box(&body)))
    });
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A task shaped like a stored `saints_of_the_day` answer: the user's data part, the agent's
/// reply, and one artifact with a text part and a data part.
fn saints_task() -> Task {
    let celebrations = json!({
        "date": "2026-12-08",
        "season": "Advent",
        "celebrations": [{
            "name": "The Immaculate Conception of the Blessed Virgin Mary",
            "rank": "solemnity",
            "color": "white",
            "patronages": ["United States of America", "Portugal", "Brazil", "Philippines"],
            "summary": "Mary was preserved free from every stain of original sin from the first moment of her conception, as Pope Pius IX defined in 1854."
        }]
    });
    let user = Message {
        role: Role::User,
        parts: vec![Part::data(object(json!({"date": "2026-12-08"})))],
        metadata: Some(object(json!({"skillId": "saints_of_the_day"}))),
        ..Message::agent_text("5f0c9d1e-bench-0000-0000-000000000001".into(), "")
    };
    let text = "8 December 2026: The Immaculate Conception of the Blessed Virgin Mary (solemnity).";
    Task {
        kind: "task".into(),
        id: "0b6f3c2e-6a43-4c3e-9f3e-2f1d8c1b7a10".into(),
        context_id: "3e2d1c0b-5a49-4f88-8e77-6d5c4b3a2910".into(),
        status: TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some("2026-11-30T06:00:00.000Z".into()),
        },
        artifacts: vec![Artifact {
            artifact_id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d".into(),
            name: Some("saints".into()),
            parts: vec![Part::text(text), Part::data(object(celebrations))],
        }],
        history: vec![
            user,
            Message::agent_text("7c6d5e4f-3a2b-4c1d-9e8f-7a6b5c4d3e2f".into(), text),
        ],
        metadata: Some(object(json!({"skillId": "saints_of_the_day"}))),
    }
}

fn task_serde(c: &mut Criterion) {
    let task = saints_task();
    let bytes = serde_json::to_vec(&task).expect("a serialised task");
    let back: Task = serde_json::from_slice(&bytes).expect("the task reads back");
    assert_eq!(back, task);
    c.bench_function("task/serialise", |b| {
        b.iter(|| serde_json::to_vec(black_box(&task)))
    });
    c.bench_function("task/deserialise", |b| {
        b.iter(|| serde_json::from_slice::<Task>(black_box(&bytes)))
    });
    c.bench_function("task/to_value_and_back", |b| {
        b.iter(|| {
            serde_json::from_slice::<Value>(black_box(&bytes)).and_then(|v| serde_json::to_vec(&v))
        })
    });
}

criterion_group!(
    hot_path,
    hs256_verification,
    rs256_verification,
    limiter_check,
    envelope_parse,
    task_serde
);
criterion_main!(hot_path);
