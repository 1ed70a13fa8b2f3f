//! The conformance kit's webhook scenarios against a real loopback receiver: `push_retried`
//! posts every notification of the task n+1 times under one idempotency key, `push_undelivered`
//! posts none; the task runs as usual, and the run's report says what happened.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, call};
use crate::push::{Answer, Hit, Receiver, header};
use crate::push_methods::{WAIT, message, push_app, rpc, task_of, v1_message};

fn kit(settings: &mut Settings) {
    settings.conformance.enabled = true;
    settings.push.max_attempts = 3;
}

async fn post(app: &TestApp, token: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.insert(
            HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let response = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .headers(map)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap();
    Reply {
        status: response.status(),
        headers: response.headers().clone(),
        body: response.json().await.unwrap_or(Value::Null),
    }
}

/// The run's tally of simulated notifications for `scenario`, as the report shows it.
async fn tally(app: &TestApp, token: &str, run: &str, scenario: &str) -> Value {
    let report: Value = app
        .client
        .get(format!("{}/conformance/report?run={run}", app.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    report["runs"][0]["notifications"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|entry| entry["scenario"] == scenario)
        .cloned()
        .unwrap_or(Value::Null)
}

/// Waits until the run's tally for `scenario` has `field` at `value`.
async fn wait_for_tally(
    app: &TestApp,
    token: &str,
    run: &str,
    scenario: &str,
    field: &str,
    value: u64,
) -> Value {
    let deadline = Instant::now() + WAIT;
    loop {
        let tally = tally(app, token, run, scenario).await;
        if tally[field] == value {
            return tally;
        }
        assert!(Instant::now() < deadline, "{scenario}: {tally}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The hits grouped by their `Idempotency-Key`.
fn by_key(hits: &[Hit]) -> BTreeMap<String, Vec<&Hit>> {
    let mut groups: BTreeMap<String, Vec<&Hit>> = BTreeMap::new();
    for hit in hits {
        groups
            .entry(header(hit, "idempotency-key").unwrap().to_string())
            .or_default()
            .push(hit);
    }
    groups
}

#[tokio::test]
async fn push_retried_posts_every_notification_n_plus_one_times_under_one_key() {
    let app = push_app(kit).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let token = app.token("retried", Plan::Pro);
    let run = "hooks";
    let sent = post(
        &app,
        &token,
        &[
            ("a2a-simulate", "push_retried;n=2"),
            ("a2a-client-run", run),
        ],
        &call(
            "message/send",
            json!({"message": message("test_echo", "hello"),
                   "configuration": {"pushNotificationConfig": {"url": receiver.url()}}}),
        ),
    )
    .await;
    assert_eq!(
        sent.result()["status"]["state"],
        "completed",
        "the task runs as usual"
    );
    assert_eq!(
        sent.result()["artifacts"][0]["parts"][0]["text"],
        "echo: hello"
    );

    // submitted, working and completed: each posted three times, the last delivered.
    let tally = wait_for_tally(&app, &token, run, "push_retried", "delivered", 3).await;
    assert_eq!(tally["posted"], 9, "{tally}");
    assert_eq!(tally["failedOnPurpose"], 6, "{tally}");
    assert_eq!(tally["dropped"], 0, "{tally}");
    let hits = receiver.hits();
    assert_eq!(hits.len(), 9);
    let groups = by_key(&hits);
    assert_eq!(groups.len(), 3, "one key per notification");
    for (key, group) in &groups {
        assert_eq!(group.len(), 3, "notification {key}");
        assert!(
            group.iter().all(|hit| hit.body == group[0].body),
            "the same body each time"
        );
    }
    let mut states: Vec<String> = groups
        .values()
        .map(|group| {
            task_of(group[0])["status"]["state"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    states.sort();
    assert_eq!(states, ["completed", "submitted", "working"]);

    // Without a parameter: two failures on purpose, then the real answer (here a 4xx, so the
    // notification is given up, not retried further).
    let refusing = Receiver::start(vec![Answer::Status(410)]).await;
    let sent = post(
        &app,
        &token,
        &[
            ("a2a-simulate", "push_retried"),
            ("a2a-client-run", "defaults"),
        ],
        &call(
            "SendMessage",
            json!({"message": v1_message("test_echo", "again"),
                   "configuration": {"taskPushNotificationConfig": {"url": refusing.url()}}}),
        ),
    )
    .await;
    assert_eq!(
        sent.result()["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let tally = wait_for_tally(&app, &token, "defaults", "push_retried", "dropped", 3).await;
    assert_eq!(tally["posted"], 9, "{tally}");
    assert_eq!(tally["failedOnPurpose"], 6, "{tally}");
    assert_eq!(tally["delivered"], 0, "{tally}");
    let groups = by_key(&refusing.hits())
        .into_values()
        .map(|g| g.len())
        .collect::<Vec<_>>();
    assert_eq!(groups, [3, 3, 3]);
}

#[tokio::test]
async fn push_undelivered_posts_nothing_and_the_task_can_still_be_read() {
    let app = push_app(kit).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let token = app.token("undelivered", Plan::Pro);
    let run = "dead-hook";
    let sent = post(
        &app,
        &token,
        &[
            ("a2a-simulate", "push_undelivered"),
            ("a2a-client-run", run),
        ],
        &call(
            "message/send",
            json!({"message": message("test_echo", "anyone there"),
                   "configuration": {"pushNotificationConfig": {"url": receiver.url()}}}),
        ),
    )
    .await;
    let task_id = sent.result()["id"].as_str().unwrap().to_string();
    assert_eq!(sent.result()["status"]["state"], "completed");
    // Every notification given up after push.max_attempts (3) attempts, none sent.
    let tally = wait_for_tally(&app, &token, run, "push_undelivered", "dropped", 3).await;
    assert_eq!(tally["failedOnPurpose"], 9, "{tally}");
    assert_eq!(tally["posted"], 0, "{tally}");
    assert_eq!(tally["delivered"], 0, "{tally}");
    assert!(receiver.hits().is_empty(), "nothing reached the receiver");
    let got = rpc(&app, &token, "tasks/get", json!({"id": task_id})).await;
    assert_eq!(
        got.result()["status"]["state"],
        "completed",
        "polling still works"
    );

    // The scenario is in the run's coverage.
    let report: Value = app
        .client
        .get(format!("{}/conformance/report?run={run}", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        report["runs"][0]["coverage"]["exercised"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["scenario"] == "push_undelivered" && e["method"] == "message/send"),
        "{report}"
    );
}

#[tokio::test]
async fn bad_webhook_scenario_parameters_get_the_kits_error() {
    let app = push_app(kit).await;
    let token = app.token("bad-params", Plan::Pro);
    for (scenario, expected) in [
        ("push_retried;n=soon", "`n` must be a whole number"),
        (
            "push_undelivered;n=2",
            "`n` does not apply to `push_undelivered`",
        ),
        ("push_retried;ms=2", "`ms` does not apply to `push_retried`"),
    ] {
        let refused = post(
            &app,
            &token,
            &[("a2a-simulate", scenario)],
            &call(
                "message/send",
                json!({"message": message("test_echo", "x")}),
            ),
        )
        .await;
        assert_eq!(refused.code(), -32602, "{scenario}: {}", refused.body);
        let text = refused.body["error"]["message"].as_str().unwrap();
        assert!(text.contains(expected), "{scenario}: {text}");
    }
}
