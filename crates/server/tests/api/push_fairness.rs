//! Fair push delivery: one user's slow receiver holds no more than that user's share of the
//! delivery workers, and one slow host no more than its share, so another user's notification
//! is delivered at once, in memory and in Redis; a notification queued while Redis is briefly
//! away is queued when it is back; notifications that are never delivered are counted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{Settings, StoreBackend};
use magisterium_a2a::push::Push;
use magisterium_a2a::store::Owner;
use serde_json::json;

use crate::helpers::RedisServer;
use crate::push::{Answer, Receiver, config, push_settings, task_json};
use crate::push_methods::{WAIT, message, push_app, rpc};

/// How long the slow receiver takes to answer.
const SLOW: Duration = Duration::from_secs(3);
/// Another owner's notification arrives within this when it finds a free worker; behind the
/// slow receiver it would wait [`SLOW`] at least.
const PROMPT: Duration = Duration::from_millis(1_500);

/// Deliveries as slow as [`SLOW`] are waited for, once.
fn slow_receivers_allowed(settings: &mut Settings, concurrency: usize) {
    settings.push.delivery_timeout_ms = 5_000;
    settings.push.claim_lease_ms = 10_000;
    settings.push.max_attempts = 1;
    settings.push.concurrency = concurrency;
}

fn in_redis(redis: &RedisServer) -> impl Fn(&mut Settings) + '_ {
    |settings| {
        settings.store.backend = StoreBackend::Redis;
        settings.store.redis_url = Some(redis.url());
    }
}

/// Each attacker queues `sends_each` notifications for a receiver on 127.0.0.1 that answers
/// after [`SLOW`]; once the worker has claimed what it may, alice queues one for a quick
/// receiver on 127.0.0.2. Returns how long hers took, and how many requests the slow receiver
/// had got by then.
async fn another_owners_wait(
    push: &Push,
    attackers: &[&str],
    sends_each: usize,
) -> (Duration, usize) {
    let slow = Receiver::start_on("127.0.0.1", vec![Answer::Slow(SLOW)]).await;
    let quick = Receiver::start_on("127.0.0.2", vec![Answer::Status(200)]).await;
    for attacker in attackers {
        let owner = Owner::of("", attacker);
        for n in 0..sends_each {
            let task = format!("t-{n}");
            push.notifier()
                .enqueue(&owner, &task, &config(&slow.url(), None), task_json(&task))
                .await
                .unwrap();
        }
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    let started = Instant::now();
    push.notifier()
        .enqueue(
            &Owner::of("", "alice"),
            "t-alice",
            &config(&quick.url(), None),
            task_json("t-alice"),
        )
        .await
        .unwrap();
    quick.wait_for(1, Duration::from_secs(15)).await;
    (started.elapsed(), slow.hits().len())
}

/// One attacker with more sends than the replica has workers: they may hold only
/// `push.max_in_flight_per_owner` (4) of the 8.
async fn one_owner_holds_only_its_share(customize: impl FnOnce(&mut Settings)) {
    let push = Push::open(
        &push_settings(|s| {
            slow_receivers_allowed(s, 8);
            customize(s);
        }),
        "http://a2a.test",
    )
    .await
    .unwrap();
    let _worker = push.spawn_worker();
    let (waited, held) = another_owners_wait(&push, &["mallory"], 12).await;
    assert!(
        waited < PROMPT,
        "alice's notification waited {waited:?} behind mallory's slow receiver"
    );
    assert_eq!(held, 4, "mallory's deliveries in flight at once");
}

#[tokio::test]
async fn a_slow_receiver_holds_only_its_owners_share_of_the_workers_in_memory() {
    one_owner_holds_only_its_share(|_| {}).await;
}

#[tokio::test]
async fn a_slow_receiver_holds_only_its_owners_share_of_the_workers_in_redis() {
    let redis = RedisServer::start();
    one_owner_holds_only_its_share(in_redis(&redis)).await;
}

/// Three attackers aim at one slow host, each within its own share, together enough to hold
/// all 12 workers: the host may hold only `push.max_in_flight_per_host` (8).
async fn one_host_holds_only_its_share(customize: impl FnOnce(&mut Settings)) {
    let push = Push::open(
        &push_settings(|s| {
            slow_receivers_allowed(s, 12);
            customize(s);
        }),
        "http://a2a.test",
    )
    .await
    .unwrap();
    let _worker = push.spawn_worker();
    let (waited, held) = another_owners_wait(&push, &["mallory", "eve", "trudy"], 5).await;
    assert!(
        waited < PROMPT,
        "alice's notification waited {waited:?} behind a slow host"
    );
    assert_eq!(held, 8, "deliveries in flight at once to the slow host");
}

#[tokio::test]
async fn a_slow_host_holds_only_its_share_of_the_workers_in_memory() {
    one_host_holds_only_its_share(|_| {}).await;
}

#[tokio::test]
async fn a_slow_host_holds_only_its_share_of_the_workers_in_redis() {
    let redis = RedisServer::start();
    one_host_holds_only_its_share(in_redis(&redis)).await;
}

#[tokio::test]
async fn a_notification_queued_while_redis_is_away_is_queued_when_it_is_back() {
    let mut redis = RedisServer::start();
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let push = Arc::new(
        Push::open(&push_settings(in_redis(&redis)), "http://a2a.test")
            .await
            .unwrap(),
    );
    let _worker = push.spawn_worker();
    redis.stop();
    let queueing = Arc::clone(&push);
    let url = receiver.url();
    let queued = tokio::spawn(async move {
        queueing
            .notifier()
            .enqueue(
                &Owner::of("", "alice"),
                "t-1",
                &config(&url, None),
                task_json("t-1"),
            )
            .await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    redis.restart();
    let id = queued
        .await
        .unwrap()
        .expect("the notification is queued once Redis is back");
    let hit = receiver
        .wait_for(1, Duration::from_secs(10))
        .await
        .remove(0);
    assert_eq!(
        crate::push::header(&hit, "idempotency-key"),
        Some(id.as_str())
    );
}

#[tokio::test]
async fn notifications_never_delivered_are_counted_in_the_metrics() {
    let app = push_app(|s| s.push.max_attempts = 1).await;
    let refusing = Receiver::start(vec![Answer::Status(410)]).await;
    let token = app.token("undelivered", Plan::Pro);
    let reply = rpc(
        &app,
        &token,
        "message/send",
        json!({"message": message("test_echo", "hi"),
               "configuration": {"blocking": true,
                                 "pushNotificationConfig": {"url": refusing.url()}}}),
    )
    .await;
    assert_eq!(reply.result()["status"]["state"], "completed");
    refusing.wait_for(1, WAIT).await;
    let started = Instant::now();
    loop {
        let metrics = app.get("/metrics").await.body.as_str().unwrap().to_string();
        if metrics.contains(r#"a2a_push_undelivered_total{reason="given_up"}"#) {
            break;
        }
        assert!(started.elapsed() < WAIT, "no undelivered count: {metrics}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
