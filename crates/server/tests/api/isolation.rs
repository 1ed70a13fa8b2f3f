//! Isolation between users, through every method and for both stores, id guessing included; and
//! secrets (tokens, API-key shaped strings, the HS256 secret) never echoed in logs, responses or
//! metrics, checked by capturing the logs of the real binary.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use magisterium_a2a::auth::{Plan, mint_hs256};
use magisterium_a2a::config::Settings;
use magisterium_a2a::store::Owner;
use serde_json::{Value, json};

use crate::helpers::{
    RedisServer, Reply, SECRET, TestApp, call, free_port, send_body, spawn_app, uuid, with_redis,
};

/// A task of alice's with a text only she wrote, so any leak of it is visible.
struct Private {
    id: String,
    context_id: String,
    message_id: String,
    text: String,
    task: Value,
}

async fn alice_writes(app: &TestApp, token: &str, context_id: Option<&str>) -> Private {
    let message_id = uuid();
    let text = format!("alice-private-{}", uuid());
    let mut body = send_body("test_echo", &text, &message_id);
    if let Some(context_id) = context_id {
        body["params"]["message"]["contextId"] = json!(context_id);
    }
    let task = app.rpc(Some(token), &body).await.result().clone();
    Private {
        id: task["id"].as_str().unwrap().to_string(),
        context_id: task["contextId"].as_str().unwrap().to_string(),
        message_id,
        text,
        task,
    }
}

/// The reply shows none of alice's private texts or task ids in a successful result.
fn shows_nothing_of(reply: &Reply, secrets: &[Private], what: &str) {
    let raw = reply.body.to_string();
    for private in secrets {
        assert!(
            !raw.contains(&private.text),
            "{what} leaked alice's text: {raw}"
        );
        if let Some(result) = reply.body.get("result") {
            assert!(
                !result.to_string().contains(&private.id),
                "{what} returned alice's task: {raw}"
            );
        }
    }
}

/// Ids a curious user might try: random ids, neighbours of a real id, and ids shaped like the
/// stores' own keys.
fn guesses(real: &str) -> Vec<String> {
    let mut ids = vec![
        uuid(),
        uuid(),
        "0".into(),
        "1".into(),
        "2".into(),
        "*".into(),
        "..".into(),
        real.to_uppercase(),
        format!(" {real}"),
        format!("{real} "),
        format!("{real}\n"),
        format!("{}:{real}", Owner::of("", "alice").as_str()),
        format!(
            "a2a:v1:{{o:{}}}:task:{real}",
            Owner::of("", "alice").as_str()
        ),
        format!("}}:task:{real}"),
    ];
    let last = real
        .chars()
        .last()
        .and_then(|c| c.to_digit(16))
        .unwrap_or(0);
    let stem = &real[..real.len() - 1];
    for neighbour in [(last + 1) % 16, (last + 15) % 16] {
        ids.push(format!(
            "{stem}{}",
            std::char::from_digit(neighbour, 16).unwrap()
        ));
    }
    ids.extend((0..8).map(|n| format!("{:08x}-0000-4000-8000-{n:012x}", n)));
    ids
}

async fn two_users_never_meet(app: &TestApp) {
    let alice = app.token("alice", Plan::Pro);
    let mallory = app.token("mallory", Plan::Pro);
    let first = alice_writes(app, &alice, None).await;
    let second = alice_writes(app, &alice, Some(&first.context_id)).await;
    let third = alice_writes(app, &alice, None).await;
    let secrets = [first, second, third];

    for private in &secrets {
        let id = private.id.as_str();
        // tasks/get and tasks/cancel on the real id, and on every guess.
        for candidate in std::iter::once(id.to_string()).chain(guesses(id)) {
            for method in ["tasks/get", "tasks/cancel"] {
                let reply = app
                    .rpc(Some(&mallory), &call(method, json!({"id": candidate})))
                    .await;
                assert!(
                    [-32001, -32602].contains(&reply.code()),
                    "{method} {candidate:?}: {}",
                    reply.body
                );
                shows_nothing_of(&reply, &secrets, method);
            }
            // message/send continuing the task.
            let mut continue_body = send_body("test_echo", "let me in", &uuid());
            continue_body["params"]["message"]["taskId"] = json!(candidate);
            let reply = app.rpc(Some(&mallory), &continue_body).await;
            assert!(
                [-32001, -32602].contains(&reply.code()),
                "taskId {candidate:?}: {}",
                reply.body
            );
            shows_nothing_of(&reply, &secrets, "message/send with taskId");
        }

        // contextId reuse: mallory gets a task of her own whose skill saw only her own earlier
        // turns in that context (alice's first two tasks share one), never alice's.
        let mut in_context = send_body("test_echo", "what was said here?", &uuid());
        in_context["params"]["message"]["contextId"] = json!(private.context_id);
        let reply = app.rpc(Some(&mallory), &in_context).await;
        assert_ne!(reply.result()["id"], json!(private.id));
        let history = reply.result()["artifacts"][0]["parts"][1]["data"]["history"]
            .as_array()
            .unwrap()
            .clone();
        assert!(
            history
                .iter()
                .all(|turn| turn == "what was said here?" || turn == "echo: what was said here?"),
            "{history:?}"
        );
        shows_nothing_of(&reply, &secrets, "contextId reuse");

        // messageId reuse with alice's exact message: a task of mallory's own (message ids are
        // per user), which her retry returns again; another message under that id is a new
        // message of hers. Never alice's task.
        let body = send_body("test_echo", &private.text, &private.message_id);
        let own = app.rpc(Some(&mallory), &body).await.result().clone();
        assert_ne!(own["id"], json!(private.id));
        let retried = app.rpc(Some(&mallory), &body).await;
        assert_eq!(retried.result()["id"], own["id"]);
        let other = send_body("test_echo", "something else", &private.message_id);
        let reply = app.rpc(Some(&mallory), &other).await;
        assert_ne!(reply.result()["id"], own["id"]);
        assert_ne!(reply.result()["id"], json!(private.id));
        shows_nothing_of(&reply, &secrets, "messageId reuse");
    }

    // Alice still reads her tasks unchanged, and her context holds only her own turns.
    for private in &secrets {
        let reply = app
            .rpc(Some(&alice), &call("tasks/get", json!({"id": private.id})))
            .await;
        assert_eq!(reply.result(), &private.task);
    }
    let mut follow = send_body("test_echo", "and now?", &uuid());
    follow["params"]["message"]["contextId"] = json!(secrets[0].context_id);
    let reply = app.rpc(Some(&alice), &follow).await;
    let seen = reply.result()["artifacts"][0]["parts"][1]["data"]["history"].to_string();
    assert!(seen.contains(&secrets[0].text) && seen.contains(&secrets[1].text));
    assert!(!seen.contains("what was said here?"), "{seen}");

    // The other way round: alice cannot read mallory's tasks either.
    let theirs = app.send(&mallory, "test_echo", "mallory-private").await;
    let their_id = theirs.result()["id"].clone();
    let reply = app
        .rpc(Some(&alice), &call("tasks/get", json!({"id": their_id})))
        .await;
    assert_eq!(reply.code(), -32001);
    assert!(!reply.body.to_string().contains("mallory-private"));
}

#[tokio::test]
async fn users_are_isolated_in_memory() {
    let app = spawn_app(|_| {}).await;
    two_users_never_meet(&app).await;
}

#[tokio::test]
async fn users_are_isolated_in_redis() {
    let redis = RedisServer::start();
    let app = spawn_app(with_redis(redis.url())).await;
    two_users_never_meet(&app).await;
}

/// The real binary with debug JSON logs, its output captured; killed on drop.
pub struct LoggedServer {
    child: Child,
    pub base: String,
    _data: tempfile::TempDir,
}

impl LoggedServer {
    fn start() -> LoggedServer {
        Self::start_with(&[])
    }

    /// [`LoggedServer::start`] with more environment variables (settings).
    pub fn start_with(env: &[(&str, &str)]) -> LoggedServer {
        let data = tempfile::tempdir().unwrap();
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("RUST_LOG", "debug")
            .env("A2A__LOG__FORMAT", "json")
            .env("A2A__SERVER__BIND", format!("127.0.0.1:{port}"))
            .env("A2A__AUTH__HS256_SECRET", SECRET)
            .env("A2A__DATA__DIR", data.path())
            .envs(env.iter().copied())
            .arg("--config-dir")
            .arg(data.path())
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let server = LoggedServer {
            child,
            base: format!("http://127.0.0.1:{port}"),
            _data: data,
        };
        for _ in 0..300 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the server did not start listening on {port}");
    }

    /// The server process's id (to look at its threads).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server and returns everything it wrote.
    pub fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut output = String::new();
        for stream in [
            self.child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn Read>),
            self.child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn Read>),
        ]
        .into_iter()
        .flatten()
        {
            let mut stream = stream;
            stream.read_to_string(&mut output).unwrap();
        }
        output
    }
}

impl Drop for LoggedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything a client sees of a response: status, headers and body.
async fn seen(response: reqwest::Response) -> String {
    let mut text = format!("{}\n", response.status());
    for (name, value) in response.headers() {
        text.push_str(&format!(
            "{name}: {}\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    text.push_str(&response.text().await.unwrap());
    text
}

#[tokio::test]
async fn secrets_never_reach_logs_responses_or_metrics() {
    let server = LoggedServer::start();
    let client = crate::helpers::http_client();
    let settings = Settings::default();
    let valid = mint_hs256(
        &settings.auth,
        SECRET,
        "leak-check",
        Plan::Pro,
        Duration::from_secs(600),
    )
    .unwrap();
    let wrong_secret = mint_hs256(
        &settings.auth,
        "another-secret-0123456789abcdef0123456789",
        "leak-check",
        Plan::Pro,
        Duration::from_secs(600),
    )
    .unwrap();
    let invalid = format!("not-a-jwt-{}", uuid());
    let api_key = format!("sk-live-{}", uuid().replace('-', ""));
    let free_plan = mint_hs256(
        &settings.auth,
        SECRET,
        "leak-check",
        Plan::Free,
        Duration::from_secs(600),
    )
    .unwrap();

    let rpc = format!("{}/api/v1/a2a", server.base);
    let send = send_body("saints_of_the_day", "today", &uuid()).to_string();
    let mut client_view = String::new();
    let mut statuses = Vec::new();
    for token in [&valid, &wrong_secret, &invalid, &api_key, &free_plan] {
        for body in [
            send.clone(),
            call("tasks/get", json!({"id": uuid()})).to_string(),
            "{not json".to_string(),
        ] {
            let response = client
                .post(&rpc)
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            statuses.push(response.status().as_u16());
            client_view.push_str(&seen(response).await);
        }
    }
    // The API key shaped string in the places clients put keys: its own header, a cookie and
    // an unauthenticated `Authorization` scheme.
    for (name, value) in [
        ("x-api-key", api_key.clone()),
        ("cookie", format!("session={api_key}")),
        ("authorization", format!("ApiKey {api_key}")),
        ("authorization", format!("Basic {api_key}")),
    ] {
        let response = client
            .post(&rpc)
            .header(name, value)
            .header("content-type", "application/json")
            .body(send.clone())
            .send()
            .await
            .unwrap();
        statuses.push(response.status().as_u16());
        client_view.push_str(&seen(response).await);
    }
    let metrics = seen(
        client
            .get(format!("{}/metrics", server.base))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(statuses.contains(&200) && statuses.contains(&401) && statuses.contains(&403));
    assert!(
        client_view.contains("saints_of_the_day"),
        "a valid call went through"
    );
    assert!(metrics.contains("a2a_rpc_requests_total"), "{metrics}");

    let logs = server.stop();
    let json_lines = logs
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok())
        .count();
    assert!(json_lines >= 10, "the logs were captured: {logs}");
    assert!(logs.contains("DEBUG"), "debug logging was on: {logs}");

    let signature = |token: &str| token.rsplit('.').next().unwrap().to_string();
    let secrets = [
        ("the valid token", valid.clone()),
        ("the valid token's signature", signature(&valid)),
        ("the wrongly signed token", wrong_secret.clone()),
        ("its signature", signature(&wrong_secret)),
        ("the free plan token", free_plan.clone()),
        ("the invalid token", invalid.clone()),
        ("the API key", api_key.clone()),
        ("the HS256 secret", SECRET.to_string()),
    ];
    for (what, secret) in &secrets {
        for (place, text) in [
            ("the logs", &logs),
            ("a response", &client_view),
            ("/metrics", &metrics),
        ] {
            assert!(!text.contains(secret.as_str()), "{what} appears in {place}");
        }
    }
}
