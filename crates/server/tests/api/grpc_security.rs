//! The gRPC binding attacked as the other bindings are (`abuse`, `byte_budgets`), over real
//! HTTP/2 connections written frame by frame where a client library would not misbehave: a
//! user's share of the in-flight slots, its stream places and stream byte budgets, the write
//! deadline; then the binding's own framing: length prefixes that lie, compressed and invalid
//! messages, deep nesting, huge metadata, `grpc-timeout`, resets, unknown services, and the
//! public health and reflection services.

use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use futures::StreamExt;
use h2::client::{ResponseFuture, SendRequest};
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::Settings;
use prost::Message;
use prost_reflect::DynamicMessage;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tonic::{Code, Status};
use tonic_types::StatusExt;

use crate::abuse::two_slots_a_user;
use crate::byte_budgets::{logged_task, one_place, resubscribe, summary, unlimited};
use crate::grpc::{assert_status, call, channel, json_of, message, method, open_stream};
use crate::helpers::{TestApp, spawn_app, uuid};

const SERVICE: &str = "lf.a2a.v1.A2AService";

/// An HTTP/2 connection whose window is `window` bytes, polled on a task of its own (it
/// answers pings); the task ends when the server closes the connection.
struct Connection {
    client: SendRequest<Bytes>,
    task: JoinHandle<Result<(), String>>,
}

async fn connect(app: &TestApp, window: u32) -> Connection {
    let tcp = TcpStream::connect(app.base.trim_start_matches("http://"))
        .await
        .unwrap();
    let (client, connection) = h2::client::Builder::new()
        .initial_window_size(window)
        .handshake::<_, Bytes>(tcp)
        .await
        .unwrap();
    let task = tokio::spawn(async move { connection.await.map_err(|e| e.to_string()) });
    Connection { client, task }
}

/// The head of a call of `path` with the token and other metadata.
fn head(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    metadata: &[(&str, &str)],
) -> axum::http::Request<()> {
    let mut request = axum::http::Request::post(format!("{}{path}", app.base))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    for (name, value) in metadata {
        request = request.header(*name, *value);
    }
    request.body(()).unwrap()
}

fn rpc_path(rpc: &str) -> String {
    format!("/{SERVICE}/{rpc}")
}

/// A request message of `rpc` from its ProtoJSON form, as protobuf bytes.
fn encoded(rpc: &str, message: Value) -> Vec<u8> {
    DynamicMessage::deserialize(method(rpc).input(), message)
        .expect("a valid request")
        .encode_to_vec()
}

/// A length-prefixed message: the compressed flag, then `declared` as the length.
fn framed(compressed: bool, declared: u32, bytes: &[u8]) -> Bytes {
    let mut frame = BytesMut::with_capacity(5 + bytes.len());
    frame.put_u8(u8::from(compressed));
    frame.put_u32(declared);
    frame.put_slice(bytes);
    frame.freeze()
}

fn whole(bytes: &[u8]) -> Bytes {
    framed(false, u32::try_from(bytes.len()).unwrap(), bytes)
}

/// Sends a call: its head, then `body` (ending the request when `end`).
fn send(
    connection: &mut Connection,
    head: axum::http::Request<()>,
    body: Bytes,
    end: bool,
) -> (ResponseFuture, h2::SendStream<Bytes>) {
    let (response, mut stream) = connection.client.send_request(head, false).unwrap();
    stream.reserve_capacity(body.len());
    stream.send_data(body, end).unwrap();
    (response, stream)
}

/// The call's status, from a trailers-only head or from the trailers after the body, and
/// the number of messages' bytes before it; within `limit`.
async fn status_of(response: ResponseFuture, limit: Duration) -> (Status, usize) {
    let read = async {
        let response = response.await.expect("an answer");
        assert_eq!(response.status(), 200, "{response:?}");
        if let Some(status) = Status::from_header_map(response.headers()) {
            return (status, 0);
        }
        let mut body = response.into_body();
        let mut received = 0;
        while let Some(chunk) = body.data().await {
            let chunk = chunk.expect("the body");
            received += chunk.len();
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        let trailers = body.trailers().await.expect("trailers").expect("trailers");
        (
            Status::from_header_map(&trailers).expect("a status"),
            received,
        )
    };
    tokio::time::timeout(limit, read)
        .await
        .expect("the call is answered in time")
}

fn bucket(status: &Status) -> String {
    let details = status.get_error_details();
    let info = details.error_info().expect("an ErrorInfo");
    info.metadata.get("bucket").cloned().unwrap_or_default()
}

/// A call of `token` whose message never finishes arriving: the prefix declares 500 bytes,
/// ten are sent.
fn held_call(
    connection: &mut Connection,
    app: &TestApp,
    token: &str,
) -> (ResponseFuture, h2::SendStream<Bytes>) {
    let head = head(app, &rpc_path("SendMessage"), Some(token), &[]);
    send(connection, head, framed(false, 500, &[0x0a; 10]), false)
}

/// A user holding calls open on one connection holds at most `max_in_flight_per_user` of the
/// server's `max_in_flight` slots: every stream more on that connection is refused at once
/// (`RESOURCE_EXHAUSTED`, bucket `in_flight`), another user is still served, and resetting
/// the held calls gives their slots back.
#[tokio::test]
async fn one_user_holding_grpc_calls_open_holds_at_most_its_share_of_the_slots() {
    let app = spawn_app(two_slots_a_user).await;
    let holder = app.token("grpc-holder", Plan::Enterprise);
    let mut connection = connect(&app, 65_535).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(held_call(&mut connection, &app, &holder));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let mut refused = Vec::new();
    for _ in 0..40 {
        refused.push(held_call(&mut connection, &app, &holder));
    }
    for (response, _stream) in refused {
        let (status, _) = status_of(response, Duration::from_secs(3)).await;
        assert_status(&status, Code::ResourceExhausted, "RATE_LIMITED");
        assert_eq!(bucket(&status), "in_flight", "{status:?}");
        let details = status.get_error_details();
        assert!(details.retry_info().is_some(), "{status:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered at once"
    );

    let bystander = app.token("grpc-bystander", Plan::Pro);
    let channel = channel(&app).await;
    call(
        &channel,
        Some(&bystander),
        "SendMessage",
        message("test_echo", "served"),
        &[],
    )
    .await
    .expect("another user is served");

    for (_response, mut stream) in held {
        stream.send_reset(h2::Reason::CANCEL);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    call(
        &channel,
        Some(&holder),
        "SendMessage",
        message("test_echo", "freed"),
        &[],
    )
    .await
    .expect("the reset calls gave their slots back");
}

/// A server-streaming call (`SubscribeToTask` resumed after the task's first event) on a
/// connection whose window is `window` bytes, its answer never read.
async fn stalled_subscription(
    app: &TestApp,
    token: &str,
    task_id: &str,
    window: u32,
) -> Connection {
    let mut connection = connect(app, window).await;
    let head = head(
        app,
        &rpc_path("SubscribeToTask"),
        Some(token),
        &[("last-event-id", "0")],
    );
    let body = whole(&encoded("SubscribeToTask", json!({"id": task_id})));
    let (response, stream) = send(&mut connection, head, body, true);
    let response = tokio::time::timeout(Duration::from_secs(10), response)
        .await
        .expect("the answer's head arrives")
        .expect("an answer");
    assert!(
        Status::from_header_map(response.headers()).is_none(),
        "the stream was admitted: {response:?}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The stream and its answer live as long as the connection's task.
    std::mem::forget((stream, response));
    connection
}

/// A gRPC stream whose client reads nothing keeps its place (`tasks.max_streams_per_user`):
/// the user's next stream, on gRPC or JSON-RPC, is refused, and the refused streams start no
/// task and are not charged (three messages a minute: five refused streams leave the user's
/// next message its place in the bucket).
#[tokio::test]
async fn a_grpc_stream_keeps_its_place_while_its_client_reads_nothing() {
    let app = spawn_app(|s| {
        one_place(s);
        s.limits.enabled = Some(true);
        s.limits.pro.default_per_minute = 3;
    })
    .await;
    let token = app.token("grpc-never-reads", Plan::Pro);
    let task_id = logged_task(&app, &token, 50_000).await;
    let stalled = stalled_subscription(&app, &token, &task_id, 0).await;
    tokio::time::sleep(Duration::from_millis(4500)).await;
    assert!(!stalled.task.is_finished(), "the stream is still open");

    let channel = channel(&app).await;
    let refused = open_stream(
        &channel,
        &token,
        "SubscribeToTask",
        json!({"id": task_id}),
        &[("last-event-id", "0")],
    )
    .await
    .expect_err("the place is taken");
    assert_status(&refused, Code::ResourceExhausted, "RATE_LIMITED");
    assert_eq!(bucket(&refused), "streams");
    for _ in 0..5 {
        let refused = open_stream(
            &channel,
            &token,
            "SendStreamingMessage",
            message("test_echo", "one more"),
            &[],
        )
        .await
        .expect_err("the place is taken");
        assert_eq!(bucket(&refused), "streams", "{refused:?}");
    }
    let (status, answer) = resubscribe(&app, &token, &task_id).await;
    assert_eq!(
        (status, answer[0]["error"]["data"]["bucket"].as_str()),
        (429, Some("streams")),
        "{:?}",
        summary(&answer)
    );
    let (listed, _) = call(&channel, Some(&token), "ListTasks", json!({}), &[])
        .await
        .expect("listed");
    assert_eq!(
        listed["tasks"].as_array().map(Vec::len),
        Some(1),
        "the refused stream started no task: {listed}"
    );
    call(
        &channel,
        Some(&token),
        "SendMessage",
        message("test_echo", "not charged"),
        &[],
    )
    .await
    .expect("the refused streams were not charged");
}

/// A stalled gRPC stream holding a large event counts against the user's stream bytes: the
/// user's next gRPC stream ends with `RESOURCE_EXHAUSTED` naming the budget, sending nothing;
/// another user is not affected.
#[tokio::test]
async fn open_grpc_streams_are_capped_in_bytes_too() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.tasks.max_stream_bytes_per_user = 80_000;
        s.tasks.max_stream_bytes = 1_000_000;
        s.server.write_timeout_secs = 60;
    })
    .await;
    let hoarder = app.token("grpc-hoarder", Plan::Pro);
    let big = logged_task(&app, &hoarder, 50_000).await;
    let _held = stalled_subscription(&app, &hoarder, &big, 1).await;

    let channel = channel(&app).await;
    let mut stream = open_stream(
        &channel,
        &hoarder,
        "SubscribeToTask",
        json!({"id": big}),
        &[("last-event-id", "0")],
    )
    .await
    .expect("the stream is admitted");
    let read = async {
        let mut sent = Vec::new();
        loop {
            match stream.message().await {
                Ok(Some(message)) => sent.push(json_of(&message)),
                Ok(None) => panic!("the stream ended with OK after {sent:?}"),
                Err(status) => return (status, sent),
            }
        }
    };
    let (status, sent) = tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("the stream ends");
    let info = assert_status(&status, Code::ResourceExhausted, "RATE_LIMITED");
    assert_eq!(
        info["budget"], "tasks.max_stream_bytes_per_user",
        "{status:?}"
    );
    assert!(
        sent.iter()
            .all(|event| event.get("artifactUpdate").is_none()),
        "the large event was not sent: {sent:?}"
    );
    // The JSON-RPC binding meets the same budget.
    let (_, events) = resubscribe(&app, &hoarder, &big).await;
    let error = &events.last().expect("an event")["error"];
    assert_eq!(
        error["data"]["budget"],
        "tasks.max_stream_bytes_per_user",
        "{:?}",
        summary(&events)
    );

    let other = app.token("grpc-bystander", Plan::Pro);
    let own = logged_task(&app, &other, 100).await;
    let mut stream = open_stream(
        &channel,
        &other,
        "SubscribeToTask",
        json!({"id": own}),
        &[("last-event-id", "0")],
    )
    .await
    .expect("admitted");
    let first = stream.message().await.expect("an event").expect("an event");
    assert!(
        json_of(&first).to_string().contains(&own),
        "its own task's event"
    );
}

/// A gRPC stream whose client takes nothing (window 0) is cut with its connection at
/// `server.write_timeout_secs`, and its place is given back.
#[tokio::test]
async fn a_grpc_stream_its_client_does_not_read_is_cut_at_the_write_deadline() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.tasks.max_streams_per_user = 1;
        s.server.write_timeout_secs = 2;
    })
    .await;
    let token = app.token("grpc-stalls", Plan::Pro);
    let task_id = logged_task(&app, &token, 50_000).await;
    let stalled = stalled_subscription(&app, &token, &task_id, 0).await;
    let started = Instant::now();
    let closed = tokio::time::timeout(Duration::from_secs(10), stalled.task).await;
    assert!(closed.is_ok(), "the server closes the connection");
    assert!(
        started.elapsed() >= Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    let channel = channel(&app).await;
    let mut admitted = false;
    for _ in 0..20 {
        if let Ok(mut stream) = open_stream(
            &channel,
            &token,
            "SubscribeToTask",
            json!({"id": task_id}),
            &[("last-event-id", "0")],
        )
        .await
        {
            admitted = matches!(stream.message().await, Ok(Some(_)));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(admitted, "the cut stream's place is free again");
}

fn small_bodies(settings: &mut Settings) {
    unlimited(settings);
    settings.server.max_body_bytes = 4096;
    settings.server.body_read_timeout_secs = 30;
}

/// Messages past the size limit, or whose length prefix lies, are answered with a status at
/// once, never read whole or waited for; a message in many small frames is still one message.
#[tokio::test]
async fn length_prefixes_that_lie_or_pass_the_limit_are_refused_at_once() {
    let app = spawn_app(small_bodies).await;
    let token = app.token("grpc-framer", Plan::Pro);
    let mut connection = connect(&app, 65_535).await;
    let get = |token: &str| head(&app, &rpc_path("GetTask"), Some(token), &[]);

    // 4 GiB declared, a few bytes sent, the request left open.
    let (response, _open) = send(
        &mut connection,
        get(&token),
        framed(false, u32::MAX, b"abc"),
        false,
    );
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::ResourceExhausted, "INVALID_REQUEST");
    // Just past the limit, sent whole.
    let big = vec![b'x'; 5000];
    let (response, _) = send(&mut connection, get(&token), whole(&big), true);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::ResourceExhausted, "INVALID_REQUEST");
    // More declared than sent, the request ended.
    let (response, _) = send(
        &mut connection,
        get(&token),
        framed(false, 1000, b"\x0a\x01t"),
        true,
    );
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::InvalidArgument, "INVALID_REQUEST");

    // A message in one-byte frames.
    let body = whole(&encoded("GetTask", json!({"id": "t-unknown"})));
    let (response, mut stream) = connection.client.send_request(get(&token), false).unwrap();
    for byte in body.iter() {
        stream
            .send_data(Bytes::copy_from_slice(&[*byte]), false)
            .unwrap();
    }
    stream.send_data(Bytes::new(), true).unwrap();
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::NotFound, "TASK_NOT_FOUND");
}

/// A compressed message (compression is off) is refused with a status, not waited on; bytes
/// that are not the RPC's message, or a message of another type, are `INVALID_ARGUMENT` with
/// the A2A `ErrorInfo`.
#[tokio::test]
async fn compressed_and_invalid_messages_are_refused_with_a_status() {
    let app = spawn_app(small_bodies).await;
    let token = app.token("grpc-garbler", Plan::Pro);
    let mut connection = connect(&app, 65_535).await;
    let path = rpc_path("GetTask");

    let gzip = head(&app, &path, Some(&token), &[("grpc-encoding", "gzip")]);
    let (response, _open) = send(&mut connection, gzip, framed(true, 20, &[0x1f; 20]), false);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_eq!(status.code(), Code::Unimplemented, "{status:?}");
    let flagged = head(&app, &path, Some(&token), &[]);
    let (response, _) = send(&mut connection, flagged, framed(true, 3, b"abc"), true);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert!(
        matches!(
            status.code(),
            Code::Internal | Code::Unimplemented | Code::InvalidArgument
        ),
        "{status:?}"
    );

    let garbage = head(&app, &path, Some(&token), &[]);
    let (response, _) = send(&mut connection, garbage, whole(&[0xff; 32]), true);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::InvalidArgument, "INVALID_PARAMS");
    // A `SendMessageRequest` where a `GetTaskRequest` belongs: its message (field 2) reads
    // as the task id, an unknown one; with bytes that are not UTF-8 there, as invalid.
    let wrong = encoded("SendMessage", message("test_echo", "hello"));
    let other = head(&app, &path, Some(&token), &[]);
    let (response, _) = send(&mut connection, other, whole(&wrong), true);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::NotFound, "TASK_NOT_FOUND");
    let mut wrong_type = wrong;
    wrong_type.extend(field(2, &[0xc3, 0x28]));
    let other = head(&app, &path, Some(&token), &[]);
    let (response, _) = send(&mut connection, other, whole(&wrong_type), true);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::InvalidArgument, "INVALID_PARAMS");
}

/// A length-delimited field.
fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![(number << 3) | 2];
    prost::encoding::encode_varint(bytes.len() as u64, &mut out);
    out.extend_from_slice(bytes);
    out
}

/// A map entry of a `google.protobuf.Struct`'s `fields`: `key` to the `Value` `value`.
fn struct_field(key: &str, value: &[u8]) -> Vec<u8> {
    let mut entry = field(1, key.as_bytes());
    entry.extend(field(2, value));
    field(1, &entry)
}

/// A `SendMessage` request for the echo skill whose message's metadata (a `Struct`) nests
/// `depth` structs (`{"a": {"a": … true}}`), encoded from the inside out: no recursion on
/// the test's side.
fn deep_send(depth: usize) -> Vec<u8> {
    let mut value = vec![0x20, 0x01]; // bool_value: true
    let mut nested = Vec::new();
    for _ in 0..depth {
        nested = struct_field("a", &value);
        value = field(5, &nested);
    }
    let mut metadata = struct_field("skillId", &field(3, b"test_echo"));
    metadata.extend(nested);
    let mut message = field(1, uuid().as_bytes());
    message.extend([0x20, 0x01]); // role: ROLE_USER
    message.extend(field(5, &field(1, b"deep")));
    message.extend(field(6, &metadata));
    field(2, &message)
}

/// Deeply nested `Struct`s in a message's metadata are refused as invalid (the decoder's
/// nesting limit), never overflowing the stack; the server serves on; a shallow one is kept.
#[tokio::test]
async fn deeply_nested_structs_are_refused_not_overflowing_the_stack() {
    let app = spawn_app(|s| {
        unlimited(s);
        s.server.max_body_bytes = 4 << 20;
    })
    .await;
    let token = app.token("grpc-nester", Plan::Pro);
    let mut connection = connect(&app, 1 << 20).await;
    for depth in [200, 5_000] {
        let head = head(&app, &rpc_path("SendMessage"), Some(&token), &[]);
        let (response, _) = send(&mut connection, head, whole(&deep_send(depth)), true);
        let (status, _) = status_of(response, Duration::from_secs(10)).await;
        assert_status(&status, Code::InvalidArgument, "INVALID_PARAMS");
    }
    let head = head(&app, &rpc_path("SendMessage"), Some(&token), &[]);
    let (response, _) = send(&mut connection, head, whole(&deep_send(10)), true);
    let (status, received) = status_of(response, Duration::from_secs(10)).await;
    assert_eq!(
        (status.code(), received > 0),
        (Code::Ok, true),
        "{status:?}"
    );
}

/// The public services (no token) cost an anonymous caller nothing lasting: `Health/Watch`,
/// a stream for as long as the server runs, is not served; a request message past a few
/// kilobytes is refused; a reflection stream whose requests never end meets the body deadline.
#[tokio::test]
async fn the_public_services_cannot_be_held_or_filled_without_a_token() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;

    let app = spawn_app(|s| s.server.body_read_timeout_secs = 2).await;
    let channel = channel(&app).await;
    let mut health = HealthClient::new(channel.clone());
    let watch = tokio::time::timeout(
        Duration::from_secs(3),
        health.watch(HealthCheckRequest {
            service: String::new(),
        }),
    )
    .await
    .expect("answered at once");
    let status = watch.expect_err("Watch is not served");
    assert_eq!(status.code(), Code::Unimplemented, "{status:?}");
    let big = health
        .check(HealthCheckRequest {
            service: "x".repeat(100_000),
        })
        .await
        .expect_err("a message past the public limit");
    assert_eq!(big.code(), Code::ResourceExhausted, "{big:?}");

    let mut reflection = ServerReflectionClient::new(channel);
    let list = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let asked = futures::stream::iter([list]).chain(futures::stream::pending());
    let mut answers = reflection
        .server_reflection_info(asked)
        .await
        .expect("reflection answers")
        .into_inner();
    answers
        .message()
        .await
        .expect("an answer")
        .expect("an answer");
    let started = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(10), answers.message())
        .await
        .expect("the stream is cut at the body deadline");
    assert!(!matches!(ended, Ok(Some(_))), "{ended:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// An unknown service, or an A2A call without a token, is answered from its head alone: its
/// body (1 GiB declared, three bytes sent, never ended) is not waited for.
#[tokio::test]
async fn calls_refused_from_their_head_do_not_wait_for_their_body() {
    let app = spawn_app(|_| {}).await;
    let mut connection = connect(&app, 65_535).await;
    let body = || framed(false, 1 << 30, b"abc");
    let unknown = head(&app, "/x.Huge/Upload", None, &[]);
    let (response, _open) = send(&mut connection, unknown, body(), false);
    let (status, _) = status_of(response, Duration::from_secs(2)).await;
    assert_eq!(status.code(), Code::Unimplemented, "{status:?}");
    let anonymous = head(&app, &rpc_path("SendMessage"), None, &[]);
    let (response, _open) = send(&mut connection, anonymous, body(), false);
    let (status, _) = status_of(response, Duration::from_secs(2)).await;
    assert_status(&status, Code::Unauthenticated, "UNAUTHORIZED");
}

/// `grpc-timeout` is the client's own deadline: tiny, huge or malformed, the call is served
/// (a client that gives up resets its stream, which ends the call).
#[tokio::test]
async fn grpc_timeout_values_of_every_kind_are_served() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("grpc-timer", Plan::Pro);
    let mut connection = connect(&app, 65_535).await;
    for timeout in ["1n", "99999999H", "garbage", "-5S", ""] {
        let head = head(
            &app,
            &rpc_path("GetTask"),
            Some(&token),
            &[("grpc-timeout", timeout)],
        );
        let body = whole(&encoded("GetTask", json!({"id": "t-none"})));
        let (response, _) = send(&mut connection, head, body, true);
        let (status, _) = status_of(response, Duration::from_secs(3)).await;
        assert_status(&status, Code::NotFound, "TASK_NOT_FOUND");
    }
}

/// Metadata past `server.max_header_bytes` is refused before any step runs: a little past it,
/// that stream is answered 431 and the connection serves on; far past it (a header block in
/// many CONTINUATION frames), the connection is closed; other connections are served.
#[tokio::test]
async fn huge_metadata_is_refused_and_the_server_serves_on() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("grpc-header", Plan::Pro);
    let get = || whole(&encoded("GetTask", json!({"id": "t-none"})));
    let mut connection = connect(&app, 65_535).await;
    let over = "v".repeat(app.settings.server.max_header_bytes + 4096);
    let head_over = head(
        &app,
        &rpc_path("GetTask"),
        Some(&token),
        &[("x-padding", &over)],
    );
    let (response, _) = send(&mut connection, head_over, get(), true);
    let answer = tokio::time::timeout(Duration::from_secs(3), response)
        .await
        .expect("answered at once")
        .expect("an answer");
    assert_eq!(answer.status(), 431);
    let plain = head(&app, &rpc_path("GetTask"), Some(&token), &[]);
    let (response, _) = send(&mut connection, plain, get(), true);
    let (status, _) = status_of(response, Duration::from_secs(3)).await;
    assert_status(&status, Code::NotFound, "TASK_NOT_FOUND");

    let mut flooded = connect(&app, 65_535).await;
    let huge = "v".repeat(200_000);
    let head_huge = head(
        &app,
        &rpc_path("GetTask"),
        Some(&token),
        &[("x-padding", &huge)],
    );
    let (response, _) = send(&mut flooded, head_huge, get(), true);
    let answer = tokio::time::timeout(Duration::from_secs(3), response)
        .await
        .expect("answered at once");
    assert!(answer.is_err(), "the connection is closed: {answer:?}");
    let channel = channel(&app).await;
    let answer = call(
        &channel,
        Some(&token),
        "GetTask",
        json!({"id": "t-none"}),
        &[],
    )
    .await
    .expect_err("not found");
    assert_eq!(answer.code(), Code::NotFound);
}

/// Reflection answers anyone with the protocol's descriptors: the streams open at once are
/// capped (`grpc.max_reflection_streams`), one more is `UNAVAILABLE` at once, the health
/// service and the A2A service are still served, and a closed stream frees its place.
#[tokio::test]
async fn reflection_streams_are_capped_on_the_replica() {
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;

    let app = spawn_app(|s| s.grpc.max_reflection_streams = 2).await;
    let channel = channel(&app).await;
    let open = || {
        let mut reflection = ServerReflectionClient::new(channel.clone());
        async move {
            let list = ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::ListServices(String::new())),
            };
            let (asking, asked) = futures::channel::mpsc::unbounded();
            asking.unbounded_send(list).unwrap();
            let mut answers = reflection.server_reflection_info(asked).await?.into_inner();
            answers.message().await?;
            Ok::<_, Status>((asking, answers))
        }
    };
    let first = open().await.expect("a first stream");
    let _second = open().await.expect("a second stream");
    let refused = tokio::time::timeout(Duration::from_secs(3), open())
        .await
        .expect("answered at once")
        .expect_err("a third is refused");
    assert_status(&refused, Code::Unavailable, "OVERLOADED");
    let mut health = HealthClient::new(channel.clone());
    health
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .expect("health is still served");
    let token = app.token("grpc-reflected", Plan::Pro);
    call(
        &channel,
        Some(&token),
        "SendMessage",
        message("test_echo", "served"),
        &[],
    )
    .await
    .expect("the A2A service is still served");
    // The client ends its requests: the stream ends, and its place is free.
    drop(first);
    tokio::time::sleep(Duration::from_millis(300)).await;
    open().await.expect("a closed stream frees its place");
}

/// A message that never finishes arriving meets the body deadline: `DEADLINE_EXCEEDED` with
/// the A2A `ErrorInfo`, as the other bindings answer 408.
#[tokio::test]
async fn a_message_that_never_finishes_meets_the_body_deadline() {
    let app = spawn_app(|s| s.server.body_read_timeout_secs = 1).await;
    let token = app.token("grpc-trickler", Plan::Pro);
    let mut connection = connect(&app, 65_535).await;
    let started = Instant::now();
    let (response, _open) = held_call(&mut connection, &app, &token);
    let (status, _) = status_of(response, Duration::from_secs(5)).await;
    assert_status(&status, Code::DeadlineExceeded, "INVALID_REQUEST");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
}

/// A task whose metadata nests deep, made over JSON-RPC (which takes serde_json's 128 levels),
/// is read over gRPC: as deep as a gRPC client can send (about 30 levels of `Struct`) and far
/// deeper (the answer is written from the rendered JSON, whose depth the JSON parse bounded),
/// and the server serves on.
#[tokio::test]
async fn a_deep_task_made_over_json_rpc_is_read_over_grpc() {
    let app = spawn_app(unlimited).await;
    let token = app.token("grpc-deep-json", Plan::Pro);
    let mut connection = connect(&app, 1 << 20).await;
    for depth in [30, 120] {
        let mut deep = json!(true);
        for _ in 0..depth {
            deep = json!({ "a": deep });
        }
        let mut body = crate::helpers::send_body("test_echo", "deep", &uuid());
        body["params"]["message"]["metadata"]["deep"] = deep;
        let reply = app.rpc(Some(&token), &body).await;
        let task_id = reply.result()["id"].as_str().expect("a task").to_string();
        let get = head(&app, &rpc_path("GetTask"), Some(&token), &[]);
        let message = whole(&encoded("GetTask", json!({ "id": task_id })));
        let (response, _) = send(&mut connection, get, message, true);
        let (status, received) = status_of(response, Duration::from_secs(5)).await;
        assert_eq!(
            (status.code(), received > 0),
            (Code::Ok, true),
            "{depth}: {status:?}"
        );
    }
    let get = head(&app, &rpc_path("GetTask"), Some(&token), &[]);
    let message = whole(&encoded("GetTask", json!({ "id": "t-none" })));
    let (response, _) = send(&mut connection, get, message, true);
    let (status, _) = status_of(response, Duration::from_secs(5)).await;
    assert_status(&status, Code::NotFound, "TASK_NOT_FOUND");
}
