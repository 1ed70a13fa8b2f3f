//! The HTTP+JSON binding (A2A 1.0 §11): each operation at its resource URL against its
//! JSON-RPC twin on one server (a task made through one binding is read through the other),
//! errors as `google.rpc.Status` bodies with their `ErrorInfo`, owner scoping, the rate
//! limiter's buckets shared by both bindings, malformed requests and authentication.

use std::time::Duration;

use magisterium_a2a::auth::Plan;
use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{RedisServer, Reply, TestApp, reply, spawn_app, sse_events, uuid, with_redis};
use crate::push::{Answer, Receiver};
use crate::push_methods::{push_app, working_task};

const BASE: &str = "/api/v1/a2a/rest";

/// A call of the binding: `method` on `{BASE}{path}` with an optional JSON body.
async fn rest(
    app: &TestApp,
    token: Option<&str>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Reply {
    let mut request = app
        .client
        .request(method, format!("{}{BASE}{path}", app.base))
        .header("A2A-Version", "1.0");
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/a2a+json")
            .body(body.to_string());
    }
    reply(request).await
}

/// A JSON-RPC 1.0 call.
async fn rpc1(app: &TestApp, token: &str, method: &str, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    reply(
        app.client
            .post(format!("{}/api/v1/a2a", app.base))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(token)
            .body(body.to_string()),
    )
    .await
}

fn message(skill: &str, text: &str) -> Value {
    json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}],
        "metadata": {"skillId": skill}}})
}

/// Asserts a `google.rpc.Status` error: HTTP status, its code and name, and the A2A
/// `ErrorInfo` reason and domain; returns the `ErrorInfo`'s metadata.
fn assert_status(reply: &Reply, status: u16, name: &str, reason: &str) -> Value {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    let error = &reply.body["error"];
    assert_eq!(error["code"], status, "{}", reply.body);
    assert_eq!(error["status"], name, "{}", reply.body);
    assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()));
    let info = &error["details"][0];
    assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
    assert_eq!(info["reason"], reason, "{}", reply.body);
    assert_eq!(info["domain"], "a2a-protocol.org");
    info.get("metadata").cloned().unwrap_or(Value::Null)
}

#[tokio::test]
async fn send_get_list_and_cancel_match_their_json_rpc_twins() {
    twins(&spawn_app(|_| {}).await).await;
}

#[tokio::test]
async fn send_get_list_and_cancel_match_their_json_rpc_twins_on_redis() {
    let redis = RedisServer::start();
    twins(&spawn_app(with_redis(redis.url())).await).await;
}

/// Each operation against its JSON-RPC twin on one server, and the metrics of both bindings.
async fn twins(app: &TestApp) {
    let token = app.token("rest-alice", Plan::Pro);

    let sent = rest(
        app,
        Some(&token),
        Method::POST,
        "/message:send",
        Some(&message("test_echo", "hello rest")),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    assert!(sent.header("ratelimit").is_some(), "a charged call says so");
    let task = &sent.body["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{}",
        sent.body
    );
    assert!(sent.body.get("jsonrpc").is_none(), "the bare result");
    let id = task["id"].as_str().unwrap().to_string();

    let through_rpc = rpc1(app, &token, "GetTask", json!({"id": id})).await;
    let through_rest = rest(
        app,
        Some(&token),
        Method::GET,
        &format!("/tasks/{id}"),
        None,
    )
    .await;
    assert_eq!(through_rest.status, 200, "{}", through_rest.body);
    assert_eq!(
        &through_rest.body,
        through_rpc.result(),
        "one task, both bindings"
    );

    let short = rest(
        app,
        Some(&token),
        Method::GET,
        &format!("/tasks/{id}?historyLength=0"),
        None,
    )
    .await;
    let short_rpc = rpc1(
        app,
        &token,
        "GetTask",
        json!({"id": id, "historyLength": 0}),
    )
    .await;
    assert_eq!(&short.body, short_rpc.result());

    // A task sent over JSON-RPC is read over REST.
    let other = rpc1(
        app,
        &token,
        "SendMessage",
        message("test_echo", "hello rpc"),
    )
    .await;
    let other_id = other.result()["task"]["id"].as_str().unwrap().to_string();
    let read = rest(
        app,
        Some(&token),
        Method::GET,
        &format!("/tasks/{other_id}"),
        None,
    )
    .await;
    assert_eq!(read.body["id"], other_id.as_str());

    let listed = rest(
        app,
        Some(&token),
        Method::GET,
        "/tasks?pageSize=1&includeArtifacts=true",
        None,
    )
    .await;
    let listed_rpc = rpc1(
        app,
        &token,
        "ListTasks",
        json!({"pageSize": 1, "includeArtifacts": true}),
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(&listed.body, listed_rpc.result());
    assert_eq!(listed.body["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(listed.body["totalSize"], 2);
    let by_context = rest(
        app,
        Some(&token),
        Method::GET,
        &format!("/tasks?context_id={}", task["contextId"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(
        by_context.body["tasks"][0]["id"],
        id.as_str(),
        "the proto name works too"
    );
    assert_eq!(by_context.body["tasks"].as_array().unwrap().len(), 1);

    let cancel = rest(
        app,
        Some(&token),
        Method::POST,
        &format!("/tasks/{id}:cancel"),
        None,
    )
    .await;
    let cancel_rpc = rpc1(app, &token, "CancelTask", json!({"id": id})).await;
    let metadata = assert_status(&cancel, 400, "INVALID_ARGUMENT", "TASK_NOT_CANCELABLE");
    assert!(metadata["state"].is_string(), "{metadata}");
    assert_eq!(
        cancel_rpc.body["error"]["data"][0]["reason"],
        "TASK_NOT_CANCELABLE"
    );

    let metrics = app.get("/metrics").await.body;
    let text = metrics.as_str().unwrap();
    for line in [
        r#"a2a_rpc_requests_total{method="SendMessage",outcome="ok",binding="http+json"} 1"#,
        r#"a2a_rpc_requests_total{method="SendMessage",outcome="ok",binding="jsonrpc"} 1"#,
        r#"a2a_rpc_requests_total{method="GetTask",outcome="ok",binding="http+json"} 3"#,
        r#"a2a_rpc_requests_total{method="CancelTask",outcome="INVALID_PARAMS",binding="http+json"} 1"#,
        r#"a2a_rpc_requests_total{method="CancelTask",outcome="INVALID_PARAMS",binding="jsonrpc"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
}

#[tokio::test]
async fn a_working_task_is_canceled_through_rest() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("rest-cancel", Plan::Pro);
    let id = working_task(&app, &token).await;
    let canceled = rest(
        &app,
        Some(&token),
        Method::POST,
        &format!("/tasks/{id}:cancel"),
        Some(&json!({"metadata": {"why": "test"}})),
    )
    .await;
    assert_eq!(canceled.status, 200, "{}", canceled.body);
    assert_eq!(canceled.body["id"], id.as_str());
    assert_eq!(canceled.body["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn another_users_task_is_not_found_on_every_route() {
    strangers(&push_app(|_| {}).await).await;
}

#[tokio::test]
async fn another_users_task_is_not_found_on_every_route_on_redis() {
    let redis = RedisServer::start();
    strangers(&push_app(with_redis(redis.url())).await).await;
}

/// Another user's task is not found through any route that names it, nor listed.
async fn strangers(app: &TestApp) {
    let alice = app.token("rest-owner", Plan::Pro);
    let bob = app.token("rest-stranger", Plan::Pro);
    let sent = rest(
        app,
        Some(&alice),
        Method::POST,
        "/message:send",
        Some(&message("test_echo", "mine")),
    )
    .await;
    let id = sent.body["task"]["id"].as_str().unwrap().to_string();
    let config = json!({"url": "https://example.com/hook"});
    let attempts = [
        (Method::GET, format!("/tasks/{id}"), None),
        (Method::POST, format!("/tasks/{id}:cancel"), None),
        (Method::GET, format!("/tasks/{id}:subscribe"), None),
        (
            Method::POST,
            format!("/tasks/{id}/pushNotificationConfigs"),
            Some(&config),
        ),
        (
            Method::GET,
            format!("/tasks/{id}/pushNotificationConfigs"),
            None,
        ),
        (
            Method::GET,
            format!("/tasks/{id}/pushNotificationConfigs/c-1"),
            None,
        ),
        (
            Method::DELETE,
            format!("/tasks/{id}/pushNotificationConfigs/c-1"),
            None,
        ),
    ];
    for (method, path, body) in attempts {
        let refused = rest(app, Some(&bob), method.clone(), &path, body).await;
        let metadata = assert_status(&refused, 404, "NOT_FOUND", "TASK_NOT_FOUND");
        assert_eq!(metadata["taskId"], id.as_str(), "{method} {path}");
    }
    let listed = rest(app, Some(&bob), Method::GET, "/tasks", None).await;
    assert_eq!(listed.body["tasks"], json!([]), "{}", listed.body);
    let own = rest(
        app,
        Some(&alice),
        Method::GET,
        &format!("/tasks/{id}"),
        None,
    )
    .await;
    assert_eq!(own.status, 200);
}

#[tokio::test]
async fn the_four_push_config_operations() {
    let app = push_app(|_| {}).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let token = app.token("rest-push", Plan::Pro);
    let id = working_task(&app, &token).await;
    let base = format!("/tasks/{id}/pushNotificationConfigs");

    let created = rest(
        &app,
        Some(&token),
        Method::POST,
        &base,
        Some(&json!({"id": "c-1", "url": url, "token": "tok-1"})),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let expected = json!({"id": "c-1", "taskId": id, "url": url, "token": "tok-1"});
    assert_eq!(created.body, expected);

    let got = rest(
        &app,
        Some(&token),
        Method::GET,
        &format!("{base}/c-1"),
        None,
    )
    .await;
    assert_eq!(got.body, expected);
    let got_rpc = rpc1(
        &app,
        &token,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert_eq!(
        got_rpc.result(),
        &expected,
        "the same config through JSON-RPC"
    );

    rest(
        &app,
        Some(&token),
        Method::POST,
        &base,
        Some(&json!({"id": "c-2", "url": url})),
    )
    .await;
    let page = rest(
        &app,
        Some(&token),
        Method::GET,
        &format!("{base}?pageSize=1"),
        None,
    )
    .await;
    assert_eq!(
        page.body["configs"].as_array().unwrap().len(),
        1,
        "{}",
        page.body
    );
    let token_next = page.body["nextPageToken"].as_str().unwrap().to_string();
    assert!(!token_next.is_empty());
    let rest_page = rest(
        &app,
        Some(&token),
        Method::GET,
        &format!("{base}?pageSize=1&pageToken={token_next}"),
        None,
    )
    .await;
    assert_eq!(
        rest_page.body["configs"][0]["id"], "c-2",
        "{}",
        rest_page.body
    );

    let deleted = rest(
        &app,
        Some(&token),
        Method::DELETE,
        &format!("{base}/c-1"),
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(deleted.body, json!({}));
    let gone = rest(
        &app,
        Some(&token),
        Method::GET,
        &format!("{base}/c-1"),
        None,
    )
    .await;
    // A config that is not there is refused as on JSON-RPC.
    assert_status(&gone, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
    let gone_rpc = rpc1(
        &app,
        &token,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert_eq!(
        gone_rpc.body["error"]["data"][0]["reason"],
        "INVALID_PARAMS"
    );

    let bad = rest(
        &app,
        Some(&token),
        Method::POST,
        &base,
        Some(&json!({"url": 7})),
    )
    .await;
    assert_status(&bad, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
}

#[tokio::test]
async fn the_extended_card_is_the_one_json_rpc_answers() {
    let app = spawn_app(|s| s.limits.reads_per_minute = 10).await;
    let token = app.token("rest-card", Plan::Pro);
    let mut card = rest(&app, Some(&token), Method::GET, "/extendedAgentCard", None)
        .await
        .body;
    let mut twin = rpc1(&app, &token, "GetExtendedAgentCard", json!({}))
        .await
        .body["result"]
        .take();
    // The two reads differ only in the calls left after each.
    let plan_of = |card: &mut Value| {
        card["capabilities"]["extensions"]
            .as_array_mut()
            .unwrap()
            .pop()
            .unwrap()
    };
    let (mut plan, mut twin_plan) = (plan_of(&mut card), plan_of(&mut twin));
    assert_eq!(card, twin);
    let left = plan["params"]["remaining"]["read"].take();
    let twin_left = twin_plan["params"]["remaining"]["read"].take();
    assert_eq!(left.as_u64().unwrap(), twin_left.as_u64().unwrap() + 1);
    assert_eq!(plan, twin_plan);
}

#[tokio::test]
async fn the_card_declares_the_binding_and_its_url() {
    let app = spawn_app(|_| {}).await;
    let card = app.get("/.well-known/agent-card.json").await.body;
    let interfaces = card["supportedInterfaces"].as_array().unwrap();
    let rest_url = format!("{}{BASE}", app.base);
    assert!(
        interfaces.contains(
            &json!({"url": rest_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"})
        ),
        "{card}"
    );
    assert_eq!(
        interfaces[0]["protocolBinding"], "JSONRPC",
        "JSON-RPC stays preferred"
    );
    let skill_card = app
        .get("/agents/test_echo/.well-known/agent-card.json")
        .await
        .body;
    let skill_rest = format!("{}/agents/test_echo/rest", app.base);
    assert!(
        skill_card["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["protocolBinding"] == "HTTP+JSON" && i["url"] == skill_rest.as_str()),
        "a skill's own agent has its HTTP+JSON binding below its endpoint: {skill_card}"
    );
}

#[tokio::test]
async fn malformed_requests_get_clear_errors() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("rest-bad", Plan::Pro);
    let url = |path: &str| format!("{}{BASE}{path}", app.base);

    let not_json = reply(
        app.client
            .post(url("/message:send"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body("{nope"),
    )
    .await;
    assert_status(&not_json, 400, "INVALID_ARGUMENT", "PARSE_ERROR");

    let array = reply(
        app.client
            .post(url("/message:send"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body("[1]"),
    )
    .await;
    assert_status(&array, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");

    let no_message = rest(
        &app,
        Some(&token),
        Method::POST,
        "/message:send",
        Some(&json!({})),
    )
    .await;
    assert_status(&no_message, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");

    let empty = reply(app.client.post(url("/message:send")).bearer_auth(&token)).await;
    assert_status(&empty, 415, "INVALID_ARGUMENT", "INVALID_REQUEST");

    let text = reply(
        app.client
            .post(url("/message:send"))
            .bearer_auth(&token)
            .header("content-type", "text/plain")
            .body(message("test_echo", "x").to_string()),
    )
    .await;
    assert_status(&text, 415, "INVALID_ARGUMENT", "INVALID_REQUEST");

    let unknown = rest(&app, Some(&token), Method::POST, "/message:teleport", None).await;
    assert_status(&unknown, 404, "NOT_FOUND", "METHOD_NOT_FOUND");
    let unknown = rest(&app, Some(&token), Method::GET, "", None).await;
    assert_status(&unknown, 404, "NOT_FOUND", "METHOD_NOT_FOUND");

    let wrong_method = rest(&app, Some(&token), Method::DELETE, "/message:send", None).await;
    assert_status(&wrong_method, 405, "UNIMPLEMENTED", "INVALID_REQUEST");

    let bad_option = rest(&app, Some(&token), Method::GET, "/tasks?pageSize=-1", None).await;
    assert_status(&bad_option, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
    let bad_state = rest(
        &app,
        Some(&token),
        Method::GET,
        "/tasks?status=TASK_STATE_SLEEPING",
        None,
    )
    .await;
    assert_status(&bad_state, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");

    let odd_id = rest(
        &app,
        Some(&token),
        Method::GET,
        "/tasks/%E2%9C%93%20%22x%22",
        None,
    )
    .await;
    let metadata = assert_status(&odd_id, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    assert_eq!(metadata["taskId"], "✓ \"x\"");
    let not_utf8 = rest(&app, Some(&token), Method::GET, "/tasks/%FF", None).await;
    assert_status(&not_utf8, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");

    let version = reply(
        app.client
            .get(url("/tasks"))
            .bearer_auth(&token)
            .header("A2A-Version", "2.0"),
    )
    .await;
    assert_status(&version, 400, "INVALID_ARGUMENT", "VERSION_NOT_SUPPORTED");
    let unversioned = reply(app.client.get(url("/tasks")).bearer_auth(&token)).await;
    assert_eq!(
        unversioned.status, 200,
        "no header is 1.0 here: {}",
        unversioned.body
    );

    let too_big = reply(
        app.client
            .post(url("/message:send"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(vec![b' '; app.settings.server.max_body_bytes + 1]),
    )
    .await;
    assert_status(&too_big, 413, "INVALID_ARGUMENT", "INVALID_REQUEST");

    let file = rest(
        &app,
        Some(&token),
        Method::POST,
        "/message:send",
        Some(
            &json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
            "parts": [{"url": "https://example.com/a.pdf", "mediaType": "application/pdf"}],
            "metadata": {"skillId": "test_echo"}}}),
        ),
    )
    .await;
    assert_status(&file, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
}

#[tokio::test]
async fn authentication_and_plan_refusals_carry_their_headers() {
    let app = spawn_app(|_| {}).await;
    let none = rest(&app, None, Method::GET, "/tasks", None).await;
    assert_status(&none, 401, "UNAUTHENTICATED", "UNAUTHORIZED");
    assert!(
        none.header("www-authenticate")
            .unwrap()
            .starts_with("Bearer")
    );
    let unknown_route = rest(&app, None, Method::GET, "/nowhere", None).await;
    assert_status(&unknown_route, 401, "UNAUTHENTICATED", "UNAUTHORIZED");
    let forged = rest(
        &app,
        Some("not-a-jwt"),
        Method::POST,
        "/message:send",
        Some(&message("test_echo", "x")),
    )
    .await;
    assert_status(&forged, 401, "UNAUTHENTICATED", "UNAUTHORIZED");
    assert!(
        forged
            .header("www-authenticate")
            .unwrap()
            .contains("invalid_token")
    );
    let free = app.token("rest-free", Plan::Free);
    let refused = rest(&app, Some(&free), Method::GET, "/tasks", None).await;
    assert_status(&refused, 403, "PERMISSION_DENIED", "PLAN_REQUIRED");
}

#[tokio::test]
async fn a_rest_call_costs_what_its_json_rpc_twin_costs() {
    let app = spawn_app(|s| {
        s.limits.pro.default_per_minute = 3;
        s.limits.reads_per_minute = 3;
    })
    .await;
    let token = app.token("rest-limited", Plan::Pro);
    // Sends: spent through REST, refused on JSON-RPC.
    let mut sent = 0;
    loop {
        let answer = rest(
            &app,
            Some(&token),
            Method::POST,
            "/message:send",
            Some(&message("test_echo", "x")),
        )
        .await;
        if answer.status == 429 {
            let metadata = assert_status(&answer, 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED");
            assert_eq!(metadata["bucket"], "default");
            assert!(answer.header("retry-after").is_some());
            assert!(answer.header("ratelimit").is_some());
            break;
        }
        assert_eq!(answer.status, 200, "{}", answer.body);
        sent += 1;
        assert!(sent < 20, "the bucket never ran out");
    }
    let twin = rpc1(&app, &token, "SendMessage", message("test_echo", "x")).await;
    assert_eq!(
        twin.status, 429,
        "one bucket for both bindings: {}",
        twin.body
    );

    // Reads: spent through JSON-RPC, refused on REST.
    let mut read = 0;
    while rpc1(&app, &token, "ListTasks", json!({})).await.status != 429 {
        read += 1;
        assert!(read < 20, "the read bucket never ran out");
    }
    let refused = rest(&app, Some(&token), Method::GET, "/tasks", None).await;
    let metadata = assert_status(&refused, 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED");
    assert_eq!(metadata["bucket"], "read");
    assert!(refused.header("retry-after").is_some());
}

#[tokio::test]
async fn streams_and_subscriptions_send_1_0_stream_responses() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("rest-stream", Plan::Pro);
    let response = app
        .client
        .post(format!("{}{BASE}/message:stream", app.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(message("test_echo", "stream me").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let text = tokio::time::timeout(Duration::from_secs(10), response.text())
        .await
        .expect("the stream ends after the final status")
        .unwrap();
    let events = sse_events(&text);
    assert!(events.len() >= 2, "{text}");
    assert!(
        events.iter().all(|e| e.get("jsonrpc").is_none()),
        "bare events: {text}"
    );
    let id = events[0]["task"]["id"]
        .as_str()
        .expect("the task first")
        .to_string();
    let last = events.last().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{text}"
    );

    // The task has finished: a subscription resumed after its first event reads the rest (a
    // new one is refused, as A2A 1.0 says: `streaming::a_new_1_0_subscription_…`).
    for method in [Method::GET, Method::POST] {
        let subscribed = app
            .client
            .request(
                method.clone(),
                format!("{}{BASE}/tasks/{id}:subscribe", app.base),
            )
            .bearer_auth(&token)
            .header("Last-Event-ID", "0")
            .send()
            .await
            .unwrap();
        assert_eq!(subscribed.status(), 200, "{method}");
        let text = tokio::time::timeout(Duration::from_secs(10), subscribed.text())
            .await
            .expect("a finished task's stream ends")
            .unwrap();
        assert!(text.contains("TASK_STATE_COMPLETED"), "{method}: {text}");
        assert!(!text.contains("jsonrpc"), "{text}");
    }
    let missing = rest(
        &app,
        Some(&token),
        Method::GET,
        "/tasks/no-such-task:subscribe",
        None,
    )
    .await;
    assert_status(&missing, 404, "NOT_FOUND", "TASK_NOT_FOUND");
}

#[tokio::test]
async fn the_kits_scenarios_apply_to_rest_calls() {
    let app = spawn_app(|s| s.conformance.enabled = true).await;
    let token = app.token("rest-kit", Plan::Pro);
    let simulated = |scenario: &'static str, method: Method, path: &'static str| {
        let mut request = app
            .client
            .request(method, format!("{}{BASE}{path}", app.base))
            .bearer_auth(&token)
            .header("A2A-Simulate", scenario);
        if path.ends_with(":send") {
            request = request
                .header("content-type", "application/json")
                .body(message("test_echo", "x").to_string());
        }
        reply(request)
    };
    let unauthorized = simulated("unauthorized", Method::GET, "/tasks").await;
    assert_status(&unauthorized, 401, "UNAUTHENTICATED", "UNAUTHORIZED");
    let limited = simulated("rate_limited;retry_after=7", Method::POST, "/message:send").await;
    assert_status(&limited, 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED");
    assert_eq!(limited.header("retry-after"), Some("7"));
    let missing = simulated("task_not_found", Method::GET, "/tasks/t-1").await;
    let metadata = assert_status(&missing, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    assert_eq!(metadata["taskId"], "t-1");
    let failed = simulated("skill_failed", Method::POST, "/message:send").await;
    assert_eq!(failed.status, 200, "{}", failed.body);
    assert_eq!(failed.body["task"]["status"]["state"], "TASK_STATE_FAILED");
    let report = reply(
        app.client
            .get(format!("{}/conformance/report", app.base))
            .bearer_auth(&token),
    )
    .await;
    let text = report.body.to_string();
    assert!(text.contains("/api/v1/a2a/rest/message:send"), "{text}");
    let metrics = app.get("/metrics").await.body;
    let text = metrics.as_str().unwrap();
    assert!(
        text.contains(
            r#"a2a_rpc_requests_total{method="GetTask",outcome="simulated",binding="http+json"} 1"#
        ),
        "{text}"
    );
}

/// The kit's report and its page name the binding of each recorded call: the same scenario on
/// the same 1.0 method through JSON-RPC and through HTTP+JSON counts twice in coverage, and
/// each finding says which binding the call came through.
#[tokio::test]
async fn the_report_and_its_page_name_the_binding_of_each_call() {
    let app = spawn_app(|s| s.conformance.enabled = true).await;
    let token = app.token("two-bindings", Plan::Pro);
    let through = |rest: bool, scenario: &'static str| {
        let (url, body) = if rest {
            (
                format!("{}{BASE}/message:send", app.base),
                message("test_echo", "x"),
            )
        } else {
            let body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage",
                "params": message("test_echo", "x")});
            (format!("{}/api/v1/a2a", app.base), body)
        };
        reply(
            app.client
                .post(url)
                .bearer_auth(&token)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .header("A2A-Client-Run", "both")
                .header("A2A-Simulate", scenario)
                .body(body.to_string()),
        )
    };
    let limited = through(true, "rate_limited;retry_after=9").await;
    assert_status(&limited, 429, "RESOURCE_EXHAUSTED", "RATE_LIMITED");
    for rest in [false, true] {
        let failed = through(rest, "skill_failed").await;
        assert_eq!(failed.status, 200, "{}", failed.body);
    }
    let report = reply(
        app.client
            .get(format!("{}/conformance/report?run=both", app.base))
            .bearer_auth(&token),
    )
    .await
    .body;
    let run = &report["runs"][0];
    assert_eq!(
        run["coverage"]["exercised"],
        json!([
            {"scenario": "rate_limited", "method": "SendMessage", "wire": "1.0",
                "binding": "http+json", "calls": 1},
            {"scenario": "skill_failed", "method": "SendMessage", "wire": "1.0",
                "binding": "http+json", "calls": 1},
            {"scenario": "skill_failed", "method": "SendMessage", "wire": "1.0",
                "binding": "jsonrpc", "calls": 1},
        ]),
        "{report}"
    );
    let gaps = run["coverage"]["untouchedByMethod"].as_array().unwrap();
    let untried = |binding: &str| {
        let gap = gaps.iter().find(|g| g["binding"] == binding).unwrap();
        gap["scenarios"]
            .as_array()
            .unwrap()
            .contains(&json!("rate_limited"))
    };
    assert!(untried("jsonrpc") && !untried("http+json"), "{report}");
    let findings: Vec<(&Value, &Value, &Value)> = run["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (&f["rule"], &f["binding"], &f["request"]))
        .collect();
    assert_eq!(
        findings,
        [
            (
                &json!("retry-too-soon"),
                &json!("jsonrpc"),
                &json!("POST /api/v1/a2a")
            ),
            (
                &json!("retry-too-soon"),
                &json!("http+json"),
                &json!("POST /api/v1/a2a/rest/message:send")
            ),
        ],
        "{report}"
    );
    let page = app
        .client
        .get(format!("{}/conformance/findings?run=both", app.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for cell in [
        r#"<td class="binding">jsonrpc 1.0</td>"#,
        r#"<td class="binding">http+json 1.0</td>"#,
        "Never tried on SendMessage (jsonrpc 1.0)",
    ] {
        assert!(page.contains(cell), "{cell} not in {page}");
    }
}

/// A refusal given before the body is read (the token, the plan, an unknown route) leaves the
/// body unread, and the server reads no further request on that connection: the answer says so
/// with `Connection: close`, or a client that keeps the connection for its next call (the Python
/// SDK's pool does) meets "server disconnected" on that call. An answer that read its body, and
/// one to a request without a body, keep the connection.
#[tokio::test]
async fn a_refusal_that_leaves_the_body_unread_closes_the_connection() {
    let app = spawn_app(|_| {}).await;
    let pro = app.token("keep-alive", Plan::Pro);
    let free = app.token("keep-alive-free", Plan::Free);
    let body = message("test_echo", "x");
    let cases = [
        (free.as_str(), "/message:send", 403, true),
        ("not-a-token", "/message:send", 401, true),
        (pro.as_str(), "/message:teleport", 404, true),
        (pro.as_str(), "/message:send", 200, false),
    ];
    for (token, path, status, closes) in cases {
        let answer = rest(&app, Some(token), Method::POST, path, Some(&body)).await;
        assert_eq!(answer.status.as_u16(), status, "{path}: {}", answer.body);
        assert_eq!(
            answer.header("connection") == Some("close"),
            closes,
            "{path} answered {status} with {:?}",
            answer.headers
        );
    }
    let bodiless = rest(&app, Some("not-a-token"), Method::GET, "/tasks", None).await;
    assert_eq!(bodiless.status.as_u16(), 401);
    assert_eq!(
        bodiless.header("connection"),
        None,
        "{:?}",
        bodiless.headers
    );
    let twin = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": body});
    let refused = reply(
        app.client
            .post(format!("{}/api/v1/a2a", app.base))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(&free)
            .body(twin.to_string()),
    )
    .await;
    assert_eq!(refused.status.as_u16(), 403);
    assert_eq!(refused.header("connection"), Some("close"));
}

#[tokio::test]
async fn a_browsers_preflight_is_answered_on_every_route() {
    let app = spawn_app(|_| {}).await;
    for path in [
        "/message:send",
        "/tasks/t-1",
        "/tasks/t-1/pushNotificationConfigs/c-1",
    ] {
        let response = app
            .client
            .request(Method::OPTIONS, format!("{}{BASE}{path}", app.base))
            .header("origin", "https://orchestrator.example")
            .header("access-control-request-method", "DELETE")
            .header(
                "access-control-request-headers",
                "authorization,a2a-version",
            )
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 204, "{path}");
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-origin"], "*");
        let methods = headers["access-control-allow-methods"].to_str().unwrap();
        assert!(methods.contains("DELETE"), "{methods}");
        let allowed = headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase();
        assert!(
            allowed.contains("authorization") && allowed.contains("a2a-version"),
            "{allowed}"
        );
    }
}

#[tokio::test]
async fn json_rpc_1_0_reads_proto_field_names_too() {
    let app = push_app(|_| {}).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let token = app.token("rest-proto-names", Plan::Pro);
    let sent = rpc1(
        &app,
        &token,
        "SendMessage",
        json!({"message": {"message_id": uuid(), "role": "ROLE_USER",
            "parts": [{"text": "proto names"}], "metadata": {"skillId": "test_slow"}},
            "configuration": {"return_immediately": true}}),
    )
    .await;
    let task = &sent.result()["task"];
    assert_ne!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "return_immediately is read: {task}"
    );
    let id = task["id"].as_str().unwrap().to_string();
    let created = rpc1(
        &app,
        &token,
        "CreateTaskPushNotificationConfig",
        json!({"task_id": id, "url": receiver.url()}),
    )
    .await;
    assert_eq!(created.result()["taskId"], id.as_str(), "{}", created.body);
    let listed = rpc1(
        &app,
        &token,
        "ListTaskPushNotificationConfigs",
        json!({"task_id": id, "page_size": 1}),
    )
    .await;
    assert_eq!(listed.result()["configs"].as_array().unwrap().len(), 1);
    let finished = rpc1(
        &app,
        &token,
        "SendMessage",
        json!({"message": {"message_id": uuid(), "role": "ROLE_USER",
            "parts": [{"text": "finished"}], "metadata": {"skillId": "test_echo"}}}),
    )
    .await;
    let finished_id = finished.result()["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let tasks = rpc1(
        &app,
        &token,
        "ListTasks",
        json!({"page_size": 1, "include_artifacts": true}),
    )
    .await;
    let page = tasks.result();
    assert_eq!(page["tasks"].as_array().unwrap().len(), 1, "{page}");
    assert_eq!(page["tasks"][0]["id"], finished_id.as_str());
    assert!(!page["tasks"][0]["artifacts"].as_array().unwrap().is_empty());
}

/// Every route is served below a tenant too; one tenant is served, so a task made below one
/// reads below another and below none.
#[tokio::test]
async fn routes_below_a_tenant_reach_the_same_operations() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("rest-tenant", Plan::Pro);
    let sent = rest(
        &app,
        Some(&token),
        Method::POST,
        "/acme/message:send",
        Some(&message("test_echo", "below a tenant")),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.body);
    let id = sent.body["task"]["id"].as_str().unwrap().to_string();
    for path in [
        format!("/acme/tasks/{id}"),
        format!("/other/tasks/{id}"),
        format!("/tasks/{id}"),
    ] {
        let read = rest(&app, Some(&token), Method::GET, &path, None).await;
        assert_eq!(read.status, 200, "{path}: {}", read.body);
        assert_eq!(read.body["id"], id.as_str(), "{path}");
    }
    let listed = rest(
        &app,
        Some(&token),
        Method::GET,
        "/acme/tasks?pageSize=5",
        None,
    )
    .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["tasks"][0]["id"], id.as_str());
    let card = rest(
        &app,
        Some(&token),
        Method::GET,
        "/acme/extendedAgentCard",
        None,
    )
    .await;
    assert_eq!(card.status, 200, "{}", card.body);
    let stranger = app.token("rest-tenant-stranger", Plan::Pro);
    let hidden = rest(
        &app,
        Some(&stranger),
        Method::GET,
        &format!("/acme/tasks/{id}"),
        None,
    )
    .await;
    assert_status(&hidden, 404, "NOT_FOUND", "TASK_NOT_FOUND");
    let unknown = rest(&app, Some(&token), Method::GET, "/acme/other/tasks", None).await;
    assert_status(&unknown, 404, "NOT_FOUND", "METHOD_NOT_FOUND");
}
