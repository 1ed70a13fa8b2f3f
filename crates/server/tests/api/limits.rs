//! Per-user, per-bucket rate limits through the HTTP endpoint.

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{LimitBackend, Settings};
use serde_json::json;

use crate::helpers::{RedisServer, TestApp, call, send_body, spawn_app, uuid, with_redis};

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

/// Limits far above one call a microsecond (60,000,000 a minute), up to the largest the
/// settings accept.
fn huge_limits(s: &mut Settings) {
    s.limits.pro.default_per_minute = 100_000_000;
    s.limits.pro.expensive_per_minute = 60_000_001;
    s.limits.organization.default_per_minute = 1_000_000_000;
    s.limits.organization.expensive_per_minute = 7;
    s.limits.enterprise.default_per_minute = u32::MAX;
    s.limits.reads_per_minute = u32::MAX;
}

/// Every call of a few users on huge limits is served, charged in its bucket.
async fn huge_limits_serve(app: &TestApp) {
    for (sub, plan, skill, limit) in [
        ("hundred-million", Plan::Pro, "test_echo", 100_000_000u64),
        ("just-over", Plan::Pro, "test_expensive_echo", 60_000_001),
        ("billion", Plan::Organization, "test_echo", 1_000_000_000),
        (
            "largest",
            Plan::Enterprise,
            "test_echo",
            u64::from(u32::MAX),
        ),
    ] {
        let token = app.token(sub, plan);
        for i in 0..5u64 {
            let reply = app.send(&token, skill, &format!("call {i}")).await;
            assert_eq!(
                reply.body["result"]["status"]["state"], "completed",
                "{sub} call {i}: {}",
                reply.body
            );
            let policy = reply.header("ratelimit-policy").unwrap();
            assert!(policy.ends_with(&format!(";q={limit};w=60")), "{policy}");
            let remaining: u64 = reply
                .header("ratelimit")
                .and_then(|h| h.split(";r=").nth(1))
                .and_then(|r| r.split(';').next())
                .and_then(|r| r.parse().ok())
                .unwrap();
            assert!(
                remaining < limit && remaining + 10 >= limit,
                "{sub} call {i}: {remaining} of {limit} left"
            );
            let task = reply.result()["id"].clone();
            let read = app
                .rpc(Some(&token), &call("tasks/get", json!({"id": task})))
                .await;
            assert_eq!(read.body["result"]["id"], task, "{sub}: {}", read.body);
        }
    }
}

/// An operator who writes a huge number for "unlimited" keeps a working service: with the
/// local limiter, the Redis limiter, and the Redis limiter whose charge the Redis store's save
/// applies.
#[tokio::test]
async fn huge_limits_work_with_every_limiter() {
    huge_limits_serve(&spawn_app(huge_limits).await).await;
    let redis = RedisServer::start();
    let url = redis.url();
    let limiter_only = spawn_app(|s| {
        huge_limits(s);
        s.limits.backend = LimitBackend::Redis;
        s.limits.redis_url = Some(url);
    })
    .await;
    huge_limits_serve(&limiter_only).await;
    seven_a_minute_is_exact(&limiter_only).await;
    let shared = spawn_app(|s| {
        with_redis(redis.url())(s);
        huge_limits(s);
        s.limits.backend = LimitBackend::Redis;
    })
    .await;
    huge_limits_serve(&shared).await;
}

/// The Redis limiter at a limit a minute does not divide into whole microseconds: 7 calls at
/// once, the eighth refused until the first frees up (60/7 s, told as 9 s).
async fn seven_a_minute_is_exact(app: &TestApp) {
    let token = app.token("seven", Plan::Organization);
    for i in 0..7 {
        let reply = app
            .send(&token, "test_expensive_echo", &format!("call {i}"))
            .await;
        assert_eq!(reply.status.as_u16(), 200, "call {i}: {}", reply.body);
    }
    let refused = app.send(&token, "test_expensive_echo", "eighth").await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, -32003));
    assert_eq!(refused.body["error"]["data"]["retryAfter"], 9);
}
