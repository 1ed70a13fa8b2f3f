//! A blocking `message/send` of a new message to a cheap skill, with the Redis store and the
//! Redis limiter on one Redis: the skill runs, then one script checks the message, charges the
//! caller's `default` bucket and saves the task. Counted on Redis' own `MONITOR` feed (which tells
//! a client's command from a script's) and `INFO commandstats`. The expensive bucket, resends found
//! after a run, refused callers and a Redis that is down keep their answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{LimitBackend, Settings};
use serde_json::{Value, json};

use crate::helpers::{
    MonitoredCommand, RedisMonitor, RedisServer, Reply, TestApp, call, command_calls, redis_keys,
    send_body, spawn_app, uuid, with_redis,
};

/// The Redis store and the Redis limiter on the same Redis, `default_per_minute` calls a minute
/// on the pro plan; the push worker's idle poll (a script of its own) is pushed out of the way of
/// the command counts.
fn one_redis(url: String, default_per_minute: u32) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        with_redis(url)(s);
        s.limits.backend = LimitBackend::Redis;
        s.limits.pro.default_per_minute = default_per_minute;
        s.push.poll_interval_ms = 3_600_000;
    }
}

/// The commands clients sent on a user's keys (`{o:…}`), by name: one per round trip. A script
/// Redis did not know yet is answered `NOSCRIPT`, loaded and called again: the first call, the
/// one a `SCRIPT LOAD` follows, is a client library's detail and not counted.
fn round_trips(commands: &[MonitoredCommand]) -> Vec<&str> {
    let sent: Vec<&MonitoredCommand> = commands.iter().filter(|c| !c.from_script).collect();
    sent.iter()
        .enumerate()
        .filter(|(at, c)| {
            let unknown_script = c.name() == "EVALSHA"
                && sent.get(at + 1).is_some_and(|next| next.name() == "SCRIPT");
            c.touches("{o:") && !unknown_script
        })
        .map(|(_, c)| c.name())
        .collect()
}

/// Whether a client looked the message up on its own (`GET` of a message record), as the
/// charge-first path does before anything else.
fn looked_up_the_message(commands: &[MonitoredCommand]) -> bool {
    commands
        .iter()
        .any(|c| !c.from_script && c.name() == "GET" && c.touches(":msg:"))
}

/// Sends fresh messages until one is refused; the refused message's body, the refusal and how
/// many were stored before it.
async fn send_until_refused(app: &TestApp, token: &str) -> (Value, Reply, usize) {
    for stored in 0..100 {
        let body = send_body("test_echo", "over the limit", &uuid());
        let reply = app.rpc(Some(token), &body).await;
        if reply.code() != 0 {
            return (body, reply, stored);
        }
    }
    panic!("no refusal within 100 sends");
}

/// `retryAfter` of a refusal, checked against its `Retry-After` header.
fn retry_after(refused: &Reply) -> u64 {
    assert_eq!(
        (refused.status.as_u16(), refused.code()),
        (429, -32003),
        "{}",
        refused.body
    );
    let retry = refused.body["error"]["data"]["retryAfter"]
        .as_u64()
        .expect("retryAfter");
    assert_eq!(
        refused.header("retry-after"),
        Some(retry.to_string().as_str())
    );
    retry
}

#[tokio::test]
async fn a_default_bucket_send_is_one_script_call_charged_once_and_stored() {
    let redis = RedisServer::start();
    let app = spawn_app(one_redis(redis.url(), 15)).await;
    let token = app.token("one-trip", Plan::Pro);
    // The first send also loads the script into Redis.
    let first = app.send(&token, "test_echo", "first").await;
    assert_eq!(first.remaining(), 14, "{:?}", first.headers);

    let monitor = RedisMonitor::start(&redis).await;
    let before = command_calls(&redis).await;
    let reply = app.send(&token, "test_echo", "counted").await;
    let after = command_calls(&redis).await;
    let commands = monitor.take().await;

    assert_eq!(reply.result()["status"]["state"], "completed");
    assert_eq!(
        reply.header("ratelimit-policy"),
        Some("\"default\";q=15;w=60")
    );
    assert_eq!(reply.remaining(), 13, "charged exactly once");
    assert_eq!(
        round_trips(&commands),
        ["EVALSHA"],
        "one round trip to Redis: {commands:?}"
    );
    let delta =
        |name: &str| after.get(name).copied().unwrap_or(0) - before.get(name).copied().unwrap_or(0);
    assert_eq!(delta("evalsha"), 1, "exactly one script call");
    assert_eq!(delta("eval"), 0);
    assert!(!looked_up_the_message(&commands), "no GET of its own");
    let scripts_gets = commands
        .iter()
        .filter(|c| c.from_script && c.name() == "GET")
        .count();
    assert_eq!(
        delta("get"),
        scripts_gets as u64,
        "every GET Redis counted was the script's own (the message record and the bucket)"
    );

    let stored = app
        .rpc(
            Some(&token),
            &call("tasks/get", json!({"id": reply.result()["id"]})),
        )
        .await;
    assert_eq!(stored.result(), reply.result(), "the task was stored");
}

#[tokio::test]
async fn a_send_over_the_limit_is_refused_stores_nothing_and_runs_once_the_limit_allows() {
    let redis = RedisServer::start();
    // One call back every 3 s.
    let app = spawn_app(one_redis(redis.url(), 20)).await;
    let token = app.token("over", Plan::Pro);
    let (body, refused, stored) = send_until_refused(&app, &token).await;
    let retry = retry_after(&refused);
    assert!((1..=3).contains(&retry), "{retry}");
    assert_eq!(refused.body["error"]["data"]["bucket"], "default");
    assert_eq!(
        refused.header("ratelimit-policy"),
        Some("\"default\";q=20;w=60")
    );
    assert!(
        refused
            .header("ratelimit")
            .is_some_and(|h| h.starts_with("\"default\";r=0;")),
        "{:?}",
        refused.headers
    );
    assert!(stored >= 20, "the whole burst was allowed first: {stored}");
    assert_eq!(
        redis_keys(&redis, "a2a:v1:*:task:*").await.len(),
        stored,
        "the refused send stored no task"
    );
    assert_eq!(
        redis_keys(&redis, "a2a:v1:*:msg:*").await.len(),
        stored,
        "and recorded no message"
    );

    tokio::time::sleep(Duration::from_secs(retry)).await;
    let again = app.rpc(Some(&token), &body).await;
    assert_eq!(again.status.as_u16(), 200, "{}", again.body);
    assert_eq!(
        again.result()["artifacts"][0]["parts"][0]["text"],
        "echo: over the limit",
        "the same message runs once the limit allows it"
    );
    assert_eq!(again.remaining(), 0);
    assert_eq!(
        redis_keys(&redis, "a2a:v1:*:task:*").await.len(),
        stored + 1
    );
    assert_eq!(redis_keys(&redis, "a2a:v1:*:msg:*").await.len(), stored + 1);
}

#[tokio::test]
async fn a_resend_answers_the_same_task_uncharged_and_the_next_resend_is_looked_up_first() {
    let redis = RedisServer::start();
    let app = spawn_app(one_redis(redis.url(), 15)).await;
    let token = app.token("resender", Plan::Pro);
    let body = send_body("test_echo", "once", &uuid());
    let first = app.rpc(Some(&token), &body).await;
    assert_eq!(first.remaining(), 14);

    let monitor = RedisMonitor::start(&redis).await;
    let resent = app.rpc(Some(&token), &body).await;
    let commands = monitor.take().await;
    assert_eq!(resent.result(), first.result(), "the same task");
    assert!(resent.header("ratelimit").is_none(), "not charged");
    assert_eq!(
        round_trips(&commands).first(),
        Some(&"EVALSHA"),
        "the script found the message: {commands:?}"
    );
    assert!(!looked_up_the_message(&commands));

    // A resend found after its skill ran sends the owner's next sends through the lookup first
    // for a while, so repeating a message does not run its skill again and again.
    let resent = app.rpc(Some(&token), &body).await;
    let commands = monitor.take().await;
    assert_eq!(resent.result(), first.result());
    assert_eq!(
        round_trips(&commands).first(),
        Some(&"GET"),
        "looked up first: {commands:?}"
    );
    assert!(looked_up_the_message(&commands));
    assert!(
        !round_trips(&commands).contains(&"EVALSHA"),
        "answered from the record: nothing charged, nothing saved: {commands:?}"
    );

    let next = app.send(&token, "test_echo", "another").await;
    assert_eq!(next.remaining(), 13, "neither resend was charged");
    assert_eq!(redis_keys(&redis, "a2a:v1:*:task:*").await.len(), 2);
}

#[tokio::test]
async fn after_a_refusal_the_owner_is_charged_first_until_retry_after() {
    let redis = RedisServer::start();
    let app = spawn_app(one_redis(redis.url(), 20)).await;
    let token = app.token("refused", Plan::Pro);
    // The first send also loads the script into Redis.
    assert_eq!(app.send(&token, "test_echo", "first").await.code(), 0);
    let monitor = RedisMonitor::start(&redis).await;
    let (_, refused, stored) = send_until_refused(&app, &token).await;
    let commands = monitor.take().await;
    let retry = retry_after(&refused);
    assert!(
        !looked_up_the_message(&commands),
        "the sends up to the refusal took one round trip each: {commands:?}"
    );
    assert_eq!(
        round_trips(&commands).len(),
        stored + 1,
        "one script call per send: {commands:?}"
    );

    let within = app.send(&token, "test_echo", "still limited").await;
    let commands = monitor.take().await;
    assert!(retry_after(&within) <= retry);
    assert_eq!(
        round_trips(&commands),
        ["GET", "EVALSHA"],
        "the lookup, then the limiter's charge alone (refused before the skill ran): {commands:?}"
    );
    assert!(
        commands
            .iter()
            .any(|c| !c.from_script && c.name() == "EVALSHA" && c.touches(":rl:pro:default")),
        "{commands:?}"
    );

    tokio::time::sleep(Duration::from_secs(retry_after(&within))).await;
    let later = app.send(&token, "test_echo", "allowed again").await;
    let commands = monitor.take().await;
    assert_eq!(later.status.as_u16(), 200, "{}", later.body);
    assert_eq!(
        round_trips(&commands),
        ["EVALSHA"],
        "once retryAfter has passed, one round trip again: {commands:?}"
    );
}

#[tokio::test]
async fn a_run_that_ends_in_an_error_is_charged_as_before_and_a_refusal_wins() {
    let redis = RedisServer::start();
    // One call back every 30 s: the burst of two is all this test has.
    let app = spawn_app(one_redis(redis.url(), 2)).await;
    let token = app.token("invalid", Plan::Pro);
    let too_long = "word ".repeat(300);
    let first = app.send(&token, "test_echo", "fine").await;
    assert_eq!(first.remaining(), 1);

    let invalid = app.send(&token, "document_search", &too_long).await;
    assert_eq!(invalid.code(), -32602, "{}", invalid.body);
    assert!(
        invalid.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("over the limit of 1024 characters")),
        "{}",
        invalid.body
    );
    // The invalid call took the last call of the burst: the same mistake again is refused for
    // the limit, as it would have been before its skill ran.
    let invalid_again = app.send(&token, "document_search", &too_long).await;
    retry_after(&invalid_again);
    let refused = app.send(&token, "test_echo", "one more").await;
    retry_after(&refused);
    assert_eq!(
        redis_keys(&redis, "a2a:v1:*:task:*").await.len(),
        1,
        "nothing but the first task was stored"
    );
}

/// An OpenAI-compatible chat-completions endpoint on loopback that counts the requests it got.
async fn counting_llm() -> (String, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let router = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                axum::Json(json!({"model": "test-model", "choices": [{"message": {
                    "content": "Prayer lifts the mind and heart to God [1]."}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, calls)
}

/// A data folder whose corpus holds one document about prayer, imported with the CLI.
fn corpus_about_prayer() -> tempfile::TempDir {
    crate::helpers::data_with_corpus(&[
        json!({"id": "cat:test-primer", "title": "A Primer on Prayer",
        "date": "1901", "type": "catechism", "language": "en",
        "sections": [{"locus": "1", "heading": "Prayer",
            "text": "Prayer is the lifting up of the mind and heart to God."}]}),
    ])
}

#[tokio::test]
async fn a_limited_catholic_qa_call_never_reaches_the_model() {
    let redis = RedisServer::start();
    let (llm_url, llm_calls) = counting_llm().await;
    let data = corpus_about_prayer();
    let dir = data.path().to_path_buf();
    let redis_url = redis.url();
    let app = spawn_app(move |s| {
        one_redis(redis_url, 15)(s);
        s.data.dir = dir;
        s.llm.base_url = Some(llm_url);
        s.llm.model = "test-model".into();
        s.llm.max_retries = 0;
        s.limits.pro.expensive_per_minute = 1;
    })
    .await;
    let token = app.token("asker", Plan::Pro);
    let answered = app.send(&token, "catholic_qa", "What is prayer?").await;
    assert_eq!(answered.result()["status"]["state"], "completed");
    assert_eq!(
        llm_calls.load(Ordering::SeqCst),
        1,
        "the model answered: {}",
        answered.body
    );
    assert_eq!(
        answered.header("ratelimit-policy"),
        Some("\"expensive\";q=1;w=60")
    );

    let refused = app
        .send(&token, "catholic_qa", "What is prayer, again?")
        .await;
    retry_after(&refused);
    assert_eq!(refused.body["error"]["data"]["bucket"], "expensive");
    assert_eq!(
        llm_calls.load(Ordering::SeqCst),
        1,
        "charged before it runs: the refused call never reached the model"
    );
}

#[tokio::test]
async fn with_redis_down_a_send_is_an_internal_error_and_its_retry_runs_once_redis_is_back() {
    let mut redis = RedisServer::start();
    let app = spawn_app(one_redis(redis.url(), 15)).await;
    let token = app.token("unlucky", Plan::Pro);
    let body = send_body("test_echo", "through an outage", &uuid());
    redis.stop();
    let failed = app.rpc(Some(&token), &body).await;
    assert_eq!(failed.code(), -32603, "{}", failed.body);
    redis.restart();
    let mut answered = None;
    for _ in 0..50 {
        let reply = app.rpc(Some(&token), &body).await;
        if reply.code() == 0 {
            answered = Some(reply);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let answered = answered.expect("the retry runs once Redis is back");
    assert_eq!(
        answered.result()["artifacts"][0]["parts"][0]["text"],
        "echo: through an outage"
    );
    assert_eq!(
        answered.remaining(),
        14,
        "charged once, by the save that stored it"
    );
    assert_eq!(redis_keys(&redis, "a2a:v1:*:task:*").await.len(), 1);
}
