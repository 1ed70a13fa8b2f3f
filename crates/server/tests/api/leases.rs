//! The Redis limiter's leases (`limits.redis_lease_ms`): a bucket whose limit allows several
//! calls within the lease is charged that many at once in Redis, and the replica serves them
//! without asking again. Counted on Redis' `MONITOR` feed; two replicas on one Redis share one
//! limit to within a lease each.

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{LimitBackend, Settings};
use serde_json::json;

use crate::helpers::{
    MonitoredCommand, RedisMonitor, RedisServer, Reply, TestApp, call, send_body, spawn_app, uuid,
    with_redis,
};

/// The Redis store and the Redis limiter on one Redis: `per_minute` calls a minute in the pro
/// plan's default bucket and in the read bucket, leases of `lease_ms`; the push worker's idle
/// poll kept out of the counts.
fn leasing(url: String, per_minute: u32, lease_ms: u64) -> impl FnOnce(&mut Settings) {
    move |s: &mut Settings| {
        with_redis(url)(s);
        s.limits.backend = LimitBackend::Redis;
        s.limits.pro.default_per_minute = per_minute;
        s.limits.reads_per_minute = per_minute;
        s.limits.redis_lease_ms = lease_ms;
        s.push.poll_interval_ms = 3_600_000;
    }
}

/// Scripts a client called on a rate-limit bucket's key. A script Redis did not know yet is
/// answered `NOSCRIPT`, loaded and called again: the call a `SCRIPT LOAD` follows is not counted.
fn bucket_round_trips(commands: &[MonitoredCommand]) -> usize {
    let sent: Vec<&MonitoredCommand> = commands.iter().filter(|c| !c.from_script).collect();
    sent.iter()
        .zip(sent.iter().skip(1).map(Some).chain([None]))
        .filter(|(c, next)| {
            c.name() == "EVALSHA"
                && c.touches(":rl:")
                && !next.is_some_and(|next| next.name() == "SCRIPT")
        })
        .count()
}

async fn get_task(app: &TestApp, token: &str, id: &serde_json::Value) -> Reply {
    app.rpc(Some(token), &call("tasks/get", json!({"id": id})))
        .await
}

/// At 600,000 calls a minute a one-second lease holds 256 calls (the most one holds): twenty sends
/// and twenty reads ask Redis for their buckets once each, the sends' messages are not looked
/// up on their own, and every send's answer counts down by one.
#[tokio::test]
async fn a_leased_bucket_asks_redis_once_for_many_calls() {
    let redis = RedisServer::start();
    let app = spawn_app(leasing(redis.url(), 600_000, 1_000)).await;
    let token = app.token("leaseholder", Plan::Pro);
    let monitor = RedisMonitor::start(&redis).await;
    let mut sent = Vec::new();
    for i in 0..20u64 {
        let reply = app.send(&token, "test_echo", &format!("call {i}")).await;
        assert_eq!(
            reply.result()["status"]["state"],
            "completed",
            "{}",
            reply.body
        );
        assert_eq!(reply.remaining(), 600_000 - 1 - i, "call {i}");
        sent.push(reply.result()["id"].clone());
    }
    for id in &sent {
        let read = get_task(&app, &token, id).await;
        assert_eq!(&read.result()["id"], id, "{}", read.body);
    }
    let commands = monitor.take().await;
    assert_eq!(
        bucket_round_trips(&commands),
        2,
        "one lease per bucket: {commands:?}"
    );
    assert!(
        !commands
            .iter()
            .any(|c| !c.from_script && c.name() == "GET" && c.touches(":msg:")),
        "a leased send's save alone tells a message seen before"
    );
}

/// A message sent again on the leased path answers with its task and gives its call back to
/// the lease: the next new message is charged as if the resend had not been made. The resend
/// holds its owner on the look-up-first path for the lease's span, so another resend within it
/// is looked up, not run, however high the limit.
#[tokio::test]
async fn a_resend_on_a_leased_bucket_is_answered_uncharged() {
    let redis = RedisServer::start();
    let app = spawn_app(leasing(redis.url(), 600_000, 1_000)).await;
    let token = app.token("resender", Plan::Pro);
    let body = send_body("test_echo", "once", &uuid());
    let first = app.rpc(Some(&token), &body).await;
    assert_eq!(first.remaining(), 599_999, "{}", first.body);
    let again = app.rpc(Some(&token), &body).await;
    assert_eq!(again.result()["id"], first.result()["id"], "{}", again.body);
    assert_eq!(again.header("ratelimit"), None, "answered uncharged");

    let monitor = RedisMonitor::start(&redis).await;
    let third = app.rpc(Some(&token), &body).await;
    let commands = monitor.take().await;
    assert_eq!(third.result()["id"], first.result()["id"], "{}", third.body);
    assert!(
        commands
            .iter()
            .any(|c| !c.from_script && c.name() == "GET" && c.touches(":msg:")),
        "looked up first: {commands:?}"
    );
    assert!(
        !commands.iter().any(|c| c.name() == "EVALSHA"),
        "neither charged nor saved again: {commands:?}"
    );

    let next = app.send(&token, "test_echo", "the next one").await;
    assert_eq!(next.result()["status"]["state"], "completed");
    assert_eq!(
        next.remaining(),
        599_998,
        "the resend's call was given back"
    );
}

/// Two replicas on one Redis, a bucket of 240 reads a minute leased 4 at a time (1 s of its
/// rate): reads alternating between them are served up to the limit in all (and the calls
/// freed up while they ran), never past it, and never refused before the limit less a lease
/// per replica.
#[tokio::test]
async fn two_replicas_share_a_leased_limit_to_within_a_lease_each() {
    let redis = RedisServer::start();
    let first = spawn_app(leasing(redis.url(), 240, 1_000)).await;
    let second = spawn_app(leasing(redis.url(), 240, 1_000)).await;
    let token = first.token("two-replicas", Plan::Pro);
    let task = first.send(&token, "test_echo", "read me").await;
    let id = task.result()["id"].clone();
    let (mut served, mut refused) = (0u64, 0u64);
    let started = std::time::Instant::now();
    for i in 0..300 {
        let replica = if i % 2 == 0 { &first } else { &second };
        let read = get_task(replica, &token, &id).await;
        match read.status.as_u16() {
            200 if read.body["result"]["id"] == id => served += 1,
            429 => {
                assert_eq!(read.code(), -32003, "{}", read.body);
                refused += 1;
            }
            status => panic!("read {i}: {status} {}", read.body),
        }
    }
    // One read frees up every 250 ms.
    let freed = started.elapsed().as_millis() as u64 / 250 + 1;
    assert_eq!(served + refused, 300);
    assert!(
        (240 - 2 * 4..=240 + freed).contains(&served),
        "{served} reads served of a limit of 240 ({freed} freed up while they ran)"
    );
}
