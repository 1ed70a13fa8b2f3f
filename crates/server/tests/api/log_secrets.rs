//! Secrets planted in the addresses and keys of the server's peers never reach its logs: the
//! real binary, its debug logs captured, fails to deliver to a webhook whose path and query
//! hold secrets, fails to fetch a JWKS whose path and query hold secrets, and is refused by a
//! model server whose URL holds secrets and which echoes the API key it was sent.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use magisterium_a2a::auth::{Plan, mint_hs256};
use magisterium_a2a::config::Settings;
use serde_json::json;

use crate::helpers::{SECRET, call, free_port, uuid};
use crate::isolation::LoggedServer;

const HOOK_PATH_SECRET: &str = "hook-path-secret-5d1c";
const HOOK_QUERY_SECRET: &str = "hook-query-secret-77a0";
const JWKS_PATH_SECRET: &str = "jwks-path-secret-90be";
const JWKS_QUERY_SECRET: &str = "jwks-query-secret-c3f2";
const LLM_PATH_SECRET: &str = "llm-path-secret-41e9";
const LLM_QUERY_SECRET: &str = "llm-query-secret-0b7d";
const LLM_API_KEY: &str = "sk-planted-llm-key-6a2f";

/// A peer that refuses every request with a 500 whose body echoes the `Authorization` header it
/// got, as a careless backend does; returns its address and how many requests it got.
async fn refusing_peer() -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    let app = Router::new().fallback(move |headers: HeaderMap| {
        let counted = Arc::clone(&counted);
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            let auth = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string();
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("{{\"error\": \"rejected credentials {auth}\"}}"),
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("127.0.0.1:{}", addr.port()), seen)
}

/// A data directory with one document, so that `catholic_qa` has passages to give the model.
fn data_with_a_corpus() -> tempfile::TempDir {
    crate::helpers::data_with_corpus(&[
        json!({"id": "cat:grace-primer", "title": "A Primer on Grace", "author": "Test",
        "date": "1901", "type": "catechism", "language": "en",
        "sections": [{"locus": "1", "heading": "Grace",
                      "text": "Grace is the free and undeserved help that God gives us."}]}),
    ])
}

async fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < within, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn secrets_in_webhook_jwks_and_model_urls_never_reach_the_logs() {
    let (peer, requests) = refusing_peer().await;
    let data = data_with_a_corpus();
    let closed = free_port();
    let webhook =
        format!("http://127.0.0.1:{closed}/services/T0/{HOOK_PATH_SECRET}?key={HOOK_QUERY_SECRET}");
    let model = format!("http://{peer}/{LLM_PATH_SECRET}/v1?api-version={LLM_QUERY_SECRET}");
    let server = LoggedServer::start_with(&[
        ("A2A__DATA__DIR", data.path().to_str().unwrap()),
        ("A2A__PUSH__ALLOW_PRIVATE_TARGETS", "true"),
        ("A2A__PUSH__BASE_DELAY_MS", "20"),
        ("A2A__PUSH__MAX_DELAY_MS", "50"),
        ("A2A__PUSH__MAX_ATTEMPTS", "2"),
        ("A2A__LLM__BASE_URL", &model),
        ("A2A__LLM__MODEL", "test-model"),
        ("A2A__LLM__API_KEY", LLM_API_KEY),
        ("A2A__LLM__MAX_RETRIES", "1"),
        ("A2A__LLM__RETRY_BASE_DELAY_MS", "10"),
    ]);
    let token = mint_hs256(
        &Settings::default().auth,
        SECRET,
        "planter",
        Plan::Pro,
        Duration::from_secs(600),
    )
    .unwrap();
    let body = call(
        "message/send",
        json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
                           "parts": [{"kind": "text", "text": "What is grace?"}],
                           "metadata": {"skillId": "catholic_qa"}},
               "configuration": {"blocking": true, "pushNotificationConfig": {"url": webhook}}}),
    );
    let reply = crate::helpers::http_client()
        .post(format!("{}/api/v1/a2a", server.base))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    wait_until("the model server is asked", Duration::from_secs(10), || {
        requests.load(Ordering::SeqCst) >= 2
    })
    .await;
    // Every notification of the task fails twice (the port is closed), within milliseconds.
    tokio::time::sleep(Duration::from_millis(1_500)).await;

    let jwks =
        format!("http://{peer}/{JWKS_PATH_SECRET}/jwks.json?client_secret={JWKS_QUERY_SECRET}");
    let jwks_server =
        LoggedServer::start_with(&[("A2A__AUTH__MODE", "jwks"), ("A2A__AUTH__JWKS_URL", &jwks)]);
    wait_until("the JWKS is asked", Duration::from_secs(10), || {
        requests.load(Ordering::SeqCst) >= 3
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let logs = format!("{}\n{}", server.stop(), jwks_server.stop());
    for (failure, evidence) in [
        ("a failing delivery", "push: given up"),
        ("a JWKS failure", "JWKS refresh failed"),
        (
            "a model-server failure",
            "the answering backend returned an error",
        ),
    ] {
        assert!(logs.contains(evidence), "{failure} is logged: {logs}");
    }
    assert!(
        logs.lines().any(|line| line.contains("push: will retry")
            && line.contains(&format!("127.0.0.1:{closed}"))),
        "a retry names the webhook's scheme and host: {logs}"
    );
    for secret in [
        HOOK_PATH_SECRET,
        HOOK_QUERY_SECRET,
        JWKS_PATH_SECRET,
        JWKS_QUERY_SECRET,
        LLM_PATH_SECRET,
        LLM_QUERY_SECRET,
        LLM_API_KEY,
    ] {
        let leaks: Vec<&str> = logs.lines().filter(|line| line.contains(secret)).collect();
        assert!(leaks.is_empty(), "{secret} is logged: {leaks:#?}");
    }
}
