//! Push notifications against real loopback webhook receivers and a real Redis: the headers and
//! the signed JWT, retries with one idempotency key, no retries on 4xx, the delivery timeout,
//! refused targets, redirects not followed, deliveries surviving a restart, and the per-task
//! config store.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use a2a_types::PushNotificationConfig;
use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use bytes::Bytes as RawBytes;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use magisterium_a2a::config::{Settings, StoreBackend};
use magisterium_a2a::push::queue::CapReached;
use magisterium_a2a::push::worker::PushWorker;
use magisterium_a2a::push::{Push, PushError};
use magisterium_a2a::store::Owner;
use magisterium_a2a::wire::Version;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::helpers::{RedisServer, spawn_app, test_settings};

/// What a receiver answers, request by request (the last answer repeats).
#[derive(Clone)]
pub(crate) enum Answer {
    Status(u16),
    Slow(Duration),
    Redirect(String),
    Endless,
}

#[derive(Debug, Clone)]
pub(crate) struct Hit {
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// A real webhook receiver on a loopback port.
pub(crate) struct Receiver {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
}

impl Receiver {
    pub(crate) async fn start(answers: Vec<Answer>) -> Receiver {
        Self::start_on("127.0.0.1", answers).await
    }

    /// [`Receiver::start`] on another loopback address (`127.0.0.2`: another host).
    pub(crate) async fn start_on(ip: &str, answers: Vec<Answer>) -> Receiver {
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let recorded = Arc::clone(&hits);
        let app = Router::new().route(
            "/hook",
            post(move |headers: HeaderMap, body: Bytes| {
                let recorded = Arc::clone(&recorded);
                let answers = answers.clone();
                async move {
                    let index = {
                        let mut hits = recorded.lock().unwrap();
                        hits.push(Hit { headers, body });
                        hits.len() - 1
                    };
                    let answer = answers
                        .get(index)
                        .or(answers.last())
                        .cloned()
                        .unwrap_or(Answer::Status(200));
                    answer_with(answer).await
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { addr, hits }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    pub(crate) fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    pub(crate) async fn wait_for(&self, count: usize, within: Duration) -> Vec<Hit> {
        let start = Instant::now();
        while start.elapsed() < within {
            let hits = self.hits();
            if hits.len() >= count {
                return hits;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!(
            "the receiver got {} requests, not {count}, within {within:?}",
            self.hits().len()
        );
    }
}

async fn answer_with(answer: Answer) -> Response {
    match answer {
        Answer::Status(code) => StatusCode::from_u16(code).unwrap().into_response(),
        Answer::Slow(delay) => {
            tokio::time::sleep(delay).await;
            StatusCode::OK.into_response()
        }
        Answer::Redirect(to) => {
            (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]).into_response()
        }
        Answer::Endless => {
            let chunks = futures::stream::repeat_with(|| {
                Ok::<_, std::io::Error>(Bytes::from_static(&[b'x'; 1024]))
            });
            axum::body::Body::from_stream(chunks).into_response()
        }
    }
}

pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/api/fixtures/{name}"))
}

/// Settings for push tests: fast retries, loopback receivers allowed.
pub(crate) fn push_settings(customize: impl FnOnce(&mut Settings)) -> Settings {
    let mut settings = test_settings();
    settings.push.allow_private_targets = true;
    settings.push.base_delay_ms = 50;
    settings.push.max_delay_ms = 200;
    settings.push.delivery_timeout_ms = 2_000;
    settings.push.claim_lease_ms = 3_000;
    settings.push.poll_interval_ms = 20;
    customize(&mut settings);
    settings
}

pub(crate) fn config(url: &str, token: Option<&str>) -> PushNotificationConfig {
    PushNotificationConfig {
        id: None,
        url: url.into(),
        token: token.map(Into::into),
        authentication: None,
    }
}

pub(crate) fn task_json(id: &str) -> RawBytes {
    RawBytes::from(
        json!({"kind": "task", "id": id, "contextId": "c-1",
               "status": {"state": "completed", "timestamp": "2026-12-01T10:00:00.000Z"},
               "artifacts": [], "history": []})
        .to_string(),
    )
}

async fn wait_until_drained(push: &Push, within: Duration) {
    let start = Instant::now();
    while start.elapsed() < within {
        if push.pending().await.unwrap() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{} deliveries still pending", push.pending().await.unwrap());
}

/// A push service on [`push_settings`] changed by `customize`, with its worker running.
async fn running_push(customize: impl FnOnce(&mut Settings)) -> (Push, PushWorker) {
    let push = Push::open(&push_settings(customize), "http://a2a.test")
        .await
        .unwrap();
    let worker = push.spawn_worker();
    (push, worker)
}

/// Queues one notification of task `task` of `owner` for the webhook at `url`.
async fn notify_once(push: &Push, owner: &Owner, task: &str, url: &str) {
    push.notifier()
        .enqueue(owner, task, &config(url, None), task_json(task))
        .await
        .unwrap();
}

pub(crate) fn header<'a>(hit: &'a Hit, name: &str) -> Option<&'a str> {
    hit.headers.get(name).and_then(|v| v.to_str().ok())
}

#[tokio::test]
async fn a_notification_carries_the_token_an_idempotency_key_and_a_jwt_that_the_served_jwks_verifies()
 {
    let key = fixture("ec1.pem");
    let app = spawn_app(|s| s.push.signing_key_path = Some(key.clone())).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let settings = push_settings(|s| s.push.signing_key_path = Some(key));
    let push = Push::open(&settings, &app.base).await.unwrap();
    let _worker = push.spawn_worker();
    let owner = Owner::of("", "alice");
    let set = push
        .set_config(
            &owner,
            "t-1",
            config(&receiver.url(), Some("secret-token")),
            Version::V03,
        )
        .await
        .unwrap();
    assert_eq!(set.push_notification_config.id.as_deref(), Some("t-1"));
    assert_eq!(
        push.notify(&owner, "t-1", task_json("t-1")).await.unwrap(),
        1
    );

    let hit = receiver.wait_for(1, Duration::from_secs(5)).await.remove(0);
    assert_eq!(header(&hit, "content-type"), Some("application/json"));
    assert_eq!(
        header(&hit, "x-a2a-notification-token"),
        Some("secret-token")
    );
    assert!(uuid::Uuid::parse_str(header(&hit, "idempotency-key").unwrap()).is_ok());
    let task: Value = serde_json::from_slice(&hit.body).unwrap();
    assert_eq!(task["id"], "t-1");

    let jwks = app
        .client
        .get(format!("{}/.well-known/jwks.json", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(jwks.status(), 200);
    assert_eq!(
        jwks.headers()["content-type"].to_str().unwrap(),
        "application/jwk-set+json"
    );
    let jwks: JwkSet = jwks.json().await.unwrap();
    let token = header(&hit, "authorization")
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap();
    let kid = jsonwebtoken::decode_header(token).unwrap().kid.unwrap();
    let jwk = jwks
        .find(&kid)
        .expect("the token's kid is in the served JWKS");
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[receiver.url()]);
    validation.set_issuer(&[app.base.as_str()]);
    validation.set_required_spec_claims(&["exp", "iat", "iss", "aud"]);
    let claims =
        jsonwebtoken::decode::<Value>(token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
            .expect("the JWT verifies against the served JWKS")
            .claims;
    assert_eq!(
        claims["request_body_sha256"],
        hex::encode(Sha256::digest(&hit.body)),
        "the JWT carries the hash of the exact body"
    );
    let lifetime = claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap();
    assert!(lifetime <= 300, "short-lived: {lifetime} s");
    wait_until_drained(&push, Duration::from_secs(2)).await;
}

#[tokio::test]
async fn a_receiver_failing_twice_gets_the_third_attempt_with_the_same_idempotency_key() {
    let receiver = Receiver::start(vec![
        Answer::Status(500),
        Answer::Status(503),
        Answer::Status(204),
    ])
    .await;
    let (push, _worker) = running_push(|_| {}).await;
    let owner = Owner::of("", "alice");
    notify_once(&push, &owner, "t-1", &receiver.url()).await;
    wait_until_drained(&push, Duration::from_secs(5)).await;
    let hits = receiver.hits();
    assert_eq!(
        hits.len(),
        3,
        "delivered on the third attempt, then no more"
    );
    let keys: Vec<_> = hits.iter().map(|h| header(h, "idempotency-key")).collect();
    assert!(
        keys[0].is_some() && keys.iter().all(|k| *k == keys[0]),
        "{keys:?}"
    );
    assert!(hits.iter().all(|h| h.body == hits[0].body));
    assert!(header(&hits[0], "x-a2a-notification-token").is_none());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.hits().len(), 3);
}

#[tokio::test]
async fn a_4xx_answer_is_not_retried_and_attempts_are_bounded() {
    let refusing = Receiver::start(vec![Answer::Status(410)]).await;
    let failing = Receiver::start(vec![Answer::Status(500)]).await;
    let (push, _worker) = running_push(|s| s.push.max_attempts = 3).await;
    let owner = Owner::of("", "alice");
    for receiver in [&refusing, &failing] {
        notify_once(&push, &owner, "t-1", &receiver.url()).await;
    }
    wait_until_drained(&push, Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(refusing.hits().len(), 1, "a 4xx is final");
    assert_eq!(
        failing.hits().len(),
        3,
        "push.max_attempts bounds the retries"
    );
}

#[tokio::test]
async fn a_slow_receiver_is_cut_off_at_the_delivery_timeout() {
    let receiver = Receiver::start(vec![Answer::Slow(Duration::from_secs(30))]).await;
    let (push, _worker) = running_push(|s| {
        s.push.delivery_timeout_ms = 300;
        s.push.max_attempts = 2;
    })
    .await;
    let started = Instant::now();
    notify_once(&push, &Owner::of("", "a"), "t", &receiver.url()).await;
    wait_until_drained(&push, Duration::from_secs(10)).await;
    assert_eq!(
        receiver.hits().len(),
        2,
        "each timed-out attempt was retried once"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "two attempts of a 30 s answer ended in {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_endless_answer_is_read_only_up_to_a_small_cap() {
    let receiver = Receiver::start(vec![Answer::Endless]).await;
    let (push, _worker) = running_push(|s| {
        s.push.delivery_timeout_ms = 20_000;
        s.push.claim_lease_ms = 21_000;
    })
    .await;
    let started = Instant::now();
    notify_once(&push, &Owner::of("", "a"), "t", &receiver.url()).await;
    wait_until_drained(&push, Duration::from_secs(10)).await;
    assert_eq!(
        receiver.hits().len(),
        1,
        "a 200 delivers, whatever follows it"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the answer was not read to the end (or to the timeout): {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let target = Receiver::start(vec![Answer::Status(200)]).await;
    let redirecting = Receiver::start(vec![Answer::Redirect(target.url())]).await;
    let (push, _worker) = running_push(|_| {}).await;
    notify_once(&push, &Owner::of("", "a"), "t", &redirecting.url()).await;
    wait_until_drained(&push, Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        redirecting.hits().len(),
        1,
        "a redirect is final, not retried"
    );
    assert!(
        target.hits().is_empty(),
        "the redirect's target was not called"
    );
}

#[tokio::test]
async fn private_loopback_link_local_and_mapped_targets_are_refused_unless_allowed() {
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let port = receiver.addr.port();
    let push = Push::open(
        &push_settings(|s| {
            s.push.allow_private_targets = false;
            s.push.max_attempts = 5;
            s.push.delivery_timeout_ms = 5_000;
            s.push.claim_lease_ms = 6_000;
        }),
        "http://a2a.test",
    )
    .await
    .unwrap();
    let owner = Owner::of("", "alice");
    // Refused when set: literal addresses and localhost names.
    for url in [
        format!("http://127.0.0.1:{port}/hook"),
        format!("http://[::ffff:127.0.0.1]:{port}/hook"),
        format!("http://[::1]:{port}/hook"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://10.0.0.8/hook".to_string(),
        format!("http://localhost:{port}/hook"),
    ] {
        match push
            .set_config(&owner, "t", config(&url, None), Version::V03)
            .await
        {
            Err(PushError::InvalidConfig(message)) => {
                assert!(
                    message.contains("pushNotificationConfig.url"),
                    "{url}: {message}"
                )
            }
            other => panic!("{url} was not refused: {other:?}"),
        }
    }
    // Refused when delivered, too (a config stored before, or a name that resolves to a
    // private address): no request arrives and nothing is retried.
    let _worker = push.spawn_worker();
    let started = Instant::now();
    for url in [
        format!("http://127.0.0.1:{port}/hook"),
        format!("http://[::ffff:127.0.0.1]:{port}/hook"),
        format!("http://localhost:{port}/hook"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        push.notifier()
            .enqueue(&owner, "t", &config(&url, None), task_json("t"))
            .await
            .unwrap();
    }
    wait_until_drained(&push, Duration::from_secs(4)).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "refused at once, not retried"
    );
    assert!(receiver.hits().is_empty(), "no refused target was called");
}

#[tokio::test]
async fn https_only_under_the_production_profile() {
    let mut settings = push_settings(|s| s.push.allow_private_targets = false);
    settings.profile = "production".into();
    let push = Push::open(&settings, "https://a2a.test").await.unwrap();
    let owner = Owner::of("", "alice");
    match push
        .set_config(
            &owner,
            "t",
            config("http://hooks.example.org/a2a", None),
            Version::V03,
        )
        .await
    {
        Err(PushError::InvalidConfig(message)) => assert!(message.contains("https://")),
        other => panic!("plain HTTP was not refused: {other:?}"),
    }
    push.set_config(
        &owner,
        "t",
        config("https://hooks.example.org/a2a", None),
        Version::V03,
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_pending_delivery_survives_a_restart_on_the_same_redis() {
    let redis = RedisServer::start();
    let receiver = Receiver::start(vec![Answer::Status(503), Answer::Status(200)]).await;
    let settings = push_settings(|s| {
        s.store.backend = StoreBackend::Redis;
        s.store.redis_url = Some(redis.url());
        s.push.base_delay_ms = 2_000;
        s.push.max_delay_ms = 2_000;
    });
    let owner = Owner::of("", "alice");
    {
        let first = Push::open(&settings, "http://a2a.test").await.unwrap();
        let worker = first.spawn_worker();
        first
            .notifier()
            .enqueue(
                &owner,
                "t-1",
                &config(&receiver.url(), None),
                task_json("t-1"),
            )
            .await
            .unwrap();
        receiver.wait_for(1, Duration::from_secs(5)).await;
        worker.shutdown().await;
        // Queued by a replica that stops before delivering it.
        first
            .notifier()
            .enqueue(
                &owner,
                "t-2",
                &config(&receiver.url(), None),
                task_json("t-2"),
            )
            .await
            .unwrap();
    }
    assert_eq!(
        receiver.hits().len(),
        1,
        "the retry is not due before the restart"
    );

    let second = Push::open(&settings, "http://a2a.test").await.unwrap();
    assert_eq!(second.pending().await.unwrap(), 2, "both wait in Redis");
    let _worker = second.spawn_worker();
    wait_until_drained(&second, Duration::from_secs(5)).await;
    let hits = receiver.hits();
    let first_task = |hit: &Hit| serde_json::from_slice::<Value>(&hit.body).unwrap()["id"] == "t-1";
    let t1: Vec<_> = hits.iter().filter(|h| first_task(h)).collect();
    assert_eq!(
        t1.len(),
        2,
        "failed once before the restart, delivered after it"
    );
    assert_eq!(
        header(t1[0], "idempotency-key"),
        header(t1[1], "idempotency-key")
    );
    assert_eq!(
        hits.iter().filter(|h| !first_task(h)).count(),
        1,
        "t-2 was delivered by the new replica"
    );
}

#[tokio::test]
async fn a_delivery_held_by_a_dead_worker_is_delivered_by_another_after_its_lease() {
    let redis = RedisServer::start();
    let receiver = Receiver::start(vec![
        Answer::Slow(Duration::from_secs(30)),
        Answer::Status(200),
    ])
    .await;
    let settings = push_settings(|s| {
        s.store.backend = StoreBackend::Redis;
        s.store.redis_url = Some(redis.url());
        s.push.delivery_timeout_ms = 5_000;
        s.push.claim_lease_ms = 1_000 + 5_000;
    });
    let first = Push::open(&settings, "http://a2a.test").await.unwrap();
    let worker = first.spawn_worker();
    first
        .notifier()
        .enqueue(
            &Owner::of("", "a"),
            "t",
            &config(&receiver.url(), None),
            task_json("t"),
        )
        .await
        .unwrap();
    receiver.wait_for(1, Duration::from_secs(5)).await;
    drop(worker); // the replica dies mid-delivery
    let second = Push::open(&settings, "http://a2a.test").await.unwrap();
    let _worker = second.spawn_worker();
    let hits = receiver.wait_for(2, Duration::from_secs(12)).await;
    assert_eq!(
        header(&hits[0], "idempotency-key"),
        header(&hits[1], "idempotency-key")
    );
    wait_until_drained(&second, Duration::from_secs(2)).await;
}

async fn caps_hold(push: &Push) {
    let alice = Owner::of("", "alice");
    let url = "http://hooks.example.org/a2a";
    let notifier = push.notifier();
    for _ in 0..2 {
        notifier
            .enqueue(&alice, "t-1", &config(url, None), task_json("t-1"))
            .await
            .unwrap();
    }
    let refused = notifier
        .enqueue(&alice, "t-1", &config(url, None), task_json("t-1"))
        .await;
    assert!(
        matches!(refused, Err(PushError::QueueFull(CapReached::PerTask))),
        "{refused:?}"
    );
    notifier
        .enqueue(&alice, "t-2", &config(url, None), task_json("t-2"))
        .await
        .unwrap();
    let refused = notifier
        .enqueue(&alice, "t-3", &config(url, None), task_json("t-3"))
        .await;
    assert!(
        matches!(refused, Err(PushError::QueueFull(CapReached::PerOwner))),
        "{refused:?}"
    );
    let bob = Owner::of("", "bob");
    notifier
        .enqueue(&bob, "t-9", &config(url, None), task_json("t-9"))
        .await
        .unwrap();
    let refused = notifier
        .enqueue(
            &Owner::of("", "carol"),
            "t",
            &config(url, None),
            task_json("t"),
        )
        .await;
    assert!(
        matches!(refused, Err(PushError::QueueFull(CapReached::Total))),
        "{refused:?}"
    );
    let big = RawBytes::from(vec![b' '; 4097]);
    let refused = notifier.enqueue(&bob, "t-8", &config(url, None), big).await;
    assert!(
        matches!(refused, Err(PushError::PayloadTooLarge { .. })),
        "{refused:?}"
    );
    assert_eq!(push.pending().await.unwrap(), 4);
}

fn capped(settings: &mut Settings) {
    settings.push.max_pending_per_task = 2;
    settings.push.max_pending_per_owner = 3;
    settings.push.max_pending_total = 4;
    settings.push.max_payload_bytes = 4096;
}

#[tokio::test]
async fn pending_deliveries_are_capped_per_task_owner_and_in_all_in_memory() {
    let push = Push::open(&push_settings(capped), "http://a2a.test")
        .await
        .unwrap();
    caps_hold(&push).await;
}

#[tokio::test]
async fn pending_deliveries_are_capped_per_task_owner_and_in_all_in_redis() {
    let redis = RedisServer::start();
    let push = Push::open(
        &push_settings(|s| {
            capped(s);
            s.store.backend = StoreBackend::Redis;
            s.store.redis_url = Some(redis.url());
        }),
        "http://a2a.test",
    )
    .await
    .unwrap();
    caps_hold(&push).await;
}

async fn configs_behave(push: &Push) {
    let alice = Owner::of("", "alice");
    let bob = Owner::of("", "bob");
    let url = "https://hooks.example.org/a2a";
    let first = push
        .set_config(&alice, "t-1", config(url, Some("tok")), Version::V03)
        .await
        .unwrap();
    assert_eq!(first.push_notification_config.id.as_deref(), Some("t-1"));
    let mut named = config("https://other.example.org/", None);
    named.id = Some("a-second".into());
    push.set_config(&alice, "t-1", named.clone(), Version::V03)
        .await
        .unwrap();
    let listed = push.list_configs(&alice, "t-1").await.unwrap();
    let ids: Vec<_> = listed
        .iter()
        .map(|c| c.push_notification_config.id.clone().unwrap())
        .collect();
    assert_eq!(ids, ["a-second", "t-1"]);
    assert_eq!(
        push.get_config(&alice, "t-1", Some("t-1"))
            .await
            .unwrap()
            .unwrap()
            .push_notification_config
            .token
            .as_deref(),
        Some("tok")
    );
    assert!(
        push.get_config(&alice, "t-1", None)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        push.get_config(&alice, "t-1", Some("nope"))
            .await
            .unwrap()
            .is_none()
    );
    // Another owner sees none of them.
    assert!(push.list_configs(&bob, "t-1").await.unwrap().is_empty());
    assert!(push.get_config(&bob, "t-1", None).await.unwrap().is_none());
    assert!(!push.delete_config(&bob, "t-1", "t-1").await.unwrap());
    // The cap (2): a third is refused, replacing one is not.
    let mut third = config(url, None);
    third.id = Some("c-3".into());
    assert!(matches!(
        push.set_config(&alice, "t-1", third, Version::V03).await,
        Err(PushError::TooManyConfigs(2))
    ));
    named.url = "https://replaced.example.org/".into();
    push.set_config(&alice, "t-1", named, Version::V03)
        .await
        .unwrap();
    let replaced = push
        .get_config(&alice, "t-1", Some("a-second"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        replaced.push_notification_config.url,
        "https://replaced.example.org/"
    );
    // Bad configs never reach the store.
    assert!(matches!(
        push.set_config(
            &alice,
            "t-2",
            config("ftp://x.example/", None),
            Version::V03
        )
        .await,
        Err(PushError::InvalidConfig(_))
    ));
    assert!(push.list_configs(&alice, "t-2").await.unwrap().is_empty());
    assert!(push.delete_config(&alice, "t-1", "t-1").await.unwrap());
    assert!(!push.delete_config(&alice, "t-1", "t-1").await.unwrap());
    assert_eq!(push.list_configs(&alice, "t-1").await.unwrap().len(), 1);
}

#[tokio::test]
async fn push_configs_are_kept_per_owner_and_task_with_a_cap_in_memory() {
    let push = Push::open(
        &push_settings(|s| s.push.max_configs_per_task = 2),
        "http://a2a.test",
    )
    .await
    .unwrap();
    configs_behave(&push).await;
}

#[tokio::test]
async fn push_configs_are_kept_per_owner_and_task_with_a_cap_in_redis() {
    let redis = RedisServer::start();
    let push = Push::open(
        &push_settings(|s| {
            s.push.max_configs_per_task = 2;
            s.store.backend = StoreBackend::Redis;
            s.store.redis_url = Some(redis.url());
        }),
        "http://a2a.test",
    )
    .await
    .unwrap();
    configs_behave(&push).await;
}

#[tokio::test]
async fn bad_push_settings_stop_the_start_naming_the_key() {
    for (customize, key) in [
        (
            (|s: &mut Settings| s.push.max_attempts = 0) as fn(&mut Settings),
            "A2A__PUSH__MAX_ATTEMPTS",
        ),
        (
            |s: &mut Settings| s.push.claim_lease_ms = s.push.delivery_timeout_ms,
            "A2A__PUSH__CLAIM_LEASE_MS",
        ),
        (
            |s: &mut Settings| s.push.max_delay_ms = 1,
            "A2A__PUSH__MAX_DELAY_MS",
        ),
        (
            |s: &mut Settings| s.push.max_in_flight_per_owner = 0,
            "A2A__PUSH__MAX_IN_FLIGHT_PER_OWNER",
        ),
        (
            |s: &mut Settings| s.push.max_in_flight_per_host = 0,
            "A2A__PUSH__MAX_IN_FLIGHT_PER_HOST",
        ),
    ] {
        let mut settings = test_settings();
        customize(&mut settings);
        let message = settings.validate().unwrap_err().to_string();
        assert!(message.contains(key), "{message}");
    }
}
