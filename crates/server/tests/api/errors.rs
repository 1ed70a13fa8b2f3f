//! Every row of the error table (README.md, "Errors"): code, HTTP status, headers, `data.name`, echoed id.

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{call, send_body, spawn_app, uuid};

struct Case {
    name: &'static str,
    token: TokenKind,
    body: Value,
    code: i64,
    status: u16,
    data_name: &'static str,
    id: Value,
}

enum TokenKind {
    None,
    Pro,
    Free,
}

#[tokio::test]
async fn every_error_row_has_its_code_status_and_name() {
    let app = spawn_app(|s| s.limits.pro.default_per_minute = 1).await;
    let pro = app.token("table-user", Plan::Pro);
    let free = app.token("free-user", Plan::Free);
    // Use up the one default call so the rate-limit row triggers, and get a terminal task.
    let first = app.send(&pro, "test_echo", "hello").await;
    let task_id = first.result()["id"].as_str().unwrap().to_string();

    let cases = vec![
        Case {
            name: "parse error",
            token: TokenKind::Pro,
            body: Value::String("{".into()),
            code: -32700,
            status: 200,
            data_name: "PARSE_ERROR",
            id: Value::Null,
        },
        Case {
            name: "missing jsonrpc",
            token: TokenKind::Pro,
            body: json!({"id": 5, "method": "tasks/get"}),
            code: -32600,
            status: 200,
            data_name: "INVALID_REQUEST",
            id: json!(5),
        },
        Case {
            name: "missing method",
            token: TokenKind::Pro,
            body: json!({"jsonrpc": "2.0", "id": "a"}),
            code: -32600,
            status: 200,
            data_name: "INVALID_REQUEST",
            id: json!("a"),
        },
        Case {
            name: "missing id",
            token: TokenKind::Pro,
            body: json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t-1"}}),
            code: -32600,
            status: 200,
            data_name: "INVALID_REQUEST",
            id: Value::Null,
        },
        Case {
            name: "batch",
            token: TokenKind::Pro,
            body: json!([call("tasks/get", json!({"id": "x"}))]),
            code: -32600,
            status: 200,
            data_name: "INVALID_REQUEST",
            id: Value::Null,
        },
        Case {
            name: "a request's members as an array",
            token: TokenKind::Pro,
            body: json!(["2.0", "tasks/get", "1", {"id": "x"}]),
            code: -32600,
            status: 200,
            data_name: "INVALID_REQUEST",
            id: Value::Null,
        },
        Case {
            name: "unknown method",
            token: TokenKind::Pro,
            body: json!({"jsonrpc": "2.0", "id": 7, "method": "tasks/list", "params": {}}),
            code: -32601,
            status: 200,
            data_name: "METHOD_NOT_FOUND",
            id: json!(7),
        },
        Case {
            name: "a stream of an unknown task",
            token: TokenKind::Pro,
            body: call("tasks/resubscribe", json!({"id": "no-such-task"})),
            code: -32001,
            status: 200,
            data_name: "TASK_NOT_FOUND",
            id: json!("req-1"),
        },
        Case {
            name: "the extended card with params that are not an object",
            token: TokenKind::Pro,
            body: call("agent/getAuthenticatedExtendedCard", json!([1])),
            code: -32602,
            status: 200,
            data_name: "INVALID_PARAMS",
            id: json!("req-1"),
        },
        Case {
            name: "invalid params",
            token: TokenKind::Pro,
            body: call("tasks/get", json!({"id": 3})),
            code: -32602,
            status: 200,
            data_name: "INVALID_PARAMS",
            id: json!("req-1"),
        },
        Case {
            name: "cancel a terminal task",
            token: TokenKind::Pro,
            body: call("tasks/cancel", json!({"id": task_id})),
            code: -32602,
            status: 200,
            data_name: "INVALID_PARAMS",
            id: json!("req-1"),
        },
        Case {
            name: "internal error",
            token: TokenKind::Pro,
            body: send_body("test_panic", "boom", &uuid()),
            code: -32603,
            status: 200,
            data_name: "INTERNAL_ERROR",
            id: json!(1),
        },
        Case {
            name: "task not found",
            token: TokenKind::Pro,
            body: call("tasks/get", json!({"id": "no-such-task"})),
            code: -32001,
            status: 200,
            data_name: "TASK_NOT_FOUND",
            id: json!("req-1"),
        },
        Case {
            name: "skill not found",
            token: TokenKind::Pro,
            body: send_body("no_such_skill", "x", &uuid()),
            code: -32002,
            status: 200,
            data_name: "SKILL_NOT_FOUND",
            id: json!(1),
        },
        Case {
            name: "rate limited",
            token: TokenKind::Pro,
            body: send_body("test_echo", "again", &uuid()),
            code: -32003,
            status: 429,
            data_name: "RATE_LIMITED",
            id: json!(1),
        },
        Case {
            name: "unauthorized",
            token: TokenKind::None,
            body: call("tasks/get", json!({"id": "x"})),
            code: -32004,
            status: 401,
            data_name: "UNAUTHORIZED",
            id: Value::Null,
        },
        Case {
            name: "plan required",
            token: TokenKind::Free,
            body: call("tasks/get", json!({"id": "x"})),
            code: -32005,
            status: 403,
            data_name: "PLAN_REQUIRED",
            id: Value::Null,
        },
    ];

    for case in cases {
        let token = match case.token {
            TokenKind::None => None,
            TokenKind::Pro => Some(pro.as_str()),
            TokenKind::Free => Some(free.as_str()),
        };
        let body = match &case.body {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
        let reply = app.post_raw(token, Some("application/json"), body).await;
        assert_eq!(reply.code(), case.code, "{}: {}", case.name, reply.body);
        assert_eq!(reply.status.as_u16(), case.status, "{}", case.name);
        assert_eq!(
            reply.body["error"]["data"]["name"], case.data_name,
            "{}",
            case.name
        );
        assert_eq!(reply.body["id"], case.id, "{}: id echoed", case.name);
        assert_eq!(reply.body["jsonrpc"], "2.0", "{}", case.name);
        assert!(reply.body.get("result").is_none(), "{}", case.name);
        assert_eq!(
            reply.header("access-control-allow-origin"),
            Some("*"),
            "{}",
            case.name
        );
        // A streaming method's refusal is one event of an event stream (the harness reads
        // that event as the body); every other refusal is a JSON body.
        let media = if case.body["method"] == "tasks/resubscribe" {
            "text/event-stream"
        } else {
            "application/json"
        };
        assert!(
            reply.header("content-type").unwrap().starts_with(media),
            "{}",
            case.name
        );
        match case.code {
            -32004 => {
                let challenge = reply.header("www-authenticate").expect("WWW-Authenticate");
                assert!(challenge.starts_with("Bearer "), "{challenge}");
                assert!(challenge.contains("resource_metadata=\""), "{challenge}");
                assert!(
                    !challenge.contains("invalid_token"),
                    "no token was presented: {challenge}"
                );
            }
            -32003 => {
                let retry: u64 = reply
                    .header("retry-after")
                    .expect("Retry-After")
                    .parse()
                    .unwrap();
                assert!((1..=60).contains(&retry), "{retry}");
                assert_eq!(reply.body["error"]["data"]["retryAfter"], json!(retry));
            }
            -32002 => {
                let available = reply.body["error"]["data"]["availableSkills"]
                    .as_array()
                    .unwrap();
                for id in [
                    "catholic_qa",
                    "document_search",
                    "document_fetch",
                    "liturgical_readings",
                    "saints_of_the_day",
                ] {
                    assert!(available.contains(&json!(id)), "{id} listed");
                }
            }
            -32603 => {
                assert!(reply.body["error"]["data"]["requestId"].is_string());
                assert!(
                    !reply.body.to_string().contains("on purpose"),
                    "no internals leak"
                );
            }
            _ => {}
        }
    }

    let cancel = app
        .rpc(
            Some(&pro),
            &call("tasks/cancel", json!({"id": first.result()["id"]})),
        )
        .await;
    assert!(
        cancel.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Invalid state transition")
    );
}

#[tokio::test]
async fn an_invalid_token_says_invalid_token() {
    let app = spawn_app(|_| {}).await;
    let reply = app
        .rpc(Some("not.a.jwt"), &call("tasks/get", json!({"id": "x"})))
        .await;
    assert_eq!((reply.status.as_u16(), reply.code()), (401, -32004));
    let challenge = reply.header("www-authenticate").unwrap();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    assert!(!challenge.contains("not.a.jwt"));
}

#[tokio::test]
async fn ids_keep_their_json_type() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("ids", Plan::Pro);
    for id in [
        json!(0),
        json!(-12),
        json!(1.5),
        json!("0"),
        json!(""),
        json!("ünï"),
    ] {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get", "params": {"id": "x"}});
        let reply = app.rpc(Some(&token), &body).await;
        assert_eq!(reply.body["id"], id);
    }
    let reply = app
        .rpc(
            Some(&token),
            &json!({"jsonrpc": "2.0", "id": {"a": 1}, "method": "tasks/get"}),
        )
        .await;
    assert_eq!(
        (reply.code(), reply.body["id"].clone()),
        (-32600, Value::Null)
    );
}
