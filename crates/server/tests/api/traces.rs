//! OpenTelemetry traces, end to end: the real binary exports OTLP/HTTP protobuf to a receiver
//! started here on loopback, which decodes each `POST /v1/traces` body. A `message/send` is one
//! call span (binding, method, skill, hashed owner, rate-limit decision, request id) with a
//! child for its save; a client's `traceparent` makes the call span its child; the model request
//! carries a `traceparent` of the same trace; with no endpoint nothing is exported and no
//! exporter thread runs.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use magisterium_a2a::auth::{Plan, mint_hs256};
use magisterium_a2a::config::Settings;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};

use crate::helpers::{SECRET, call, http_client, uuid};
use crate::isolation::LoggedServer;

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// A collector on loopback: every span of every `POST /v1/traces` it decoded.
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
    posts: Arc<Mutex<usize>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let posts = Arc::new(Mutex::new(0));
        let (kept, counted) = (Arc::clone(&spans), Arc::clone(&posts));
        let router = Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (kept, counted) = (Arc::clone(&kept), Arc::clone(&counted));
                async move {
                    *counted.lock().unwrap() += 1;
                    let content_type = headers.get("content-type").and_then(|v| v.to_str().ok());
                    if content_type != Some("application/x-protobuf") {
                        return StatusCode::UNSUPPORTED_MEDIA_TYPE;
                    }
                    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
                        return StatusCode::BAD_REQUEST;
                    };
                    let mut kept = kept.lock().unwrap();
                    for resource in request.resource_spans {
                        for scope in resource.scope_spans {
                            kept.extend(scope.spans);
                        }
                    }
                    StatusCode::OK
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        Receiver { url, spans, posts }
    }

    /// Waits (up to 10 s) for a span that `wanted` picks, and returns it.
    async fn span(&self, what: &str, wanted: impl Fn(&Span) -> bool) -> Span {
        let started = Instant::now();
        loop {
            if let Some(span) = self.spans.lock().unwrap().iter().find(|s| wanted(s)) {
                return span.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{what} is exported; got {:?}",
                self.names()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn names(&self) -> Vec<String> {
        self.spans
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }
}

/// A span attribute as text (strings as they are, others in their debug form).
fn attribute(span: &Span, key: &str) -> Option<String> {
    let value = span.attributes.iter().find(|kv| kv.key == key)?;
    Some(match value.value.as_ref()?.value.as_ref()? {
        AnyValue::StringValue(text) => text.clone(),
        other => format!("{other:?}"),
    })
}

fn trace_of(span: &Span) -> String {
    hex::encode(&span.trace_id)
}

/// The names of the server's threads (Linux), as `/proc` shows them (15 characters at most).
fn thread_names(pid: u32) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect()
}

fn token(sub: &str) -> String {
    mint_hs256(
        &Settings::default().auth,
        SECRET,
        sub,
        Plan::Pro,
        Duration::from_secs(600),
    )
    .unwrap()
}

fn send(skill: &str, text: &str) -> Value {
    call(
        "message/send",
        json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
                           "parts": [{"kind": "text", "text": text}],
                           "metadata": {"skillId": skill}},
               "configuration": {"blocking": true}}),
    )
}

/// Posts a JSON-RPC call with a client `traceparent`; returns the response's request id.
async fn traced_call(base: &str, token: &str, body: &Value) -> String {
    let reply = http_client()
        .post(format!("{base}/api/v1/a2a"))
        .bearer_auth(token)
        .header("traceparent", format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01"))
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let request_id = reply.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    let answer: Value = reply.json().await.unwrap();
    assert!(answer.get("result").is_some(), "{answer}");
    request_id
}

fn exporting_to(receiver: &Receiver) -> Vec<(&'static str, String)> {
    vec![
        ("A2A__TELEMETRY__OTLP_ENDPOINT", receiver.url.clone()),
        ("A2A__TELEMETRY__EXPORT_INTERVAL_MS", "100".into()),
    ]
}

fn start(env: &[(&'static str, String)]) -> LoggedServer {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    LoggedServer::start_with(&env)
}

#[tokio::test]
async fn a_send_is_one_call_span_under_the_client_trace_with_its_save_as_a_child() {
    let receiver = Receiver::start().await;
    let server = start(&exporting_to(&receiver));
    let request_id = traced_call(
        &server.base,
        &token("tracer"),
        &send("catholic_qa", "grace"),
    )
    .await;

    let call = receiver
        .span("the call span", |s| {
            attribute(s, "a2a.request_id").as_deref() == Some(request_id.as_str())
        })
        .await;
    assert_eq!(call.name, "message/send");
    assert_eq!(
        trace_of(&call),
        CLIENT_TRACE,
        "the call joins the client's trace"
    );
    assert_eq!(
        hex::encode(&call.parent_span_id),
        CLIENT_SPAN,
        "the client's span is its parent"
    );
    assert_eq!(attribute(&call, "a2a.binding").as_deref(), Some("jsonrpc"));
    assert_eq!(
        attribute(&call, "a2a.method").as_deref(),
        Some("message/send")
    );
    assert_eq!(
        attribute(&call, "a2a.skill").as_deref(),
        Some("catholic_qa")
    );
    assert_eq!(
        attribute(&call, "a2a.rate_limit").as_deref(),
        Some("allowed")
    );
    let owner = attribute(&call, "a2a.owner").expect("the owner is an attribute");
    assert_eq!(owner.len(), 32, "a hash: {owner}");
    assert!(
        owner.chars().all(|c| c.is_ascii_hexdigit()),
        "a hash: {owner}"
    );
    for span in receiver.spans.lock().unwrap().iter() {
        for kv in &span.attributes {
            assert!(
                !format!("{:?}", kv.value).contains("tracer"),
                "the subject never leaves: {kv:?}"
            );
        }
    }

    let call_id = call.span_id.clone();
    let save = receiver
        .span("the save", |s| {
            s.name == "store.save" && s.parent_span_id == call_id
        })
        .await;
    assert_eq!(trace_of(&save), CLIENT_TRACE);
    assert_eq!(attribute(&save, "db.system").as_deref(), Some("memory"));
    assert!(
        thread_names(server.pid())
            .iter()
            .any(|name| name.starts_with("OpenTelemetry")),
        "the exporter's thread runs: {:?}",
        thread_names(server.pid())
    );

    // The HTTP+JSON binding's call is a span of its own trace, named by its 1.0 method.
    let reply = http_client()
        .post(format!("{}/api/v1/a2a/rest/message:send", server.base))
        .bearer_auth(token("tracer"))
        .json(
            &json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
            "parts": [{"text": "grace"}], "metadata": {"skillId": "catholic_qa"}}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200, "{}", reply.text().await.unwrap());
    let rest = receiver
        .span("the HTTP+JSON call span", |s| {
            attribute(s, "a2a.binding").as_deref() == Some("http+json")
        })
        .await;
    assert_eq!(rest.name, "SendMessage");
    assert!(
        rest.parent_span_id.is_empty(),
        "no client trace: a root span"
    );
    assert_eq!(attribute(&rest, "a2a.owner"), Some(owner));
    drop(server.stop());
}

/// An OpenAI-compatible model server on loopback that keeps each request's `traceparent`; a
/// request with `stream: true` is answered as Server-Sent Events.
async fn tracing_llm() -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let router = Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |headers: HeaderMap, body: axum::Json<Value>| {
            let kept = Arc::clone(&kept);
            async move {
                let traceparent = headers
                    .get("traceparent")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                kept.lock().unwrap().push(traceparent);
                let answer = "Grace is the free help God gives [1].";
                if body.0["stream"] == json!(true) {
                    let chunk = json!({"model": "test-model",
                        "choices": [{"delta": {"content": answer}, "finish_reason": "stop"}]});
                    let events = format!("data: {chunk}\n\ndata: [DONE]\n\n");
                    return ([("content-type", "text/event-stream")], events).into_response();
                }
                axum::Json(json!({"model": "test-model", "choices": [{"message": {
                    "content": answer}}]}))
                .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, seen)
}

/// A server exporting to `receiver` whose `catholic_qa` asks the model at `model`, over a
/// corpus of one document (kept in the returned folder).
fn server_with_model(receiver: &Receiver, model: String) -> (LoggedServer, tempfile::TempDir) {
    let data = crate::helpers::data_with_corpus(&[json!({"id": "cat:grace-primer",
        "title": "A Primer on Grace", "author": "Test", "date": "1901", "type": "catechism",
        "language": "en", "sections": [{"locus": "1", "heading": "Grace",
        "text": "Grace is the free and undeserved help that God gives us."}]})]);
    let mut env = exporting_to(receiver);
    env.extend([
        ("A2A__DATA__DIR", data.path().to_str().unwrap().to_string()),
        ("A2A__LLM__BASE_URL", model),
        ("A2A__LLM__MODEL", "test-model".into()),
        ("A2A__LLM__MAX_RETRIES", "0".into()),
    ]);
    (start(&env), data)
}

/// The one `traceparent` the model got (waiting up to 10 s for it), split in its four parts.
async fn model_traceparent(seen: &Mutex<Vec<Option<String>>>) -> Vec<String> {
    let started = Instant::now();
    while seen.lock().unwrap().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the model is asked"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let sent = seen.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "the model was asked once");
    let traceparent = sent[0]
        .clone()
        .expect("the model request carries a traceparent");
    let parts: Vec<String> = traceparent.split('-').map(str::to_string).collect();
    assert_eq!(parts.len(), 4, "{traceparent}");
    parts
}

#[tokio::test]
async fn a_task_run_after_the_call_asks_the_model_in_the_call_trace() {
    let receiver = Receiver::start().await;
    let (model, seen) = tracing_llm().await;
    let (server, _data) = server_with_model(&receiver, model);
    let body = call(
        "message/send",
        json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
                           "parts": [{"kind": "text", "text": "What is grace?"}],
                           "metadata": {"skillId": "catholic_qa"}},
               "configuration": {"blocking": false}}),
    );
    traced_call(&server.base, &token("patient"), &body).await;
    let parts = model_traceparent(&seen).await;
    assert_eq!(
        parts[1], CLIENT_TRACE,
        "the runner's model request is in the call's trace"
    );
    let model_span = receiver
        .span("the model request's span", |s| {
            hex::encode(&s.span_id) == parts[2]
        })
        .await;
    assert_eq!(trace_of(&model_span), CLIENT_TRACE);
    let run = receiver
        .span("the task's run", |s| s.span_id == model_span.parent_span_id)
        .await;
    assert_eq!(run.name, "task run");
    let call = receiver
        .span("the call span", |s| s.span_id == run.parent_span_id)
        .await;
    assert_eq!(call.name, "message/send");
    assert!(
        call.end_time_unix_nano <= run.end_time_unix_nano,
        "the call's span ends with the call, not with its task"
    );
    drop(server.stop());
}

#[tokio::test]
async fn the_model_request_carries_the_trace_of_the_call() {
    let receiver = Receiver::start().await;
    let (model, seen) = tracing_llm().await;
    let (server, _data) = server_with_model(&receiver, model);
    traced_call(
        &server.base,
        &token("asker"),
        &send("catholic_qa", "What is grace?"),
    )
    .await;

    let parts = model_traceparent(&seen).await;
    assert_eq!(
        (parts[0].as_str(), parts[1].as_str(), parts[3].as_str()),
        ("00", CLIENT_TRACE, "01")
    );
    let model_span = receiver
        .span("the model request's span", |s| {
            hex::encode(&s.span_id) == parts[2]
        })
        .await;
    assert_eq!(model_span.name, "model request");
    let call = receiver
        .span("the call span", |s| s.span_id == model_span.parent_span_id)
        .await;
    assert_eq!(
        call.name, "message/send",
        "the model request is a child of the call"
    );
    assert_eq!(hex::encode(&call.parent_span_id), CLIENT_SPAN);
    drop(server.stop());
}

/// A webhook on loopback that keeps each delivery's `traceparent`.
async fn tracing_webhook() -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    let router = Router::new().fallback(move |headers: HeaderMap| {
        let kept = Arc::clone(&kept);
        async move {
            let traceparent = headers
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            kept.lock().unwrap().push(traceparent);
            StatusCode::OK
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    (url, seen)
}

#[tokio::test]
async fn a_push_delivery_is_a_span_of_the_call_trace_and_passes_it_on() {
    let receiver = Receiver::start().await;
    let (webhook, seen) = tracing_webhook().await;
    let mut env = exporting_to(&receiver);
    env.push(("A2A__PUSH__ALLOW_PRIVATE_TARGETS", "true".into()));
    let server = start(&env);
    let body = call(
        "message/send",
        json!({"message": {"kind": "message", "messageId": uuid(), "role": "user",
                           "parts": [{"kind": "text", "text": "grace"}],
                           "metadata": {"skillId": "catholic_qa"}},
               "configuration": {"blocking": true, "pushNotificationConfig": {"url": webhook}}}),
    );
    traced_call(&server.base, &token("hooked"), &body).await;

    let delivery = receiver
        .span("a delivery of the call's trace", |s| {
            s.name == "push delivery" && trace_of(s) == CLIENT_TRACE
        })
        .await;
    assert!(
        !delivery.parent_span_id.is_empty(),
        "a child in the call's trace"
    );
    let started = Instant::now();
    let passed_on = loop {
        let found = seen
            .lock()
            .unwrap()
            .iter()
            .flatten()
            .find_map(|traceparent| {
                (traceparent.split('-').nth(2) == Some(hex::encode(&delivery.span_id).as_str()))
                    .then(|| traceparent.clone())
            });
        if let Some(found) = found {
            break found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            seen.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        passed_on.starts_with(&format!("00-{CLIENT_TRACE}-")),
        "{passed_on}"
    );
    drop(server.stop());
}

#[tokio::test]
async fn without_an_endpoint_nothing_is_exported_and_no_exporter_runs() {
    let receiver = Receiver::start().await;
    // The standard OpenTelemetry variables are not this server's setting: they turn nothing on.
    let server = start(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.clone()),
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            format!("{}/v1/traces", receiver.url),
        ),
    ]);
    traced_call(&server.base, &token("quiet"), &send("catholic_qa", "grace")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let threads = thread_names(server.pid());
    assert!(!threads.is_empty(), "the server's threads can be read");
    assert!(
        !threads.iter().any(|name| name.starts_with("OpenTelemetry")),
        "no exporter thread: {threads:?}"
    );
    let logs = server.stop();
    assert_eq!(*receiver.posts.lock().unwrap(), 0, "nothing was sent");
    assert!(
        !logs.contains("a2a.call"),
        "no call span reaches the logs either"
    );
}
