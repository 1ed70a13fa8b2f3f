//! The conformance kit's lifecycle scenarios through the real app, on both wires: a stream whose
//! connection is closed after N events (the task goes on and is resubscribed to), a paced
//! stream, and a task that fails after part of its artifact.

use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use serde_json::{Value, json};

use crate::helpers::{TestApp, call, send_body, spawn_app, uuid};
use crate::streaming::{send_v1_body, stream_body};

fn kit_on(s: &mut Settings) {
    s.conformance.enabled = true;
}

/// What a stream delivered: its events with the time each arrived, and whether the answer
/// ended cleanly (`false`: the connection was closed part-way).
struct Received {
    events: Vec<(Instant, Value)>,
    ended_cleanly: bool,
}

async fn receive(app: &TestApp, token: &str, scenario: Option<&str>, body: &Value) -> Received {
    receive_after(app, token, scenario, None, body).await
}

/// As [`receive`], resuming after the event `last_event_id` names when given.
async fn receive_after(
    app: &TestApp,
    token: &str,
    scenario: Option<&str>,
    last_event_id: Option<&str>,
    body: &Value,
) -> Received {
    let mut request = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(token)
        .header("a2a-client-run", "lifecycle")
        .json(body);
    if let Some(scenario) = scenario {
        request = request.header("a2a-simulate", scenario);
    }
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id);
    }
    let mut response = request.send().await.expect("request");
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"),
        "an event stream"
    );
    let mut pending = String::new();
    let mut events = Vec::new();
    let ended_cleanly = loop {
        let chunk = tokio::time::timeout(Duration::from_secs(20), response.chunk())
            .await
            .expect("the stream moves");
        match chunk {
            Ok(Some(bytes)) => {
                pending.push_str(&String::from_utf8_lossy(&bytes));
                while let Some(end) = pending.find("\n\n") {
                    let block: String = pending.drain(..end + 2).collect();
                    if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data:")) {
                        let event = serde_json::from_str(data.trim()).expect("JSON");
                        events.push((Instant::now(), event));
                    }
                }
            }
            Ok(None) => break true,
            Err(_) => break false,
        }
    };
    Received {
        events,
        ended_cleanly,
    }
}

/// The state an event or a task carries, on either wire.
fn state_of(event: &Value) -> String {
    let result = &event["result"];
    [
        &result["status"]["state"],
        &result["statusUpdate"]["status"]["state"],
        &result["task"]["status"]["state"],
    ]
    .into_iter()
    .find_map(Value::as_str)
    .unwrap_or_default()
    .to_string()
}

fn task_id_of(event: &Value) -> String {
    let result = &event["result"];
    result["id"]
        .as_str()
        .or_else(|| result["task"]["id"].as_str())
        .expect("the first event is the task")
        .to_string()
}

/// `stream_dropped` closes the connection after its events (two unless told), without the end
/// of the answer; the task goes on to `completed`, and a resubscription after the last event
/// received (`Last-Event-ID`) follows it to the end without repeating what was seen.
async fn stream_dropped(app: &TestApp, wire: &str) {
    let token = app.token(&format!("dropped-{wire}"), Plan::Pro);
    let (send, resubscribe) = match wire {
        "0.3" => (stream_body("test_echo", "cut me"), "tasks/resubscribe"),
        _ => (
            send_v1_body("SendStreamingMessage", "test_echo", "cut me", json!({})),
            "SubscribeToTask",
        ),
    };
    let cut = receive(app, &token, Some("stream_dropped"), &send).await;
    assert!(
        !cut.ended_cleanly,
        "{wire}: the connection is closed part-way"
    );
    assert_eq!(cut.events.len(), 2, "{wire}: two events by default");
    let task_id = task_id_of(&cut.events[0].1);

    let again = json!({"jsonrpc": "2.0", "id": "again", "method": resubscribe,
        "params": {"id": task_id}});
    let whole = receive_after(app, &token, None, Some("1"), &again).await;
    assert!(whole.ended_cleanly);
    assert!(
        whole.events.iter().all(|(_, event)| {
            event["result"]["kind"] != "task" && event["result"].get("task").is_none()
        }),
        "{wire}: the two events seen are not sent again"
    );
    let last = &whole.events.last().expect("events").1;
    assert!(
        matches!(
            state_of(last).as_str(),
            "completed" | "TASK_STATE_COMPLETED"
        ),
        "{wire}: the task went on: {last}"
    );
    assert!(whole.events.len() >= 2, "{wire}: the rest of the log");

    let one = receive_after(
        app,
        &token,
        Some("stream_dropped;events=1"),
        Some("0"),
        &again,
    )
    .await;
    assert!(!one.ended_cleanly);
    assert_eq!(one.events.len(), 1, "{wire}: a resubscription is cut too");
}

#[tokio::test]
async fn stream_dropped_closes_a_stream_after_its_events_and_the_task_goes_on() {
    let app = spawn_app(kit_on).await;
    stream_dropped(&app, "0.3").await;
    stream_dropped(&app, "1.0").await;
}

/// `slow_stream` sends each event after the first at least its pause after the one before; the
/// answer is the real one.
async fn slow_stream(app: &TestApp, wire: &str) {
    let token = app.token(&format!("slow-{wire}"), Plan::Pro);
    let send = match wire {
        "0.3" => stream_body("test_echo", "slowly"),
        _ => send_v1_body("SendStreamingMessage", "test_echo", "slowly", json!({})),
    };
    let paced = receive(app, &token, Some("slow_stream;ms=300"), &send).await;
    assert!(paced.ended_cleanly);
    let count = paced.events.len();
    assert!(count >= 4, "{wire}: {count} events");
    let spread = paced.events[count - 1].0 - paced.events[0].0;
    assert!(
        spread >= Duration::from_millis(300) * (count as u32 - 1) - Duration::from_millis(50),
        "{wire}: {count} events over {spread:?}"
    );
    let last = &paced.events[count - 1].1;
    assert!(
        matches!(
            state_of(last).as_str(),
            "completed" | "TASK_STATE_COMPLETED"
        ),
        "{last}"
    );
}

#[tokio::test]
async fn slow_stream_paces_each_event() {
    let app = spawn_app(kit_on).await;
    slow_stream(&app, "0.3").await;
    slow_stream(&app, "1.0").await;
}

/// `fail_mid_stream`: `working`, a chunk of the artifact that is not its last, then `failed`;
/// the stored task is `failed` without an artifact. A non-blocking send of it, resubscribed
/// to, shows the same events.
#[tokio::test]
async fn fail_mid_stream_sends_part_of_an_artifact_then_fails_on_0_3() {
    let app = spawn_app(kit_on).await;
    let token = app.token("mid-stream", Plan::Pro);
    let streamed = receive(
        &app,
        &token,
        Some("fail_mid_stream"),
        &stream_body("test_echo", "never whole"),
    )
    .await;
    let results: Vec<&Value> = streamed.events.iter().map(|(_, e)| &e["result"]).collect();
    let kinds: Vec<&str> = results
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["task", "status-update", "artifact-update", "status-update"]
    );
    assert_eq!(results[1]["status"]["state"], "working");
    assert_eq!(results[2]["append"], false);
    assert_eq!(results[2]["lastChunk"], false);
    assert!(
        results[2]["artifact"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("fail_mid_stream")
    );
    assert_eq!(results[3]["final"], true);
    assert_eq!(results[3]["status"]["state"], "failed");
    let task_id = results[0]["id"].as_str().unwrap();
    let stored = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(stored.result()["status"]["state"], "failed");
    assert_eq!(stored.result()["artifacts"], json!([]));

    let mut later = send_body("test_echo", "poll me", &uuid());
    later["params"]["configuration"] = json!({"blocking": false});
    later["params"]["message"]["metadata"]["simulate"] = json!("fail_mid_stream");
    let started = app.rpc(Some(&token), &later).await;
    let task_id = started.result()["id"].as_str().unwrap().to_string();
    let resubscribed = receive(
        &app,
        &token,
        None,
        &call("tasks/resubscribe", json!({"id": task_id})),
    )
    .await;
    let kinds: Vec<&str> = resubscribed
        .events
        .iter()
        .map(|(_, e)| e["result"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["task", "status-update", "artifact-update", "status-update"]
    );
    assert_eq!(state_of(&resubscribed.events[3].1), "failed");
}

#[tokio::test]
async fn fail_mid_stream_sends_part_of_an_artifact_then_fails_on_1_0() {
    let app = spawn_app(kit_on).await;
    let token = app.token("mid-stream-1", Plan::Pro);
    let streamed = receive(
        &app,
        &token,
        Some("fail_mid_stream"),
        &send_v1_body(
            "SendStreamingMessage",
            "test_echo",
            "never whole",
            json!({}),
        ),
    )
    .await;
    let results: Vec<&Value> = streamed.events.iter().map(|(_, e)| &e["result"]).collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert!(results[0]["task"].is_object());
    assert_eq!(
        results[1]["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let chunk = &results[2]["artifactUpdate"];
    assert_eq!(chunk["lastChunk"], false);
    assert!(
        chunk["artifact"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("fail_mid_stream")
    );
    assert_eq!(
        results[3]["statusUpdate"]["status"]["state"],
        "TASK_STATE_FAILED"
    );
}

/// The report counts the stream scenarios where they apply: exercised on the stream method, not
/// offered as gaps on a method they cannot change.
#[tokio::test]
async fn the_report_counts_the_stream_scenarios_where_they_apply() {
    let app = spawn_app(kit_on).await;
    let token = app.token("covered", Plan::Pro);
    receive(
        &app,
        &token,
        Some("slow_stream;ms=1"),
        &stream_body("test_echo", "counted"),
    )
    .await;
    let get = call("tasks/get", json!({"id": "unknown"}));
    app.client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .header("a2a-client-run", "lifecycle")
        .json(&get)
        .send()
        .await
        .unwrap();
    let report: Value = app
        .client
        .get(format!("{}/conformance/report?run=lifecycle", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let coverage = &report["runs"][0]["coverage"];
    assert_eq!(
        coverage["exercised"],
        json!([{"scenario": "slow_stream", "method": "message/stream", "wire": "0.3", "binding": "jsonrpc", "calls": 1}])
    );
    let gaps = coverage["untouchedByMethod"].as_array().unwrap();
    let gap = |method: &str| -> Vec<Value> {
        gaps.iter().find(|g| g["method"] == method).unwrap()["scenarios"]
            .as_array()
            .unwrap()
            .clone()
    };
    let on_stream = gap("message/stream");
    assert!(on_stream.contains(&json!("stream_dropped")));
    assert!(on_stream.contains(&json!("fail_mid_stream")));
    assert!(!on_stream.contains(&json!("slow_stream")));
    assert_eq!(
        report["runs"][0]["findings"],
        json!([]),
        "a served stream method is no unsupported-method"
    );
    let on_get = gap("tasks/get");
    for scenario in ["stream_dropped", "slow_stream", "fail_mid_stream"] {
        assert!(
            !on_get.contains(&json!(scenario)),
            "{scenario} on tasks/get"
        );
    }
}
