//! What independent A2A conformance suites check, on the 0.3 and the 1.0 wire: the order of
//! the envelope checks, a server run with authentication off as a suite runs it, the card's
//! URL, caching and strict 1.0 form, message ids reused for other messages, `ListTasks`,
//! continuation of finished tasks and file parts on 1.0.

use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::{AuthMode, Settings};
use reqwest::header::{ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use serde_json::{Value, json};

use crate::helpers::{
    RedisServer, Reply, TestApp, call, reply, send_body, spawn_app, uuid, with_redis,
};
use crate::isolation::LoggedServer;

/// POSTs `body` to `path` with an optional token and `A2A-Version` header.
async fn post(
    app: &TestApp,
    path: &str,
    token: Option<&str>,
    version: Option<&str>,
    body: &Value,
) -> Reply {
    let mut request = app
        .client
        .post(format!("{}{path}", app.base))
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(version) = version {
        request = request.header("A2A-Version", version);
    }
    reply(request).await
}

/// A 1.0 call with `A2A-Version: 1.0`.
async fn rpc1(app: &TestApp, token: &str, method: &str, params: Value) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
    post(app, "/api/v1/a2a", Some(token), Some("1.0"), &body).await
}

fn v1_message(skill: &str, text: &str) -> Value {
    json!({"message": {"messageId": uuid(), "role": "ROLE_USER", "parts": [{"text": text}],
        "metadata": {"skillId": skill}}})
}

fn reason(reply: &Reply) -> &str {
    reply.body["error"]["data"][0]["reason"]
        .as_str()
        .unwrap_or_default()
}

fn auth_off(settings: &mut Settings) {
    settings.auth.mode = AuthMode::None;
}

#[tokio::test]
async fn a_request_without_id_is_checked_like_any_other_before_it_is_refused() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("envelope", Plan::Pro);
    let cases = [
        // (body, A2A-Version, expected code)
        (json!({"jsonrpc": "2.0", "method": "no/such"}), None, -32601),
        (
            json!({"jsonrpc": "2.0", "method": "NoSuchMethod"}),
            Some("1.0"),
            -32601,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": 5}}),
            None,
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "GetTask", "params": {}}),
            Some("1.0"),
            -32602,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "message/send", "params": {"message": {"kind": "message"}}}),
            None,
            -32602,
        ),
        (json!({"method": "no/such"}), None, -32600),
        (json!({"jsonrpc": "1.0", "method": "no/such"}), None, -32600),
        (json!({"jsonrpc": "2.0"}), None, -32600),
        (
            json!({"jsonrpc": "2.0", "method": "no/such", "id": {"a": 1}}),
            None,
            -32600,
        ),
        // Everything valid, but no id: a notification, refused (and the method not run).
        (
            json!({"jsonrpc": "2.0", "method": "tasks/get", "params": {"id": "t-1"}}),
            None,
            -32600,
        ),
        (
            json!({"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "t-1"}}),
            Some("1.0"),
            -32600,
        ),
    ];
    for (body, version, code) in cases {
        let reply = post(&app, "/api/v1/a2a", Some(&token), version, &body).await;
        assert_eq!(reply.code(), code, "{body}: {}", reply.body);
        assert_eq!(reply.body["id"], Value::Null, "{body}");
        assert_eq!(reply.status, 200, "{body}");
    }
    // A notification of message/send runs nothing: no task, no charge.
    let message_id = uuid();
    let mut notification = send_body("test_echo", "quiet", &message_id);
    notification.as_object_mut().unwrap().remove("id");
    let refused = post(&app, "/api/v1/a2a", Some(&token), None, &notification).await;
    assert_eq!(refused.code(), -32600);
    assert!(refused.header("ratelimit").is_none());
    // The id is echoed when the other members are wrong.
    let echoed = post(
        &app,
        "/api/v1/a2a",
        Some(&token),
        None,
        &json!({"jsonrpc": "2.0", "id": 9, "method": 4}),
    )
    .await;
    assert_eq!((echoed.code(), &echoed.body["id"]), (-32600, &json!(9)));
}

#[tokio::test]
async fn auth_off_mode_applies_no_rate_limit_unless_limits_are_enabled() {
    let app = spawn_app(auth_off).await;
    for n in 0..30 {
        let reply = app
            .rpc(None, &send_body("test_expensive_echo", "again", &uuid()))
            .await;
        assert_eq!(reply.status, 200, "call {n}: {}", reply.body);
        assert_eq!(reply.result()["status"]["state"], "completed");
        assert!(reply.header("ratelimit").is_none());
    }
    // Set explicitly, the limits apply again (pro: two expensive calls a minute).
    let limited = spawn_app(|s| {
        auth_off(s);
        s.limits.enabled = Some(true);
    })
    .await;
    let codes: Vec<i64> = futures_codes(&limited).await;
    assert_eq!(codes, [0, 0, -32003], "{codes:?}");
    // With authentication on, nothing changed: the default limits apply.
    let on = spawn_app(|_| {}).await;
    let token = on.token("limited", Plan::Pro);
    let mut codes = Vec::new();
    for _ in 0..3 {
        codes.push(on.send(&token, "test_expensive_echo", "x").await.code());
    }
    assert_eq!(codes, [0, 0, -32003]);
}

#[tokio::test]
async fn the_start_up_line_says_whether_rate_limits_apply() {
    for (env, expected) in [
        (
            vec![("A2A__AUTH__MODE", "none")],
            "off: authentication is off",
        ),
        (
            vec![
                ("A2A__AUTH__MODE", "none"),
                ("A2A__LIMITS__ENABLED", "true"),
            ],
            "on",
        ),
        (vec![], "on"),
    ] {
        let server = LoggedServer::start_with(&env);
        let healthy = crate::helpers::http_client()
            .get(format!("{}/healthz", server.base))
            .send()
            .await
            .expect("the server answers");
        assert_eq!(healthy.status(), 200);
        let output = server.stop();
        let line = output
            .lines()
            .find(|line| line.starts_with("magisterium-a2a listening"))
            .unwrap_or_else(|| panic!("a start-up line: {output}"));
        assert!(
            line.contains(&format!("rate limits {expected}")),
            "{env:?}: {line}"
        );
    }
}

async fn futures_codes(app: &TestApp) -> Vec<i64> {
    let mut codes = Vec::new();
    for _ in 0..3 {
        let reply = app
            .rpc(None, &send_body("test_expensive_echo", "x", &uuid()))
            .await;
        codes.push(reply.code());
    }
    codes
}

#[tokio::test]
async fn the_card_declares_only_the_authentication_that_is_enforced() {
    let off = spawn_app(auth_off).await;
    for version in [None, Some("1.0")] {
        let mut request = off
            .client
            .get(format!("{}/.well-known/agent-card.json", off.base));
        if let Some(version) = version {
            request = request.header("A2A-Version", version);
        }
        let card = reply(request).await.body;
        for field in ["securitySchemes", "security", "securityRequirements"] {
            assert!(card.get(field).is_none(), "{version:?} {field}: {card}");
        }
    }
    let on = spawn_app(|_| {}).await;
    let card = on.get("/.well-known/agent-card.json").await.body;
    assert_eq!(card["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(card["security"], json!([{"bearer": []}]));
}

#[tokio::test]
async fn the_endpoint_url_serves_the_card_and_its_trailing_slash_form() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("slash", Plan::Pro);
    let well_known = app.get("/.well-known/agent-card.json").await;
    for path in ["/api/v1/a2a", "/api/v1/a2a/"] {
        let card = app.get(path).await;
        assert_eq!(card.status, 200, "{path}");
        assert_eq!(card.body, well_known.body, "{path}");
        for name in ["cache-control", "content-type", "etag", "last-modified"] {
            assert_eq!(card.header(name), well_known.header(name), "{path} {name}");
        }
    }
    let sent = post(
        &app,
        "/api/v1/a2a/",
        Some(&token),
        None,
        &send_body("test_echo", "slash", &uuid()),
    )
    .await;
    assert_eq!(sent.result()["status"]["state"], "completed");
    let options = app
        .client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/api/v1/a2a/", app.base),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(options.status(), 204);
    let put = reply(app.client.put(format!("{}/api/v1/a2a/", app.base))).await;
    assert_eq!(put.status, 405);
    assert_eq!(put.header("allow"), Some("GET, POST, OPTIONS"));
}

/// The same message id with a different message is a new message; the same message again is
/// a retry, answered with the stored task without running or charging. Both stores.
async fn reused_message_ids(app: &TestApp) {
    let token = app.token("reuse", Plan::Pro);
    let message_id = uuid();
    let first = app
        .rpc(Some(&token), &send_body("test_echo", "first", &message_id))
        .await
        .result()
        .clone();
    let mut other_context = send_body("test_echo", "first", &message_id);
    other_context["params"]["message"]["contextId"] = json!(uuid());
    let second = app.rpc(Some(&token), &other_context).await;
    let second = second.result().clone();
    assert_ne!(second["id"], first["id"]);
    assert_eq!(
        second["contextId"],
        other_context["params"]["message"]["contextId"]
    );
    let mut configured = send_body("test_echo", "first", &message_id);
    configured["params"]["configuration"] = json!({"blocking": true, "historyLength": 1});
    let third = app.rpc(Some(&token), &configured).await.result().clone();
    assert_ne!(third["id"], first["id"]);
    assert_ne!(third["id"], second["id"]);
    // Each is still a retry of itself, uncharged.
    for (body, task) in [
        (send_body("test_echo", "first", &message_id), &first),
        (other_context, &second),
        (configured, &third),
    ] {
        let retry = app.rpc(Some(&token), &body).await;
        assert_eq!(retry.result(), task);
        assert!(
            retry.header("ratelimit").is_none(),
            "a retry is not charged"
        );
    }
    // On 1.0 too: the same id with other text is a new task.
    let mut v1 = v1_message("test_echo", "one");
    v1["message"]["messageId"] = json!(message_id);
    let a = rpc1(app, &token, "SendMessage", v1.clone()).await;
    v1["message"]["parts"] = json!([{"text": "two"}]);
    let b = rpc1(app, &token, "SendMessage", v1).await;
    assert_ne!(a.result()["task"]["id"], b.result()["task"]["id"]);
}

#[tokio::test]
async fn a_reused_message_id_with_another_message_is_a_new_message_in_memory() {
    reused_message_ids(&spawn_app(|_| {}).await).await;
}

#[tokio::test]
async fn a_reused_message_id_with_another_message_is_a_new_message_in_redis() {
    let redis = RedisServer::start();
    reused_message_ids(&spawn_app(with_redis(redis.url())).await).await;
}

#[tokio::test]
async fn the_card_carries_validators_and_answers_304() {
    let app = spawn_app(|_| {}).await;
    for path in [
        "/.well-known/agent-card.json",
        "/.well-known/agent.json",
        "/api/v1/a2a",
    ] {
        let first = app.get(path).await;
        let etag = first.header("etag").expect("an ETag").to_string();
        let modified = first
            .header("last-modified")
            .expect("a Last-Modified")
            .to_string();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        assert!(modified.ends_with(" GMT"), "{modified}");
        let url = format!("{}{path}", app.base);
        let cached = app
            .client
            .get(&url)
            .header(IF_NONE_MATCH, &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(cached.status(), 304, "{path}");
        assert_eq!(cached.headers()[ETAG], etag.as_str());
        assert_eq!(cached.headers()[LAST_MODIFIED], modified.as_str());
        assert!(cached.bytes().await.unwrap().is_empty());
        let listed = app
            .client
            .get(&url)
            .header(IF_NONE_MATCH, format!("\"other\", W/{etag}"))
            .send()
            .await
            .unwrap();
        assert_eq!(listed.status(), 304, "weak comparison, in a list");
        let changed = app
            .client
            .get(&url)
            .header(IF_NONE_MATCH, "\"other\"")
            .send()
            .await
            .unwrap();
        assert_eq!(changed.status(), 200);
        let since = app
            .client
            .get(&url)
            .header(IF_MODIFIED_SINCE, &modified)
            .send()
            .await
            .unwrap();
        assert_eq!(since.status(), 304);
        let before = app
            .client
            .get(&url)
            .header(IF_MODIFIED_SINCE, "Mon, 01 Jan 2001 00:00:00 GMT")
            .send()
            .await
            .unwrap();
        assert_eq!(before.status(), 200);
    }
    // The strict 1.0 card is another representation, with a validator of its own.
    let strict = reply(
        app.client
            .get(format!("{}/.well-known/agent-card.json", app.base))
            .header("A2A-Version", "1.0"),
    )
    .await;
    let superset = app.get("/.well-known/agent-card.json").await;
    assert_ne!(strict.header("etag"), superset.header("etag"));
    assert!(
        strict
            .header("vary")
            .unwrap()
            .to_ascii_lowercase()
            .contains("a2a-version")
    );
}

/// `ListTasks`: own tasks only, newest status first, filters, cursor pages, history and
/// artifacts on request.
async fn list_tasks(app: &TestApp) {
    let alice = app.token("lister", Plan::Pro);
    let mallory = app.token("other-lister", Plan::Pro);
    let empty = rpc1(app, &alice, "ListTasks", json!({})).await;
    assert_eq!(
        empty.result(),
        &json!({"tasks": [], "nextPageToken": "", "pageSize": 0, "totalSize": 0})
    );
    let context = uuid();
    let mut ids = Vec::new();
    for n in 0..5 {
        let mut params = v1_message("test_echo", &format!("q{n}"));
        if n % 2 == 0 {
            params["message"]["contextId"] = json!(context);
        }
        let sent = rpc1(app, &alice, "SendMessage", params).await;
        ids.push(sent.result()["task"]["id"].as_str().unwrap().to_string());
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let failed = rpc1(app, &alice, "SendMessage", v1_message("test_fail", "no")).await;
    let failed_id = failed.result()["task"]["id"].as_str().unwrap().to_string();
    ids.push(failed_id.clone());
    rpc1(
        app,
        &mallory,
        "SendMessage",
        v1_message("test_echo", "mine"),
    )
    .await;

    let all = rpc1(app, &alice, "ListTasks", json!({})).await;
    let all = all.result().clone();
    let listed: Vec<&str> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = ids.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first);
    assert_eq!(all["nextPageToken"], "");
    assert_eq!(
        (all["totalSize"].as_i64(), all["pageSize"].as_i64()),
        (Some(6), Some(6))
    );
    let first = &all["tasks"][0];
    assert!(first.get("kind").is_none());
    assert!(
        first.get("artifacts").is_none_or(|a| a == &json!([])),
        "no artifacts unless asked: {first}"
    );
    assert_eq!(first["history"].as_array().unwrap().len(), 2);
    let stamps: Vec<&str> = all["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[0] >= w[1]), "{stamps:?}");

    // Pages of two, followed by their tokens, give the same list.
    let mut paged = Vec::new();
    let mut token = String::new();
    for page in 0.. {
        let mut params = json!({"pageSize": 2});
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let reply = rpc1(app, &alice, "ListTasks", params).await;
        let result = reply.result();
        assert_eq!(result["totalSize"], 6);
        for task in result["tasks"].as_array().unwrap() {
            paged.push(task["id"].as_str().unwrap().to_string());
        }
        token = result["nextPageToken"].as_str().unwrap().to_string();
        if token.is_empty() {
            assert_eq!(page, 2);
            break;
        }
    }
    assert_eq!(paged, newest_first);

    // Filters.
    let by_context = rpc1(app, &alice, "ListTasks", json!({"contextId": context})).await;
    assert_eq!(by_context.result()["totalSize"], 3);
    assert!(
        by_context.result()["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["contextId"] == context)
    );
    let by_state = rpc1(
        app,
        &alice,
        "ListTasks",
        json!({"status": "TASK_STATE_FAILED"}),
    )
    .await;
    assert_eq!(by_state.result()["tasks"][0]["id"], failed_id.as_str());
    assert_eq!(by_state.result()["totalSize"], 1);
    let since = stamps[1];
    let recent = rpc1(
        app,
        &alice,
        "ListTasks",
        json!({"statusTimestampAfter": since}),
    )
    .await;
    assert_eq!(recent.result()["totalSize"], 2, "at or after {since}");

    // History and artifacts on request.
    let detailed = rpc1(
        app,
        &alice,
        "ListTasks",
        json!({"historyLength": 1, "includeArtifacts": true, "pageSize": 1, "status": "TASK_STATE_COMPLETED"}),
    )
    .await;
    let task = &detailed.result()["tasks"][0];
    assert_eq!(task["history"].as_array().unwrap().len(), 1);
    assert_eq!(task["artifacts"][0]["name"], "echo");

    // Bad params are refused.
    for params in [
        json!({"pageSize": 0}),
        json!({"pageSize": 101}),
        json!({"pageToken": "not-a-token"}),
        json!({"historyLength": -1}),
        json!({"status": "done"}),
        json!({"statusTimestampAfter": "yesterday"}),
    ] {
        let reply = rpc1(app, &alice, "ListTasks", params.clone()).await;
        assert_eq!(reply.code(), -32602, "{params}: {}", reply.body);
    }
    // Tasks made on the 0.3 wire are listed too; the other user sees only hers.
    let theirs = rpc1(app, &mallory, "ListTasks", json!({})).await;
    assert_eq!(theirs.result()["totalSize"], 1);
}

#[tokio::test]
async fn list_tasks_in_memory() {
    list_tasks(&spawn_app(|_| {}).await).await;
}

#[tokio::test]
async fn list_tasks_in_redis_with_an_index_under_the_owner_tag() {
    let redis = RedisServer::start();
    let app = spawn_app(with_redis(redis.url())).await;
    list_tasks(&app).await;
    let client = redis::Client::open(redis.url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("a2a:v1:{o:*}:tasks")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(keys.len(), 2, "one index per owner: {keys:?}");
    for key in keys {
        let ttl: i64 = redis::cmd("TTL")
            .arg(&key)
            .query_async(&mut con)
            .await
            .unwrap();
        assert!((86_000..=86_400).contains(&ttl), "{key}: {ttl}");
    }
}

#[tokio::test]
async fn a_finished_task_takes_no_new_message_on_1_0_and_does_on_0_3() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("terminal", Plan::Pro);
    let sent = rpc1(&app, &token, "SendMessage", v1_message("test_echo", "one")).await;
    let task = sent.result()["task"].clone();
    let mut follow = v1_message("test_echo", "two");
    follow["message"]["taskId"] = task["id"].clone();
    let refused = rpc1(&app, &token, "SendMessage", follow).await;
    assert_eq!(refused.code(), -32004, "{}", refused.body);
    assert_eq!(reason(&refused), "UNSUPPORTED_OPERATION");
    // A follow-up on 1.0 goes through the context, as a new task.
    let mut follow = v1_message("test_echo", "two");
    follow["message"]["contextId"] = task["contextId"].clone();
    let next = rpc1(&app, &token, "SendMessage", follow).await;
    assert_ne!(next.result()["task"]["id"], task["id"]);
    assert_eq!(next.result()["task"]["contextId"], task["contextId"]);
    // The 0.3 wire continues the finished task, as the reference does.
    let mut continued = send_body("test_echo", "three", &uuid());
    continued["params"]["message"]["taskId"] = task["id"].clone();
    let reply = app.rpc(Some(&token), &continued).await;
    assert_eq!(reply.result()["id"], task["id"]);
    assert_eq!(reply.result()["history"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn file_parts_are_content_type_not_supported_on_1_0_and_invalid_params_on_0_3() {
    let app = spawn_app(|_| {}).await;
    let token = app.token("files", Plan::Pro);
    for part in [
        json!({"url": "https://x.test/a.pdf", "mediaType": "application/pdf"}),
        json!({"raw": "aGVsbG8=", "filename": "a.txt"}),
    ] {
        let params = json!({"message": {"messageId": uuid(), "role": "ROLE_USER",
            "parts": [{"text": "read this"}, part]}});
        let reply = rpc1(&app, &token, "SendMessage", params).await;
        assert_eq!(reply.code(), -32005, "{}", reply.body);
        assert_eq!(reason(&reply), "CONTENT_TYPE_NOT_SUPPORTED");
        assert_eq!(reply.status, 200);
    }
    let mut legacy = send_body("test_echo", "x", &uuid());
    legacy["params"]["message"]["parts"] =
        json!([{"kind": "file", "file": {"uri": "https://x.test/a.pdf"}}]);
    let reply = app.rpc(Some(&token), &legacy).await;
    assert_eq!(reply.code(), -32602, "{}", reply.body);
}

#[tokio::test]
async fn a_1_0_request_for_the_card_gets_the_strict_1_0_card() {
    let app = spawn_app(|_| {}).await;
    let strict = reply(
        app.client
            .get(format!("{}/.well-known/agent-card.json", app.base))
            .header("A2A-Version", "1.0"),
    )
    .await
    .body;
    let allowed = [
        "name",
        "description",
        "supportedInterfaces",
        "provider",
        "version",
        "documentationUrl",
        "capabilities",
        "securitySchemes",
        "securityRequirements",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "signatures",
        "iconUrl",
    ];
    for key in strict.as_object().unwrap().keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "{key} is not a 1.0 card field"
        );
    }
    for key in [
        "name",
        "description",
        "supportedInterfaces",
        "version",
        "skills",
    ] {
        assert!(strict.get(key).is_some(), "{key}");
    }
    let capabilities = strict["capabilities"].as_object().unwrap();
    for key in capabilities.keys() {
        assert!(
            [
                "streaming",
                "pushNotifications",
                "extensions",
                "extendedAgentCard"
            ]
            .contains(&key.as_str()),
            "{key}"
        );
    }
    assert_eq!(
        strict["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert_eq!(
        strict["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}])
    );
    assert_eq!(strict["supportedInterfaces"][0]["protocolVersion"], "1.0");
    // Without the header (0.3 clients, browsers), the card keeps the 0.3 fields.
    for headers in [None, Some("0.3")] {
        let mut request = app
            .client
            .get(format!("{}/.well-known/agent-card.json", app.base));
        if let Some(version) = headers {
            request = request.header("A2A-Version", version);
        }
        let card = reply(request).await.body;
        assert_eq!(card["protocolVersion"], "0.3.0");
        assert!(card["url"].as_str().unwrap().ends_with("/api/v1/a2a"));
    }
    // The tasks/get method of a 0.3 client still works beside it.
    let token = app.token("strict", Plan::Pro);
    let missing = app
        .rpc(Some(&token), &call("tasks/get", json!({"id": "x"})))
        .await;
    assert_eq!(missing.code(), -32001);
}

#[tokio::test]
async fn the_client_kit_sees_the_endpoint_card_and_the_slash_form() {
    let app = spawn_app(|s| {
        s.conformance.enabled = true;
        s.agent.streaming = false;
    })
    .await;
    let token = app.token("kit-slash", Plan::Pro);
    let post_slash = |method: &str| {
        app.client
            .post(format!("{}/api/v1/a2a/", app.base))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .header("a2a-client-run", "slash-run")
            .body(call(method, json!({})).to_string())
    };
    // The kit reports a run to its token's owner: the first call (through the slash form)
    // makes the token known.
    // Resubscription, with streaming switched off: a method the card does not offer.
    assert_eq!(reply(post_slash("tasks/resubscribe")).await.code(), -32601);
    for path in ["/api/v1/a2a", "/api/v1/a2a/"] {
        let fetched = reply(
            app.client
                .get(format!("{}{path}", app.base))
                .bearer_auth(&token)
                .header("a2a-client-run", "slash-run"),
        )
        .await;
        assert_eq!(fetched.status, 200);
    }
    let report = reply(
        app.client
            .get(format!("{}/conformance/report", app.base))
            .bearer_auth(&token),
    )
    .await
    .body;
    let run = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run"] == "slash-run")
        .unwrap_or_else(|| panic!("the run is observed: {report}"))
        .clone();
    let rules: Vec<&str> = run["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"card-refetched-early"), "{rules:?}");
    assert!(rules.contains(&"unsupported-method"), "{rules:?}");
}

#[tokio::test]
async fn list_tasks_is_charged_to_the_read_budget() {
    let app = spawn_app(|s| s.limits.reads_per_minute = 2).await;
    let token = app.token("list-reader", Plan::Pro);
    let mut codes = Vec::new();
    for _ in 0..3 {
        codes.push(rpc1(&app, &token, "ListTasks", json!({})).await.code());
    }
    assert_eq!(codes, [0, 0, -32000], "{codes:?}");
}
