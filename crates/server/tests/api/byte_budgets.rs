//! Bytes, not counts: wherever a user can make the server hold memory, a budget in bytes bounds
//! it, each user has a share of it, and the refusal names the budget. Each test is an attack
//! scaled down: a client that never reads its stream (HTTP/2 with a window of one byte), pages
//! of large tasks, and one user filling the memory store.

use std::time::{Duration, Instant};

use bytes::Bytes;
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use crate::helpers::{
    RedisServer, TestApp, call, send_body, spawn_app, sse_events, uuid, with_redis,
};
use crate::streaming::events;

/// Text that makes the echo skill's task about three times its length as JSON (the message,
/// the answer and its data part each carry it). Random, so that stored tasks, which are kept
/// compressed, still take about two thirds of that (base64 of random bytes: 6 bits a character).
fn text_of(bytes: usize) -> String {
    use base64::Engine;
    let random: Vec<u8> = std::iter::repeat_with(|| *uuid::Uuid::new_v4().as_bytes())
        .flatten()
        .take(bytes * 3 / 4 + 3)
        .collect();
    let mut text = base64::engine::general_purpose::STANDARD_NO_PAD.encode(random);
    text.truncate(bytes);
    text
}

/// The HTTP+JSON binding's base path.
const REST: &str = "/api/v1/a2a/rest";

/// Settings every test here starts from: no rate limit (the attacks send many calls), the
/// rest as given.
pub(crate) fn unlimited(settings: &mut Settings) {
    settings.limits.enabled = Some(false);
}

/// A stored (completed) task of the echo skill of about `3 × text_bytes` bytes; its id.
async fn stored_task(app: &TestApp, token: &str, text_bytes: usize) -> String {
    let reply = app
        .rpc(
            Some(token),
            &send_body("test_echo", &text_of(text_bytes), &uuid()),
        )
        .await;
    reply.result()["id"].as_str().unwrap().to_string()
}

/// A task sent without waiting (so it has an event log, its first event the `submitted` task
/// of about `text_bytes` bytes), once it completed; its id.
pub(crate) async fn logged_task(app: &TestApp, token: &str, text_bytes: usize) -> String {
    let mut body = send_body("test_echo", &text_of(text_bytes), &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    let reply = app.rpc(Some(token), &body).await;
    let task_id = reply.result()["id"].as_str().unwrap().to_string();
    for _ in 0..100 {
        let read = app
            .rpc(Some(token), &call("tasks/get", json!({"id": task_id})))
            .await;
        if read.result()["status"]["state"] == "completed" {
            return task_id;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the task {task_id} did not complete");
}

/// An HTTP/2 stream of `tasks/resubscribe` whose client never reads: its window is `window`
/// bytes (0: the server can send nothing of the body; 1: it hands its first event to the
/// connection, which sends one byte of it and keeps the rest). The connection keeps answering
/// pings (it is polled on a task of its own). Returns the connection's task (it ends when the
/// server closes the connection) and what must live as long as the stream.
async fn stalled_stream(app: &TestApp, token: &str, task_id: &str, window: u32) -> Stalled {
    let body = call("tasks/resubscribe", json!({"id": task_id})).to_string();
    let request = axum::http::Request::post(format!("{}/api/v1/a2a", app.base))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(())
        .unwrap();
    stalled(app, request, Some(body), window).await
}

/// The HTTP+JSON twin of [`stalled_stream`]: `GET …/tasks/{id}:subscribe` resumed after the
/// task's first event (a new subscription of a finished task is refused on 1.0), so its first
/// event is the task's large answer.
async fn stalled_rest_stream(app: &TestApp, token: &str, task_id: &str, window: u32) -> Stalled {
    let request = axum::http::Request::get(format!("{}{REST}/tasks/{task_id}:subscribe", app.base))
        .header("authorization", format!("Bearer {token}"))
        .header("last-event-id", "0")
        .body(())
        .unwrap();
    stalled(app, request, None, window).await
}

/// Sends `request` (and `body`) on an HTTP/2 connection whose window is `window` bytes and
/// never reads the answer's body.
async fn stalled(
    app: &TestApp,
    request: axum::http::Request<()>,
    body: Option<String>,
    window: u32,
) -> Stalled {
    let address = app.base.trim_start_matches("http://").to_string();
    let tcp = TcpStream::connect(&address).await.unwrap();
    let (mut client, connection) = h2::client::Builder::new()
        .initial_window_size(window)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let connection = tokio::spawn(async move { connection.await.map_err(|e| e.to_string()) });
    let (response, mut send) = client.send_request(request, body.is_none()).unwrap();
    if let Some(body) = body {
        send.send_data(Bytes::from(body), true).unwrap();
    }
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("the answer's head arrives")
        .expect("an answer");
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"),
        "the stream was admitted"
    );
    // The server hands the first event to the connection once the window has room: give it
    // the time.
    tokio::time::sleep(Duration::from_millis(300)).await;
    Stalled {
        connection,
        _client: client,
        _body: response.into_body(),
    }
}

struct Stalled {
    connection: JoinHandle<Result<(), String>>,
    _client: h2::client::SendRequest<Bytes>,
    _body: h2::RecvStream,
}

/// What an answer's events say, short: each one's result kind or error code.
pub(crate) fn summary(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event.get("error") {
            Some(error) => format!("error {} {}", error["code"], error["data"]),
            None => format!("{}", event["result"]["kind"]),
        })
        .collect()
}

/// `tasks/resubscribe` read to its end over HTTP/1: the status and the events (or the one JSON
/// answer of a refusal).
pub(crate) async fn resubscribe(app: &TestApp, token: &str, task_id: &str) -> (u16, Vec<Value>) {
    let (status, _, events) = events(
        app,
        token,
        &call("tasks/resubscribe", json!({"id": task_id})),
    )
    .await;
    (status, events)
}

/// Settings of the stream-place tests: a place lapses after three keep-alives of a second.
pub(crate) fn one_place(settings: &mut Settings) {
    unlimited(settings);
    settings.tasks.keepalive_secs = 1;
    settings.tasks.max_streams_per_user = 1;
    settings.server.write_timeout_secs = 60;
}

#[tokio::test]
async fn a_stream_keeps_its_place_while_its_client_reads_nothing() {
    let app = spawn_app(one_place).await;
    a_stream_keeps_its_place(&app).await;
}

#[tokio::test]
async fn a_stream_keeps_its_place_while_its_client_reads_nothing_in_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        with_redis(redis.url())(s);
        one_place(s);
    })
    .await;
    a_stream_keeps_its_place(&app).await;
}

async fn a_stream_keeps_its_place(app: &TestApp) {
    let token = app.token("never-reads", Plan::Pro);
    let task_id = logged_task(app, &token, 50_000).await;
    let stalled = stalled_stream(app, &token, &task_id, 0).await;
    // Three keep-alive intervals: a place renewed only by the stream's own reads has lapsed.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    assert!(
        !stalled.connection.is_finished(),
        "the stream is still open"
    );
    let (status, answer) = resubscribe(app, &token, &task_id).await;
    assert_eq!(
        (status, answer[0]["error"]["code"].as_i64()),
        (429, Some(-32003)),
        "the stalled stream still holds the only place: {:?}",
        summary(&answer)
    );
    assert_eq!(answer[0]["error"]["data"]["bucket"], "streams");
}

/// A stalled stream of the HTTP+JSON binding holds its place as a JSON-RPC one does: the
/// user's next stream, on either binding, is refused for the cap, and nothing is started.
#[tokio::test]
async fn a_stream_of_the_http_json_binding_keeps_its_place_too() {
    let app = spawn_app(one_place).await;
    let token = app.token("rest-never-reads", Plan::Pro);
    let task_id = logged_task(&app, &token, 50_000).await;
    let stalled = stalled_rest_stream(&app, &token, &task_id, 0).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(
        !stalled.connection.is_finished(),
        "the stream is still open"
    );
    let (status, answer) = resubscribe(&app, &token, &task_id).await;
    assert_eq!(
        (status, answer[0]["error"]["data"]["bucket"].as_str()),
        (429, Some("streams")),
        "{:?}",
        summary(&answer)
    );
    let message = json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
        "parts": [{"text": "one more"}], "metadata": {"skillId": "test_echo"}}});
    let refused = app
        .client
        .post(format!("{}{REST}/message:stream", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(message.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["status"], "RESOURCE_EXHAUSTED", "{body}");
    assert_eq!(
        body["error"]["details"][0]["metadata"]["bucket"], "streams",
        "{body}"
    );
    let listed = app.rpc(Some(&token), &call("ListTasks", json!({}))).await;
    assert_eq!(
        listed.result()["tasks"].as_array().map(Vec::len),
        Some(1),
        "the refused stream started no task: {}",
        listed.body
    );
}

#[tokio::test]
async fn a_body_its_client_does_not_read_is_cut_at_the_write_deadline() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.tasks.max_streams_per_user = 1;
        s.server.write_timeout_secs = 2;
    })
    .await;
    let token = app.token("stalls", Plan::Pro);
    let task_id = logged_task(&app, &token, 50_000).await;
    let stalled = stalled_stream(&app, &token, &task_id, 0).await;
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(10), stalled.connection).await;
    assert!(
        closed.is_ok(),
        "the server closes a connection whose answer makes no progress"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "not before the deadline: {:?}",
        started.elapsed()
    );
    // Its place was given back: the same user streams again.
    let mut admitted = false;
    for _ in 0..20 {
        let (status, events) = resubscribe(&app, &token, &task_id).await;
        if status == 200 && events[0]["result"]["id"] == task_id.as_str() {
            admitted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(admitted, "the cut stream's place is free again");

    // A stream that waits for its task's events (the client reading) is not cut however long
    // the wait: the deadline is on the client, not on the task.
    let mut body = send_body("test_slow", "wait", &uuid());
    body["method"] = json!("message/stream");
    let (status, _, events) = events(&app, &token, &body).await;
    assert_eq!(status, 200);
    let last = &events.last().expect("events")["result"];
    assert_eq!(
        (last["final"].as_bool(), last["status"]["state"].as_str()),
        (Some(true), Some("failed")),
        "the slow task's stream ran to its end: {:?}",
        summary(&events)
    );
}

#[tokio::test]
async fn an_http1_answer_its_client_does_not_read_is_cut_at_the_write_deadline() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app(|s| {
        unlimited(s);
        s.server.write_timeout_secs = 2;
        s.store.max_list_page_bytes = 16 * 1024 * 1024;
    })
    .await;
    let token = app.token("lists-and-stalls", Plan::Pro);
    for _ in 0..40 {
        stored_task(&app, &token, 90_000).await;
    }
    // One page of ~11 MB (more than the kernel's buffers of a loopback connection hold),
    // asked for over a socket with a small receive buffer that is not read.
    let address = app.base.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(address).await.unwrap();
    let body = call(
        "ListTasks",
        json!({"pageSize": 100, "includeArtifacts": true}),
    )
    .to_string();
    let request = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    // Read what the server had handed over before the deadline, then the end of the
    // connection (or a reset): not the whole answer.
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server closed the connection");
    let head = String::from_utf8_lossy(&received[..received.len().min(400)]).to_string();
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length: "))
        .and_then(|value| value.trim().parse().ok())
        .expect("the answer's head, with its length");
    assert!(
        received.len() < length,
        "the answer was cut: {} of {length} bytes",
        received.len()
    );
}

#[tokio::test]
async fn open_streams_are_capped_in_bytes_per_user_and_in_all() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.tasks.max_stream_bytes_per_user = 80_000;
        s.tasks.max_stream_bytes = 120_000;
        s.server.write_timeout_secs = 60;
    })
    .await;
    let hoarder = app.token("hoarder", Plan::Pro);
    let big = logged_task(&app, &hoarder, 50_000).await;
    let _held = stalled_stream(&app, &hoarder, &big, 1).await;
    // The first stream holds its ~50 kB first event in its connection; one more event of that size would
    // pass the user's budget: the stream says so instead of sending it.
    let (status, events) = resubscribe(&app, &hoarder, &big).await;
    assert_eq!(status, 200);
    let error = &events.last().expect("an event")["error"];
    assert_eq!(error["code"], -32003, "{:?}", summary(&events));
    assert_eq!(error["data"]["budget"], "tasks.max_stream_bytes_per_user");
    assert!(
        events.iter().all(|event| event.get("result").is_none()),
        "the task was not sent: {:?}",
        summary(&events)
    );

    // Another user's stream of the same size goes through: its own share.
    let other = app.token("other", Plan::Pro);
    let own = logged_task(&app, &other, 50_000).await;
    let _other_held = stalled_stream(&app, &other, &own, 1).await;
    // Two users now hold ~100 kB; a third user's stream would pass the total.
    let third = app.token("third", Plan::Pro);
    let third_task = logged_task(&app, &third, 50_000).await;
    let (_, events) = resubscribe(&app, &third, &third_task).await;
    let error = &events.last().expect("an event")["error"];
    assert_eq!(error["code"], -32003, "{:?}", summary(&events));
    assert_eq!(error["data"]["budget"], "tasks.max_stream_bytes");
    // A small answer still fits.
    let small = logged_task(&app, &third, 100).await;
    let (status, events) = resubscribe(&app, &third, &small).await;
    assert_eq!(status, 200);
    assert_eq!(
        events[0]["result"]["id"],
        small.as_str(),
        "{:?}",
        summary(&events)
    );
}

/// The same budgets on the HTTP+JSON binding: its streams draw on the user's and the
/// replica's budgets with the JSON-RPC ones, and the refusal is a `google.rpc.Status` event
/// naming the budget.
#[tokio::test]
async fn open_streams_of_the_http_json_binding_are_capped_in_bytes_too() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.tasks.max_stream_bytes_per_user = 80_000;
        s.tasks.max_stream_bytes = 1_000_000;
        s.server.write_timeout_secs = 60;
    })
    .await;
    let hoarder = app.token("rest-hoarder", Plan::Pro);
    let big = logged_task(&app, &hoarder, 50_000).await;
    let _held = stalled_rest_stream(&app, &hoarder, &big, 1).await;
    // A JSON-RPC stream of the same user meets the budget its REST stream holds.
    let (status, events) = resubscribe(&app, &hoarder, &big).await;
    assert_eq!(status, 200);
    let error = &events.last().expect("an event")["error"];
    assert_eq!(
        error["data"]["budget"],
        "tasks.max_stream_bytes_per_user",
        "{:?}",
        summary(&events)
    );
    // And a second REST stream: its refusal in that binding's form.
    let response = app
        .client
        .get(format!("{}{REST}/tasks/{big}:subscribe", app.base))
        .bearer_auth(&hoarder)
        .header("last-event-id", "0")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = tokio::time::timeout(Duration::from_secs(20), response.text())
        .await
        .expect("the refused stream ends")
        .unwrap();
    let events = sse_events(&text);
    let last = events.last().expect("an event");
    assert!(last.get("jsonrpc").is_none(), "{text}");
    assert_eq!(last["error"]["status"], "RESOURCE_EXHAUSTED", "{text}");
    let info = &last["error"]["details"][0];
    assert_eq!(info["reason"], "RATE_LIMITED", "{text}");
    assert_eq!(
        info["metadata"]["budget"], "tasks.max_stream_bytes_per_user",
        "{text}"
    );
    assert!(
        events
            .iter()
            .all(|event| event.get("artifactUpdate").is_none()),
        "the answer was not sent: {text}"
    );
    // Another user is not affected.
    let other = app.token("rest-bystander", Plan::Pro);
    let own = logged_task(&app, &other, 100).await;
    let (status, events) = resubscribe(&app, &other, &own).await;
    assert_eq!(status, 200);
    assert_eq!(
        events[0]["result"]["id"],
        own.as_str(),
        "{:?}",
        summary(&events)
    );
}

async fn list_pages_are_capped_in_bytes(app: &TestApp) {
    let token = app.token("lister", Plan::Pro);
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(stored_task(app, &token, 30_000).await);
    }
    let mut listed = Vec::new();
    let mut page_token = String::new();
    let mut pages = 0;
    loop {
        let reply = app
            .rpc(
                Some(&token),
                &call(
                    "ListTasks",
                    json!({"pageSize": 100, "includeArtifacts": true, "pageToken": page_token}),
                ),
            )
            .await;
        let result = reply.result();
        let tasks = result["tasks"].as_array().unwrap();
        assert!(!tasks.is_empty(), "a page holds at least one task");
        assert!(
            reply.body.to_string().len() < 250_000,
            "a page stays near its budget: {} tasks",
            tasks.len()
        );
        assert_eq!(result["totalSize"], 5);
        listed.extend(tasks.iter().map(|t| t["id"].as_str().unwrap().to_string()));
        pages += 1;
        page_token = result["nextPageToken"].as_str().unwrap().to_string();
        if page_token.is_empty() {
            break;
        }
        assert!(pages < 10, "the pages end");
    }
    assert!(
        pages >= 3,
        "five tasks of ~90 kB in pages of 200 kB: {pages} pages"
    );
    listed.sort();
    ids.sort();
    assert_eq!(listed, ids, "every task once, across the pages");
}

#[tokio::test]
async fn list_pages_are_capped_in_bytes_in_memory() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.store.max_list_page_bytes = 200_000;
    })
    .await;
    list_pages_are_capped_in_bytes(&app).await;
}

#[tokio::test]
async fn list_pages_are_capped_in_bytes_in_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        with_redis(redis.url())(s);
        unlimited(s);
        s.store.max_list_page_bytes = 200_000;
    })
    .await;
    list_pages_are_capped_in_bytes(&app).await;
}

async fn get_code(app: &TestApp, token: &str, id: &str) -> i64 {
    app.rpc(Some(token), &call("tasks/get", json!({"id": id})))
        .await
        .code()
}

#[tokio::test]
async fn the_memory_store_is_capped_in_bytes_with_a_share_per_user() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.store.max_task_bytes = 200_000;
        s.store.memory_max_bytes_per_user = 600_000;
        s.store.memory_max_bytes = 1_500_000;
    })
    .await;
    let quiet = app.token("quiet", Plan::Pro);
    let quiet_tasks = [
        stored_task(&app, &quiet, 40_000).await,
        stored_task(&app, &quiet, 40_000).await,
    ];
    // One user sends far more than its share (~120 kB of JSON a task, ~30 kB stored: the text
    // is there three times, and compression keeps it about once): its own oldest tasks leave.
    let loud = app.token("loud", Plan::Pro);
    let mut loud_tasks = Vec::new();
    for _ in 0..30 {
        loud_tasks.push(stored_task(&app, &loud, 40_000).await);
    }
    assert_eq!(
        get_code(&app, &loud, &loud_tasks[0]).await,
        -32001,
        "the loud user's oldest task left for its share"
    );
    assert_eq!(get_code(&app, &loud, loud_tasks.last().unwrap()).await, 0);
    for id in &quiet_tasks {
        assert_eq!(
            get_code(&app, &quiet, id).await,
            0,
            "another user's task stays"
        );
    }
    // Non-blocking sends: their event logs (~125 kB each) count in a share of their own; past
    // it a log keeps its final status but leaves the answer's events out.
    let mut logged = Vec::new();
    for _ in 0..6 {
        logged.push(logged_task(&app, &loud, 40_000).await);
    }
    // The fourth log still fitted (the oldest tasks left the store for the share of tasks):
    // its answer is there, as the one whole artifact update a skill that does not stream sends.
    let (_, first) = resubscribe(&app, &loud, &logged[3]).await;
    let (_, last) = resubscribe(&app, &loud, logged.last().unwrap()).await;
    let artifacts = |events: &[Value]| {
        summary(events)
            .iter()
            .filter(|kind| kind.contains("artifact-update"))
            .count()
    };
    assert_eq!(artifacts(&first), 1, "{:?}", summary(&first));
    assert_eq!(artifacts(&last), 0, "{:?}", summary(&last));
    assert_eq!(last.last().unwrap()["result"]["final"], true);
    // Users within their shares fill the store: a new task past its total is refused, naming
    // the budget, and nobody's task is pushed out for it.
    let mut refused = None;
    let mut kept = Vec::new();
    for n in 0..6 {
        let user = app.token(&format!("filler-{n}"), Plan::Pro);
        for _ in 0..3 {
            let reply = app
                .rpc(
                    Some(&user),
                    &send_body("test_echo", &text_of(40_000), &uuid()),
                )
                .await;
            if reply.code() == 0 {
                kept.push((
                    user.clone(),
                    reply.result()["id"].as_str().unwrap().to_string(),
                ));
            } else {
                refused = Some(reply);
            }
        }
    }
    let refused = refused.expect("the store filled up");
    assert_eq!(refused.code(), -32003, "{}", refused.body["error"]);
    assert_eq!(
        refused.body["error"]["data"]["budget"], "store.memory_max_bytes",
        "{}",
        refused.body["error"]
    );
    for id in &quiet_tasks {
        assert_eq!(
            get_code(&app, &quiet, id).await,
            0,
            "the quiet user's tasks stay"
        );
    }
    for (user, id) in &kept {
        assert_eq!(get_code(&app, user, id).await, 0, "{id} stays");
    }
}

#[tokio::test]
async fn new_requests_on_a_connection_do_not_renew_a_stalled_answers_deadline() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.tasks.max_streams_per_user = 1;
        s.server.write_timeout_secs = 2;
    })
    .await;
    let token = app.token("stalls-and-pings", Plan::Pro);
    let task_id = logged_task(&app, &token, 50_000).await;
    let address = app.base.trim_start_matches("http://").to_string();
    let tcp = TcpStream::connect(&address).await.unwrap();
    let (mut client, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let mut connection = tokio::spawn(async move { connection.await.map_err(|e| e.to_string()) });
    let body = call("tasks/resubscribe", json!({"id": task_id})).to_string();
    let request = axum::http::Request::post(format!("{}/api/v1/a2a", app.base))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    send.send_data(Bytes::from(body), true).unwrap();
    let _stalled = response.await.expect("an answer");
    let started = Instant::now();
    let mut kept = Vec::new();
    while started.elapsed() < Duration::from_secs(7) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        if connection.is_finished() {
            break;
        }
        let ping = axum::http::Request::get(format!("{}/healthz", app.base))
            .body(())
            .unwrap();
        match client.clone().ready().await {
            Ok(mut ready) => match ready.send_request(ping, true) {
                Ok((answer, _)) => kept.push(answer),
                Err(_) => break,
            },
            Err(_) => break,
        }
    }
    let closed_within = tokio::time::timeout(Duration::from_millis(100), &mut connection).await;
    assert!(
        closed_within.is_ok(),
        "a stream stalled for {:?} (write timeout 2 s) is still open while the client sends a GET every 500 ms",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_large_answer_read_slowly_over_http2_is_not_cut() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.store.max_task_bytes = 1_000_000;
        s.server.write_timeout_secs = 2;
    })
    .await;
    let token = app.token("reads-slowly", Plan::Pro);
    let task_id = stored_task(&app, &token, 200_000).await;
    let tcp = TcpStream::connect(app.base.trim_start_matches("http://"))
        .await
        .unwrap();
    let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let request = axum::http::Request::post(format!("{}/api/v1/a2a", app.base))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .body(())
        .unwrap();
    let (response, mut send) = client.send_request(request, false).unwrap();
    let body = call("tasks/get", json!({"id": task_id})).to_string();
    send.send_data(Bytes::from(body), true).unwrap();
    let mut answer = response.await.unwrap().into_body();
    // The client takes a window's worth (64 KiB) every 400 ms: the whole answer takes longer
    // than the write timeout, but the client never stops taking it.
    let started = Instant::now();
    let mut received = Vec::new();
    while let Some(chunk) = answer.data().await {
        let chunk = chunk.expect("the answer is not cut");
        answer.flow_control().release_capacity(chunk.len()).unwrap();
        received.extend_from_slice(&chunk);
        if received.len() % 65_535 < chunk.len() {
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    }
    assert!(
        started.elapsed() > Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let answer: Value = serde_json::from_slice(&received).expect("the whole answer");
    assert_eq!(answer["result"]["id"], task_id.as_str());
}
