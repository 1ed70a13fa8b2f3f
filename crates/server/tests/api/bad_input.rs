//! Bad input of every kind gets a clear JSON-RPC error, and the server keeps serving.

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{call, send_body, spawn_app, uuid};

fn message(overrides: Value) -> Value {
    let mut message = json!({"kind": "message", "messageId": uuid(), "role": "user",
        "parts": [{"kind": "text", "text": "hi"}], "metadata": {"skillId": "test_echo"}});
    for (k, v) in overrides.as_object().unwrap() {
        if v.is_null() {
            message.as_object_mut().unwrap().remove(k);
        } else {
            message[k] = v.clone();
        }
    }
    json!({"jsonrpc": "2.0", "id": 9, "method": "message/send", "params": {"message": message}})
}

#[tokio::test]
async fn malformed_bodies_get_parse_or_request_errors() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("bad-input", Plan::Pro);
    let cases: Vec<(&str, Vec<u8>, i64)> = vec![
        ("not json", b"hello".to_vec(), -32700),
        ("empty body", Vec::new(), -32700),
        ("truncated", br#"{"jsonrpc":"2.0","id":1,"#.to_vec(), -32700),
        (
            "invalid utf-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}".to_vec(),
            -32700,
        ),
        (
            "deep nesting",
            format!("{}{}", "[".repeat(5000), "]".repeat(5000)).into_bytes(),
            -32700,
        ),
        ("a number", b"42".to_vec(), -32600),
        ("a string", b"\"x\"".to_vec(), -32600),
        ("null", b"null".to_vec(), -32600),
        ("empty array", b"[]".to_vec(), -32600),
        (
            "jsonrpc 1.0",
            br#"{"jsonrpc":"1.0","id":1,"method":"tasks/get"}"#.to_vec(),
            -32600,
        ),
        (
            "jsonrpc number",
            br#"{"jsonrpc":2.0,"id":1,"method":"tasks/get"}"#.to_vec(),
            -32600,
        ),
        (
            "method number",
            br#"{"jsonrpc":"2.0","id":1,"method":1}"#.to_vec(),
            -32600,
        ),
        (
            "id array",
            br#"{"jsonrpc":"2.0","id":[1],"method":"tasks/get"}"#.to_vec(),
            -32600,
        ),
        (
            "id null",
            br#"{"jsonrpc":"2.0","id":null,"method":"tasks/get"}"#.to_vec(),
            -32600,
        ),
    ];
    for (name, body, code) in cases {
        let reply = app
            .post_raw(Some(&token), Some("application/json"), body)
            .await;
        assert_eq!(reply.status.as_u16(), 200, "{name}");
        assert_eq!(reply.code(), code, "{name}: {}", reply.body);
        assert!(
            reply.body["error"]["message"].as_str().unwrap().len() > 10,
            "{name}: a clear message"
        );
    }
}

#[tokio::test]
async fn wrong_types_for_every_field_are_invalid_params() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("types", Plan::Pro);
    let cases = vec![
        (
            "params missing",
            json!({"jsonrpc": "2.0", "id": 1, "method": "message/send"}),
        ),
        (
            "params array",
            json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": [1]}),
        ),
        ("message missing", call("message/send", json!({}))),
        (
            "message string",
            call("message/send", json!({"message": "hi"})),
        ),
        ("messageId missing", message(json!({"messageId": null}))),
        ("messageId number", message(json!({"messageId": 5}))),
        ("messageId empty", message(json!({"messageId": "  "}))),
        ("role agent", message(json!({"role": "agent"}))),
        ("role unknown", message(json!({"role": "robot"}))),
        ("kind wrong", message(json!({"kind": "task"}))),
        ("kind missing", message(json!({"kind": null}))),
        ("parts missing", message(json!({"parts": null}))),
        ("parts empty", message(json!({"parts": []}))),
        ("parts object", message(json!({"parts": {"kind": "text"}}))),
        (
            "part kind unknown",
            message(json!({"parts": [{"kind": "image", "url": "x"}]})),
        ),
        (
            "text not string",
            message(json!({"parts": [{"kind": "text", "text": 3}]})),
        ),
        (
            "data not object",
            message(json!({"parts": [{"kind": "data", "data": [1, 2]}]})),
        ),
        (
            "file part",
            message(json!({"parts": [{"kind": "file", "file": {"uri": "https://x/y.pdf"}}]})),
        ),
        (
            "skillId number",
            message(json!({"metadata": {"skillId": 4}})),
        ),
        ("metadata string", message(json!({"metadata": "x"}))),
        ("contextId number", message(json!({"contextId": 4}))),
        ("get id missing", call("tasks/get", json!({}))),
        ("get id number", call("tasks/get", json!({"id": 1}))),
        (
            "get historyLength negative",
            call("tasks/get", json!({"id": "x", "historyLength": -1})),
        ),
        (
            "get historyLength string",
            call("tasks/get", json!({"id": "x", "historyLength": "2"})),
        ),
        (
            "cancel params null",
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": null}),
        ),
    ];
    for (name, body) in cases {
        let reply = app.rpc(Some(&token), &body).await;
        assert_eq!(reply.code(), -32602, "{name}: {}", reply.body);
        assert_eq!(
            reply.body["error"]["data"]["name"], "INVALID_PARAMS",
            "{name}"
        );
    }
    let reply = app
        .rpc(
            Some(&token),
            &message(json!({"parts": [{"kind": "text", "text": 3}]})),
        )
        .await;
    let text = reply.body["error"]["message"].as_str().unwrap();
    assert!(
        text.contains("parts"),
        "the message points at the field: {text}"
    );
}

#[tokio::test]
async fn unknown_fields_are_ignored() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("extensions", Plan::Pro);
    let mut body = message(json!({"futureField": {"a": 1}, "extensions": ["urn:x"],
        "parts": [{"kind": "text", "text": "hi", "metadata": {"lang": "en"}, "extra": true}]}));
    body["params"]["configuration"] =
        json!({"blocking": true, "acceptedOutputModes": [], "historyLength": 3});
    body["params"]["metadata"] = json!({"trace": "t"});
    body["unknownTopLevel"] = json!(1);
    let reply = app.rpc(Some(&token), &body).await;
    assert_eq!(reply.result()["status"]["state"], "completed");
}

#[tokio::test]
async fn transport_refusals_have_json_bodies() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("transport", Plan::Pro);
    let good = send_body("test_echo", "hi", &uuid()).to_string();

    let reply = app
        .post_raw(Some(&token), Some("text/plain"), good.clone())
        .await;
    assert_eq!((reply.status.as_u16(), reply.code()), (415, -32600));
    assert_eq!(reply.body["id"], 1, "the id is echoed when readable");
    let reply = app.post_raw(Some(&token), None, good.clone()).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (415, -32600));
    let reply = app
        .post_raw(
            Some(&token),
            Some("Application/JSON; charset=utf-8"),
            good.clone(),
        )
        .await;
    assert_eq!(reply.status.as_u16(), 200, "{}", reply.body);
    let reply = app
        .post_raw(Some(&token), Some("application/a2a+json"), good)
        .await;
    assert_eq!(
        reply.status.as_u16(),
        200,
        "A2A 1.0's media type: {}",
        reply.body
    );

    let big = "x".repeat(10 * 1024 * 1024);
    let body = send_body("test_echo", &big, &uuid()).to_string();
    let reply = app
        .post_raw(Some(&token), Some("application/json"), body)
        .await;
    assert_eq!((reply.status.as_u16(), reply.code()), (413, -32600));
    assert_eq!(reply.header("access-control-allow-origin"), Some("*"));

    let stream =
        futures::stream::iter((0..2048).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024])));
    let reply = app
        .post_raw(
            Some(&token),
            Some("application/json"),
            reqwest::Body::wrap_stream(stream),
        )
        .await;
    assert_eq!(
        (reply.status.as_u16(), reply.code()),
        (413, -32600),
        "chunked bodies are limited too"
    );
    assert_eq!(
        reply.header("connection"),
        Some("close"),
        "the body was left unread: the connection is not reused"
    );

    for method in [
        reqwest::Method::PATCH,
        reqwest::Method::PUT,
        reqwest::Method::DELETE,
    ] {
        let response = app
            .client
            .request(method.clone(), format!("{}/api/v1/a2a", app.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 405, "{method}");
        assert_eq!(response.headers()["allow"], "GET, POST, OPTIONS");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["code"], -32600);
    }

    let after = app.send(&token, "test_echo", "still here").await;
    assert_eq!(
        after.result()["status"]["state"],
        "completed",
        "the server keeps serving"
    );
}
