//! Abuse: slow clients, oversized headers, connection floods, invalid-token floods and overload.
//! Each answer is quick and bounded, and the server keeps serving.

use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{call, send_body, spawn_app, uuid};

fn addr(base: &str) -> String {
    base.trim_start_matches("http://").to_string()
}

/// Reads until the peer closes or `limit` passes; returns what was read and whether it closed.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> (String, bool) {
    let mut buffer = Vec::new();
    let deadline = Instant::now() + limit;
    loop {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&buffer).into_owned(), true),
            Ok(Ok(n)) => buffer.extend_from_slice(&chunk[..n]),
            Err(_) => return (String::from_utf8_lossy(&buffer).into_owned(), false),
        }
    }
}

#[tokio::test]
async fn slow_clients_are_cut_off() {
    let app = spawn_app(|s| {
        s.server.header_read_timeout_secs = 1;
        s.server.body_read_timeout_secs = 1;
    })
    .await;
    // Headers that never finish.
    let mut slow = TcpStream::connect(addr(&app.base)).await.unwrap();
    slow.write_all(b"POST /api/v1/a2a HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let started = Instant::now();
    let (_, closed) = read_until_closed(&mut slow, Duration::from_secs(5)).await;
    assert!(
        closed,
        "a client that never finishes its headers is disconnected"
    );
    assert!(started.elapsed() < Duration::from_secs(4));

    // A body that never finishes.
    let token = app.token("slow-body", Plan::Pro);
    let mut slow = TcpStream::connect(addr(&app.base)).await.unwrap();
    let head = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{{\"jsonrpc\":"
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (answer, _) = read_until_closed(&mut slow, Duration::from_secs(5)).await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the body read is bounded"
    );
    assert!(answer.is_empty() || answer.contains("-32600"), "{answer}");

    let reply = app.send(&token, "test_echo", "still serving").await;
    assert_eq!(reply.status.as_u16(), 200);
}

#[tokio::test]
async fn oversized_headers_are_refused() {
    let app = spawn_app(|_| {}).await;
    let response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .header("x-padding", "a".repeat(64 * 1024))
        .header("content-type", "application/json")
        .body(call("tasks/get", json!({"id": "x"})).to_string())
        .send()
        .await;
    match response {
        Ok(response) => assert_eq!(response.status().as_u16(), 431),
        Err(error) => assert!(
            error.is_request() || error.is_connect() || error.to_string().contains("closed"),
            "{error}"
        ),
    }
    assert_eq!(app.get("/healthz").await.status.as_u16(), 200);
}

#[tokio::test]
async fn connections_are_capped_and_freed() {
    let app = spawn_app(|s| {
        s.server.max_connections = 2;
        s.server.header_read_timeout_secs = 30;
    })
    .await;
    let idle_a = TcpStream::connect(addr(&app.base)).await.unwrap();
    let idle_b = TcpStream::connect(addr(&app.base)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let blocked = tokio::time::timeout(
        Duration::from_millis(500),
        app.client.get(format!("{}/healthz", app.base)).send(),
    )
    .await;
    assert!(
        blocked.is_err(),
        "a third connection waits while two are open"
    );
    drop(idle_a);
    drop(idle_b);
    let freed = tokio::time::timeout(
        Duration::from_secs(3),
        app.client.get(format!("{}/healthz", app.base)).send(),
    )
    .await;
    assert_eq!(
        freed
            .expect("served once a slot is free")
            .unwrap()
            .status()
            .as_u16(),
        200
    );
}

#[tokio::test]
async fn an_invalid_token_flood_is_refused_per_address() {
    invalid_token_flood_on("/api/v1/a2a").await;
}

#[tokio::test]
async fn the_endpoint_with_a_trailing_slash_is_guarded_alike() {
    invalid_token_flood_on("/api/v1/a2a/").await;
}

async fn invalid_token_flood_on(path: &str) {
    let app = spawn_app(|s| s.server.failed_auth_per_minute_per_ip = 5).await;
    let forged = || async {
        let body = call("tasks/get", json!({"id": "x"})).to_string();
        app.post_raw_to(
            path,
            Some("forged.token.value"),
            Some("application/json"),
            body,
        )
        .await
    };
    for _ in 0..5 {
        assert_eq!(forged().await.status.as_u16(), 401);
    }
    let blocked = forged().await;
    assert_eq!(
        (blocked.status.as_u16(), blocked.code()),
        (429, -32003),
        "{path}"
    );
    assert_eq!(blocked.body["error"]["data"]["bucket"], "unauthenticated");
    let retry: u64 = blocked.header("retry-after").unwrap().parse().unwrap();
    assert!(
        (1..=12).contains(&retry),
        "5 a minute frees one every 12 s: {retry}"
    );
    assert_eq!(blocked.header("access-control-allow-origin"), Some("*"));
    // The card and health stay reachable.
    assert_eq!(
        app.get("/.well-known/agent.json").await.status.as_u16(),
        200
    );
}

#[tokio::test]
async fn overload_is_shed_quickly() {
    let app = spawn_app(|s| {
        s.server.max_in_flight = 2;
        s.server.request_timeout_secs = 1;
        s.limits.pro.default_per_minute = 100;
    })
    .await;
    let token = app.token("busy", Plan::Pro);
    let slow = |n: usize| {
        let client = app.client.clone();
        let url = format!("{}/api/v1/a2a", app.base);
        let body = send_body("test_slow", &format!("slow {n}"), &uuid()).to_string();
        let token = token.clone();
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap()
        })
    };
    let first = slow(1);
    let second = slow(2);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let shed = app.send(&token, "test_echo", "one too many").await;
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "shed at once, not queued"
    );
    assert_eq!((shed.status.as_u16(), shed.code()), (503, -32603));
    assert_eq!(shed.header("retry-after"), Some("1"));
    assert_eq!(shed.header("access-control-allow-origin"), Some("*"));
    assert!(
        shed.header("access-control-expose-headers")
            .is_some_and(|h| h.contains("Retry-After")),
        "a browser client can read why it was shed"
    );
    for slow in [first, second] {
        let reply: serde_json::Value = slow.await.unwrap().json().await.unwrap();
        assert_eq!(
            reply["result"]["status"]["state"], "failed",
            "a skill past its deadline fails its task"
        );
    }
    assert_eq!(
        app.send(&token, "test_echo", "after").await.status.as_u16(),
        200
    );
}

/// The same share on the HTTP+JSON binding: its calls hold slots of the same count, and the
/// call over the cap is refused at once as a `google.rpc.Status`.
#[tokio::test]
async fn calls_of_the_http_json_binding_hold_the_same_share_of_the_slots() {
    let app = spawn_app(two_slots_a_user).await;
    let trickler = app.token("rest-trickler", Plan::Enterprise);
    let send = "/api/v1/a2a/rest/message:send";
    let mut held = vec![
        trickled_call_to(&app.base, send, &trickler).await,
        trickled_call(&app.base, &trickler).await,
    ];
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut one_more = trickled_call_to(&app.base, send, &trickler).await;
    let mut answer = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(3), one_more.read(&mut answer))
        .await
        .expect("the call over the cap is answered at once, not after its body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).into_owned();
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(
        answer.contains("RESOURCE_EXHAUSTED") && answer.contains("\"in_flight\""),
        "a google.rpc.Status naming the bucket: {answer}"
    );
    assert!(!answer.contains("jsonrpc"), "{answer}");
    let bystander = app.token("rest-bystander", Plan::Pro);
    let reply = app.send(&bystander, "test_echo", "still served").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    held.clear();
    drop(one_more);
}

/// Three slots in all, two a user, and bodies that may take ten seconds.
pub(crate) fn two_slots_a_user(settings: &mut Settings) {
    settings.server.max_in_flight = 3;
    settings.server.max_in_flight_per_user = 2;
    settings.server.body_read_timeout_secs = 10;
}

/// Opens a call of `token` whose body never arrives: its head, then the first bytes of a
/// 500-byte body.
async fn trickled_call(base: &str, token: &str) -> TcpStream {
    trickled_call_to(base, "/api/v1/a2a", token).await
}

/// [`trickled_call`] to another path (an HTTP+JSON route).
async fn trickled_call_to(base: &str, path: &str, token: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr(base)).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{{\"jsonrpc\":"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

/// A paying user trickling bodies holds at most `max_in_flight_per_user` of the server's
/// `max_in_flight` slots: one call more is refused at once (429 `-32003`, bucket `in_flight`,
/// naming the cap), and another user is still served.
#[tokio::test]
async fn one_user_trickling_bodies_holds_at_most_its_share_of_the_slots() {
    let app = spawn_app(two_slots_a_user).await;
    let trickler = app.token("trickler", Plan::Enterprise);
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(trickled_call(&app.base, &trickler).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut one_more = trickled_call(&app.base, &trickler).await;
    let started = Instant::now();
    let mut answer = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(3), one_more.read(&mut answer))
        .await
        .expect("the call over the cap is answered at once, not after its body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]).into_owned();
    assert!(started.elapsed() < Duration::from_secs(1), "{answer}");
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(
        answer.contains("-32003") && answer.contains("\"in_flight\";q=2"),
        "the refusal names the cap: {answer}"
    );
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );

    let bystander = app.token("bystander", Plan::Pro);
    let reply = app.send(&bystander, "test_echo", "still served").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);

    drop(held);
    drop(one_more);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let reply = app.send(&trickler, "test_echo", "slots freed").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
}
