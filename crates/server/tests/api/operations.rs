//! The agent card, discovery metadata, CORS, health, metrics, configuration, and the binary's
//! own commands (serve, token) as the README walks through them.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use magisterium_a2a::auth::Plan;
use serde_json::{Value, json};

use crate::helpers::{call, free_port, raw_send, send_body, spawn_app, unanswered, uuid};

fn header_set(value: &str) -> BTreeSet<String> {
    value
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .collect()
}

#[tokio::test]
async fn the_card_is_public_cached_and_complete() {
    let app = spawn_app(|_| {}).await;
    let legacy = app.get("/.well-known/agent.json").await;
    let current = app.get("/.well-known/agent-card.json").await;
    assert_eq!(legacy.status.as_u16(), 200);
    assert_eq!(legacy.body, current.body);
    assert_eq!(legacy.header("cache-control"), Some("public, max-age=3600"));
    assert_eq!(legacy.header("access-control-allow-origin"), Some("*"));
    let card = &legacy.body;
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(card["url"], format!("{}/api/v1/a2a", app.base));
    let mut capabilities = card["capabilities"].clone();
    let extensions = capabilities
        .as_object_mut()
        .unwrap()
        .remove("extensions")
        .unwrap();
    assert_eq!(
        capabilities,
        json!({"streaming": true, "pushNotifications": true, "stateTransitionHistory": true})
    );
    assert_eq!(
        extensions[0]["params"]["agents"]["catholic_qa"],
        format!("{}/agents/catholic_qa/", app.base),
        "the one extension lists the skills' own agents: {extensions}"
    );
    assert_eq!(extensions.as_array().unwrap().len(), 1);
    assert_eq!(card["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(card["security"], json!([{"bearer": []}]));
    let ids: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    for id in [
        "catholic_qa",
        "document_search",
        "document_fetch",
        "liturgical_readings",
        "saints_of_the_day",
    ] {
        assert!(ids.contains(&id), "{id}");
    }
    for skill in card["skills"].as_array().unwrap() {
        for field in [
            "name",
            "description",
            "tags",
            "examples",
            "inputModes",
            "outputModes",
        ] {
            assert!(skill.get(field).is_some(), "{} has {field}", skill["id"]);
        }
    }
    for field in [
        "name",
        "description",
        "version",
        "defaultInputModes",
        "defaultOutputModes",
    ] {
        assert!(card.get(field).is_some(), "{field}");
    }
}

#[tokio::test]
async fn the_card_follows_configuration() {
    let app = spawn_app(|s| {
        s.agent.protocol_version = "0.2.6".into();
        s.server.public_url = Some("https://a2a.example.org/".into());
    })
    .await;
    let card = app.get("/.well-known/agent.json").await.body;
    assert_eq!(card["protocolVersion"], "0.2.6");
    assert_eq!(card["url"], "https://a2a.example.org/api/v1/a2a");
    assert_eq!(
        card["capabilities"]["extensions"][0]["params"]["agents"]["saints_of_the_day"],
        "https://a2a.example.org/agents/saints_of_the_day/"
    );
    let own = app
        .get("/agents/saints_of_the_day/.well-known/agent-card.json")
        .await
        .body;
    assert_eq!(
        own["url"],
        "https://a2a.example.org/agents/saints_of_the_day"
    );
    let resource = app.get("/.well-known/oauth-protected-resource").await;
    assert_eq!(resource.body["resource"], "https://a2a.example.org");
    assert_eq!(resource.body["bearer_methods_supported"], json!(["header"]));
    let unauthorized = app.rpc(None, &call("tasks/get", json!({"id": "x"}))).await;
    assert!(unauthorized.header("www-authenticate").unwrap().contains(
        "resource_metadata=\"https://a2a.example.org/.well-known/oauth-protected-resource\""
    ));
}

#[tokio::test]
async fn preflight_is_permissive() {
    let app = spawn_app(|_| {}).await;
    let response = app
        .client
        .request(reqwest::Method::OPTIONS, format!("{}/api/v1/a2a", app.base))
        .header("origin", "https://orchestrator.example")
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type,authorization,a2a-version,a2a-simulate",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 204);
    let h = response.headers();
    assert_eq!(h["access-control-allow-origin"], "*");
    assert_eq!(
        header_set(h["access-control-allow-methods"].to_str().unwrap()),
        header_set("POST, OPTIONS")
    );
    // A browser sends only what the preflight allowed: a 1.0 client's A2A-Version and a kit
    // scenario's A2A-Simulate among them.
    let allowed = header_set(h["access-control-allow-headers"].to_str().unwrap());
    for asked in [
        "content-type",
        "authorization",
        "a2a-version",
        "a2a-simulate",
    ] {
        assert!(allowed.contains(asked), "{asked} in {allowed:?}");
    }
    assert!(h.get("set-cookie").is_none());
}

#[tokio::test]
async fn health_and_metrics() {
    let app = spawn_app(|_| {}).await;
    assert_eq!(app.get("/healthz").await.body["status"], "ok");
    assert_eq!(app.get("/readyz").await.body["status"], "ready");
    let token = app.token("metrics-user", Plan::Pro);
    app.send(&token, "test_echo", "hi").await;
    app.rpc(Some(&token), &call("tasks/get", json!({"id": "nope"})))
        .await;
    app.rpc(None, &call("tasks/get", json!({"id": "nope"})))
        .await;
    let text = app.get("/metrics").await.body.as_str().unwrap().to_string();
    assert!(
        text.contains(
            r#"a2a_rpc_requests_total{method="message/send",outcome="ok",binding="jsonrpc"} 1"#
        ),
        "{text}"
    );
    assert!(text.contains(
        r#"a2a_rpc_requests_total{method="tasks/get",outcome="TASK_NOT_FOUND",binding="jsonrpc"} 1"#
    ));
    assert!(text.contains(r#"outcome="UNAUTHORIZED",binding="jsonrpc"} 1"#));
    assert!(text.contains("a2a_rpc_request_duration_seconds_bucket"));
    assert!(text.contains(r#"a2a_tasks_total{skill="test_echo",state="completed"} 1"#));
    assert!(!text.contains("metrics-user"), "no user ids in labels");
}

fn binary() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

#[test]
fn invalid_configuration_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    // Refused before any connection: a port nothing listens on is enough.
    let unused_redis = format!("redis://127.0.0.1:{}/0", free_port());
    let cases = [
        (
            vec![("A2A__LIMITS__PRO__DEFAULT_PER_MINUTE", "lots")],
            "default_per_minute",
        ),
        (vec![("A2A__SERVER__BIND", "nowhere")], "server.bind"),
        (
            vec![("A2A__LLM__HTTP2", "sometimes")],
            "expected a boolean for key \"llm.http2\"",
        ),
        (
            vec![("A2A__LIMITS__REDIS_LEASE_MS", "1001")],
            "limits.redis_lease_ms",
        ),
        (
            vec![
                ("A2A__AUTH__MODE", "none"),
                ("A2A__SERVER__BIND", "0.0.0.0:0"),
            ],
            "auth.mode",
        ),
        (vec![("A2A__AUTH__MODE", "jwks")], "auth.jwks_url"),
        (vec![("A2A__STORE__BACKEND", "redis")], "store.redis_url"),
        (
            vec![
                ("A2A__STORE__BACKEND", "redis"),
                ("A2A__STORE__REDIS_SENTINELS", "127.0.0.1:26379"),
            ],
            "store.redis_sentinel_master",
        ),
        (
            vec![
                ("A2A__STORE__BACKEND", "redis"),
                ("A2A__STORE__REDIS_SENTINELS", "127.0.0.1"),
                ("A2A__STORE__REDIS_SENTINEL_MASTER", "a2a"),
            ],
            "store.redis_sentinels",
        ),
        (
            vec![("A2A__STORE__REDIS_SENTINEL_MASTER", "a2a")],
            "store.redis_sentinels",
        ),
        (
            vec![("A2A__STORE__REPLICAS_TO_ACK", "1")],
            "store.replicas_to_ack",
        ),
        (
            vec![
                ("A2A__STORE__BACKEND", "redis"),
                ("A2A__STORE__REDIS_URL", unused_redis.as_str()),
                ("A2A__STORE__REPLICAS_TO_ACK", "1"),
                ("A2A__STORE__REPLICAS_ACK_TIMEOUT_MS", "5000"),
            ],
            "store.replicas_ack_timeout_ms",
        ),
        (vec![("A2A__STORE__BACKEND", "postgres")], "backend"),
        (
            vec![("A2A__AUTH__HS256_SECRET", "short")],
            "auth.hs256_secret",
        ),
        (
            vec![("A2A__LITURGY__TIME_ZONE", "Mars/Olympus")],
            "liturgy.time_zone",
        ),
        (
            vec![("A2A__LITURGY__CALENDAR", "atlantis")],
            "liturgy.calendar",
        ),
        (vec![("A2A__LITURGY__LANGUAGE", "tlh")], "liturgy.language"),
        (vec![("A2A__SERVER__UNKNOWN_KEY", "1")], "unknown_key"),
        (
            vec![("A2A__SERVER__TRUSTED_PROXIES", "10.0.0.0/8, 10.0.0.0/33")],
            "server.trusted_proxies",
        ),
        (
            vec![("A2A__SERVER__TRUST_FORWARDED_FOR", "true")],
            "trust_forwarded_for",
        ),
        (
            vec![("A2A__STORE__MAX_TASK_BYTES", "100")],
            "store.max_task_bytes",
        ),
        (
            vec![("A2A__LIMITS__READS_PER_MINUTE", "0")],
            "limits.reads_per_minute",
        ),
        (vec![("A2A__TASKS__LEASE_SECS", "0")], "tasks.lease_secs"),
        (
            vec![("A2A__SERVER__MAX_IN_FLIGHT_PER_USER", "0")],
            "server.max_in_flight_per_user",
        ),
        (
            vec![("A2A__TASKS__MAX_STREAMS_PER_USER", "0")],
            "tasks.max_streams_per_user",
        ),
        (
            vec![("A2A__TASKS__MAX_EVENTS_PER_TASK", "1")],
            "tasks.max_events_per_task",
        ),
        (
            vec![("A2A__TASKS__MAX_EVENT_BYTES_PER_TASK", "100")],
            "tasks.max_event_bytes_per_task",
        ),
        (
            vec![("A2A__SERVER__SERVING_THREADS", "5000")],
            "server.serving_threads",
        ),
        (vec![("A2A__SERVER__THREADING", "fibers")], "threading"),
        (
            vec![("A2A__SERVER__WRITE_TIMEOUT_SECS", "0")],
            "server.write_timeout_secs",
        ),
        (
            vec![("A2A__TASKS__MAX_STREAM_BYTES_PER_USER", "100")],
            "tasks.max_stream_bytes_per_user",
        ),
        (
            vec![("A2A__TASKS__MAX_STREAM_BYTES", "5000")],
            "tasks.max_stream_bytes",
        ),
        (
            vec![("A2A__STORE__MAX_LIST_PAGE_BYTES", "100")],
            "store.max_list_page_bytes",
        ),
        (
            vec![("A2A__STORE__MEMORY_MAX_BYTES_PER_USER", "1000")],
            "store.memory_max_bytes_per_user",
        ),
        (
            vec![("A2A__STORE__MEMORY_MAX_BYTES", "1000000")],
            "store.memory_max_bytes",
        ),
        (
            vec![("A2A__AGENT__SIGN_CARD", "true")],
            "push.signing_key_path",
        ),
        (vec![("A2A__AGENT__SIGN_CARD", "maybe")], "sign_card"),
        (
            vec![("A2A__TELEMETRY__OTLP_ENDPOINT", "otel-collector:4318")],
            "a2a__telemetry__otlp_endpoint",
        ),
        (
            vec![("A2A__TELEMETRY__OTLP_ENDPOINT", "ftp://collector:4318")],
            "telemetry.otlp_endpoint",
        ),
        (
            vec![(
                "A2A__TELEMETRY__OTLP_ENDPOINT",
                "http://collector:4318/?k=v",
            )],
            "telemetry.otlp_endpoint",
        ),
        (
            vec![
                ("A2A__TELEMETRY__OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("A2A__TELEMETRY__MAX_QUEUED_SPANS", "0"),
            ],
            "telemetry.max_queued_spans",
        ),
        (
            vec![("A2A__TELEMETRY__EXPORT_INTERVAL_MS", "1")],
            "telemetry.export_interval_ms",
        ),
    ];
    for (env, key) in cases {
        let output = binary()
            .args(["--config-dir"])
            .arg(dir.path())
            .arg("serve")
            .envs(env.clone())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{env:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.to_lowercase().contains(key), "{env:?}: {stderr}");
    }
}

#[tokio::test]
async fn the_readme_walkthrough_works_with_the_real_binary() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("default.toml"),
        "[server]\nbind = \"127.0.0.1:1\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("walkthrough.toml"),
        "[agent]\nname = \"Layered\"\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let env = [
        ("A2A__SERVER__BIND", "127.0.0.1:0"),
        ("A2A__DATA__DIR", data.to_str().unwrap()),
    ];
    let mut server = binary()
        .arg("--config-dir")
        .arg(dir.path())
        .args(["--profile", "walkthrough", "serve"])
        .envs(env)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .and_then(|w| w.strip_suffix("/api/v1/a2a,"))
        .unwrap_or_else(|| panic!("serve prints its URL: {line}"))
        .to_string();

    let token = binary()
        .arg("--config-dir")
        .arg(dir.path())
        .args(["token", "--sub", "walker", "--plan", "pro", "--ttl", "10m"])
        .envs(env)
        .output()
        .unwrap();
    assert!(token.status.success());
    let token = String::from_utf8(token.stdout).unwrap().trim().to_string();

    let client = crate::helpers::http_client();
    let card: Value = client
        .get(format!("{base}/.well-known/agent.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card["name"], "Layered",
        "the profile file is layered over default.toml"
    );
    let reply: Value = client
        .post(format!("{base}/api/v1/a2a"))
        .bearer_auth(&token)
        .json(&send_body("saints_of_the_day", "today", &uuid()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reply["result"]["kind"], "task", "{reply}");
    let state = reply["result"]["status"]["state"].as_str().unwrap();
    assert!(state == "completed" || state == "failed");

    // SIGTERM finishes gracefully.
    let pid = server.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let status = server.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// A replica being stopped answers every request a client had already sent: connections the
/// kernel accepted but the server had not yet picked up are served before the listener closes,
/// never reset (a load balancer cannot safely resend a POST it has already sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_answers_every_request_already_sent() {
    use tokio::io::AsyncWriteExt;

    let mut app = spawn_app(|_| {}).await;
    let token = app.token("drained", Plan::Enterprise);
    let address = app.base.trim_start_matches("http://").to_string();
    let mut streams = Vec::new();
    for _ in 0..64 {
        let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
        stream
            .write_all(raw_send(&address, &token).as_bytes())
            .await
            .unwrap();
        streams.push(stream);
    }
    app.stop();
    let unanswered = unanswered(streams).await;
    assert!(
        unanswered.is_empty(),
        "{} of 64 requests sent before the stop were not answered: {unanswered:#?}",
        unanswered.len()
    );
}

/// A client that connected just before the stop and sends its request a moment after it is
/// answered too (within the header deadline), not dropped because no byte had arrived yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_answers_a_request_sent_just_after_it() {
    use tokio::io::AsyncWriteExt;

    let mut app = spawn_app(|_| {}).await;
    let token = app.token("late", Plan::Enterprise);
    let address = app.base.trim_start_matches("http://").to_string();
    let mut streams = Vec::new();
    for _ in 0..8 {
        streams.push(tokio::net::TcpStream::connect(&address).await.unwrap());
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    app.stop();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    for stream in &mut streams {
        stream
            .write_all(raw_send(&address, &token).as_bytes())
            .await
            .unwrap();
    }
    let unanswered = unanswered(streams).await;
    assert!(
        unanswered.is_empty(),
        "{} of 8 requests sent on connections open at the stop were not answered: {unanswered:#?}",
        unanswered.len()
    );
}

/// `token` without a configured secret says which secret file it signed with (made in the data
/// directory of the folder it runs in) and how to sign with the server's secret instead; with a
/// configured secret it says so and writes no file.
#[test]
fn token_says_which_secret_it_signed_with() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir(&config).unwrap();
    std::fs::write(config.join("default.toml"), "").unwrap();
    std::fs::write(config.join("development.toml"), "").unwrap();
    let run = |env: &[(&str, &str)]| {
        let output = binary()
            .current_dir(dir.path())
            .args(["--config-dir", "config", "token", "--sub", "alice"])
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let token = String::from_utf8(output.stdout).unwrap();
        assert_eq!(
            token.trim().split('.').count(),
            3,
            "stdout is the token alone"
        );
        String::from_utf8(output.stderr).unwrap()
    };

    let said = run(&[]);
    let secret = dir
        .path()
        .canonicalize()
        .unwrap()
        .join("data/dev-hs256-secret");
    assert!(secret.exists());
    assert!(
        said.contains(&secret.display().to_string()),
        "names the secret file by its full path: {said}"
    );
    assert!(said.contains("generated"), "says it made the file: {said}");
    assert!(
        said.contains("A2A__AUTH__HS256_SECRET") && said.contains("A2A__DATA__DIR"),
        "says how to sign with the server's secret: {said}"
    );
    let again = run(&[]);
    assert!(
        again.contains(&secret.display().to_string()) && !again.contains("generated"),
        "{again}"
    );

    let elsewhere = dir.path().join("elsewhere");
    let configured = run(&[
        (
            "A2A__AUTH__HS256_SECRET",
            "configured-secret-0123456789abcdef0123",
        ),
        ("A2A__DATA__DIR", elsewhere.to_str().unwrap()),
    ]);
    assert!(
        configured.contains("A2A__AUTH__HS256_SECRET"),
        "{configured}"
    );
    assert!(!elsewhere.exists(), "a configured secret writes no file");
}

/// The development profile (the default) lets a pro token try every skill by hand, the
/// expensive one included, many times a minute; the production profile keeps the plans' limits.
#[test]
fn the_development_profile_has_generous_limits() {
    use magisterium_a2a::config::{ConfigSource, Settings};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config");
    let load = |profile: &str| {
        Settings::load(&ConfigSource {
            dir: dir.clone(),
            profile: profile.into(),
            profile_chosen: true,
        })
        .unwrap()
    };
    let development = load("development");
    for plan in [
        &development.limits.pro,
        &development.limits.organization,
        &development.limits.enterprise,
    ] {
        assert!(plan.default_per_minute >= 600, "{plan:?}");
        assert!(plan.expensive_per_minute >= 60, "{plan:?}");
    }
    assert_eq!(
        development.tasks,
        magisterium_a2a::config::TaskSettings::default(),
        "config/default.toml states the built-in task settings"
    );
    // The production profile needs URLs to validate; its layers alone are read here.
    let production: Settings = Settings::figment(&dir, "production").extract().unwrap();
    assert_eq!(production.limits.pro.default_per_minute, 15);
    assert_eq!(production.limits.pro.expensive_per_minute, 2);
}

/// The `THP_enabled` line of a process's status: whether the kernel may back it with
/// transparent huge pages.
#[cfg(target_os = "linux")]
fn huge_pages_of(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|line| {
            line.strip_prefix("THP_enabled:")
                .map(|v| v.trim().to_string())
        })
}

#[cfg(target_os = "linux")]
#[test]
fn the_server_turns_transparent_huge_pages_off_for_itself_unless_asked() {
    if huge_pages_of(std::process::id()).is_none() {
        panic!("this kernel has no THP_enabled line in /proc/<pid>/status to check against");
    }
    for (setting, expected) in [(None, "0"), (Some("true"), "1")] {
        let data = tempfile::tempdir().unwrap();
        let mut command = binary();
        command
            .arg("serve")
            .env("A2A__SERVER__BIND", "127.0.0.1:0")
            .env("A2A__AUTH__HS256_SECRET", "x".repeat(40))
            .env("A2A__DATA__DIR", data.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(value) = setting {
            command.env("A2A__SERVER__TRANSPARENT_HUGE_PAGES", value);
        }
        let mut child = command.spawn().unwrap();
        let mut listening = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut listening)
            .unwrap();
        let seen = huge_pages_of(child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(listening.contains("listening"), "{listening}");
        assert_eq!(
            seen.as_deref(),
            Some(expected),
            "THP_enabled of the server with transparent_huge_pages = {setting:?}"
        );
    }
}
