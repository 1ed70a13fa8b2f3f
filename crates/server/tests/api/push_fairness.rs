//! Fair push delivery: one user's slow receiver holds no more than that user's share of the
//! delivery workers, and one slow host no more than its share, so another user's notification
//! is delivered at once, in memory and in Redis; both queues hold and free those places alike
//! (a claim whose lease ran out keeps them for the claim that takes it over); a notification
//! queued while Redis is briefly away is queued when it is back; notifications that are never
//! delivered are counted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{Settings, StoreBackend};
use magisterium_a2a::push::Push;
use magisterium_a2a::push::queue::{
    Delivery, DeliveryQueue, InFlightCaps, MemoryQueue, QueueCaps, RedisQueue,
};
use magisterium_a2a::redis_conn;
use magisterium_a2a::store::Owner;
use serde_json::json;

use crate::helpers::RedisServer;
use crate::push::{Answer, Receiver, config, push_settings, task_json};
use crate::push_methods::{WAIT, message, push_app, rpc};

/// How long the slow receiver takes to answer.
const SLOW: Duration = Duration::from_secs(5);
/// Another owner's notification arrives within this when it finds a free worker; behind the
/// slow receiver it would wait [`SLOW`] at least.
const PROMPT: Duration = Duration::from_millis(2_500);

/// Deliveries as slow as [`SLOW`] are waited for, once.
fn slow_receivers_allowed(settings: &mut Settings, concurrency: usize) {
    settings.push.delivery_timeout_ms = 8_000;
    settings.push.claim_lease_ms = 15_000;
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

fn delivery(id: &str, owner: &str, url: &str) -> Delivery {
    Delivery {
        id: id.into(),
        owner: owner.into(),
        task_id: format!("task-{id}"),
        url: url.into(),
        token: None,
        fault: None,
        trace: None,
        body: Bytes::from_static(b"{}"),
    }
}

fn ids(claimed: &[magisterium_a2a::push::queue::Claimed]) -> Vec<String> {
    let mut ids: Vec<String> = claimed.iter().map(|c| c.delivery.id.clone()).collect();
    ids.sort();
    ids
}

/// A claim holds its owner's and host's places until it is finished or retried; one whose
/// lease ran out keeps them for the claim that takes it over, and nothing is left held once
/// everything is finished.
async fn places_are_held_and_freed(queue: &dyn DeliveryQueue) {
    let caps = QueueCaps {
        per_task: 10,
        per_owner: 10,
        total: 100,
    };
    let shares = InFlightCaps {
        per_owner: 2,
        per_host: 3,
    };
    let lease = Duration::from_millis(300);
    for (id, owner, url) in [
        ("a1", "a", "https://One.example/x?k=1"),
        ("a2", "a", "https://one.example:8443/y"),
        ("a3", "a", "https://two.example/"),
        ("b1", "b", "https://one.example/z"),
        ("c1", "c", "https://one.example/w"),
    ] {
        queue
            .enqueue(&delivery(id, owner, url), caps)
            .await
            .unwrap();
    }
    let first = queue.claim(10, lease, shares).await.unwrap();
    assert_eq!(
        ids(&first),
        ["a1", "a2", "b1"],
        "a has its 2, one.example its 3 (any port, any case)"
    );
    assert!(queue.claim(10, lease, shares).await.unwrap().is_empty());

    let retried = first.iter().find(|c| c.delivery.id == "a1").unwrap();
    queue
        .retry_after(&retried.delivery, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(
        ids(&queue.claim(10, lease, shares).await.unwrap()),
        ["a3", "c1"],
        "a retried delivery frees its owner's and its host's place, and waits for its turn"
    );

    tokio::time::sleep(lease + Duration::from_millis(200)).await;
    let again = queue.claim(10, lease, shares).await.unwrap();
    assert_eq!(
        ids(&again),
        ["a2", "a3", "b1", "c1"],
        "claims whose lease ran out are taken over with the places they hold"
    );
    assert!(again.iter().all(|c| c.attempt == 2));
    assert!(queue.claim(10, lease, shares).await.unwrap().is_empty());

    for claimed in &again {
        queue.finish(&claimed.delivery).await.unwrap();
    }
    queue.finish(&retried.delivery).await.unwrap();
    assert_eq!(queue.pending().await.unwrap(), 0);
    for (id, owner) in [("a4", "a"), ("a5", "a"), ("b2", "b")] {
        queue
            .enqueue(&delivery(id, owner, "https://one.example/"), caps)
            .await
            .unwrap();
    }
    assert_eq!(
        ids(&queue.claim(10, lease, shares).await.unwrap()),
        ["a4", "a5", "b2"],
        "no place is left held"
    );
}

#[tokio::test]
async fn claims_hold_and_free_places_in_flight_in_memory() {
    places_are_held_and_freed(&MemoryQueue::new()).await;
}

#[tokio::test]
async fn claims_hold_and_free_places_in_flight_in_redis() {
    let redis = RedisServer::start();
    let connection = redis_conn::connect(&redis.url(), false, Duration::from_secs(2))
        .await
        .unwrap();
    places_are_held_and_freed(&RedisQueue::new(connection)).await;
}
