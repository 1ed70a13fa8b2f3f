//! The A2A 1.0 wire beside 0.3 on the same endpoint: methods, parts without `kind`, wrapped
//! results, every error's 1.0 code, reason and HTTP status, and one store read through both wires.

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{Reply, TestApp, call, reply, send_body, spawn_app, uuid};

/// POSTs `body` with an optional bearer token and `A2A-Version` header.
async fn post(app: &TestApp, token: Option<&str>, version: Option<&str>, body: String) -> Reply {
    let mut request = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    reply(request).await
}

async fn rpc1(app: &TestApp, token: Option<&str>, method: &str, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 11, "method": method, "params": params});
    post(app, token, Some("1.0"), body.to_string()).await
}

fn message(skill: &str, parts: Value) -> Value {
    json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "parts": parts,
        "metadata": {"skillId": skill}}})
}

/// Asserts a 1.0 error: code, `ErrorInfo` reason and domain, HTTP status; returns its metadata.
fn assert_v1_error(reply: &Reply, code: i64, reason: &str, status: u16) -> Value {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.code(), code, "{}", reply.body);
    let info = &reply.body["error"]["data"][0];
    assert_eq!(
        info["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{}",
        reply.body
    );
    assert_eq!(info["reason"], reason, "{}", reply.body);
    assert_eq!(info["domain"], "a2a-protocol.org");
    assert!(reply.body["error"]["message"].as_str().is_some());
    info.get("metadata").cloned().unwrap_or(Value::Null)
}

#[tokio::test]
async fn send_message_takes_parts_without_kind_and_wraps_the_task() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-user", Plan::Pro);
    let reply = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message(
            "test_echo",
            json!([{"text": "hello", "futureField": true}, {"data": {"date": "2026-12-08"}}]),
        ),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.body["id"], 11);
    let task = &reply.result()["task"];
    assert!(task.get("kind").is_none(), "{task}");
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task["metadata"]["skillId"], "test_echo");
    assert_eq!(task["history"][0]["role"], "ROLE_USER");
    assert_eq!(task["history"][1]["role"], "ROLE_AGENT");
    assert_eq!(task["history"][0]["taskId"], task["id"]);
    assert!(task["history"][0]["parts"][0].get("kind").is_none());
    let parts = &task["artifacts"][0]["parts"];
    assert_eq!(parts[0], json!({"text": "echo: hello"}));
    assert_eq!(parts[1]["data"]["data"]["date"], "2026-12-08");
    assert!(reply.header("ratelimit").is_some());
}

#[tokio::test]
async fn a_failed_task_reads_as_failed_on_the_1_0_wire() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-fail", Plan::Pro);
    let reply = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message("test_fail", json!([{"text": "x"}])),
    )
    .await;
    let task = &reply.result()["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED");
    assert_eq!(task["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(task["artifacts"], json!([]));
}

#[tokio::test]
async fn one_task_reads_the_same_through_both_wires() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("both-wires", Plan::Pro);

    let created = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message("test_echo", json!([{"text": "one"}])),
    )
    .await;
    let v1_task = created.result()["task"].clone();
    let id = v1_task["id"].as_str().unwrap();
    let legacy = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": id})))
        .await;
    let legacy = legacy.result();
    assert_eq!(legacy["kind"], "task");
    assert_eq!(legacy["id"], v1_task["id"]);
    assert_eq!(legacy["contextId"], v1_task["contextId"]);
    assert_eq!(legacy["status"]["state"], "completed");
    assert_eq!(
        legacy["status"]["timestamp"],
        v1_task["status"]["timestamp"]
    );
    assert_eq!(legacy["history"][0]["role"], "user");
    assert_eq!(
        legacy["history"][1]["parts"][0],
        json!({"kind": "text", "text": "echo: one"})
    );
    assert_eq!(
        legacy["artifacts"][0]["artifactId"],
        v1_task["artifacts"][0]["artifactId"]
    );

    let created = app.send(&token, "test_echo", "two").await;
    let legacy_task = created.result().clone();
    let id = legacy_task["id"].as_str().unwrap();
    let read = rpc1(&app, Some(&token), "GetTask", json!({"id": id})).await;
    let read = read.result();
    assert!(read.get("task").is_none(), "GetTask returns the bare task");
    assert_eq!(read["id"], legacy_task["id"]);
    assert_eq!(read["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(read["history"].as_array().unwrap().len(), 2);
    assert_eq!(read["history"][0]["parts"][0], json!({"text": "two"}));
}

#[tokio::test]
async fn get_task_trims_history_and_ids_keep_their_type() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-get", Plan::Pro);
    let created = app.send(&token, "test_echo", "hello").await;
    let id = created.result()["id"].as_str().unwrap().to_string();
    let body = json!({"jsonrpc": "2.0", "id": "abc", "method": "GetTask",
        "params": {"id": id, "historyLength": 1, "tenant": ""}});
    let reply = post(&app, Some(&token), Some("1.0"), body.to_string()).await;
    assert_eq!(reply.body["id"], "abc");
    let history = reply.result()["history"].as_array().unwrap().clone();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["role"], "ROLE_AGENT");
}

#[tokio::test]
async fn task_errors_use_the_1_0_codes() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-errors", Plan::Pro);
    let created = app.send(&token, "test_echo", "hello").await;
    let id = created.result()["id"].as_str().unwrap().to_string();

    let cancel = rpc1(&app, Some(&token), "CancelTask", json!({"id": id})).await;
    let metadata = assert_v1_error(&cancel, -32002, "TASK_NOT_CANCELABLE", 200);
    assert_eq!(metadata["state"], "completed");

    let missing = rpc1(&app, Some(&token), "GetTask", json!({"id": "nope"})).await;
    let metadata = assert_v1_error(&missing, -32001, "TASK_NOT_FOUND", 200);
    assert_eq!(metadata["taskId"], "nope");
    let missing = rpc1(&app, Some(&token), "CancelTask", json!({"id": "nope"})).await;
    assert_v1_error(&missing, -32001, "TASK_NOT_FOUND", 200);

    let other = app.token("someone-else", Plan::Pro);
    let foreign = rpc1(&app, Some(&other), "GetTask", json!({"id": id})).await;
    assert_v1_error(&foreign, -32001, "TASK_NOT_FOUND", 200);
}

#[tokio::test]
async fn params_errors_use_the_1_0_codes() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-params", Plan::Pro);

    let skill = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message("no_such_skill", json!([{"text": "x"}])),
    )
    .await;
    let metadata = assert_v1_error(&skill, -32602, "SKILL_NOT_FOUND", 200);
    assert_eq!(metadata["skillId"], "no_such_skill");
    let available = metadata["availableSkills"].as_str().unwrap();
    assert!(
        available.split(',').any(|id| id == "test_echo"),
        "{available}"
    );
    assert!(available.split(',').any(|id| id == "catholic_qa"));

    let refusals = [
        ("empty part", message("test_echo", json!([{}]))),
        (
            "two members",
            message("test_echo", json!([{"text": "a", "data": {}}])),
        ),
        ("scalar data", message("test_echo", json!([{"data": 3}]))),
        ("no parts", message("test_echo", json!([]))),
        (
            "agent role",
            json!({"message": {"messageId": uuid(), "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}),
        ),
        (
            "0.3 role",
            json!({"message": {"messageId": uuid(), "role": "user", "parts": [{"text": "x"}]}}),
        ),
        ("params not an object", json!([1])),
        ("no message", json!({})),
    ];
    for (name, params) in refusals {
        let reply = rpc1(&app, Some(&token), "SendMessage", params).await;
        assert_eq!(reply.code(), -32602, "{name}: {}", reply.body);
        assert_v1_error(&reply, -32602, "INVALID_PARAMS", 200);
    }
    // A leftover 0.3 `kind` is an unknown field to 1.0, so it is ignored like any other.
    let leftover = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message("test_echo", json!([{"kind": "text", "text": "x"}])),
    )
    .await;
    assert_eq!(
        leftover.result()["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let history = rpc1(
        &app,
        Some(&token),
        "GetTask",
        json!({"id": "x", "historyLength": -1}),
    )
    .await;
    assert_v1_error(&history, -32602, "INVALID_PARAMS", 200);
}

#[tokio::test]
async fn methods_this_server_does_not_offer() {
    // Streaming and push notifications switched off, as the hosted reference is.
    let app = spawn_app(|s| {
        s.agent.streaming = false;
        s.agent.push_notifications = false;
    })
    .await;
    let token = app.token("v1-methods", Plan::Pro);
    let cases = [
        ("SendStreamingMessage", -32004, "UNSUPPORTED_OPERATION"),
        ("SubscribeToTask", -32004, "UNSUPPORTED_OPERATION"),
        (
            "CreateTaskPushNotificationConfig",
            -32003,
            "PUSH_NOTIFICATION_NOT_SUPPORTED",
        ),
        ("NoSuchMethod", -32601, "METHOD_NOT_FOUND"),
    ];
    for (method, code, reason) in cases {
        let reply = rpc1(&app, Some(&token), method, json!({})).await;
        let metadata = assert_v1_error(&reply, code, reason, 200);
        assert_eq!(metadata["method"], method);
    }
    // Without the header, an unknown method stays on the 0.3 wire and its table.
    let legacy = post(
        &app,
        Some(&token),
        None,
        call("NoSuchMethod", json!({})).to_string(),
    )
    .await;
    assert_eq!(legacy.code(), -32601);
    assert_eq!(legacy.body["error"]["data"]["name"], "METHOD_NOT_FOUND");
}

#[tokio::test]
async fn refusals_before_dispatch_use_1_0_statuses() {
    let app = spawn_app(|s| s.limits.pro.default_per_minute = 1).await;
    let send = |id: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "SendMessage",
            "params": message("test_echo", json!([{"text": "hi"}]))})
        .to_string()
    };

    // Refusals answered from the headers alone, before the body is read: the A2A-Version
    // header chooses the wire (1.0 clients send it), and the id is null.
    let none = post(&app, None, Some("1.0"), send("a")).await;
    assert_v1_error(&none, -32000, "UNAUTHORIZED", 401);
    assert_eq!(none.body["id"], Value::Null);
    assert!(
        none.header("www-authenticate")
            .unwrap()
            .starts_with("Bearer")
    );
    let bad = post(&app, Some("not-a-jwt"), Some("1.0"), send("b")).await;
    assert_v1_error(&bad, -32000, "UNAUTHORIZED", 401);
    assert!(
        bad.header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );

    let free = app.token("v1-free", Plan::Free);
    let plan = post(&app, Some(&free), Some("1.0"), send("c")).await;
    assert_v1_error(&plan, -32000, "PLAN_REQUIRED", 403);

    let pro = app.token("v1-limited", Plan::Pro);
    let first = post(&app, Some(&pro), None, send("d")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    let limited = post(&app, Some(&pro), None, send("e")).await;
    let metadata = assert_v1_error(&limited, -32000, "RATE_LIMITED", 429);
    let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!(retry >= 1);
    assert_eq!(metadata["retryAfter"], retry.to_string());
    assert_eq!(metadata["bucket"], "default");

    // The 0.3 wire keeps its own codes for the same refusals.
    let legacy = app.rpc(None, &send_body("test_echo", "hi", &uuid())).await;
    assert_eq!((legacy.status.as_u16(), legacy.code()), (401, -32004));
    assert_eq!(legacy.body["error"]["data"]["name"], "UNAUTHORIZED");
}

#[tokio::test]
async fn envelope_errors_follow_the_version_header() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-envelope", Plan::Pro);

    let parse = post(&app, Some(&token), Some("1.0"), "{".into()).await;
    assert_v1_error(&parse, -32700, "PARSE_ERROR", 200);
    assert_eq!(parse.body["id"], Value::Null);

    let no_jsonrpc = json!({"id": 4, "method": "GetTask", "params": {"id": "x"}});
    let reply = post(&app, Some(&token), None, no_jsonrpc.to_string()).await;
    assert_v1_error(&reply, -32600, "INVALID_REQUEST", 200);
    assert_eq!(reply.body["id"], 4);

    let object_id = json!({"jsonrpc": "2.0", "id": {}, "method": "GetTask", "params": {"id": "x"}});
    let reply = post(&app, Some(&token), None, object_id.to_string()).await;
    assert_v1_error(&reply, -32600, "INVALID_REQUEST", 200);
    assert_eq!(reply.body["id"], Value::Null);

    let legacy = post(&app, Some(&token), Some("0.3"), "{".into()).await;
    assert_eq!(legacy.code(), -32700);
    assert_eq!(legacy.body["error"]["data"]["name"], "PARSE_ERROR");

    let unsupported = rpc_with_version(&app, &token, "2.0").await;
    let metadata = assert_v1_error(&unsupported, -32009, "VERSION_NOT_SUPPORTED", 200);
    assert_eq!(metadata["requestedVersion"], "2.0");
}

async fn rpc_with_version(app: &TestApp, token: &str, version: &str) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": "x"}});
    post(app, Some(token), Some(version), body.to_string()).await
}

#[tokio::test]
async fn the_0_3_wire_is_unchanged_by_the_header() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v03-header", Plan::Pro);
    let reply = post(
        &app,
        Some(&token),
        Some("0.3"),
        send_body("test_echo", "hello", &uuid()).to_string(),
    )
    .await;
    let task = reply.result();
    assert_eq!(task["kind"], "task");
    assert_eq!(task["status"]["state"], "completed");
    let id = task["id"].as_str().unwrap();
    let cancel = post(
        &app,
        Some(&token),
        Some("1.0"),
        call("tasks/cancel", json!({"id": id})).to_string(),
    )
    .await;
    assert_eq!(cancel.code(), -32602);
    assert_eq!(cancel.body["error"]["data"]["name"], "INVALID_PARAMS");
}

#[tokio::test]
async fn internal_errors_keep_the_request_id_on_the_1_0_wire() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-panic", Plan::Pro);
    let reply = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message("test_panic", json!([{"text": "x"}])),
    )
    .await;
    let metadata = assert_v1_error(&reply, -32603, "INTERNAL_ERROR", 200);
    assert_eq!(metadata["requestId"].as_str(), reply.header("x-request-id"));
    assert!(!reply.body.to_string().contains("on purpose"));
}

#[tokio::test]
async fn the_card_advertises_both_wires() {
    let app = spawn_app(|_| {}).await;
    for path in ["/.well-known/agent.json", "/.well-known/agent-card.json"] {
        let card = app.get(path).await.body;
        let url = card["url"].as_str().unwrap();
        assert!(url.ends_with("/api/v1/a2a"));
        assert_eq!(card["protocolVersion"], "0.3.0");
        assert_eq!(card["preferredTransport"], "JSONRPC");
        let interfaces = card["supportedInterfaces"].as_array().unwrap();
        assert_eq!(
            interfaces[0],
            json!({"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"})
        );
        assert_eq!(
            interfaces[1],
            json!({"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3.0"})
        );
    }
}

#[tokio::test]
async fn metrics_name_each_1_0_method() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-metrics", Plan::Pro);
    let sent = rpc1(
        &app,
        Some(&token),
        "SendMessage",
        message("test_echo", json!([{"text": "hi"}])),
    )
    .await;
    assert!(sent.body["result"]["task"].is_object(), "{}", sent.body);
    rpc1(&app, Some(&token), "GetTask", json!({"id": "nope"})).await;
    rpc1(&app, Some(&token), "SubscribeToTask", json!({"id": "x"})).await;
    rpc1(&app, Some(&token), "NoSuchMethod", json!({})).await;
    let text = app.get("/metrics").await.body.as_str().unwrap().to_string();
    for line in [
        r#"a2a_rpc_requests_total{method="SendMessage",outcome="ok",binding="jsonrpc"} 1"#,
        r#"a2a_rpc_requests_total{method="GetTask",outcome="TASK_NOT_FOUND",binding="jsonrpc"} 1"#,
        r#"a2a_rpc_requests_total{method="SubscribeToTask",outcome="TASK_NOT_FOUND",binding="jsonrpc"} 1"#,
        r#"a2a_rpc_requests_total{method="other",outcome="METHOD_NOT_FOUND",binding="jsonrpc"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
}

#[tokio::test]
async fn the_version_may_come_as_a_query_parameter() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("v1-query-version", Plan::Pro);
    let get_task = json!({"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": "x"}});
    let at = |query: &str, header: Option<&str>| {
        let body = if query.contains("2.0") {
            get_task.to_string()
        } else {
            "{".to_string()
        };
        let mut request = app
            .client
            .post(format!("{}/api/v1/a2a?{query}", app.base))
            .header("content-type", "application/json")
            .bearer_auth(&token)
            .body(body);
        if let Some(version) = header {
            request = request.header("A2A-Version", version);
        }
        reply(request)
    };
    // A body that does not parse names no method: the version alone chooses the wire.
    assert_v1_error(
        &at("A2A-Version=1.0", None).await,
        -32700,
        "PARSE_ERROR",
        200,
    );
    let legacy = at("a2a-version=", None).await;
    assert_eq!(
        legacy.body["error"]["data"]["name"], "PARSE_ERROR",
        "empty is 0.3"
    );
    let unsupported = at("A2A-Version=2.0", None).await;
    let metadata = assert_v1_error(&unsupported, -32009, "VERSION_NOT_SUPPORTED", 200);
    assert_eq!(metadata["requestedVersion"], "2.0");
    let header_wins = at("A2A-Version=2.0", Some("1.0")).await;
    assert_v1_error(&header_wins, -32001, "TASK_NOT_FOUND", 200);
    let rest = reply(
        app.client
            .get(format!(
                "{}/api/v1/a2a/rest/tasks?A2A-Version=9.9",
                app.base
            ))
            .bearer_auth(&token),
    )
    .await;
    assert_eq!(rest.status, 400, "{}", rest.body);
    assert_eq!(
        rest.body["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
}
