//! The client conformance kit: every scenario through real HTTP, every rule of the report, and
//! nothing of it when the kit is off.

use std::time::{Duration, Instant};

use magisterium_a2a::auth::{Plan, mint_hs256};
use magisterium_a2a::config::{LimitBackend, Settings};
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};

use crate::helpers::{RedisServer, Reply, TestApp, call, send_body, spawn_app, uuid, with_redis};

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
    assert_eq!(app.get("/conformance/findings").await.status.as_u16(), 404);
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
        (401, -32004, Value::Null),
        "answered from the headers, before the body is read"
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
    let app = spawn_app(|s| {
        enabled(s);
        s.auth.leeway_secs = 0;
        s.agent.streaming = false;
    })
    .await;
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
    // refused-token-reused: a token of this owner that expired, sent twice after a real 401.
    let short = mint_hs256(
        &app.settings.auth,
        crate::helpers::SECRET,
        "sloppy",
        Plan::Pro,
        Duration::from_secs(1),
    )
    .unwrap();
    let get = call("tasks/get", json!({"id": "x"}));
    assert_eq!(post(&app, Some(&short), &run, &get).await.code(), -32001);
    tokio::time::sleep(Duration::from_millis(2_100)).await;
    for _ in 0..2 {
        assert_eq!(
            post(&app, Some(&short), &run, &get).await.status.as_u16(),
            401
        );
    }
    // unsupported-method (resubscription, with streaming switched off)
    post(
        &app,
        Some(&token),
        &run,
        &call("tasks/resubscribe", json!({"id": "x"})),
    )
    .await;
    // card-refetched-early
    for _ in 0..2 {
        app.client
            .get(format!("{}/.well-known/agent.json", app.base))
            .bearer_auth(&token)
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

    let findings = findings_of(&app, &token, "sloppy-run").await;
    let rules = rules_of(&findings);
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
            rules.iter().filter(|r| *r == rule).count(),
            1,
            "{rule} in {rules:?}"
        );
    }
    for finding in &findings {
        for field in ["at", "request", "detail", "why", "requestId", "wire"] {
            assert!(
                !finding[field].as_str().unwrap().is_empty(),
                "{field} in {finding}"
            );
        }
    }
    let careful = app
        .client
        .get(format!("{}/conformance/report", app.base))
        .bearer_auth(&good)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(careful["runs"][0]["run"], "careful-run");
    assert_eq!(careful["runs"][0]["findings"], json!([]));
    assert_eq!(careful["runs"][0]["requests"], 1);
    assert_eq!(careful["runs"].as_array().unwrap().len(), 1, "{careful}");
    let coverage = &careful["runs"][0]["coverage"];
    assert_eq!(coverage["exercised"], json!([]));
    assert_eq!(
        coverage["untouched"].as_array().unwrap().len(),
        magisterium_a2a::conformance::Scenario::NAMES.len()
    );

    let sloppy = app
        .client
        .get(format!("{}/conformance/report?run=sloppy-run", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let coverage = &sloppy["runs"][0]["coverage"];
    assert_eq!(
        coverage["exercised"],
        json!([{"scenario": "rate_limited", "method": "message/send", "wire": "0.3", "binding": "jsonrpc", "calls": 1}])
    );
    let gaps = coverage["untouchedByMethod"].as_array().unwrap();
    let send = gaps
        .iter()
        .find(|g| g["method"] == "message/send" && g["wire"] == "0.3")
        .unwrap();
    assert!(
        !send["scenarios"]
            .as_array()
            .unwrap()
            .contains(&json!("rate_limited"))
    );
    assert!(
        send["scenarios"]
            .as_array()
            .unwrap()
            .contains(&json!("skill_failed"))
    );
    let get = gaps.iter().find(|g| g["method"] == "tasks/get").unwrap();
    assert!(
        get["scenarios"]
            .as_array()
            .unwrap()
            .contains(&json!("rate_limited"))
    );
    assert!(
        !get["scenarios"]
            .as_array()
            .unwrap()
            .contains(&json!("skill_failed")),
        "skill_failed does not apply to tasks/get"
    );

    let page = app
        .client
        .get(format!("{}/conformance/findings", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("retry-too-soon") && page.contains("sloppy-run"));
    assert!(!page.contains("careful-run"), "another owner's run");

    let cli = |args: &[&str]| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"));
        command
            .args(["--config-dir", "/nonexistent", "conformance", "report"])
            .args(["--url", &app.base, "--token", &token])
            .args(args);
        command
    };
    // The server runs on this test's runtime: wait for the command without blocking it.
    let output = cli(&["--run", "sloppy-run"]).output().await.unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        printed.contains("[polling-terminal-task] 1 findings") && printed.contains("sloppy-run"),
        "{printed}"
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(&app.base),
        "the command says which server it read"
    );
    let gated = cli(&["--fail-on-findings", "--format", "junit"])
        .output()
        .await
        .unwrap();
    assert!(!gated.status.success(), "findings fail the check");
    let junit = String::from_utf8_lossy(&gated.stdout);
    assert!(
        junit.contains("<testsuite ")
            && junit.contains("<failure message=\"1 findings\" type=\"retry-too-soon\">"),
        "{junit}"
    );
    let allow = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        allow.path(),
        "content-type\nmalformed-envelope\nmessage-id-reused\nretry-too-soon\nrefused-token-reused\nunsupported-method\ncard-refetched-early\npolling-terminal-task\n",
    )
    .unwrap();
    let allowed = cli(&["--fail-on-findings", "--allow-list"])
        .arg(allow.path())
        .output()
        .await
        .unwrap();
    assert!(
        allowed.status.success(),
        "every rule allowed: {}",
        String::from_utf8_lossy(&allowed.stderr)
    );

    let cleared = app
        .client
        .delete(format!("{}/conformance/report", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(cleared.status().as_u16(), 204);
    assert!(findings_of(&app, &token, "sloppy-run").await.is_empty());
    assert_eq!(
        findings_of(&app, &good, "careful-run").await,
        Vec::<Value>::new()
    );
}

#[tokio::test]
async fn the_newer_scenarios_answer_as_the_real_condition() {
    let app = spawn_app(enabled).await;
    let token = app.token("newer", Plan::Pro);
    let get = call("tasks/get", json!({"id": "anything"}));

    let r = post(&app, Some(&token), &[("a2a-simulate", "overloaded")], &get).await;
    assert_eq!((r.status.as_u16(), r.code()), (503, -32603));
    assert_eq!(r.header("retry-after"), Some("1"));
    assert_eq!(r.body["error"]["data"]["retryAfter"], 1);

    let r = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "expired_token")],
        &get,
    )
    .await;
    assert_eq!((r.status.as_u16(), r.code()), (401, -32004));
    assert!(
        r.header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
            && r.body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("expired"),
        "{:?}",
        r.body
    );

    // disconnect: the call runs, its answer is lost; the retry gets the same task.
    let body = send_body("test_echo", "lost answer", &uuid());
    let lost = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("a2a-simulate", "disconnect")
        .body(body.to_string())
        .send()
        .await;
    assert!(lost.is_err(), "the connection closes before the answer");
    let retried = post(&app, Some(&token), &[], &body).await;
    assert_eq!(retried.result()["status"]["state"], "completed");

    // malformed_response: a 200 whose body is not JSON.
    let r = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .header("a2a-simulate", "malformed_response")
        .body(get.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let text = r.text().await.unwrap();
    assert!(
        !text.is_empty() && serde_json::from_str::<Value>(&text).is_err(),
        "{text}"
    );

    let metrics = app.get("/metrics").await.body;
    let metrics = metrics.as_str().unwrap();
    assert!(metrics.contains("outcome=\"simulated\""), "{metrics}");
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

/// The findings of `run` as `token`'s owner reads them.
async fn findings_of(app: &TestApp, token: &str, run: &str) -> Vec<Value> {
    let report = app
        .client
        .get(format!("{}/conformance/report", app.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["run"] == run || r["run"] == format!("run:{run}"))
        .flat_map(|r| r["findings"].as_array().unwrap().clone())
        .collect()
}

fn rules_of(findings: &[Value]) -> Vec<String> {
    findings
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_simulated_refusal_does_not_mark_the_token_refused() {
    let app = spawn_app(enabled).await;
    let token = app.token("honest", Plan::Pro);
    let run = ("a2a-client-run", "after-simulated-401");
    let get = call("tasks/get", json!({"id": "x"}));
    let r = post(
        &app,
        Some(&token),
        &[run, ("a2a-simulate", "unauthorized")],
        &get,
    )
    .await;
    assert_eq!(r.status.as_u16(), 401);
    for _ in 0..3 {
        let r = post(&app, Some(&token), &[run], &get).await;
        assert_eq!(r.code(), -32001);
    }
    let findings = findings_of(&app, &token, run.1).await;
    assert!(
        !rules_of(&findings).contains(&"refused-token-reused".to_string()),
        "{findings:?}"
    );
}

#[tokio::test]
async fn retry_too_soon_counts_only_the_same_owner_and_bucket_at_the_limiter() {
    let app = spawn_app(enabled).await;
    let alice = app.token("alice", Plan::Pro);
    let bob = app.token("bob", Plan::Pro);
    let run = ("a2a-client-run", "limits");
    let r = post(
        &app,
        Some(&alice),
        &[run, ("a2a-simulate", "rate_limited;retry_after=60")],
        &send_body("test_echo", "x", &uuid()),
    )
    .await;
    assert_eq!(r.status.as_u16(), 429);
    // Another user, another bucket, and a request refused before the limiter: not too soon.
    post(
        &app,
        Some(&bob),
        &[run],
        &send_body("test_echo", "b", &uuid()),
    )
    .await;
    post(
        &app,
        Some(&alice),
        &[run],
        &send_body("test_expensive_echo", "e", &uuid()),
    )
    .await;
    let refused = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .bearer_auth(&alice)
        .header("a2a-client-run", "limits")
        .header("content-type", "text/plain")
        .body(send_body("test_echo", "t", &uuid()).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 415);
    assert!(
        !rules_of(&findings_of(&app, &bob, run.1).await).contains(&"retry-too-soon".to_string())
    );
    let rules = rules_of(&findings_of(&app, &alice, run.1).await);
    assert!(!rules.contains(&"retry-too-soon".to_string()), "{rules:?}");
    // The same user and bucket, at the limiter: too soon.
    post(
        &app,
        Some(&alice),
        &[run],
        &send_body("test_echo", "y", &uuid()),
    )
    .await;
    let findings = findings_of(&app, &alice, run.1).await;
    let too_soon: Vec<&Value> = findings
        .iter()
        .filter(|f| f["rule"] == "retry-too-soon")
        .collect();
    assert_eq!(too_soon.len(), 1, "{findings:?}");
    assert_eq!(too_soon[0]["causedBy"], "rate_limited", "{findings:?}");
}

#[tokio::test]
async fn simulated_refusals_do_not_spend_the_failed_authentication_budget() {
    let app = spawn_app(|s| {
        enabled(s);
        s.server.failed_auth_per_minute_per_ip = 3;
    })
    .await;
    let token = app.token("budget", Plan::Pro);
    let get = call("tasks/get", json!({"id": "x"}));
    for _ in 0..6 {
        let r = post(
            &app,
            Some(&token),
            &[("a2a-simulate", "unauthorized")],
            &get,
        )
        .await;
        assert_eq!(r.status.as_u16(), 401);
    }
    let fresh = app.token("fresh", Plan::Pro);
    let r = post(&app, Some(&fresh), &[], &get).await;
    assert_eq!(
        (r.status.as_u16(), r.code()),
        (200, -32001),
        "a valid token after simulated refusals: {:?}",
        r.body
    );
}

#[tokio::test]
async fn skill_failed_keeps_the_message_fingerprint() {
    let app = spawn_app(enabled).await;
    let token = app.token("retrier", Plan::Pro);
    let body = send_body("test_echo", "retry me", &uuid());
    let failed = post(
        &app,
        Some(&token),
        &[("a2a-simulate", "skill_failed")],
        &body,
    )
    .await;
    assert_eq!(failed.result()["status"]["state"], "failed");
    let retried = post(&app, Some(&token), &[], &body).await;
    assert_eq!(
        retried.body["result"]["id"],
        failed.result()["id"],
        "the identical message is the same message: {:?}",
        retried.body
    );
}

#[tokio::test]
async fn each_finding_names_the_exact_path_and_fault() {
    let app = spawn_app(enabled).await;
    let token = app.token("precise", Plan::Pro);
    let run = ("a2a-client-run", "precise");
    // A card fetch is attributed once the token was verified on a call.
    post(
        &app,
        Some(&token),
        &[run],
        &call("tasks/get", json!({"id": "x"})),
    )
    .await;
    for _ in 0..2 {
        app.client
            .get(format!("{}/.well-known/agent-card.json", app.base))
            .bearer_auth(&token)
            .header(run.0, run.1)
            .send()
            .await
            .unwrap();
    }
    // Three different envelope faults.
    for body in [
        json!({"jsonrpc": "2.0", "method": "tasks/get"}),
        json!({"jsonrpc": "1.0", "id": 1, "method": "tasks/get"}),
        json!({"jsonrpc": "2.0", "id": 1}),
    ] {
        post(&app, Some(&token), &[run], &body).await;
    }
    let findings = findings_of(&app, &token, run.1).await;
    let card: Vec<&Value> = findings
        .iter()
        .filter(|f| f["rule"] == "card-refetched-early")
        .collect();
    assert_eq!(card.len(), 1, "{findings:?}");
    assert!(
        card[0]["request"]
            .as_str()
            .unwrap()
            .contains("/.well-known/agent-card.json"),
        "{card:?}"
    );
    let details: std::collections::HashSet<&str> = findings
        .iter()
        .filter(|f| f["rule"] == "malformed-envelope")
        .map(|f| f["detail"].as_str().unwrap())
        .collect();
    assert_eq!(details.len(), 3, "{findings:?}");
    for finding in &findings {
        for field in ["requestId", "method", "scenario"] {
            assert!(finding.get(field).is_some(), "{field} in {finding}");
        }
        assert!(finding["simulated"].is_boolean(), "{finding}");
    }
}

#[tokio::test]
async fn simulations_other_than_unauthorized_need_a_valid_token() {
    let app = spawn_app(|s| {
        enabled(s);
        s.conformance.max_slow_ms = 5_000;
    })
    .await;
    let get = call("tasks/get", json!({"id": "x"}));
    let started = Instant::now();
    let r = post(&app, None, &[("a2a-simulate", "slow;ms=3000")], &get).await;
    assert_eq!(r.status.as_u16(), 401);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "slow is not honoured before authentication"
    );
    let r = post(
        &app,
        Some("not.a.token"),
        &[("a2a-simulate", "plan_required")],
        &get,
    )
    .await;
    assert_eq!(r.status.as_u16(), 401, "no simulated 403 without a token");
    let r = post(&app, None, &[("a2a-simulate", "unauthorized")], &get).await;
    assert_eq!(r.status.as_u16(), 401);
}

#[tokio::test]
async fn a_caller_sees_and_clears_only_its_own_runs() {
    let app = spawn_app(|s| {
        enabled(s);
        s.agent.streaming = false;
    })
    .await;
    let alice = app.token("alice", Plan::Pro);
    let bob = app.token("bob", Plan::Pro);
    let stream = call("tasks/resubscribe", json!({"id": "x"}));
    post(
        &app,
        Some(&alice),
        &[("a2a-client-run", "shared-name")],
        &stream,
    )
    .await;
    post(&app, Some(&bob), &[("a2a-client-run", "bobs")], &stream).await;

    let anonymous = app.get("/conformance/report").await;
    assert_eq!(anonymous.status.as_u16(), 401);
    let page = app.get("/conformance/findings").await;
    assert_eq!(
        page.status.as_u16(),
        401,
        "the page's findings need a token"
    );

    let as_bob = app
        .client
        .get(format!("{}/conformance/report?run=shared-name", app.base))
        .bearer_auth(&bob)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !as_bob.contains("shared-name"),
        "a run id alone is not enough: {as_bob}"
    );
    let deleted = app
        .client
        .delete(format!("{}/conformance/report?run=shared-name", app.base))
        .bearer_auth(&bob)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    let unauthenticated = app
        .client
        .delete(format!("{}/conformance/report", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status().as_u16(), 401);
    assert_eq!(
        rules_of(&findings_of(&app, &alice, "shared-name").await),
        vec!["unsupported-method"],
        "bob's DELETE did not clear alice's run"
    );
    let bobs_view = findings_of(&app, &bob, "bobs").await;
    assert_eq!(rules_of(&bobs_view), vec!["unsupported-method"]);
    let deleted = app
        .client
        .delete(format!("{}/conformance/report?run=shared-name", app.base))
        .bearer_auth(&alice)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    assert!(findings_of(&app, &alice, "shared-name").await.is_empty());
    assert_eq!(findings_of(&app, &bob, "bobs").await.len(), 1);
}

#[tokio::test]
async fn a_stalled_body_meets_the_body_deadline_with_the_kit_on() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app(|s| {
        enabled(s);
        s.server.body_read_timeout_secs = 1;
    })
    .await;
    let token = app.token("staller", Plan::Pro);
    let address = app.base.trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /api/v1/a2a HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("the body deadline answers a stalled body")
        .unwrap();
    let text = String::from_utf8_lossy(&answer[..read]);
    assert!(text.starts_with("HTTP/1.1 4"), "{text}");
}

#[tokio::test]
async fn recorded_values_are_truncated_not_whole() {
    let app = spawn_app(enabled).await;
    let token = app.token("long-ids", Plan::Pro);
    let long_id = format!("m-{}", "x".repeat(250));
    let run = ("a2a-client-run", "long");
    post(
        &app,
        Some(&token),
        &[run],
        &send_body("test_echo", "one", &long_id),
    )
    .await;
    post(
        &app,
        Some(&token),
        &[run],
        &send_body("test_echo", "two", &long_id),
    )
    .await;
    let findings = findings_of(&app, &token, run.1).await;
    assert!(
        rules_of(&findings).contains(&"message-id-reused".to_string()),
        "{findings:?}"
    );
    let text = serde_json::to_string(&findings).unwrap();
    assert!(!text.contains(&long_id), "the whole id is not kept");
    assert!(text.len() < 3_000, "{} bytes", text.len());
}

#[test]
fn the_kit_refuses_every_profile_but_development_and_test() {
    for (profile, allowed) in [
        ("development", true),
        ("test", true),
        ("staging", false),
        ("production", false),
    ] {
        let mut settings = crate::helpers::test_settings();
        settings.profile = profile.into();
        settings.auth.issuer = Some("https://issuer.example".into());
        settings.auth.audience = Some("magisterium-a2a".into());
        settings.server.public_url = Some("https://a2a.example".into());
        settings.conformance.enabled = true;
        let validated = settings.validate();
        if profile == "production" || profile == "staging" {
            let error = validated.unwrap_err().to_string();
            assert!(
                error.contains("ALLOW_WITH_PRODUCTION_PROFILE"),
                "{profile}: {error}"
            );
            settings.conformance.allow_with_production_profile = true;
            assert!(settings.validate().is_ok(), "{profile}");
        } else {
            assert_eq!(validated.is_ok(), allowed, "{profile}");
        }
    }
}

#[tokio::test]
async fn scenarios_on_the_1_0_wire_answer_in_its_terms_and_count_in_coverage() {
    let app = spawn_app(enabled).await;
    let token = app.token("wire-one", Plan::Pro);
    let send = |message_id: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": {
            "messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}],
            "metadata": {"skillId": "test_echo"}}}})
    };
    let run = ("a2a-client-run", "one-oh");
    let version = ("a2a-version", "1.0");
    let limited = post(
        &app,
        Some(&token),
        &[run, version, ("a2a-simulate", "rate_limited;retry_after=9")],
        &send(&uuid()),
    )
    .await;
    assert_eq!(limited.status.as_u16(), 429);
    assert_eq!(limited.header("retry-after"), Some("9"));
    let failed = post(
        &app,
        Some(&token),
        &[run, version, ("a2a-simulate", "skill_failed")],
        &send(&uuid()),
    )
    .await;
    assert_eq!(
        failed.result()["task"]["status"]["state"],
        "TASK_STATE_FAILED",
        "{:?}",
        failed.body
    );
    let report = app
        .client
        .get(format!("{}/conformance/report?run=one-oh", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    let exercised = &report["runs"][0]["coverage"]["exercised"];
    assert_eq!(
        exercised,
        &json!([
            {"scenario": "rate_limited", "method": "SendMessage", "wire": "1.0", "binding": "jsonrpc", "calls": 1},
            {"scenario": "skill_failed", "method": "SendMessage", "wire": "1.0", "binding": "jsonrpc", "calls": 1},
        ]),
        "{report}"
    );
    let findings = report["runs"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["rule"], "retry-too-soon");
    assert_eq!(findings[0]["wire"], "1.0");
    assert_eq!(findings[0]["causedBy"], "rate_limited");
    assert_eq!(findings[0]["scenario"], "skill_failed");
    assert_eq!(findings[0]["simulated"], true);
}

#[tokio::test]
async fn a_reused_message_id_is_served_as_a_new_message_and_reported() {
    let app = spawn_app(enabled).await;
    let token = app.token("reuser", Plan::Pro);
    let run = [("a2a-client-run", "reuse")];
    let id = uuid();
    let task_of = |reply: &Reply| reply.body["result"]["id"].as_str().unwrap().to_string();
    let first = post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "one", &id),
    )
    .await;
    let retried = post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "one", &id),
    )
    .await;
    assert_eq!(
        task_of(&first),
        task_of(&retried),
        "a retry answers its task"
    );
    assert!(
        findings_of(&app, &token, "reuse").await.is_empty(),
        "a retry of the same message is no finding"
    );
    let other = post(
        &app,
        Some(&token),
        &run,
        &send_body("test_echo", "two", &id),
    )
    .await;
    assert!(other.body.get("error").is_none(), "{:?}", other.body);
    assert_ne!(
        task_of(&first),
        task_of(&other),
        "another message, its own task"
    );
    let findings = findings_of(&app, &token, "reuse").await;
    assert_eq!(rules_of(&findings), ["message-id-reused"], "{findings:?}");
    assert_eq!(findings[0]["method"], "message/send", "{findings:?}");

    // The 1.0 wire is checked the same way, per owner: another owner's id is not this one's.
    let send = |text: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": {
            "messageId": id, "role": "ROLE_USER", "parts": [{"text": text}],
            "metadata": {"skillId": "test_echo"}}}})
    };
    let stranger = app.token("stranger", Plan::Pro);
    let v1_run = [("a2a-client-run", "reuse-1.0"), ("a2a-version", "1.0")];
    for text in ["three", "four"] {
        let answer = post(&app, Some(&stranger), &v1_run, &send(text)).await;
        assert!(
            answer.body["result"]["task"]["id"].is_string(),
            "{:?}",
            answer.body
        );
    }
    let findings = findings_of(&app, &stranger, "reuse-1.0").await;
    assert_eq!(rules_of(&findings), ["message-id-reused"], "{findings:?}");
    assert_eq!(findings[0]["wire"], "1.0", "{findings:?}");
}

/// A kit on a server whose pro users may send 2 messages a minute and hold 2 of its 8 slots.
fn two_a_minute_two_at_once(s: &mut Settings) {
    enabled(s);
    s.conformance.max_slow_ms = 5_000;
    s.limits.pro.default_per_minute = 2;
    s.server.max_in_flight = 8;
    s.server.max_in_flight_per_user = 2;
}

/// A `slow;ms=3000` message of `token` to the server at `base`, answered with its status, body
/// and time taken.
async fn slow_send(
    client: reqwest::Client,
    base: String,
    token: String,
    text: String,
) -> (u16, Value, Duration) {
    let started = Instant::now();
    let response = client
        .post(format!("{base}/api/v1/a2a"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("a2a-simulate", "slow;ms=3000")
        .body(send_body("test_echo", &text, &uuid()).to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: Value = response.json().await.unwrap();
    (status, body, started.elapsed())
}

/// Asserts a refusal answered at once (429 `-32003` in `bucket`), never after a sleep.
fn refused_at_once(answer: &(u16, Value, Duration), bucket: &str) {
    let (status, body, elapsed) = answer;
    assert_eq!(
        (*status, body["error"]["code"].as_i64()),
        (429, Some(-32003)),
        "{body}"
    );
    assert_eq!(body["error"]["data"]["bucket"], bucket, "{body}");
    assert!(
        *elapsed < Duration::from_millis(1500),
        "refused at once, not after sleeping: {elapsed:?}"
    );
}

/// Two `slow` messages are charged, then sleep holding their user's two slots: a third call
/// of the user is refused at once for the cap (bucket `in_flight`), another user is served
/// meanwhile, and once the two are answered a fourth `slow` message is refused at once by the
/// limiter (bucket `default`), not after a sleep.
async fn slow_calls_are_charged_first_on(app: &TestApp) {
    let token = app.token("sleeper", Plan::Pro);
    let slow = |text: &str| {
        slow_send(
            app.client.clone(),
            app.base.clone(),
            token.clone(),
            text.to_string(),
        )
    };
    let sleepers: Vec<_> = (0..2)
        .map(|i| tokio::spawn(slow(&format!("sleepy {i}"))))
        .collect();
    // Time for both to be charged and asleep (they sleep 3 s). Nothing else of the user's may
    // be in flight meanwhile: a probe of its own would take one of the two slots.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    refused_at_once(&slow("a third at once").await, "in_flight");
    let started = Instant::now();
    let bystander = app.token("bystander", Plan::Pro);
    let served = app.send(&bystander, "test_echo", "not kept waiting").await;
    assert_eq!(served.status.as_u16(), 200, "{}", served.body);
    assert!(started.elapsed() < Duration::from_secs(1));
    for sleeper in sleepers {
        let (status, body, elapsed) = sleeper.await.unwrap();
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["result"]["status"]["state"], "completed");
        assert!(elapsed >= Duration::from_millis(3000), "{elapsed:?}");
    }
    refused_at_once(&slow("over the limit").await, "default");
}

#[tokio::test]
async fn slow_calls_are_charged_before_they_sleep() {
    slow_calls_are_charged_first_on(&spawn_app(two_a_minute_two_at_once).await).await;
    // With the Redis store and limiter, a plain message's charge is applied by its save.
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        two_a_minute_two_at_once(s);
        with_redis(redis.url())(s);
        s.limits.backend = LimitBackend::Redis;
    })
    .await;
    slow_calls_are_charged_first_on(&app).await;
}

/// However many owners fill the kit's memory, a quiet owner's run stays in its report: when
/// memory is short, the runs that go are those of the owners holding the most.
#[tokio::test]
async fn other_owners_cannot_empty_a_report() {
    let app = spawn_app(|s| {
        enabled(s);
        s.conformance.max_memory_bytes = 64 * 1024;
        s.agent.streaming = false;
    })
    .await;
    let unsupported = call("tasks/resubscribe", json!({"id": "x"}));
    let quiet = app.token("quiet", Plan::Pro);
    post(
        &app,
        Some(&quiet),
        &[("a2a-client-run", "mine")],
        &unsupported,
    )
    .await;
    for owner in 0..12 {
        let loud = app.token(&format!("loud-{owner}"), Plan::Pro);
        for run in 0..12 {
            let name = format!("flood-{run}-{}", "x".repeat(48));
            post(
                &app,
                Some(&loud),
                &[("a2a-client-run", &name)],
                &unsupported,
            )
            .await;
        }
    }
    assert_eq!(
        rules_of(&findings_of(&app, &quiet, "mine").await),
        vec!["unsupported-method"],
        "twelve other owners did not push the quiet owner's run out"
    );
    let loud = app.token("loud-11", Plan::Pro);
    assert!(
        !findings_of(&app, &loud, &format!("flood-11-{}", "x".repeat(48)))
            .await
            .is_empty(),
        "the newest run of the last owner is kept"
    );
}
