//! The client conformance kit: every scenario through real HTTP, every rule of the report, and
//! nothing of it when the kit is off.

use std::time::{Duration, Instant};

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, call, send_body, spawn_app, uuid};

fn enabled(s: &mut Settings) {
    s.conformance.enabled = true;
    s.conformance.min_poll_interval_ms = 5_000;
}

async fn post(app: &TestApp, token: Option<&str>, headers: &[(&str, &str)], body: &Value) -> Reply {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let mut request = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .headers(map)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.json().await.unwrap_or(Value::Null);
    Reply {
        status,
        headers,
        body,
    }
}

#[tokio::test]
async fn when_disabled_nothing_of_the_kit_exists() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("plain", Plan::Pro);
    let reply = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "unauthorized")],
        &call("tasks/get", json!({"id": "x"})),
    )
    .await;
    assert_eq!(reply.code(), -32001, "the header is not read");
    let mut body = send_body("test_echo", "hi", &uuid());
    body["params"]["message"]["metadata"]["simulate"] = json!("skill_failed");
    let reply = app.rpc(Some(&token), &body).await;
    assert_eq!(
        reply.result()["status"]["state"],
        "completed",
        "the metadata is not read"
    );
    assert_eq!(app.get("/conformance/report").await.status.as_u16(), 404);
    assert_eq!(app.get("/conformance").await.status.as_u16(), 404);
}

#[tokio::test]
async fn every_scenario_answers_as_the_real_condition() {
    let app = spawn_app(enabled).await;
    let token = app.token("scenarios", Plan::Pro);
    let get = call("tasks/get", json!({"id": "anything"}));

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "unauthorized")],
        &get,
    )
    .await;
    assert_eq!(
        (r.status.as_u16(), r.code(), r.body["id"].clone()),
        (401, -32004, json!("req-1"))
    );
    assert_eq!(r.body["error"]["data"]["name"], "UNAUTHORIZED");
    assert!(r.header("www-authenticate").unwrap().starts_with("Bearer "));
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "plan_required")],
        &get,
    )
    .await;
    assert_eq!((r.status.as_u16(), r.code()), (403, -32005));
    assert_eq!(r.body["error"]["data"]["name"], "PLAN_REQUIRED");

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "rate_limited;retry_after=7")],
        &send_body("test_echo", "x", &uuid()),
    )
    .await;
    assert_eq!((r.status.as_u16(), r.code()), (429, -32003));
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.body["error"]["data"]["retryAfter"], 7);

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "internal_error")],
        &get,
    )
    .await;
    assert_eq!((r.status.as_u16(), r.code()), (200, -32603));
    assert!(r.body["error"]["data"]["requestId"].is_string());

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "task_not_found")],
        &get,
    )
    .await;
    assert_eq!((r.status.as_u16(), r.code()), (200, -32001));
    assert_eq!(r.body["error"]["data"]["name"], "TASK_NOT_FOUND");

    let started = Instant::now();
    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "slow;ms=400")],
        &send_body("test_echo", "slowly", &uuid()),
    )
    .await;
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert_eq!(r.result()["status"]["state"], "completed");

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "skill_failed")],
        &send_body("test_echo", "fail me", &uuid()),
    )
    .await;
    let task = r.result().clone();
    assert_eq!(task["status"]["state"], "failed");
    assert_eq!(task["metadata"]["skillId"], "test_echo");
    let stored = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": task["id"]})))
        .await;
    assert_eq!(
        stored.result()["status"]["state"],
        "failed",
        "a real stored failed task"
    );

    // For clients that cannot set headers: message.metadata.simulate.
    let mut body = send_body("test_echo", "x", &uuid());
    body["params"]["message"]["metadata"]["simulate"] = json!("rate_limited;retry_after=3");
    let r = app.rpc(Some(&token), &body).await;
    assert_eq!((r.status.as_u16(), r.code()), (429, -32003));
    assert_eq!(r.header("retry-after"), Some("3"));

    let r = post(&app, Some(&token), &[("a2a-simulate", "explode")], &get).await;
    assert_eq!(r.code(), -32602);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unauthorized")
    );

    let card = app.get("/.well-known/agent.json").await.body;
    let text = card.to_string();
    assert!(
        text.contains("A2A-Simulate") && text.contains("slow;ms=N"),
        "the card documents the scenarios"
    );
}

#[tokio::test]
async fn the_report_names_each_misbehaviour() {
    let app = spawn_app(enabled).await;
    let token = app.token("sloppy", Plan::Pro);
    let run = [("a2a-client-run", "sloppy-run")];

    // content-type
    let r = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .header("a2a-client-run", "sloppy-run")
        .header("content-type", "text/plain")
        .body(call("tasks/get", json!({"id": "x"})).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 415);
    // malformed-envelope
    post(
        &app,
        Some(&token),
        &run,
        &json!({"jsonrpc": "2.0", "method": "tasks/get"}),
    )
    .await;
    // message-id-reused
    let id = uuid();
    post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "one", &id),
    )
    .await;
    post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "two", &id),
    )
    .await;
    // polling-terminal-task
    let task = post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "poll me", &uuid()),
    )
    .await
    .result()
    .clone();
    for _ in 0..2 {
        post(
            &app,
            Some(&token),
            &run,
            &call("tasks/get", json!({"id": task["id"]})),
        )
        .await;
    }

    // retry-too-soon
    post(
        &app,
        Some(&token),
        &[run[0], ("a2a-simulate", "rate_limited;retry_after=30")],
        &send_body("test_echo", "x", &uuid()),
    )
    .await;
    post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "again", &uuid()),
    )
    .await;
    // refused-token-reused
    post(
        &app,
        Some("bad.token.here"),
        &run,
        &call("tasks/get", json!({"id": "x"})),
    )
    .await;
    post(
        &app,
        Some("bad.token.here"),
        &run,
        &call("tasks/get", json!({"id": "x"})),
    )
    .await;
    // unsupported-method
    post(&app, Some(&token), &run, &call("message/stream", json!({}))).await;
    // card-refetched-early
    for _ in 0..2 {
        app.client
            .get(format!("{}/.well-known/agent.json", app.base))
            .header("a2a-client-run", "sloppy-run")
            .send()
            .await
            .unwrap();
    }
    // A well-behaved client on the same server has no findings.
    let good = app.token("careful", Plan::Pro);
    post(
        &app,
        Some(&good),
        &[("a2a-client-run", "careful-run")],
        &send_body("test_echo", "hello", &uuid()),
    )
    .await;

    let report = app.get("/conformance/report").await.body;
    let runs = report["runs"].as_array().unwrap();
    let sloppy = runs
        .iter()
        .find(|r| r["run"] == "run:sloppy-run")
        .expect("the named run");
    let rules: Vec<&str> = sloppy["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    for rule in [
        "content-type",
        "malformed-envelope",
        "message-id-reused",
        "retry-too-soon",
        "refused-token-reused",
        "unsupported-method",
        "card-refetched-early",
        "polling-terminal-task",
    ] {
        assert_eq!(
            rules.iter().filter(|r| **r == rule).count(),
            1,
            "{rule} in {rules:?}"
        );
    }
    for finding in sloppy["findings"].as_array().unwrap() {
        for field in ["at", "request", "detail", "why"] {
            assert!(
                !finding[field].as_str().unwrap().is_empty(),
                "{field} in {finding}"
            );
        }
    }
    let careful = runs.iter().find(|r| r["run"] == "run:careful-run").unwrap();
    assert_eq!(careful["findings"], json!([]));
    assert_eq!(careful["requests"], 1);

    let page = app
        .client
        .get(format!("{}/conformance", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("retry-too-soon") && page.contains("run:sloppy-run"));

    // The server runs on this test's runtime: wait for the command without blocking it.
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .args([
            "--config-dir",
            "/nonexistent",
            "conformance",
            "report",
            "--url",
            &app.base,
        ])
        .output()
        .await
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        printed.contains("[polling-terminal-task]") && printed.contains("run:sloppy-run"),
        "{printed}"
    );

    let cleared = app
        .client
        .delete(format!("{}/conformance/report", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status().as_u16(), 204);
    assert_eq!(app.get("/conformance/report").await.body["runs"], json!([]));
}

#[test]
fn the_production_profile_needs_a_second_key() {
    let mut settings = crate::helpers::test_settings();
    settings.profile = "production".into();
    settings.auth.issuer = Some("https://idp.example".into());
    settings.auth.audience = Some("magisterium-a2a".into());
    settings.server.public_url = Some("https://a2a.example.org".into());
    settings.conformance.enabled = true;
    let error = settings.validate().unwrap_err().to_string();
    assert!(error.contains("conformance.enabled"), "{error}");
    settings.conformance.allow_with_production_profile = true;
    assert!(settings.validate().is_ok());
}
