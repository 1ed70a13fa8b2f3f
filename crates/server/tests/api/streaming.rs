//! The task lifecycle through the endpoint: streamed answers and resubscription as Server-Sent
//! Events, non-blocking sends read while they work, cancelling a working task, on both wires,
//! both stores, and two replicas on one Redis.

use std::time::Duration;

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{
    RedisServer, TestApp, call, reply, send_body, spawn_app, sse_events, uuid, with_redis,
};

/// POSTs a call and reads its whole answer: the status, the content type and, for an event
/// stream, every event's JSON (keep-alive comments left out).
pub async fn events(app: &TestApp, token: &str, body: &Value) -> (u16, String, Vec<Value>) {
    let response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let text = tokio::time::timeout(Duration::from_secs(20), response.text())
        .await
        .expect("the stream ends")
        .expect("body");
    let parsed = if content_type.starts_with("text/event-stream") {
        sse_events(&text)
    } else {
        vec![serde_json::from_str(&text).expect("a JSON answer")]
    };
    (status, content_type, parsed)
}

pub fn stream_body(skill: &str, text: &str) -> Value {
    let mut body = send_body(skill, text, &uuid());
    body["method"] = json!("message/stream");
    body
}

pub fn send_v1_body(method: &str, skill: &str, text: &str, configuration: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": "v1-call",
        "method": method,
        "params": {
            "message": {
                "messageId": uuid(),
                "role": "ROLE_USER",
                "parts": [{"text": text}],
                "metadata": {"skillId": skill}
            },
            "configuration": configuration
        }
    })
}

async fn streams_an_answer_on_0_3(app: &TestApp) {
    let token = app.token("streamer", Plan::Pro);
    let body = stream_body("test_echo", "hello");
    let (status, content_type, events) = events(app, &token, &body).await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    assert!(
        events.len() >= 4,
        "submitted, working, artifact, final: {events:?}"
    );
    for event in &events {
        assert_eq!(
            event["id"], body["id"],
            "every event carries the request id"
        );
        assert_eq!(event["jsonrpc"], "2.0");
    }
    let first = &events[0]["result"];
    assert_eq!(first["kind"], "task");
    assert_eq!(first["status"]["state"], "submitted");
    let last = &events.last().unwrap()["result"];
    assert_eq!(last["kind"], "status-update");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    let artifacts: Vec<&Value> = events
        .iter()
        .map(|e| &e["result"])
        .filter(|r| r["kind"] == "artifact-update")
        .collect();
    assert!(
        !artifacts.is_empty(),
        "the answer is streamed as artifact updates"
    );
    assert_eq!(artifacts.last().unwrap()["lastChunk"], true);
    let task_id = first["id"].as_str().unwrap();
    let stored = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(stored.result()["status"]["state"], "completed");
    assert_eq!(
        stored.result()["artifacts"][0]["parts"][0]["text"],
        "echo: hello"
    );
}

#[tokio::test]
async fn message_stream_answers_events_to_the_final_status_in_memory() {
    let app = spawn_app(|_| {}).await;
    streams_an_answer_on_0_3(&app).await;
}

#[tokio::test]
async fn message_stream_answers_events_to_the_final_status_on_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(with_redis(redis.url())).await;
    streams_an_answer_on_0_3(&app).await;
}

#[tokio::test]
async fn send_streaming_message_answers_1_0_stream_responses() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("streamer", Plan::Pro);
    let body = send_v1_body("SendStreamingMessage", "test_echo", "hi", json!({}));
    let (status, content_type, events) = events(&app, &token, &body).await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/event-stream"));
    assert!(events.iter().all(|e| e["id"] == "v1-call"));
    assert_eq!(
        events[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED"
    );
    assert!(
        events
            .iter()
            .any(|e| e["result"]["artifactUpdate"].is_object())
    );
    let last = &events.last().unwrap()["result"]["statusUpdate"];
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
}

/// A skill that does not stream sends its answer whole: one artifact update, not appended, its
/// last chunk, with the text and the data part, so a client that keeps only last chunks holds
/// the whole answer.
#[tokio::test]
async fn a_skill_that_does_not_stream_sends_its_answer_as_one_whole_update() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("streamer", Plan::Pro);
    let (_, _, events) = events(&app, &token, &stream_body("test_echo", "whole")).await;
    let updates: Vec<&Value> = events
        .iter()
        .map(|e| &e["result"])
        .filter(|r| r["kind"] == "artifact-update")
        .collect();
    assert_eq!(updates.len(), 1, "one update: {updates:?}");
    let update = updates[0];
    assert_eq!(update["append"], false);
    assert_eq!(update["lastChunk"], true);
    let parts = update["artifact"]["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert_eq!(parts[0]["text"], "echo: whole");
    assert_eq!(parts[1]["kind"], "data");
    assert_eq!(parts[1]["data"]["text"], "whole");

    let task_id = events[0]["result"]["id"].as_str().unwrap();
    let stored = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(
        stored.result()["artifacts"][0],
        update["artifact"],
        "the update is the stored artifact"
    );
}

#[tokio::test]
async fn a_failing_skill_ends_its_stream_failed() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("streamer", Plan::Pro);
    let (_, _, events) = events(&app, &token, &stream_body("test_fail", "x")).await;
    let last = &events.last().unwrap()["result"];
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "failed");
}

#[tokio::test]
async fn with_streaming_off_the_stream_methods_are_refused_as_before() {
    let app = spawn_app(|s| s.agent.streaming = false).await;
    let token = app.token("streamer", Plan::Pro);
    let refused = app
        .rpc(Some(&token), &stream_body("test_echo", "hello"))
        .await;
    assert_eq!(refused.code(), -32601);
    let refused = app
        .rpc(
            Some(&token),
            &send_v1_body("SendStreamingMessage", "test_echo", "hi", json!({})),
        )
        .await;
    assert_eq!(refused.body["error"]["code"], -32004);
    let card = app.get("/.well-known/agent-card.json").await;
    assert_eq!(card.body["capabilities"]["streaming"], false);
    let on = spawn_app(|_| {}).await;
    let card = on.get("/.well-known/agent-card.json").await;
    assert_eq!(card.body["capabilities"]["streaming"], true);
}

#[tokio::test]
async fn a_failed_stream_request_is_answered_as_one_error_event() {
    let app = spawn_app(|s| s.tasks.max_streams_per_user = 1).await;
    let token = app.token("streamer", Plan::Pro);
    let resubscribe = json!({"jsonrpc": "2.0", "id": "r", "method": "tasks/resubscribe",
        "params": {"id": "no-such-task"}});
    let subscribe = json!({"jsonrpc": "2.0", "id": "s", "method": "SubscribeToTask",
        "params": {"id": "no-such-task"}});
    let mut from_the_agent = send_v1_body("SendStreamingMessage", "test_echo", "x", json!({}));
    from_the_agent["params"]["message"]["role"] = json!("ROLE_AGENT");
    let cases = [
        (stream_body("no_such_skill", "x"), -32002, json!(1)),
        (resubscribe, -32001, json!("r")),
        (subscribe, -32001, json!("s")),
        (from_the_agent, -32602, json!("v1-call")),
    ];
    for (body, code, id) in cases {
        let (status, content_type, answer) = events(&app, &token, &body).await;
        assert!(
            content_type.starts_with("text/event-stream"),
            "{content_type}: {answer:?}"
        );
        assert_eq!(status, 200);
        assert_eq!(answer.len(), 1, "one event: {answer:?}");
        assert_eq!(answer[0]["error"]["code"], code, "{answer:?}");
        assert_eq!(answer[0]["id"], id, "{answer:?}");
    }
    // A refusal with its own status keeps it, and its headers.
    let open = |body: Value| {
        app.client
            .post(format!("{}/api/v1/a2a", app.base))
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let held = open(stream_body("test_slow", "wait"))
        .await
        .expect("request");
    let refused = open(stream_body("test_echo", "more"))
        .await
        .expect("request");
    assert_eq!(refused.status().as_u16(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    assert!(
        refused.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = refused.text().await.unwrap();
    assert!(
        text.starts_with("data: ") && text.contains("-32003"),
        "{text}"
    );
    drop(held);
    // Without a token nothing is known of the method: the refusal is JSON, as for any call.
    let anonymous = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .json(&stream_body("test_echo", "x"))
        .send()
        .await
        .expect("request");
    assert_eq!(anonymous.status().as_u16(), 401);
    assert!(
        anonymous.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
}

/// A non-blocking send of the slow skill: answered at once, read while it works, cancelled
/// through `cancel` on `reader`, and a second cancel keeps today's refusal.
async fn non_blocking_then_cancel_0_3(starter: &TestApp, reader: &TestApp) {
    let token = starter.token("poller", Plan::Pro);
    let mut body = send_body("test_slow", "wait", &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    let started = tokio::time::Instant::now();
    let reply = starter.rpc(Some(&token), &body).await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "answered at once"
    );
    let state = reply.result()["status"]["state"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(matches!(state.as_str(), "submitted" | "working"), "{state}");
    let task_id = reply.result()["id"].as_str().unwrap().to_string();
    let read = reader
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    let state = read.result()["status"]["state"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(matches!(state.as_str(), "submitted" | "working"), "{state}");
    let canceled = reader
        .rpc(Some(&token), &call("tasks/cancel", json!({"id": task_id})))
        .await;
    assert_eq!(
        canceled.result()["status"]["state"],
        "canceled",
        "{:?}",
        canceled.body
    );
    let read = starter
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(read.result()["status"]["state"], "canceled");
    let again = reader
        .rpc(Some(&token), &call("tasks/cancel", json!({"id": task_id})))
        .await;
    assert_eq!(again.code(), -32602, "a terminal task cannot be canceled");
    assert_eq!(again.body["error"]["data"]["state"], "canceled");
    // The dropped work never ends the task another way.
    tokio::time::sleep(Duration::from_secs(6)).await;
    let read = starter
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(read.result()["status"]["state"], "canceled");
}

#[tokio::test]
async fn a_non_blocking_send_is_read_while_working_and_canceled_in_memory() {
    let app = spawn_app(|_| {}).await;
    non_blocking_then_cancel_0_3(&app, &app).await;
}

#[tokio::test]
async fn a_non_blocking_send_is_read_while_working_and_canceled_on_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(with_redis(redis.url())).await;
    non_blocking_then_cancel_0_3(&app, &app).await;
}

#[tokio::test]
async fn a_task_started_on_one_replica_is_read_and_canceled_through_another() {
    let redis = RedisServer::start();
    let a = spawn_app(with_redis(redis.url())).await;
    let b = spawn_app(with_redis(redis.url())).await;
    non_blocking_then_cancel_0_3(&a, &b).await;
}

#[tokio::test]
async fn return_immediately_answers_at_once_and_cancel_task_ends_it_canceled() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("poller", Plan::Pro);
    let body = send_v1_body(
        "SendMessage",
        "test_slow",
        "wait",
        json!({"returnImmediately": true}),
    );
    let reply = app.rpc(Some(&token), &body).await;
    let task = &reply.result()["task"];
    let state = task["status"]["state"].as_str().unwrap();
    assert!(
        matches!(state, "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING"),
        "{state}"
    );
    let id = task["id"].as_str().unwrap().to_string();
    let canceled = app
        .rpc(
            Some(&token),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": id}}),
        )
        .await;
    assert_eq!(canceled.result()["status"]["state"], "TASK_STATE_CANCELED");
}

/// A stream of a working task opened on `b` ends when `a` cancels it: the last event is the
/// final `canceled` status.
async fn resubscribe_across(a: &TestApp, b: &TestApp, method: &str) {
    let token = a.token("subscriber", Plan::Pro);
    let mut body = send_body("test_slow", "wait", &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    let task_id = a.rpc(Some(&token), &body).await.result()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let subscribe =
        json!({"jsonrpc": "2.0", "id": "sub-1", "method": method, "params": {"id": task_id}});
    let b_token = token.clone();
    let b_base = b.base.clone();
    let client = b.client.clone();
    let reader = tokio::spawn(async move {
        let response = client
            .post(format!("{b_base}/api/v1/a2a"))
            .bearer_auth(&b_token)
            .json(&subscribe)
            .send()
            .await
            .expect("request");
        response.text().await.expect("body")
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let canceled = a
        .rpc(Some(&token), &call("tasks/cancel", json!({"id": task_id})))
        .await;
    assert_eq!(canceled.result()["status"]["state"], "canceled");
    let text = tokio::time::timeout(Duration::from_secs(10), reader)
        .await
        .expect("the stream ends after the cancel")
        .unwrap();
    let events = sse_events(&text);
    assert!(events.iter().all(|e| e["id"] == "sub-1"), "{events:?}");
    let last = &events.last().expect("events")["result"];
    match method {
        "tasks/resubscribe" => {
            assert_eq!(last["final"], true);
            assert_eq!(last["status"]["state"], "canceled");
        }
        _ => assert_eq!(
            last["statusUpdate"]["status"]["state"],
            "TASK_STATE_CANCELED"
        ),
    }
}

#[tokio::test]
async fn tasks_resubscribe_on_another_replica_follows_the_task_to_its_cancel() {
    let redis = RedisServer::start();
    let a = spawn_app(with_redis(redis.url())).await;
    let b = spawn_app(with_redis(redis.url())).await;
    resubscribe_across(&a, &b, "tasks/resubscribe").await;
}

#[tokio::test]
async fn subscribe_to_task_follows_the_task_to_its_cancel_in_memory() {
    let app = spawn_app(|_| {}).await;
    resubscribe_across(&app, &app, "SubscribeToTask").await;
}

#[tokio::test]
async fn a_disconnected_stream_does_not_cancel_its_task() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("leaver", Plan::Pro);
    let body = stream_body("test_slow", "wait");
    let response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .json(&body)
        .send()
        .await
        .expect("request");
    let mut response = response;
    let chunk = response.chunk().await.expect("first event").expect("bytes");
    let text = String::from_utf8_lossy(&chunk).to_string();
    let data = text.lines().find_map(|l| l.strip_prefix("data:")).unwrap();
    let first: Value = serde_json::from_str(data.trim()).unwrap();
    let task_id = first["result"]["id"].as_str().unwrap().to_string();
    drop(response);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let read = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(read.result()["status"]["state"], "working");
}

#[tokio::test]
async fn open_streams_per_user_are_capped() {
    let app = spawn_app(|s| s.tasks.max_streams_per_user = 1).await;
    let token = app.token("greedy", Plan::Pro);
    let held = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .json(&stream_body("test_slow", "wait"))
        .send()
        .await
        .expect("request");
    assert!(
        held.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let refused = app
        .rpc(Some(&token), &stream_body("test_echo", "more"))
        .await;
    assert_eq!(refused.code(), -32003, "{:?}", refused.body);
    let other = app.token("someone_else", Plan::Pro);
    let (_, content_type, _) = events(&app, &other, &stream_body("test_echo", "x")).await;
    assert!(
        content_type.starts_with("text/event-stream"),
        "another user is not affected"
    );
    drop(held);
}

/// The ids of the caller's stored tasks (`ListTasks`, which lists tasks once they ended).
pub async fn stored_task_ids(app: &TestApp, token: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "ListTasks", "params": {}});
    let reply = reply(
        app.client
            .post(format!("{}/api/v1/a2a", app.base))
            .bearer_auth(token)
            .header("A2A-Version", "1.0")
            .json(&body),
    )
    .await;
    reply.result()["tasks"]
        .as_array()
        .expect("a list of tasks")
        .iter()
        .map(|task| task["id"].as_str().unwrap().to_string())
        .collect()
}

/// The remaining calls a charged answer reports for the `default` bucket.
fn remaining(headers: &reqwest::header::HeaderMap) -> Option<String> {
    let current = headers.get("ratelimit")?.to_str().ok()?;
    Some(current.split(';').nth(1)?.to_string())
}

/// With one stream place, a second `message/stream` is refused for the streams cap before
/// anything happens: its task never runs (nothing is stored for it) and the send bucket is not
/// charged (the next send is the second call charged).
async fn a_stream_refused_at_the_cap_runs_and_charges_nothing(app: &TestApp) {
    let token = app.token("capped", Plan::Pro);
    let held = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .json(&stream_body("test_slow", "hold the place"))
        .send()
        .await
        .expect("request");
    assert_eq!(remaining(held.headers()).as_deref(), Some("r=14"));
    let refused = app
        .rpc(Some(&token), &stream_body("test_echo", "refused"))
        .await;
    assert_eq!(refused.code(), -32003, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["data"]["bucket"], "streams");
    let next = app.send(&token, "test_echo", "next").await;
    assert_eq!(
        remaining(&next.headers).as_deref(),
        Some("r=13"),
        "the refused stream charged nothing"
    );
    let next_id = next.result()["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        stored_task_ids(app, &token).await,
        vec![next_id],
        "the refused stream's task never ran"
    );
    drop(held);
}

#[tokio::test]
async fn a_stream_refused_at_the_cap_runs_and_charges_nothing_in_memory() {
    let app = spawn_app(|s| s.tasks.max_streams_per_user = 1).await;
    a_stream_refused_at_the_cap_runs_and_charges_nothing(&app).await;
}

#[tokio::test]
async fn a_stream_refused_at_the_cap_runs_and_charges_nothing_on_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        with_redis(redis.url())(s);
        s.tasks.max_streams_per_user = 1;
    })
    .await;
    a_stream_refused_at_the_cap_runs_and_charges_nothing(&app).await;
}

#[tokio::test]
async fn streams_and_non_blocking_sends_are_charged_once_in_the_send_bucket() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("metered", Plan::Pro);
    for i in 0..15 {
        let mut body = match i % 3 {
            0 => send_body("test_echo", &format!("call {i}"), &uuid()),
            1 => stream_body("test_echo", &format!("call {i}")),
            _ => {
                let mut body = send_body("test_echo", &format!("call {i}"), &uuid());
                body["params"]["configuration"] = json!({"blocking": false});
                body
            }
        };
        body["id"] = json!(i);
        let response = app
            .client
            .post(format!("{}/api/v1/a2a", app.base))
            .bearer_auth(&token)
            .json(&body)
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 200, "call {i}");
        let remaining = response.headers()["ratelimit"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            remaining.starts_with(&format!("\"default\";r={};", 14 - i)),
            "call {i}: {remaining}"
        );
        response.text().await.expect("the whole answer");
    }
    let refused = app
        .rpc(Some(&token), &stream_body("test_echo", "one too many"))
        .await;
    assert_eq!((refused.status.as_u16(), refused.code()), (429, -32003));
    assert_eq!(refused.body["error"]["data"]["bucket"], "default");
}

#[tokio::test]
async fn a_message_for_a_task_still_working_is_refused_on_both_wires() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("eager", Plan::Pro);
    let mut body = send_body("test_slow", "wait", &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    let task_id = app.rpc(Some(&token), &body).await.result()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut follow_up = send_body("test_echo", "more", &uuid());
    follow_up["params"]["message"]["taskId"] = json!(task_id);
    let refused = app.rpc(Some(&token), &follow_up).await;
    assert_eq!(refused.code(), -32602, "{:?}", refused.body);
    follow_up["method"] = json!("message/stream");
    follow_up["params"]["message"]["messageId"] = json!(uuid());
    let refused = app.rpc(Some(&token), &follow_up).await;
    assert_eq!(refused.code(), -32602, "{:?}", refused.body);
    let read = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(read.result()["history"].as_array().unwrap().len(), 1);
}

/// The `id` and data of each event of an SSE body, in order.
fn identified_events(text: &str) -> Vec<(Option<String>, Value)> {
    text.split("\n\n")
        .filter_map(|frame| {
            let data = frame.lines().find_map(|l| l.strip_prefix("data:"))?;
            let id = frame
                .lines()
                .find_map(|l| l.strip_prefix("id:"))
                .map(|id| id.trim().to_string());
            Some((id, serde_json::from_str(data.trim()).expect("JSON")))
        })
        .collect()
}

#[tokio::test]
async fn a_stream_resumes_after_its_last_event_id_through_another_replica() {
    let redis = RedisServer::start();
    let a = spawn_app(with_redis(redis.url())).await;
    let b = spawn_app(with_redis(redis.url())).await;
    let token = a.token("resumer", Plan::Pro);
    let mut body = send_body("test_slow", "wait", &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    let task_id = a.rpc(Some(&token), &body).await.result()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The client saw the first event (the task, id 0) on A before it was cut; it resumes on B.
    let resubscribe = json!({"jsonrpc": "2.0", "id": "again", "method": "tasks/resubscribe",
        "params": {"id": task_id}});
    let request = b
        .client
        .post(format!("{}/api/v1/a2a", b.base))
        .bearer_auth(&token)
        .header("Last-Event-ID", "0")
        .json(&resubscribe);
    let reader = tokio::spawn(async move { request.send().await.unwrap().text().await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let canceled = a
        .rpc(Some(&token), &call("tasks/cancel", json!({"id": task_id})))
        .await;
    assert_eq!(canceled.result()["status"]["state"], "canceled");
    let text = tokio::time::timeout(Duration::from_secs(10), reader)
        .await
        .expect("the stream ends after the cancel")
        .unwrap()
        .unwrap();
    let events = identified_events(&text);
    assert_eq!(events[0].0.as_deref(), Some("1"), "{text}");
    assert_eq!(events[0].1["result"]["status"]["state"], "working");
    assert!(
        events.iter().all(|(_, e)| e["result"]["kind"] != "task"),
        "the event it saw is not sent again: {text}"
    );
    let (last_id, last) = events.last().unwrap();
    assert_eq!(last["result"]["final"], true);

    // Resumed after the final event, on the HTTP+JSON binding: nothing follows.
    let after_the_end = b
        .client
        .get(format!(
            "{}/api/v1/a2a/rest/tasks/{task_id}:subscribe",
            b.base
        ))
        .bearer_auth(&token)
        .header(
            "Last-Event-ID",
            last_id.clone().expect("the final event's id"),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(after_the_end.status(), 200);
    let text = after_the_end.text().await.unwrap();
    assert!(identified_events(&text).is_empty(), "{text}");

    // An id this server never gave is a clear error, as the stream's one event.
    let request = b
        .client
        .post(format!("{}/api/v1/a2a", b.base))
        .bearer_auth(&token)
        .header("Last-Event-ID", "1700000000000-0")
        .json(&resubscribe);
    let refused = request.send().await.unwrap().text().await.unwrap();
    let events = identified_events(&refused);
    assert_eq!(events[0].1["error"]["code"], -32602, "{refused}");
}

#[tokio::test]
async fn a_new_1_0_subscription_to_a_finished_task_is_refused() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("late-subscriber", Plan::Pro);
    let sent = app
        .rpc(Some(&token), &send_body("test_echo", "done", &uuid()))
        .await;
    let task_id = sent.result()["id"].as_str().unwrap().to_string();
    let subscribe = json!({"jsonrpc": "2.0", "id": "s", "method": "SubscribeToTask",
        "params": {"id": task_id}});
    let (status, content_type, answer) = events(&app, &token, &subscribe).await;
    assert_eq!(status, 200);
    assert!(content_type.starts_with("text/event-stream"));
    assert_eq!(answer[0]["error"]["code"], -32004, "{answer:?}");
    assert_eq!(
        answer[0]["error"]["data"][0]["reason"],
        "UNSUPPORTED_OPERATION"
    );
    let rest = reply(
        app.client
            .get(format!(
                "{}/api/v1/a2a/rest/tasks/{task_id}:subscribe",
                app.base
            ))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(rest.status, 400, "{}", rest.body);
    assert_eq!(
        rest.body["error"]["details"][0]["reason"],
        "UNSUPPORTED_OPERATION"
    );
    // 0.3 keeps the reference's answer: the task's last state, then the end.
    let resubscribe = json!({"jsonrpc": "2.0", "id": "r", "method": "tasks/resubscribe",
        "params": {"id": task_id}});
    let (_, _, answer) = events(&app, &token, &resubscribe).await;
    assert_eq!(
        answer.last().unwrap()["result"]["final"],
        true,
        "{answer:?}"
    );
}
