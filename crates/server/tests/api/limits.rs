//! Per-user, per-bucket rate limits through the HTTP endpoint.

use magisterium_a2a::auth::Plan;
use serde_json::json;

use crate::helpers::{call, send_body, spawn_app, uuid};

#[tokio::test]
async fn the_sixteenth_default_call_in_a_minute_is_refused() {
    let app = spawn_app(|_| {}).await;
    let alice = app.token("alice", Plan::Pro);
    let mut first_task = None;
    for i in 0..15 {
        let reply = app.send(&alice, "test_echo", &format!("call {i}")).await;
        assert_eq!(reply.status.as_u16(), 200, "call {i}: {}", reply.body);
        assert_eq!(
            reply.header("ratelimit-policy"),
            Some("\"default\";q=15;w=60")
        );
        assert_eq!(
            reply.header("ratelimit").unwrap(),
            format!("\"default\";r={};t={}", 14 - i, (i + 1) * 4)
        );
        first_task.get_or_insert_with(|| reply.result()["id"].clone());
    }
    let refused = app.send(&alice, "test_echo", "one too many").await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, -32003));
    let retry = refused.body["error"]["data"]["retryAfter"]
        .as_u64()
        .unwrap();
    assert!(
        (1..=4).contains(&retry),
        "a pro default call frees up every 4 s: {retry}"
    );
    assert_eq!(
        refused.header("retry-after"),
        Some(retry.to_string().as_str())
    );

    // tasks/get and tasks/cancel are not charged.
    for _ in 0..20 {
        let got = app
            .rpc(
                Some(&alice),
                &call("tasks/get", json!({"id": first_task.clone().unwrap()})),
            )
            .await;
        assert_eq!(got.status.as_u16(), 200);
        assert!(got.header("ratelimit").is_none());
    }
    // Another user has a bucket of their own; the expensive bucket is separate.
    let bob = app.token("bob", Plan::Pro);
    assert_eq!(app.send(&bob, "test_echo", "hi").await.status.as_u16(), 200);
    assert_eq!(
        app.send(&alice, "test_expensive_echo", "hi")
            .await
            .status
            .as_u16(),
        200
    );
}

#[tokio::test]
async fn the_third_catholic_qa_call_is_refused() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("qa-user", Plan::Organization);
    for _ in 0..2 {
        let reply = app.send(&token, "catholic_qa", "What is grace?").await;
        assert_eq!(reply.status.as_u16(), 200);
        assert_eq!(
            reply.header("ratelimit-policy"),
            Some("\"expensive\";q=2;w=60")
        );
    }
    let refused = app.send(&token, "catholic_qa", "What is grace?").await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, -32003));
    assert_eq!(refused.body["error"]["data"]["bucket"], "expensive");
    let retry = refused.body["error"]["data"]["retryAfter"]
        .as_u64()
        .unwrap();
    assert!(
        (25..=30).contains(&retry),
        "2/min frees a call every 30 s: {retry}"
    );
    // The default bucket is untouched.
    assert_eq!(
        app.send(&token, "test_echo", "hi").await.status.as_u16(),
        200
    );
    // The default skill (no skillId) is catholic_qa, in the expensive bucket.
    let mut body = send_body("x", "hi", &uuid());
    body["params"]["message"]["metadata"] = json!({});
    assert_eq!(app.rpc(Some(&token), &body).await.code(), -32003);
}

#[tokio::test]
async fn limits_come_from_config_per_plan() {
    let app = spawn_app(|s| {
        s.limits.enterprise.default_per_minute = 100_000;
        s.limits.pro.default_per_minute = 0;
    })
    .await;
    let big = app.token("big", Plan::Enterprise);
    for _ in 0..40 {
        assert_eq!(app.send(&big, "test_echo", "hi").await.status.as_u16(), 200);
    }
    let closed = app.token("closed", Plan::Pro);
    let refused = app.send(&closed, "test_echo", "hi").await;
    assert_eq!(refused.code(), -32003, "0 refuses");
    assert_eq!(refused.body["error"]["data"]["retryAfter"], 60);
}
