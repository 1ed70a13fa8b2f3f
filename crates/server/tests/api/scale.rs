//! Several replicas on one Redis: one combined limit per user, tasks visible from every replica,
//! the limiter's behaviour when Redis fails, durability across a Redis crash, and the same
//! suites against a three-master Redis Cluster.

use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{LimitBackend, LimitFailMode, Settings, StoreBackend};
use serde_json::json;

use crate::helpers::{RedisCluster, RedisServer, TestApp, call, spawn_app};
use crate::stores::behaviour;

fn shared(url: String) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        s.store.backend = StoreBackend::Redis;
        s.store.redis_url = Some(url);
        s.limits.backend = LimitBackend::Redis;
    }
}

/// `"default";r=R;t=T` → (R, T).
fn remaining_and_reset(header: &str) -> (usize, usize) {
    let field = |name: &str| -> usize {
        header
            .split(';')
            .find_map(|part| part.strip_prefix(name))
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {header}"))
    };
    (field("r="), field("t="))
}

/// 15 calls a minute is one call back every 4 s: on a slow machine the budget refills while the
/// calls run, so every bound allows for the calls given back in the time taken, and no more.
async fn one_combined_limit(replicas: &[TestApp]) {
    let token = replicas[0].token("shared-user", Plan::Pro);
    let started = Instant::now();
    let given_back = || (started.elapsed().as_secs() / 4) as usize;
    for i in 0..15 {
        let replica = &replicas[i % replicas.len()];
        let reply = replica
            .send(&token, "test_echo", &format!("call {i}"))
            .await;
        assert_eq!(reply.status.as_u16(), 200, "call {i}: {}", reply.body);
        let header = reply.header("ratelimit").unwrap();
        assert!(header.starts_with("\"default\";"), "{header}");
        let (remaining, reset) = remaining_and_reset(header);
        assert!(
            (14 - i..=14 - i + given_back()).contains(&remaining),
            "call {i}: {header}"
        );
        let spent = 15 - remaining;
        assert!(
            reset <= spent * 4 && reset + 4 > spent * 4,
            "call {i}: {header}"
        );
    }
    let mut beyond_fifteen = 0;
    for replica in replicas {
        loop {
            let reply = replica.send(&token, "test_echo", "one more").await;
            if reply.status.as_u16() == 200 {
                beyond_fifteen += 1;
                assert!(
                    beyond_fifteen <= given_back(),
                    "15 a minute across all replicas, and only the calls given back since"
                );
                continue;
            }
            assert_eq!((reply.status.as_u16(), reply.code()), (429, -32003));
            let retry = reply.body["error"]["data"]["retryAfter"].as_u64().unwrap();
            assert!((1..=4).contains(&retry), "{retry}");
            break;
        }
    }
    let other = replicas[0].token("another-user", Plan::Pro);
    assert_eq!(
        replicas[1]
            .send(&other, "test_echo", "hi")
            .await
            .status
            .as_u16(),
        200
    );
}

#[tokio::test]
async fn replicas_share_tasks_and_one_limit() {
    let redis = RedisServer::start();
    let replicas = [
        spawn_app(shared(redis.url())).await,
        spawn_app(shared(redis.url())).await,
        spawn_app(shared(redis.url())).await,
    ];
    let token = replicas[0].token("roamer", Plan::Pro);
    let task = replicas[0]
        .send(&token, "test_echo", "written here")
        .await
        .result()
        .clone();
    let read = replicas[2]
        .rpc(Some(&token), &call("tasks/get", json!({"id": task["id"]})))
        .await;
    assert_eq!(
        read.result(),
        &task,
        "a task written through one replica is read through another"
    );
    one_combined_limit(&replicas).await;
}

async fn with_fail_mode(mode: LimitFailMode) -> (RedisServer, TestApp) {
    let redis = RedisServer::start();
    let url = redis.url();
    let app = spawn_app(move |s| {
        s.limits.backend = LimitBackend::Redis;
        s.limits.redis_url = Some(url);
        s.limits.on_redis_error = mode;
        s.limits.pro.default_per_minute = 2;
    })
    .await;
    (redis, app)
}

#[tokio::test]
async fn when_redis_fails_the_limiter_follows_its_fail_mode() {
    // local: this replica's own limiter takes over (2 a minute here), and Redis is used again
    // once it is back.
    let (mut redis, app) = with_fail_mode(LimitFailMode::Local).await;
    let token = app.token("fail-local", Plan::Pro);
    redis.stop();
    assert_eq!(
        app.send(&token, "test_echo", "a").await.status.as_u16(),
        200
    );
    assert_eq!(
        app.send(&token, "test_echo", "b").await.status.as_u16(),
        200
    );
    assert_eq!(
        app.send(&token, "test_echo", "c").await.code(),
        -32003,
        "still limited while Redis is down"
    );
    let metrics = app.get("/metrics").await.body.as_str().unwrap().to_string();
    assert!(
        metrics.contains(r#"a2a_rate_limit_backend_errors_total{fail_mode="local"} 3"#),
        "{metrics}"
    );
    redis.restart();
    let fresh = app.token("after-restart", Plan::Pro);
    let mut recovered = false;
    for _ in 0..50 {
        if app.send(&fresh, "test_echo", "x").await.status.as_u16() == 200 {
            let client = redis::Client::open(redis.url()).unwrap();
            let mut con = client.get_multiplexed_async_connection().await.unwrap();
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg("a2a:v1:*:rl:*")
                .query_async(&mut con)
                .await
                .unwrap();
            if !keys.is_empty() {
                recovered = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        recovered,
        "the limiter uses Redis again without a restart of the server"
    );

    let (mut redis, app) = with_fail_mode(LimitFailMode::Open).await;
    let token = app.token("fail-open", Plan::Pro);
    redis.stop();
    for _ in 0..4 {
        assert_eq!(
            app.send(&token, "test_echo", "a").await.status.as_u16(),
            200,
            "open: allowed"
        );
    }

    let (mut redis, app) = with_fail_mode(LimitFailMode::Closed).await;
    let token = app.token("fail-closed", Plan::Pro);
    redis.stop();
    assert_eq!(
        app.send(&token, "test_echo", "a").await.code(),
        -32603,
        "closed: refused as an internal error"
    );
    let metrics = app.get("/metrics").await.body.as_str().unwrap().to_string();
    assert!(
        metrics.contains(r#"a2a_rate_limit_backend_errors_total{fail_mode="closed"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn tasks_survive_a_redis_crash_with_append_only_persistence() {
    let mut redis = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let app = spawn_app(shared(redis.url())).await;
    let token = app.token("durable", Plan::Enterprise);
    let mut tasks = Vec::new();
    for i in 0..20 {
        tasks.push(
            app.send(&token, "test_echo", &format!("task {i}"))
                .await
                .result()
                .clone(),
        );
    }
    redis.crash_and_restart();
    for task in &tasks {
        let mut got = None;
        for _ in 0..50 {
            let reply = app
                .rpc(Some(&token), &call("tasks/get", json!({"id": task["id"]})))
                .await;
            if reply.code() == 0 {
                got = Some(reply.result().clone());
                break;
            }
            assert_eq!(
                reply.code(),
                -32603,
                "only a transient fault while reconnecting: {}",
                reply.body
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(
            got.as_ref(),
            Some(task),
            "every task a client received survives"
        );
    }
}

#[tokio::test]
async fn store_and_limiter_suites_against_a_redis_cluster() {
    let cluster = RedisCluster::start();
    let app = spawn_app(shared(cluster.url())).await;
    behaviour(&app).await;
    let second = spawn_app(shared(cluster.url())).await;
    one_combined_limit(&[app, second]).await;
}
