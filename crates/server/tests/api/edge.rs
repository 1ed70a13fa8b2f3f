//! The edge facing the internet: no client, with or without a token, can hold the server's
//! connections or calls, lock other users out, make one call do unbounded work, or forge log
//! lines. Each test plays the attacker over real sockets.

use std::process::Stdio;
use std::time::{Duration, Instant};

use magisterium_a2a::auth::{Plan, mint_hs256};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::helpers::{SECRET, TestApp, call, send_body, spawn_app, test_settings, uuid};

fn addr(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_string()
}

/// Waits until the peer closes the socket; `false` if it is still open after `limit`.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    let mut chunk = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
    }
}

/// Reads the status line of the first response, if one arrives within `limit`.
async fn status_within(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut buffer = Vec::new();
    let deadline = Instant::now() + limit;
    let mut chunk = [0u8; 4096];
    while !buffer.windows(2).any(|w| w == b"\r\n") {
        match tokio::time::timeout_at(deadline.into(), stream.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => return None,
            Ok(Ok(n)) => buffer.extend_from_slice(&chunk[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buffer);
    text.lines().next().map(str::to_owned)
}

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// An empty HTTP/2 SETTINGS frame: with the preface, an established HTTP/2 connection that
/// never sends a request.
const H2_EMPTY_SETTINGS: &[u8] = &[0, 0, 0, 4, 0, 0, 0, 0, 0];

#[tokio::test]
async fn connections_that_never_send_a_request_head_are_closed_at_the_header_deadline() {
    let app = spawn_app(|s| {
        s.server.max_connections = 6;
        s.server.header_read_timeout_secs = 1;
    })
    .await;
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(addr(&app)).await.unwrap());
    }
    // Fewer bytes than the protocol detection reads.
    let mut partial = TcpStream::connect(addr(&app)).await.unwrap();
    partial.write_all(b"PRI * HT").await.unwrap();
    silent.push(partial);
    // HTTP/2 without TLS: the preface alone, then the preface and a SETTINGS frame.
    let mut preface = TcpStream::connect(addr(&app)).await.unwrap();
    preface.write_all(H2_PREFACE).await.unwrap();
    silent.push(preface);
    let mut settled = TcpStream::connect(addr(&app)).await.unwrap();
    settled.write_all(H2_PREFACE).await.unwrap();
    settled.write_all(H2_EMPTY_SETTINGS).await.unwrap();
    silent.push(settled);

    let started = Instant::now();
    let health = tokio::time::timeout(
        Duration::from_secs(4),
        app.client.get(format!("{}/healthz", app.base)).send(),
    )
    .await;
    assert_eq!(
        health
            .expect("every slot is freed once the header deadline passes")
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    for (index, stream) in silent.iter_mut().enumerate() {
        assert!(
            closed_within(stream, Duration::from_secs(3)).await,
            "connection {index} is closed at the header deadline"
        );
    }
    assert!(started.elapsed() < Duration::from_secs(6));
}

#[tokio::test]
async fn an_http2_connection_idle_after_its_requests_is_closed() {
    let app = spawn_app(|s| s.server.header_read_timeout_secs = 1).await;
    let tcp = TcpStream::connect(addr(&app)).await.unwrap();
    let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
    let connection = tokio::spawn(connection);
    for _ in 0..2 {
        let request = axum::http::Request::get(format!("{}/healthz", app.base))
            .body(())
            .unwrap();
        let (response, _) = client.send_request(request, true).unwrap();
        let response = response.await.unwrap();
        assert_eq!(response.status(), 200);
        let mut body = response.into_body();
        while body.data().await.is_some() {}
    }
    let idle = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(4), connection).await;
    assert!(
        closed.is_ok(),
        "the server closes an idle HTTP/2 connection"
    );
    assert!(
        idle.elapsed() >= Duration::from_millis(900),
        "not before the idle deadline: {:?}",
        idle.elapsed()
    );
    drop(client);
}

#[tokio::test]
async fn a_request_without_a_valid_token_is_answered_401_without_waiting_for_its_body() {
    let app = spawn_app(|s| s.server.body_read_timeout_secs = 10).await;
    for authorization in ["", "Authorization: Bearer forged.token.value\r\n"] {
        let mut stream = TcpStream::connect(addr(&app)).await.unwrap();
        let head = format!(
            "POST /api/v1/a2a HTTP/1.1\r\nHost: x\r\n{authorization}Content-Type: application/json\r\nContent-Length: 500\r\n\r\n"
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        let started = Instant::now();
        let status = status_within(&mut stream, Duration::from_secs(3)).await;
        assert_eq!(
            status.as_deref(),
            Some("HTTP/1.1 401 Unauthorized"),
            "{authorization:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}

#[tokio::test]
async fn a_trickled_body_is_cut_at_the_whole_body_deadline() {
    let app = spawn_app(|s| s.server.body_read_timeout_secs = 2).await;
    let token = app.token("trickle", Plan::Pro);
    let mut stream = TcpStream::connect(addr(&app)).await.unwrap();
    let head = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for _ in 0..40 {
            if writer.write_all(b" ").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(8), async {
        let mut chunk = [0u8; 4096];
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    answer.extend_from_slice(&chunk[..n]);
                    if answer.windows(4).any(|w| w == b"\r\n\r\n") {
                        return;
                    }
                }
            }
        }
    })
    .await;
    trickle.abort();
    assert!(read.is_ok(), "a body trickled a byte at a time is cut off");
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(4),
        "the deadline is for the whole body: {took:?}"
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
}

async fn tasks_get_from(app: &TestApp, token: &str, forwarded_for: &str) -> (u16, i64) {
    let response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("x-forwarded-for", forwarded_for)
        .body(call("tasks/get", json!({"id": "nothing"})).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (status, body["error"]["code"].as_i64().unwrap_or(0))
}

#[tokio::test]
async fn a_verified_token_is_never_refused_by_the_failed_authentication_budget() {
    let app = spawn_app(|s| s.server.failed_auth_per_minute_per_ip = 3).await;
    for _ in 0..4 {
        app.rpc(
            Some("forged.token.value"),
            &call("tasks/get", json!({"id": "x"})),
        )
        .await;
    }
    let blocked = app
        .rpc(
            Some("forged.token.value"),
            &call("tasks/get", json!({"id": "x"})),
        )
        .await;
    assert_eq!((blocked.status.as_u16(), blocked.code()), (429, -32003));
    assert!(
        blocked
            .header("access-control-expose-headers")
            .is_some_and(|h| h.contains("Retry-After") && h.contains("RateLimit-Policy")),
        "the guard's refusals carry the CORS headers: {:?}",
        blocked.headers
    );
    let honest = app.token("honest", Plan::Pro);
    let reply = app.send(&honest, "test_echo", "same address").await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    // Without a token the budget still applies.
    let anonymous = app.rpc(None, &call("tasks/get", json!({"id": "x"}))).await;
    assert_eq!(anonymous.status.as_u16(), 429);
}

#[tokio::test]
async fn the_client_address_is_the_rightmost_forwarded_hop_that_is_not_a_trusted_proxy() {
    let app = spawn_app(|s| {
        s.server.failed_auth_per_minute_per_ip = 2;
        s.server.trusted_proxies = "127.0.0.0/8, 10.0.0.0/8".into();
    })
    .await;
    let forged = "forged.token.value";
    // The attacker (198.51.100.9, as the proxy 10.0.0.2 saw it) writes a victim's address, then
    // a new one each time, in front of the header: neither is believed. Two failures spend
    // the budget.
    for i in 0..2 {
        let hops = format!("203.0.113.5, 192.0.2.{i}, 198.51.100.9, 10.0.0.2");
        let (status, _) = tasks_get_from(&app, forged, &hops).await;
        assert_eq!(status, 401, "request {i}");
    }
    let (status, code) = tasks_get_from(&app, forged, "192.0.2.77, 198.51.100.9").await;
    assert_eq!(
        (status, code),
        (429, -32003),
        "the budget follows the real client"
    );
    let (status, _) = tasks_get_from(&app, forged, "203.0.113.5").await;
    assert_eq!(status, 401, "the victim is not locked out");

    // IPv6 clients are budgeted per /64.
    for host in ["2001:db8::1", "2001:db8::2", "2001:db8::3"] {
        tasks_get_from(&app, forged, host).await;
    }
    let (status, _) = tasks_get_from(&app, forged, "2001:db8::ffff").await;
    assert_eq!(status, 429, "another address of the same /64");
    let (status, _) = tasks_get_from(&app, forged, "2001:db8:0:1::1").await;
    assert_eq!(status, 401, "another /64");
}

#[tokio::test]
async fn an_untrusted_peer_cannot_choose_its_address() {
    let app = spawn_app(|s| {
        s.server.failed_auth_per_minute_per_ip = 2;
        s.server.trusted_proxies = "10.0.0.0/8".into();
    })
    .await;
    for i in 0..3 {
        tasks_get_from(&app, "forged.token.value", &format!("192.0.2.{i}")).await;
    }
    let (status, _) = tasks_get_from(&app, "forged.token.value", "192.0.2.200").await;
    assert_eq!(
        status, 429,
        "a peer that is not a trusted proxy is the client"
    );
}

#[tokio::test]
async fn a_limited_call_carries_the_rate_limit_headers() {
    let app = spawn_app(|s| s.limits.pro.default_per_minute = 1).await;
    let token = app.token("limited", Plan::Pro);
    assert_eq!(
        app.send(&token, "test_echo", "one").await.status.as_u16(),
        200
    );
    let refused = app.send(&token, "test_echo", "two").await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, -32003));
    assert_eq!(
        refused.header("ratelimit-policy"),
        Some("\"default\";q=1;w=60")
    );
    let current = refused.header("ratelimit").expect("RateLimit");
    assert!(current.starts_with("\"default\";r=0;t="), "{current}");
    let exposed = refused.header("access-control-expose-headers").unwrap();
    for name in [
        "Retry-After",
        "RateLimit",
        "RateLimit-Policy",
        "WWW-Authenticate",
    ] {
        assert!(exposed.contains(name), "{exposed}");
    }
}

#[tokio::test]
async fn reads_have_a_budget_of_their_own() {
    let app = spawn_app(|s| s.limits.reads_per_minute = 3).await;
    let token = app.token("reader", Plan::Pro);
    let task = app.send(&token, "test_echo", "to read").await;
    let id = task.result()["id"].clone();
    for _ in 0..3 {
        let got = app
            .rpc(Some(&token), &call("tasks/get", json!({"id": id})))
            .await;
        assert_eq!(got.status.as_u16(), 200, "{}", got.body);
    }
    let refused = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": id})))
        .await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, -32003));
    assert_eq!(refused.body["error"]["data"]["bucket"], "read");
    assert!(refused.header("retry-after").is_some());
    let cancel = app
        .rpc(Some(&token), &call("tasks/cancel", json!({"id": id})))
        .await;
    assert_eq!(cancel.status.as_u16(), 429, "tasks/cancel reads too");
    // Another user, and this user's sends, are not touched.
    let other = app.token("other-reader", Plan::Pro);
    let got = app
        .rpc(Some(&other), &call("tasks/get", json!({"id": id})))
        .await;
    assert_eq!(got.code(), -32001);
    assert_eq!(
        app.send(&token, "test_echo", "still sending")
            .await
            .status
            .as_u16(),
        200
    );
}

#[tokio::test]
async fn a_search_query_longer_than_the_cap_is_refused_naming_the_limit() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("searcher", Plan::Pro);
    let long = "grace ".repeat(200);
    for body in [
        send_body("document_search", &long, &uuid()),
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
            "kind": "message", "messageId": uuid(), "role": "user",
            "parts": [{"kind": "data", "data": {"query": long}}],
            "metadata": {"skillId": "document_search"}}}}),
    ] {
        let reply = app.rpc(Some(&token), &body).await;
        assert_eq!(reply.code(), -32602, "{}", reply.body);
        let message = reply.body["error"]["message"].as_str().unwrap();
        assert!(message.contains("1024 characters"), "{message}");
    }
    let fine = app
        .send(&token, "document_search", &"grace ".repeat(170))
        .await;
    assert_eq!(fine.result()["kind"], "task");
}

#[tokio::test]
async fn a_continuation_past_the_stored_size_cap_is_refused_and_the_task_kept() {
    let app = spawn_app(|s| s.store.max_task_bytes = 8 * 1024).await;
    let token = app.token("talker", Plan::Enterprise);
    let turn = "x".repeat(1000);
    let first = app.send(&token, "test_echo", &turn).await;
    let task_id = first.result()["id"].as_str().unwrap().to_string();
    let mut turns = 1;
    let refused = loop {
        let mut body = send_body("test_echo", &turn, &uuid());
        body["params"]["message"]["taskId"] = json!(task_id);
        let reply = app.rpc(Some(&token), &body).await;
        if reply.body.get("error").is_some() {
            break reply;
        }
        turns += 1;
        assert!(turns < 20, "the task grows without bound");
    };
    assert_eq!(refused.code(), -32602, "{}", refused.body);
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("8192 bytes"), "{message}");
    let stored = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(
        stored.result()["history"].as_array().unwrap().len(),
        2 * turns,
        "every turn stored before the refusal is kept"
    );
}

#[tokio::test]
async fn user_supplied_strings_cannot_forge_or_flood_log_lines() {
    let data = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .arg("serve")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("A2A__SERVER__BIND", "127.0.0.1:0")
        .env("A2A__AUTH__HS256_SECRET", SECRET)
        .env("A2A__DATA__DIR", data.path())
        .env("A2A__LOG__LEVEL", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let listening = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let url = listening
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap()
        .trim_end_matches(',')
        .to_string();
    let settings = test_settings();
    let token = mint_hs256(
        &settings.auth,
        SECRET,
        "logger",
        Plan::Pro,
        Duration::from_secs(60),
    )
    .unwrap();
    let forged = format!(
        "x\nFORGED ERROR admin logged in\r\u{1b}[2J{}",
        "y".repeat(10_000)
    );
    let client = crate::helpers::http_client();
    for body in [call(&forged, json!({})), send_body(&forged, "hi", &uuid())] {
        let reply = client
            .post(&url)
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status().as_u16(), 200);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stderr = crate::helpers::stop_and_read_stderr(child).await;
    assert!(stderr.contains("refused"), "{stderr}");
    for line in stderr.lines() {
        let start: String = line.chars().take(120).collect();
        assert!(!line.starts_with("FORGED"), "a forged log line: {start}");
        assert!(!line.contains('\u{1b}'), "a raw escape: {start}");
        assert!(
            line.len() < 1200,
            "a flooded log line: {} bytes",
            line.len()
        );
    }
}

/// Plays an HTTP client on an OS thread and runtime of its own, as a client in another
/// process is: POSTs a body of `size` bytes and returns the status and body it reads, or the
/// error it met instead (a reset while it was still writing the body).
fn post_body_from_another_thread(
    url: &str,
    token: &str,
    size: usize,
) -> Result<(u16, Value), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let response = crate::helpers::http_client()
            .post(url)
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(vec![b' '; size])
            .send()
            .await
            .map_err(|e| format!("{e:?}"))?;
        let status = response.status().as_u16();
        let body = response.json().await.map_err(|e| format!("{e:?}"))?;
        Ok((status, body))
    })
}

#[tokio::test]
async fn a_client_still_writing_a_refused_body_reads_the_whole_413() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("linger", Plan::Pro);
    let url = format!("{}/api/v1/a2a", app.base);
    let address = addr(&app);
    for attempt in 0..20 {
        let (url, bearer) = (url.clone(), token.clone());
        let reply = tokio::task::spawn_blocking(move || {
            post_body_from_another_thread(&url, &bearer, 10 * 1024 * 1024)
        })
        .await
        .unwrap();
        let (status, body) =
            reply.unwrap_or_else(|e| panic!("attempt {attempt}: the refusal is lost: {e}"));
        assert_eq!(
            (status, body["error"]["code"].as_i64()),
            (413, Some(-32600))
        );

        let (address, bearer) = (address.clone(), token.clone());
        let (answer, error) = tokio::task::spawn_blocking(move || {
            post_declared_body_from_another_thread(&address, &bearer, 10 * 1024 * 1024)
        })
        .await
        .unwrap();
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            answer.starts_with("HTTP/1.1 413 "),
            "attempt {attempt}: the refusal is read, not lost to a reset ({error:?}): {answer:?}"
        );
        let (_, body) = answer.split_once("\r\n\r\n").expect("a complete head");
        let body: Value = serde_json::from_str(body).unwrap_or_else(|e| {
            panic!("attempt {attempt}: the whole JSON-RPC body arrives ({e}, {error:?}): {body:?}")
        });
        assert_eq!(body["error"]["code"], -32600, "attempt {attempt}");
    }
}

/// Plays a client on an OS thread of its own: sends the head of a POST declaring
/// `Content-Length: declared`, writes the body as fast as it can (stopping at the first write
/// error: the server may refuse it unread), then reads until the server closes. Returns what
/// was read, and the read error if the connection was reset.
fn post_declared_body_from_another_thread(
    address: &str,
    token: &str,
    declared: usize,
) -> (Vec<u8>, Option<std::io::Error>) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let head = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {declared}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).unwrap();
    let chunk = vec![b' '; 64 * 1024];
    let mut written = 0;
    while written < declared {
        let size = chunk.len().min(declared - written);
        match stream.write(&chunk[..size]) {
            Ok(n) => written += n,
            Err(_) => break,
        }
    }
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return (answer, None),
            Ok(n) => answer.extend_from_slice(&buffer[..n]),
            Err(error) => return (answer, Some(error)),
        }
    }
}

#[tokio::test]
async fn a_refused_client_that_keeps_sending_is_cut_off_after_the_linger() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("linger-forever", Plan::Pro);
    let mut stream = TcpStream::connect(addr(&app)).await.unwrap();
    let head = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    assert_eq!(
        status_within(&mut stream, Duration::from_secs(3))
            .await
            .as_deref(),
        Some("HTTP/1.1 413 Payload Too Large")
    );
    let started = Instant::now();
    let cut_off = tokio::time::timeout(Duration::from_secs(6), async {
        while stream.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        cut_off.is_ok(),
        "a client trickling a refused body cannot hold the connection"
    );
    let held = started.elapsed();
    assert!(
        held >= Duration::from_secs(1),
        "the connection lingers before it closes: {held:?}"
    );
}

/// Opens an event stream; its events as they arrive, then `Err` if the connection was closed
/// before the stream's end.
async fn open_stream(
    app: &TestApp,
    token: &str,
    body: &Value,
) -> tokio::sync::mpsc::UnboundedReceiver<Result<Value, String>> {
    let mut response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request");
    let (events, received) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut pending = String::new();
        loop {
            match response.chunk().await {
                Ok(Some(bytes)) => {
                    pending.push_str(&String::from_utf8_lossy(&bytes));
                    while let Some(end) = pending.find("\n\n") {
                        let block: String = pending.drain(..end + 2).collect();
                        if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) {
                            let event = serde_json::from_str(data.trim()).expect("JSON");
                            let _ = events.send(Ok(event));
                        }
                    }
                }
                Ok(None) => return,
                Err(error) => {
                    let _ = events.send(Err(format!("cut before its end: {error:?}")));
                    return;
                }
            }
        }
    });
    received
}

/// The last event of a stream, once it has ended.
async fn last_event(
    name: &str,
    mut events: tokio::sync::mpsc::UnboundedReceiver<Result<Value, String>>,
) -> Value {
    let mut last = None;
    loop {
        match tokio::time::timeout(Duration::from_secs(20), events.recv()).await {
            Ok(Some(Ok(event))) => last = Some(event),
            Ok(Some(Err(error))) => panic!("{name}: {error}"),
            Ok(None) => return last.unwrap_or_else(|| panic!("{name}: no event")),
            Err(_) => panic!("{name}: the stream did not end"),
        }
    }
}

#[tokio::test]
async fn an_open_stream_outlives_the_idle_deadline_until_its_final_event() {
    // The task works five seconds; the idle deadline is one second, and an idle connection is
    // closed within two: a stream still sending is not idle.
    let app = spawn_app(|s| s.server.header_read_timeout_secs = 1).await;
    let token = app.token("patient", Plan::Pro);
    let mut body = send_body("test_slow", "take your time", &uuid());
    body["method"] = json!("message/stream");
    let sent = Instant::now();
    let mut streamed = open_stream(&app, &token, &body).await;
    let first = streamed
        .recv()
        .await
        .expect("a first event")
        .expect("the task");
    let task_id = first["result"]["id"].as_str().expect("the task's id");
    let resubscribe = call("tasks/resubscribe", json!({"id": task_id}));
    let followed = open_stream(&app, &token, &resubscribe).await;
    let followed = last_event("tasks/resubscribe", followed).await;
    let streamed = last_event("message/stream", streamed).await;
    assert!(
        sent.elapsed() >= Duration::from_secs(4),
        "the streams lasted past twice the idle deadline: {:?}",
        sent.elapsed()
    );
    for (name, last) in [
        ("message/stream", streamed),
        ("tasks/resubscribe", followed),
    ] {
        assert_eq!(last["result"]["final"], true, "{name}: {last}");
        assert_eq!(
            last["result"]["status"]["state"], "failed",
            "{name}: {last}"
        );
    }
}

#[tokio::test]
async fn a_keep_alive_connection_idle_after_a_stream_is_closed_at_the_deadline() {
    let app = spawn_app(|s| s.server.header_read_timeout_secs = 1).await;
    let token = app.token("idler", Plan::Pro);
    let mut body = send_body("test_echo", "short", &uuid());
    body["method"] = json!("message/stream");
    let body = body.to_string();
    let mut tcp = TcpStream::connect(addr(&app)).await.unwrap();
    let request = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    while !received.ends_with(b"\r\n0\r\n\r\n") {
        let read = tokio::time::timeout(Duration::from_secs(10), tcp.read(&mut chunk))
            .await
            .expect("the stream ends")
            .unwrap();
        assert!(read > 0, "the connection stays open after the stream");
        received.extend_from_slice(&chunk[..read]);
    }
    assert!(String::from_utf8_lossy(&received).contains("\"final\":true"));
    let idle = Instant::now();
    assert!(
        closed_within(&mut tcp, Duration::from_secs(4)).await,
        "the server closes the connection idle after its stream"
    );
    assert!(
        idle.elapsed() >= Duration::from_millis(900),
        "not before the idle deadline: {:?}",
        idle.elapsed()
    );
}
