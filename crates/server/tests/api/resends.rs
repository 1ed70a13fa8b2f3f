//! A message sent again (same id, same content) answers with the task it produced on every send
//! path (a stream, a non-blocking send, 1.0 `SendStreamingMessage` and `returnImmediately`),
//! while the task works and after it ended, on both stores and across two replicas; and a
//! streamed or non-blocking continuation meets the stored-size cap as a blocking send does.

use std::time::Duration;

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{RedisServer, TestApp, call, send_body, spawn_app, uuid, with_redis};
use crate::streaming::{events, send_v1_body, stored_task_ids, stream_body};

/// The id of the task a send answered with, on either wire, as a reply or as the first event.
fn task_id_of(first: &Value) -> String {
    let result = &first["result"];
    let task = if result["task"].is_object() {
        &result["task"]
    } else {
        result
    };
    task["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task in {first}"))
        .to_string()
}

/// POSTs `body` and keeps the first event (or the JSON answer) and whether it was charged; a
/// stream is left open for `hold` so its task is still working when the caller goes on.
async fn first_answer(app: &TestApp, token: &str, body: &Value) -> (Value, bool) {
    let mut response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("request");
    let charged = response.headers().get("ratelimit").is_some();
    let streamed = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream");
    if !streamed {
        return (response.json().await.expect("a JSON answer"), charged);
    }
    let mut text = String::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(10), response.chunk())
            .await
            .expect("an event in time")
            .expect("the stream reads")
            .expect("an event before the end");
        text.push_str(&String::from_utf8_lossy(&chunk));
        if let Some(data) = text.lines().find_map(|l| l.strip_prefix("data:")) {
            return (serde_json::from_str(data.trim()).expect("JSON"), charged);
        }
    }
}

fn non_blocking(skill: &str, text: &str) -> Value {
    let mut body = send_body(skill, text, &uuid());
    body["params"]["configuration"] = json!({"blocking": false});
    body
}

/// Every send path, its first call on `a` and the same message again on `b`: while the slow
/// skill works (the owner may run one task at a time, so a second run would be refused) and
/// after a quick task ended. A resend is not charged and answers with the first task.
async fn a_resend_answers_with_the_first_task(a: &TestApp, b: &TestApp) {
    let token = a.token("resender", Plan::Enterprise);
    let working_paths = [
        ("0.3 non-blocking", non_blocking("test_slow", "wait")),
        ("0.3 stream", stream_body("test_slow", "wait")),
        (
            "1.0 returnImmediately",
            send_v1_body(
                "SendMessage",
                "test_slow",
                "wait",
                json!({"returnImmediately": true}),
            ),
        ),
        (
            "1.0 stream",
            send_v1_body("SendStreamingMessage", "test_slow", "wait", json!({})),
        ),
    ];
    for (path, body) in working_paths {
        let (first, charged) = first_answer(a, &token, &body).await;
        assert!(charged, "{path}: the first send is charged");
        let task_id = task_id_of(&first);
        let (again, charged) = first_answer(b, &token, &body).await;
        assert!(again.get("error").is_none(), "{path}: {again}");
        assert_eq!(task_id_of(&again), task_id, "{path}: the same task");
        assert!(!charged, "{path}: a resend is not charged");
        // A blocking send of the same message (the 0.3 stream carries no configuration) is
        // the same message too.
        if path == "0.3 stream" {
            let mut blocking = body.clone();
            blocking["method"] = json!("message/send");
            let answer = b.rpc(Some(&token), &blocking).await;
            assert_eq!(
                answer.result()["id"],
                json!(task_id),
                "{path}: blocking resend"
            );
            let state = answer.result()["status"]["state"].as_str().unwrap();
            assert!(matches!(state, "submitted" | "working"), "{path}: {state}");
        }
        let canceled = a
            .rpc(Some(&token), &call("tasks/cancel", json!({"id": task_id})))
            .await;
        assert_eq!(canceled.result()["status"]["state"], "canceled", "{path}");
    }

    let ended_paths = [
        ("0.3 non-blocking", non_blocking("test_echo", "quick")),
        ("0.3 stream", stream_body("test_echo", "quick")),
        (
            "1.0 stream",
            send_v1_body("SendStreamingMessage", "test_echo", "quick", json!({})),
        ),
    ];
    for (path, body) in ended_paths {
        let (_, _, first) = events(a, &token, &body).await;
        let task_id = task_id_of(&first[0]);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (_, _, again) = events(b, &token, &body).await;
        assert_eq!(task_id_of(&again[0]), task_id, "{path}: the same task");
        let last = &again.last().unwrap()["result"];
        let state = last["status"]["state"]
            .as_str()
            .or_else(|| last["statusUpdate"]["status"]["state"].as_str())
            .or_else(|| last["task"]["status"]["state"].as_str())
            .unwrap_or_else(|| panic!("{path}: a state in {last}"));
        assert!(
            matches!(state, "completed" | "TASK_STATE_COMPLETED"),
            "{path}: {state}"
        );
        let stored = a
            .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
            .await;
        assert_eq!(
            stored.result()["history"].as_array().unwrap().len(),
            2,
            "{path}: one turn, run once"
        );
    }
    assert_eq!(
        stored_task_ids(a, &token).await.len(),
        7,
        "four canceled and three completed tasks, none run twice"
    );
}

fn one_running(s: &mut magisterium_a2a::config::Settings) {
    s.tasks.max_running_per_user = 1;
}

#[tokio::test]
async fn a_resend_answers_with_the_first_task_in_memory() {
    let app = spawn_app(one_running).await;
    a_resend_answers_with_the_first_task(&app, &app).await;
}

#[tokio::test]
async fn a_resend_answers_with_the_first_task_on_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        with_redis(redis.url())(s);
        one_running(s);
    })
    .await;
    a_resend_answers_with_the_first_task(&app, &app).await;
}

#[tokio::test]
async fn a_resend_through_another_replica_answers_with_the_first_task() {
    let redis = RedisServer::start();
    let a = spawn_app(|s| {
        with_redis(redis.url())(s);
        one_running(s);
    })
    .await;
    let b = spawn_app(|s| {
        with_redis(redis.url())(s);
        one_running(s);
    })
    .await;
    a_resend_answers_with_the_first_task(&a, &b).await;
}

/// The same new message sent at once through two replicas runs one task: both answers name it.
#[tokio::test]
async fn the_same_message_sent_at_once_through_two_replicas_runs_once() {
    let redis = RedisServer::start();
    let a = spawn_app(with_redis(redis.url())).await;
    let b = spawn_app(with_redis(redis.url())).await;
    let token = a.token("racer", Plan::Enterprise);
    for round in 0..5 {
        let body = non_blocking("test_slow", &format!("race {round}"));
        let (first, second) = tokio::join!(a.rpc(Some(&token), &body), b.rpc(Some(&token), &body));
        let first_id = first.result()["id"].clone();
        assert_eq!(first_id, second.result()["id"], "round {round}");
        a.rpc(Some(&token), &call("tasks/cancel", json!({"id": first_id})))
            .await;
    }
    assert_eq!(stored_task_ids(&a, &token).await.len(), 5);
}

/// A task of about 4 KB under a cap of 8 KB, continued by a stream: a message that would take
/// it over the cap is refused before anything is charged, the task kept as it was; a message
/// whose answer would take it over ends the task `failed`, naming the cap, and what is stored
/// stays under it.
async fn a_streamed_continuation_meets_the_stored_size_cap(app: &TestApp) {
    let token = app.token("grower", Plan::Pro);
    let first = app.send(&token, "test_echo", &"x".repeat(1000)).await;
    let task_id = first.result()["id"].as_str().unwrap().to_string();

    let mut too_long = stream_body("test_echo", &"y".repeat(4500));
    too_long["params"]["message"]["taskId"] = json!(task_id);
    let refused = app.rpc(Some(&token), &too_long).await;
    assert_eq!(refused.code(), -32602, "{}", refused.body);
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("8192 bytes")
    );
    let mut too_long_later = non_blocking("test_echo", &"y".repeat(4500));
    too_long_later["params"]["message"]["taskId"] = json!(task_id);
    assert_eq!(app.rpc(Some(&token), &too_long_later).await.code(), -32602);
    let next = app.send(&token, "test_echo", "count").await;
    assert!(
        next.header("ratelimit").unwrap().contains("r=13;"),
        "the refused continuations charged nothing: {:?}",
        next.header("ratelimit")
    );

    let mut growing = stream_body("test_echo", &"z".repeat(1800));
    growing["params"]["message"]["taskId"] = json!(task_id);
    let (_, _, streamed) = events(app, &token, &growing).await;
    let last = &streamed.last().unwrap()["result"];
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "failed", "{last}");
    let reason = last["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(reason.contains("8192 bytes"), "{reason}");
    let stored = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert!(stored.body.to_string().len() <= 8192 + 64);
    assert!(stored.result()["artifacts"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_streamed_continuation_meets_the_stored_size_cap_in_memory() {
    let app = spawn_app(|s| s.store.max_task_bytes = 8 * 1024).await;
    a_streamed_continuation_meets_the_stored_size_cap(&app).await;
}

#[tokio::test]
async fn a_streamed_continuation_meets_the_stored_size_cap_on_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        with_redis(redis.url())(s);
        s.store.max_task_bytes = 8 * 1024;
    })
    .await;
    a_streamed_continuation_meets_the_stored_size_cap(&app).await;
}
