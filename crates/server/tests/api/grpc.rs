//! The gRPC binding (A2A 1.0 §10) over real HTTP/2 connections to the server's one port: each
//! RPC against its JSON-RPC twin (a task made through one binding is read through the other),
//! every error as its gRPC status with the A2A `ErrorInfo`, owner scoping, the rate limiter's
//! buckets shared with the other bindings, streams (through a second replica on one Redis, and
//! cancelled by their client), the edge's refusals as trailers-only answers, and the health and
//! reflection services beside the A2A service.

use std::time::Duration;

use axum::http::uri::PathAndQuery;
use magisterium_a2a::auth::Plan;
use magisterium_a2a::bindings::grpc::codec::DynamicCodec;
use magisterium_a2a::bindings::grpc::schema::descriptor_pool;
use prost_reflect::{DynamicMessage, MethodDescriptor};
use serde_json::{Value, json};
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;
use tonic::{Code, Status, Streaming};
use tonic_types::StatusExt;

use crate::helpers::{RedisServer, TestApp, reply, spawn_app, uuid, with_redis};
use crate::push::{Answer, Receiver};
use crate::push_methods::push_app;

const SERVICE: &str = "lf.a2a.v1.A2AService";

/// A connection to the app (h2c, as a gRPC client dials a plain-text target).
pub(crate) async fn channel(app: &TestApp) -> Channel {
    Channel::from_shared(app.base.clone())
        .unwrap()
        .connect()
        .await
        .expect("an HTTP/2 connection")
}

pub(crate) fn method(rpc: &str) -> MethodDescriptor {
    descriptor_pool()
        .get_service_by_name(SERVICE)
        .unwrap()
        .methods()
        .find(|m| m.name() == rpc)
        .unwrap_or_else(|| panic!("no RPC {rpc}"))
}

/// An RPC's request: the message from its ProtoJSON form, the token and other metadata.
fn request(
    rpc: &MethodDescriptor,
    token: Option<&str>,
    message: Value,
    metadata: &[(&'static str, &str)],
) -> (tonic::Request<DynamicMessage>, PathAndQuery) {
    let message = DynamicMessage::deserialize(rpc.input(), message).expect("a valid request");
    let mut request = tonic::Request::new(message);
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    for (name, value) in metadata {
        request.metadata_mut().insert(*name, value.parse().unwrap());
    }
    let path = format!("/{SERVICE}/{}", rpc.name()).parse().unwrap();
    (request, path)
}

/// A message as ProtoJSON.
pub(crate) fn json_of(message: &DynamicMessage) -> Value {
    serde_json::to_value(message).unwrap()
}

/// A unary RPC: its answer as ProtoJSON with its metadata, or its status.
pub(crate) async fn call(
    channel: &Channel,
    token: Option<&str>,
    rpc: &str,
    message: Value,
    metadata: &[(&'static str, &str)],
) -> Result<(Value, MetadataMap), Status> {
    let rpc = method(rpc);
    let (request, path) = request(&rpc, token, message, metadata);
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let response = grpc
        .unary(request, path, DynamicCodec::new(rpc.output()))
        .await?;
    let (metadata, message, _) = response.into_parts();
    Ok((json_of(&message), metadata))
}

/// A unary RPC that must succeed.
async fn ok(channel: &Channel, token: &str, rpc: &str, message: Value) -> Value {
    call(channel, Some(token), rpc, message, &[])
        .await
        .unwrap_or_else(|status| panic!("{rpc}: {status:?}"))
        .0
}

/// A server-streaming RPC's messages.
pub(crate) async fn open_stream(
    channel: &Channel,
    token: &str,
    rpc: &str,
    message: Value,
    metadata: &[(&'static str, &str)],
) -> Result<Streaming<DynamicMessage>, Status> {
    let rpc = method(rpc);
    let (request, path) = request(&rpc, Some(token), message, metadata);
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let response = grpc
        .server_streaming(request, path, DynamicCodec::new(rpc.output()))
        .await?;
    Ok(response.into_inner())
}

/// Every message of a stream, to its end.
async fn all_of(mut stream: Streaming<DynamicMessage>) -> Vec<Value> {
    let mut events = Vec::new();
    let read = async {
        while let Some(message) = stream.message().await.expect("the stream ends with OK") {
            events.push(json_of(&message));
        }
    };
    tokio::time::timeout(Duration::from_secs(15), read)
        .await
        .expect("the stream ends after the final status");
    events
}

/// Asserts a status: its code and the A2A `ErrorInfo` reason and domain; returns the
/// `ErrorInfo`'s metadata.
fn assert_error(
    answer: Result<(Value, MetadataMap), Status>,
    code: Code,
    reason: &str,
) -> std::collections::HashMap<String, String> {
    let status = answer.expect_err("a refusal");
    assert_status(&status, code, reason)
}

pub(crate) fn assert_status(
    status: &Status,
    code: Code,
    reason: &str,
) -> std::collections::HashMap<String, String> {
    assert_eq!(status.code(), code, "{status:?}");
    assert!(!status.message().is_empty());
    let details = status.get_error_details();
    let info = details.error_info().expect("an ErrorInfo in the details");
    assert_eq!(info.reason, reason, "{status:?}");
    assert_eq!(info.domain, "a2a-protocol.org");
    info.metadata.clone()
}

pub(crate) fn message(skill: &str, text: &str) -> Value {
    json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}],
        "metadata": {"skillId": skill}}})
}

/// A JSON-RPC 1.0 call's result.
async fn rpc1(app: &TestApp, token: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let answer = reply(
        app.client
            .post(format!("{}/api/v1/a2a", app.base))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .bearer_auth(token)
            .body(body.to_string()),
    )
    .await;
    answer.body
}

#[tokio::test]
async fn every_unary_rpc_matches_its_json_rpc_twin() {
    twins(&spawn_app(|_| {}).await).await;
}

#[tokio::test]
async fn every_unary_rpc_matches_its_json_rpc_twin_on_redis() {
    let redis = RedisServer::start();
    twins(&spawn_app(with_redis(redis.url())).await).await;
}

/// Each operation against its JSON-RPC twin on one server, and the metrics of the binding.
async fn twins(app: &TestApp) {
    let token = app.token("grpc-alice", Plan::Pro);
    let channel = channel(app).await;

    let (sent, metadata) = call(
        &channel,
        Some(&token),
        "SendMessage",
        message("test_echo", "hello grpc"),
        &[("a2a-version", "1.0")],
    )
    .await
    .expect("sent");
    assert!(
        metadata.get("ratelimit").is_some(),
        "a charged call says so"
    );
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    let id = task["id"].as_str().unwrap().to_string();
    assert!(
        task["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("hello grpc")),
        "{sent}"
    );

    let through_grpc = ok(&channel, &token, "GetTask", json!({"id": id})).await;
    let through_rpc = rpc1(app, &token, "GetTask", json!({"id": id})).await;
    assert_eq!(through_grpc["id"], through_rpc["result"]["id"]);
    assert_eq!(through_grpc["status"], through_rpc["result"]["status"]);
    assert_eq!(
        through_grpc["artifacts"],
        through_rpc["result"]["artifacts"]
    );
    let short = ok(
        &channel,
        &token,
        "GetTask",
        json!({"id": id, "historyLength": 0}),
    )
    .await;
    assert!(short.get("history").is_none(), "{short}");

    // A task sent over JSON-RPC is read over gRPC.
    let other = rpc1(
        app,
        &token,
        "SendMessage",
        message("test_echo", "hello rpc"),
    )
    .await;
    let other_id = other["result"]["task"]["id"].as_str().unwrap().to_string();
    let read = ok(&channel, &token, "GetTask", json!({"id": other_id})).await;
    assert_eq!(read["id"], other_id.as_str());

    let listed = ok(
        &channel,
        &token,
        "ListTasks",
        json!({"pageSize": 1, "includeArtifacts": true}),
    )
    .await;
    let listed_rpc = rpc1(
        app,
        &token,
        "ListTasks",
        json!({"pageSize": 1, "includeArtifacts": true}),
    )
    .await;
    assert_eq!(listed["tasks"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(
        listed["tasks"][0]["id"],
        listed_rpc["result"]["tasks"][0]["id"]
    );
    assert_eq!(listed["totalSize"], 2);
    assert_eq!(
        listed["nextPageToken"],
        listed_rpc["result"]["nextPageToken"]
    );
    let by_context = ok(
        &channel,
        &token,
        "ListTasks",
        json!({"contextId": task["contextId"]}),
    )
    .await;
    assert_eq!(by_context["tasks"].as_array().unwrap().len(), 1);

    let cancel = call(&channel, Some(&token), "CancelTask", json!({"id": id}), &[]).await;
    let metadata = assert_error(cancel, Code::FailedPrecondition, "TASK_NOT_CANCELABLE");
    assert!(metadata.contains_key("state"), "{metadata:?}");

    let metrics = app.get("/metrics").await.body;
    let text = metrics.as_str().unwrap();
    for line in [
        r#"a2a_rpc_requests_total{method="SendMessage",outcome="ok",binding="grpc"} 1"#,
        r#"a2a_rpc_requests_total{method="GetTask",outcome="ok",binding="grpc"} 3"#,
        r#"a2a_rpc_requests_total{method="ListTasks",outcome="ok",binding="grpc"} 2"#,
        r#"a2a_rpc_requests_total{method="CancelTask",outcome="INVALID_PARAMS",binding="grpc"} 1"#,
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
}

#[tokio::test]
async fn another_users_task_is_not_found_on_every_rpc() {
    strangers(&push_app(|_| {}).await).await;
}

#[tokio::test]
async fn another_users_task_is_not_found_on_every_rpc_on_redis() {
    let redis = RedisServer::start();
    strangers(&push_app(with_redis(redis.url())).await).await;
}

/// Another user's task is not found through any RPC that names it, nor listed.
async fn strangers(app: &TestApp) {
    let alice = app.token("grpc-owner", Plan::Pro);
    let bob = app.token("grpc-stranger", Plan::Pro);
    let channel = channel(app).await;
    let sent = ok(
        &channel,
        &alice,
        "SendMessage",
        message("test_echo", "mine"),
    )
    .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let attempts = [
        ("GetTask", json!({"id": id})),
        ("CancelTask", json!({"id": id})),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": "https://example.com/hook"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c-1"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": id})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "c-1"}),
        ),
    ];
    for (rpc, request) in attempts {
        let refused = call(&channel, Some(&bob), rpc, request, &[]).await;
        let metadata = assert_error(refused, Code::NotFound, "TASK_NOT_FOUND");
        assert_eq!(metadata["taskId"], id, "{rpc}");
    }
    let subscribed = open_stream(&channel, &bob, "SubscribeToTask", json!({"id": id}), &[]).await;
    assert_status(
        &subscribed.expect_err("refused"),
        Code::NotFound,
        "TASK_NOT_FOUND",
    );
    let listed = ok(&channel, &bob, "ListTasks", json!({})).await;
    assert!(listed.get("tasks").is_none(), "{listed}");
    let own = ok(&channel, &alice, "GetTask", json!({"id": id})).await;
    assert_eq!(own["id"], id.as_str());
}

#[tokio::test]
async fn every_refusal_has_its_status_and_error_info() {
    let app = spawn_app(|_| {}).await;
    let channel = channel(&app).await;
    let token = app.token("grpc-errors", Plan::Pro);

    let missing = call(
        &channel,
        Some(&token),
        "GetTask",
        json!({"id": "no-such-task"}),
        &[],
    )
    .await;
    let metadata = assert_error(missing, Code::NotFound, "TASK_NOT_FOUND");
    assert_eq!(metadata["taskId"], "no-such-task");

    let none = call(&channel, None, "GetTask", json!({"id": "t"}), &[]).await;
    let status = none.expect_err("refused");
    assert_status(&status, Code::Unauthenticated, "UNAUTHORIZED");
    assert!(
        status
            .metadata()
            .get("www-authenticate")
            .is_some_and(|challenge| challenge.to_str().unwrap().starts_with("Bearer")),
        "{status:?}"
    );
    let forged = call(
        &channel,
        Some("not-a-jwt"),
        "SendMessage",
        message("test_echo", "x"),
        &[],
    )
    .await;
    assert_error(forged, Code::Unauthenticated, "UNAUTHORIZED");
    let free = app.token("grpc-free", Plan::Free);
    let refused = call(&channel, Some(&free), "ListTasks", json!({}), &[]).await;
    assert_error(refused, Code::PermissionDenied, "PLAN_REQUIRED");

    let version = call(
        &channel,
        Some(&token),
        "ListTasks",
        json!({}),
        &[("a2a-version", "2.0")],
    )
    .await;
    assert_error(version, Code::FailedPrecondition, "VERSION_NOT_SUPPORTED");

    let no_message = call(&channel, Some(&token), "SendMessage", json!({}), &[]).await;
    assert_error(no_message, Code::InvalidArgument, "INVALID_PARAMS");
    let no_id = call(&channel, Some(&token), "GetTask", json!({}), &[]).await;
    assert_error(no_id, Code::InvalidArgument, "INVALID_PARAMS");
    let bad_page = call(
        &channel,
        Some(&token),
        "ListTasks",
        json!({"pageSize": 0}),
        &[],
    )
    .await;
    assert_error(bad_page, Code::InvalidArgument, "INVALID_PARAMS");
    let file = call(
        &channel,
        Some(&token),
        "SendMessage",
        json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
            "parts": [{"url": "https://example.com/a.pdf", "mediaType": "application/pdf"}],
            "metadata": {"skillId": "test_echo"}}}),
        &[],
    )
    .await;
    assert_error(file, Code::InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED");
    let skill = call(
        &channel,
        Some(&token),
        "SendMessage",
        message("no_such_skill", "x"),
        &[],
    )
    .await;
    assert_error(skill, Code::InvalidArgument, "SKILL_NOT_FOUND");

    // A message over `server.max_body_bytes` is refused on its length prefix, before it is read.
    let huge = "x".repeat(app.settings.server.max_body_bytes + 1);
    let too_big = call(
        &channel,
        Some(&token),
        "SendMessage",
        message("test_echo", &huge),
        &[],
    )
    .await;
    let status = too_big.expect_err("refused");
    assert_status(&status, Code::ResourceExhausted, "INVALID_REQUEST");
    assert!(status.message().contains("limit"), "{status:?}");

    // A finished task takes no new subscription (A2A 1.0 §10.4.6).
    let sent = ok(
        &channel,
        &token,
        "SendMessage",
        message("test_echo", "done"),
    )
    .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let finished = open_stream(&channel, &token, "SubscribeToTask", json!({"id": id}), &[]).await;
    assert_status(
        &finished.expect_err("refused"),
        Code::FailedPrecondition,
        "UNSUPPORTED_OPERATION",
    );

    // An RPC the service does not have.
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let get = method("GetTask");
    let (mut unknown, _) = request(&get, Some(&token), json!({"id": "t"}), &[]);
    unknown.metadata_mut().remove("a2a-version");
    let answer = grpc
        .unary(
            unknown,
            format!("/{SERVICE}/Teleport").parse().unwrap(),
            DynamicCodec::new(get.output()),
        )
        .await;
    assert_eq!(answer.expect_err("refused").code(), Code::Unimplemented);
    let (other_service, _) = request(&get, Some(&token), json!({"id": "t"}), &[]);
    grpc.ready().await.unwrap();
    let answer = grpc
        .unary(
            other_service,
            "/a2a.v1.A2AService/GetTask".parse().unwrap(),
            DynamicCodec::new(get.output()),
        )
        .await;
    assert_eq!(answer.expect_err("refused").code(), Code::Unimplemented);
}

#[tokio::test]
async fn a_grpc_call_costs_what_its_json_rpc_twin_costs() {
    let app = spawn_app(|s| {
        s.limits.pro.default_per_minute = 3;
        s.limits.reads_per_minute = 3;
    })
    .await;
    let channel = channel(&app).await;
    let token = app.token("grpc-limited", Plan::Pro);
    let mut sent = 0;
    let status = loop {
        match call(
            &channel,
            Some(&token),
            "SendMessage",
            message("test_echo", "x"),
            &[],
        )
        .await
        {
            Ok(_) => sent += 1,
            Err(status) => break status,
        }
        assert!(sent < 20, "the bucket never ran out");
    };
    let metadata = assert_status(&status, Code::ResourceExhausted, "RATE_LIMITED");
    assert_eq!(metadata["bucket"], "default");
    let retry = status.get_error_details();
    let delay = retry
        .retry_info()
        .and_then(|info| info.retry_delay)
        .expect("RetryInfo with a delay");
    assert!(delay > Duration::ZERO, "{delay:?}");
    let twin = rpc1(&app, &token, "SendMessage", message("test_echo", "x")).await;
    assert_eq!(
        twin["error"]["data"][0]["reason"], "RATE_LIMITED",
        "one bucket for every binding: {twin}"
    );

    // Reads: spent through JSON-RPC, refused on gRPC.
    let mut read = 0;
    while rpc1(&app, &token, "ListTasks", json!({}))
        .await
        .get("error")
        .is_none()
    {
        read += 1;
        assert!(read < 20, "the read bucket never ran out");
    }
    let refused = call(&channel, Some(&token), "ListTasks", json!({}), &[]).await;
    let metadata = assert_error(refused, Code::ResourceExhausted, "RATE_LIMITED");
    assert_eq!(metadata["bucket"], "read");
}

/// Failed tokens over gRPC spend the address's budget as they do over HTTP: once spent, a
/// call whose token fails is refused as rate-limited.
#[tokio::test]
async fn failed_tokens_spend_the_address_budget() {
    let app = spawn_app(|s| s.server.failed_auth_per_minute_per_ip = 2).await;
    let channel = channel(&app).await;
    for _ in 0..2 {
        let refused = call(&channel, Some("forged"), "ListTasks", json!({}), &[]).await;
        assert_error(refused, Code::Unauthenticated, "UNAUTHORIZED");
    }
    let blocked = call(&channel, Some("forged"), "ListTasks", json!({}), &[]).await;
    let metadata = assert_error(blocked, Code::ResourceExhausted, "RATE_LIMITED");
    assert_eq!(metadata["bucket"], "unauthenticated");
    let token = app.token("grpc-good", Plan::Pro);
    ok(&channel, &token, "ListTasks", json!({})).await;
}

#[tokio::test]
async fn the_four_push_config_rpcs() {
    let app = push_app(|_| {}).await;
    let receiver = Receiver::start(vec![Answer::Status(200)]).await;
    let url = receiver.url();
    let channel = channel(&app).await;
    let token = app.token("grpc-push", Plan::Pro);
    let sent = ok(
        &channel,
        &token,
        "SendMessage",
        json!({"message": message("test_slow", "wait")["message"],
            "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let created = ok(
        &channel,
        &token,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1", "url": url, "token": "tok-1"}),
    )
    .await;
    let expected = json!({"id": "c-1", "taskId": id, "url": url, "token": "tok-1"});
    assert_eq!(created, expected);
    let got = ok(
        &channel,
        &token,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert_eq!(got, expected);
    let twin = rpc1(
        &app,
        &token,
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert_eq!(twin["result"], expected, "the same config through JSON-RPC");
    ok(
        &channel,
        &token,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-2", "url": url}),
    )
    .await;
    let page = ok(
        &channel,
        &token,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id, "pageSize": 1}),
    )
    .await;
    assert_eq!(page["configs"].as_array().unwrap().len(), 1, "{page}");
    let next = page["nextPageToken"].as_str().unwrap();
    let rest = ok(
        &channel,
        &token,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id, "pageSize": 1, "pageToken": next}),
    )
    .await;
    assert_eq!(rest["configs"][0]["id"], "c-2", "{rest}");
    let deleted = ok(
        &channel,
        &token,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
    )
    .await;
    assert_eq!(deleted, json!({}));
    let gone = call(
        &channel,
        Some(&token),
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "c-1"}),
        &[],
    )
    .await;
    assert_error(gone, Code::InvalidArgument, "INVALID_PARAMS");
    let no_url = call(
        &channel,
        Some(&token),
        "CreateTaskPushNotificationConfig",
        json!({"taskId": id}),
        &[],
    )
    .await;
    assert_error(no_url, Code::InvalidArgument, "INVALID_PARAMS");
}

#[tokio::test]
async fn push_config_rpcs_are_refused_where_push_is_off() {
    let app = spawn_app(|s| s.agent.push_notifications = false).await;
    let channel = channel(&app).await;
    let token = app.token("grpc-no-push", Plan::Pro);
    let refused = call(
        &channel,
        Some(&token),
        "ListTaskPushNotificationConfigs",
        json!({"taskId": "t"}),
        &[],
    )
    .await;
    assert_error(
        refused,
        Code::FailedPrecondition,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    );
}

#[tokio::test]
async fn the_extended_card_is_the_one_json_rpc_answers() {
    let app = spawn_app(|_| {}).await;
    let channel = channel(&app).await;
    let token = app.token("grpc-card", Plan::Pro);
    let card = ok(&channel, &token, "GetExtendedAgentCard", json!({})).await;
    let twin = rpc1(&app, &token, "GetExtendedAgentCard", json!({})).await;
    assert_eq!(card["name"], twin["result"]["name"]);
    assert_eq!(
        card["supportedInterfaces"],
        twin["result"]["supportedInterfaces"]
    );
    assert_eq!(
        card["skills"].as_array().unwrap().len(),
        twin["result"]["skills"].as_array().unwrap().len()
    );
}

#[tokio::test]
async fn the_card_declares_the_binding_and_the_target_to_dial() {
    let app = spawn_app(|_| {}).await;
    let card = app.get("/.well-known/agent-card.json").await.body;
    let target = app.base.strip_prefix("http://").unwrap();
    assert!(
        card["supportedInterfaces"]
            .as_array()
            .unwrap()
            .contains(&json!({"url": target, "protocolBinding": "GRPC", "protocolVersion": "1.0"})),
        "{card}"
    );
    let skill_card = app
        .get("/agents/test_echo/.well-known/agent-card.json")
        .await
        .body;
    assert!(
        skill_card["supportedInterfaces"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["protocolBinding"] != "GRPC"),
        "the service is the whole agent's: {skill_card}"
    );
}

#[tokio::test]
async fn streams_carry_the_events_of_the_event_stream() {
    let app = spawn_app(|_| {}).await;
    let channel = channel(&app).await;
    let token = app.token("grpc-stream", Plan::Pro);
    let stream = open_stream(
        &channel,
        &token,
        "SendStreamingMessage",
        message("test_echo", "stream me"),
        &[],
    )
    .await
    .expect("a stream");
    let events = all_of(stream).await;
    assert!(events.len() >= 2, "{events:?}");
    let id = events[0]["task"]["id"]
        .as_str()
        .expect("the task first")
        .to_string();
    let last = events.last().unwrap();
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e["artifactUpdate"]["artifact"]["parts"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("stream me"))),
        "{events:?}"
    );
    // Resumed after its first event, a finished task's stream sends the rest.
    let resumed = open_stream(
        &channel,
        &token,
        "SubscribeToTask",
        json!({"id": id}),
        &[("last-event-id", "0")],
    )
    .await
    .expect("a resumed stream");
    let rest = all_of(resumed).await;
    assert_eq!(rest.last(), Some(last), "{rest:?}");
    assert!(rest.len() < events.len(), "{rest:?}");
    let bad = open_stream(
        &channel,
        &token,
        "SubscribeToTask",
        json!({"id": id}),
        &[("last-event-id", "not-a-place")],
    )
    .await;
    assert_status(
        &bad.expect_err("refused"),
        Code::InvalidArgument,
        "INVALID_PARAMS",
    );
    let metrics = app.get("/metrics").await.body;
    assert!(
        metrics.as_str().unwrap().contains(
            r#"a2a_rpc_requests_total{method="SendStreamingMessage",outcome="ok",binding="grpc"} 1"#
        ),
        "{metrics}"
    );
}

/// A stream opened through one replica follows a task another replica runs, to the cancel that
/// another call made there.
#[tokio::test]
async fn a_subscription_through_another_replica_follows_the_task_to_its_end() {
    let redis = RedisServer::start();
    let a = spawn_app(with_redis(redis.url())).await;
    let b = spawn_app(with_redis(redis.url())).await;
    let token = a.token("grpc-replicas", Plan::Pro);
    let (on_a, on_b) = (channel(&a).await, channel(&b).await);
    let sent = ok(
        &on_a,
        &token,
        "SendMessage",
        json!({"message": message("test_slow", "wait")["message"],
            "configuration": {"returnImmediately": true}}),
    )
    .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let mut stream = open_stream(&on_b, &token, "SubscribeToTask", json!({"id": id}), &[])
        .await
        .expect("a subscription on the other replica");
    let first = stream.message().await.unwrap().expect("the task first");
    assert_eq!(json_of(&first)["task"]["id"], id.as_str());
    let canceled = ok(&on_a, &token, "CancelTask", json!({"id": id})).await;
    assert_eq!(canceled["status"]["state"], "TASK_STATE_CANCELED");
    let rest = all_of(stream).await;
    assert_eq!(
        rest.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_CANCELED",
        "{rest:?}"
    );
}

/// A client that cancels its streaming call drops its subscription only: the task runs on.
#[tokio::test]
async fn a_cancelled_stream_leaves_its_task_running() {
    let app = spawn_app(|_| {}).await;
    let channel = channel(&app).await;
    let token = app.token("grpc-leaver", Plan::Pro);
    let mut stream = open_stream(
        &channel,
        &token,
        "SendStreamingMessage",
        message("test_slow", "wait"),
        &[],
    )
    .await
    .expect("a stream");
    let first = json_of(&stream.message().await.unwrap().expect("the task first"));
    let id = first["task"]["id"].as_str().unwrap().to_string();
    drop(stream);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let read = ok(&channel, &token, "GetTask", json!({"id": id})).await;
    assert_eq!(read["status"]["state"], "TASK_STATE_WORKING", "{read}");
}

/// The guard sheds a gRPC call as a trailers-only answer (HTTP 200, `application/grpc`, the
/// status in the head), never a JSON body.
#[tokio::test]
async fn the_edges_refusal_is_a_trailers_only_answer() {
    let app = spawn_app(|s| s.server.max_in_flight = 1).await;
    let token = app.token("grpc-shed", Plan::Pro);
    let busy = {
        let client = app.client.clone();
        let url = format!("{}/api/v1/a2a", app.base);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": message("test_slow", "hold the only slot")});
        let token = token.clone();
        tokio::spawn(async move {
            client
                .post(url)
                .bearer_auth(token)
                .header("A2A-Version", "1.0")
                .json(&body)
                .send()
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let channel = channel(&app).await;
    let shed = call(&channel, Some(&token), "ListTasks", json!({}), &[]).await;
    assert_error(shed, Code::Unavailable, "OVERLOADED");

    // The answer's head, as the wire carries it.
    let tcp = tokio::net::TcpStream::connect(app.base.strip_prefix("http://").unwrap())
        .await
        .unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let request = axum::http::Request::post(format!("{}/{SERVICE}/ListTasks", app.base))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    let (answer, mut body) = client.send_request(request, false).unwrap();
    body.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), true)
        .unwrap();
    let answer = answer.await.unwrap();
    assert_eq!(answer.status(), 200);
    let headers = answer.headers();
    assert_eq!(headers["content-type"], "application/grpc");
    assert_eq!(headers["grpc-status"], "14", "{headers:?}");
    assert!(headers.contains_key("grpc-message"), "{headers:?}");
    busy.abort();
}

#[tokio::test]
async fn health_and_reflection_answer_beside_the_service() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let app = spawn_app(|_| {}).await;
    let channel = channel(&app).await;
    let mut health = HealthClient::new(channel.clone());
    for service in ["", SERVICE] {
        let answer = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("health answers")
            .into_inner();
        assert_eq!(answer.status(), ServingStatus::Serving, "{service:?}");
    }
    let mut reflection = ServerReflectionClient::new(channel);
    let asked = futures::stream::iter([ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    }]);
    let mut answers = reflection
        .server_reflection_info(asked)
        .await
        .expect("reflection answers")
        .into_inner();
    let answer = answers.message().await.unwrap().expect("one answer");
    let Some(MessageResponse::ListServicesResponse(listed)) = answer.message_response else {
        panic!("{answer:?}");
    };
    let names: Vec<&str> = listed.service.iter().map(|s| s.name.as_str()).collect();
    assert!(names.contains(&SERVICE), "{names:?}");
    assert!(names.contains(&"grpc.health.v1.Health"), "{names:?}");
}

#[tokio::test]
async fn the_kits_scenarios_apply_to_grpc_calls() {
    let app = spawn_app(|s| s.conformance.enabled = true).await;
    let channel = channel(&app).await;
    let token = app.token("grpc-kit", Plan::Pro);
    let simulated = |scenario: &'static str, rpc: &'static str, request: Value| {
        let channel = channel.clone();
        let token = token.clone();
        async move {
            call(
                &channel,
                Some(&token),
                rpc,
                request,
                &[("a2a-simulate", scenario)],
            )
            .await
        }
    };
    let unauthorized = simulated("unauthorized", "ListTasks", json!({})).await;
    assert_error(unauthorized, Code::Unauthenticated, "UNAUTHORIZED");
    let limited = simulated(
        "rate_limited;retry_after=7",
        "SendMessage",
        message("test_echo", "x"),
    )
    .await;
    let status = limited.expect_err("refused");
    assert_status(&status, Code::ResourceExhausted, "RATE_LIMITED");
    assert_eq!(
        status.get_error_details().retry_info().unwrap().retry_delay,
        Some(Duration::from_secs(7))
    );
    let missing = simulated("task_not_found", "GetTask", json!({"id": "t-1"})).await;
    let metadata = assert_error(missing, Code::NotFound, "TASK_NOT_FOUND");
    assert_eq!(metadata["taskId"], "t-1");
    let failed = simulated("skill_failed", "SendMessage", message("test_echo", "x"))
        .await
        .expect("a task")
        .0;
    assert_eq!(failed["task"]["status"]["state"], "TASK_STATE_FAILED");
    let metrics = app.get("/metrics").await.body;
    assert!(
        metrics.as_str().unwrap().contains(
            r#"a2a_rpc_requests_total{method="GetTask",outcome="simulated",binding="grpc"} 1"#
        ),
        "{metrics}"
    );
}

/// `A2A__GRPC__BIND` gives the binding a port of its own, which the card names; the shared
/// port keeps serving it.
#[tokio::test]
async fn a_port_of_its_own_is_named_by_the_card() {
    let app = spawn_app(|s| s.grpc.bind = Some("127.0.0.1:0".into())).await;
    let card = app.get("/.well-known/agent-card.json").await.body;
    let target = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .and_then(|i| i["url"].as_str())
        .expect("a GRPC interface")
        .to_string();
    assert_ne!(
        Some(target.as_str()),
        app.base.strip_prefix("http://"),
        "{card}"
    );
    let token = app.token("grpc-own-port", Plan::Pro);
    let own = Channel::from_shared(format!("http://{target}"))
        .unwrap()
        .connect()
        .await
        .expect("the gRPC port answers");
    let sent = ok(
        &own,
        &token,
        "SendMessage",
        message("test_echo", "own port"),
    )
    .await;
    let id = sent["task"]["id"].as_str().unwrap().to_string();
    let shared = channel(&app).await;
    let read = ok(&shared, &token, "GetTask", json!({"id": id})).await;
    assert_eq!(read["status"]["state"], "TASK_STATE_COMPLETED");
}
