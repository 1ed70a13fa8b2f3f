//! The rows of `docs/security.md`: what the production profile refuses, who owns a task, how the
//! issuer's keys are fetched and trusted, the development secret, and what auth-off mode lets
//! reach it. Configuration refusals are checked through the real binary.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use jsonwebtoken::Algorithm;
use magisterium_a2a::auth::Plan;
use magisterium_a2a::config::AuthMode;
use serde_json::{Value, json};

use crate::auth::{fixture, hs256, now, signed, spawn_jwks, status_and_code};
use crate::helpers::{
    RedisServer, SECRET, TestApp, call, free_port, send_body, spawn_app, uuid, with_redis,
};

/// The repository's own `config/` folder, with its `production.toml`.
fn repo_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config")
}

/// The binary with an empty environment but for `PATH` and `env`.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .args(args)
        .output()
        .unwrap()
}

/// Everything the production profile needs, as a deployment sets it.
const PRODUCTION: [(&str, &str); 6] = [
    ("A2A_PROFILE", "production"),
    ("A2A__AUTH__JWKS_URL", "https://idp.example/jwks.json"),
    ("A2A__AUTH__ISSUER", "https://idp.example"),
    ("A2A__AUTH__AUDIENCE", "magisterium-a2a"),
    ("A2A__SERVER__PUBLIC_URL", "https://a2a.example.org"),
    ("A2A__STORE__REDIS_URL", "redis://127.0.0.1:1/0"),
];

/// The production environment without `drop`, with `set` added or replacing.
fn production<'a>(drop: &[&str], set: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut env: Vec<_> = PRODUCTION
        .iter()
        .copied()
        .filter(|(key, _)| !drop.contains(key) && !set.iter().any(|(k, _)| k == key))
        .collect();
    env.extend_from_slice(set);
    env
}

#[test]
fn the_production_profile_refuses_unsafe_settings_naming_each_key() {
    let config = repo_config();
    let config = config.to_str().unwrap();
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let serve = ["--config-dir", config, "serve"];
    let refusal = |env: &[(&str, &str)]| {
        let mut env = env.to_vec();
        env.push(("A2A__DATA__DIR", data_dir));
        let output = run(&serve, &env);
        assert_eq!(output.status.code(), Some(2), "{env:?}");
        String::from_utf8_lossy(&output.stderr).to_string()
    };

    let missing = refusal(&production(
        &[
            "A2A__AUTH__ISSUER",
            "A2A__AUTH__AUDIENCE",
            "A2A__SERVER__PUBLIC_URL",
        ],
        &[],
    ));
    for key in [
        "A2A__AUTH__ISSUER",
        "A2A__AUTH__AUDIENCE",
        "A2A__SERVER__PUBLIC_URL",
    ] {
        assert!(missing.contains(key), "{key} is named: {missing}");
    }
    for key in [
        "A2A__AUTH__ISSUER",
        "A2A__AUTH__AUDIENCE",
        "A2A__SERVER__PUBLIC_URL",
    ] {
        let one = refusal(&production(&[key], &[]));
        assert!(one.contains(key), "{key}: {one}");
    }

    let plain = refusal(&production(
        &[],
        &[("A2A__AUTH__JWKS_URL", "http://idp.example/jwks.json")],
    ));
    assert!(
        plain.contains("auth.jwks_url") && plain.contains("https"),
        "{plain}"
    );

    let no_secret = refusal(&production(&[], &[("A2A__AUTH__MODE", "hs256")]));
    assert!(no_secret.contains("A2A__AUTH__HS256_SECRET"), "{no_secret}");
    assert!(
        !data.path().join("dev-hs256-secret").exists(),
        "no development secret is generated under production"
    );

    let auth_off = refusal(&production(
        &[],
        &[
            ("A2A__AUTH__MODE", "none"),
            ("A2A__SERVER__BIND", "127.0.0.1:0"),
        ],
    ));
    assert!(auth_off.contains("auth.mode"), "{auth_off}");

    // With every key set, the configuration is accepted: `token` signs with the configured
    // secret and puts the issuer and audience in the token.
    let mut env = production(
        &[],
        &[
            ("A2A__AUTH__MODE", "hs256"),
            ("A2A__AUTH__HS256_SECRET", SECRET),
        ],
    );
    env.push(("A2A__DATA__DIR", data_dir));
    let token = run(
        &[
            "--config-dir",
            config,
            "token",
            "--sub",
            "ops",
            "--plan",
            "pro",
        ],
        &env,
    );
    assert!(token.status.success(), "{token:?}");
    let claims = String::from_utf8(token.stdout).unwrap();
    let payload = claims.trim().split('.').nth(1).unwrap();
    let payload: Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(payload["iss"], "https://idp.example");
    assert_eq!(payload["aud"], "magisterium-a2a");
    assert!(!data.path().join("dev-hs256-secret").exists());
}

#[test]
fn a_chosen_profile_needs_its_file_and_key_refreshes_need_a_floor() {
    let config = repo_config();
    let config = config.to_str().unwrap();
    let typo = run(
        &["--config-dir", config, "serve"],
        &[("A2A_PROFILE", "prodution")],
    );
    assert_eq!(typo.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&typo.stderr);
    assert!(stderr.contains("prodution.toml"), "{stderr}");
    let flag = run(
        &["--config-dir", config, "--profile", "staging", "serve"],
        &[],
    );
    assert_eq!(flag.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&flag.stderr).contains("staging.toml"));

    let zero = run(
        &["--config-dir", config, "serve"],
        &[("A2A__AUTH__JWKS_MIN_REFRESH_SECS", "0")],
    );
    assert_eq!(zero.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&zero.stderr);
    assert!(
        stderr.contains("A2A__AUTH__JWKS_MIN_REFRESH_SECS"),
        "{stderr}"
    );
}

#[test]
fn a_development_secret_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let data = tempfile::tempdir().unwrap();
    let secret = data.path().join("dev-hs256-secret");
    std::fs::write(&secret, "0123456789abcdef0123456789abcdef0123456789\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let env = [("A2A__DATA__DIR", data.path().to_str().unwrap())];
    let args = ["--config-dir", "/nonexistent", "token", "--sub", "x"];
    let refused = run(&args, &env);
    assert!(!refused.status.success(), "{refused:?}");
    assert!(refused.stdout.is_empty(), "no token is signed with it");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("chmod 600") && stderr.contains("644"),
        "{stderr}"
    );

    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(run(&args, &env).status.success());
    // One the server generates itself is private.
    std::fs::remove_file(&secret).unwrap();
    assert!(run(&args, &env).status.success());
    let mode = std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

/// A token of `sub` from `issuer`, signed with the test secret.
fn token_from(issuer: &str, sub: &str) -> String {
    hs256(
        &json!({"sub": sub, "iss": issuer, "plan": "pro", "exp": now() + 600}),
        SECRET,
    )
}

async fn two_issuers_never_share(app: &TestApp) {
    let a = token_from("https://idp-a.example", "alice");
    let b = token_from("https://idp-b.example", "alice");
    let message_id = uuid();
    let first = app
        .rpc(Some(&a), &send_body("test_echo", "from a", &message_id))
        .await;
    let task_id = first.result()["id"].as_str().unwrap().to_string();
    assert_eq!(
        app.send(&a, "test_echo", "again").await.code(),
        -32003,
        "alice of issuer a spent her one call"
    );

    let get = app
        .rpc(Some(&b), &call("tasks/get", json!({"id": task_id})))
        .await;
    assert_eq!(
        get.code(),
        -32001,
        "issuer b's alice cannot read it: {}",
        get.body
    );
    let same_message = app
        .rpc(Some(&b), &send_body("test_echo", "from b", &message_id))
        .await;
    let task = same_message.result();
    assert_ne!(task["id"], task_id.as_str(), "her own task, not a's");
    assert!(!task.to_string().contains("from a"));
    assert_eq!(
        app.send(&b, "test_echo", "again").await.code(),
        -32003,
        "her own limit, spent by her own call only"
    );
}

#[tokio::test]
async fn the_same_sub_from_two_issuers_never_shares_tasks_or_limits() {
    let one_a_minute = |s: &mut magisterium_a2a::config::Settings| {
        s.limits.pro.default_per_minute = 1;
    };
    two_issuers_never_share(&spawn_app(one_a_minute).await).await;
    let redis = RedisServer::start();
    let app = spawn_app(|s| {
        with_redis(redis.url())(s);
        s.limits.backend = magisterium_a2a::config::LimitBackend::Redis;
        one_a_minute(s);
    })
    .await;
    two_issuers_never_share(&app).await;
}

fn jwks_fixture() -> Value {
    serde_json::from_str(&fixture("jwks.json")).unwrap()
}

fn rsa(pem: &str, kid: &str) -> String {
    signed(
        Algorithm::RS256,
        &fixture(pem),
        Some(kid),
        &json!({"sub": "rotating", "plan": "pro", "exp": now() + 600}),
    )
}

#[tokio::test]
async fn a_key_rotated_under_the_same_kid_is_fetched_again() {
    let keys = jwks_fixture();
    let (url, jwks) = spawn_jwks(vec![keys["rsa1"].clone()]).await;
    let app = spawn_app(move |s| {
        s.auth.mode = AuthMode::Jwks;
        s.auth.jwks_url = Some(url);
        s.auth.jwks_min_refresh_secs = 1;
    })
    .await;
    let old = rsa("rsa1.pem", "rsa1");
    assert_eq!(status_and_code(&app, &old).await.1, -32001);

    // The issuer rotates: a new key, published under the same kid.
    let mut rotated = keys["rsa2"].clone();
    rotated["kid"] = json!("rsa1");
    *jwks.keys.write().unwrap() = vec![rotated];
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let new = rsa("rsa2.pem", "rsa1");
    let before = jwks.fetches.load(Ordering::SeqCst);
    assert_eq!(
        status_and_code(&app, &new).await.1,
        -32001,
        "the new key is fetched without a restart"
    );
    assert_eq!(jwks.fetches.load(Ordering::SeqCst), before + 1);
    assert_eq!(
        status_and_code(&app, &old).await.0,
        401,
        "the replaced key is trusted no more"
    );

    // Forged signatures under the known kid cost at most one fetch per interval.
    let before = jwks.fetches.load(Ordering::SeqCst);
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(status_and_code(&app, &rsa("rsa1.pem", "rsa1")).await.0, 401);
    }
    let intervals = started.elapsed().as_secs() as usize + 1;
    let fetched = jwks.fetches.load(Ordering::SeqCst) - before;
    assert!(fetched <= intervals, "{fetched} fetches in {intervals} s");
}

#[tokio::test]
async fn a_key_removed_from_the_jwks_stops_being_trusted_at_the_next_refresh() {
    let keys = jwks_fixture();
    let (url, jwks) = spawn_jwks(vec![keys["rsa1"].clone(), keys["rsa2"].clone()]).await;
    let app = spawn_app(move |s| {
        s.auth.mode = AuthMode::Jwks;
        s.auth.jwks_url = Some(url);
        s.auth.jwks_min_refresh_secs = 1;
        s.auth.jwks_refresh_secs = 1;
    })
    .await;
    let removed = rsa("rsa1.pem", "rsa1");
    let kept = rsa("rsa2.pem", "rsa2");
    assert_eq!(status_and_code(&app, &removed).await.1, -32001);
    assert_eq!(status_and_code(&app, &kept).await.1, -32001);

    // The issuer withdraws rsa1; no token names a new kid, so only the periodic refresh can
    // notice. The token was verified (and cached) before.
    *jwks.keys.write().unwrap() = vec![keys["rsa2"].clone()];
    let deadline = Instant::now() + Duration::from_secs(5);
    while status_and_code(&app, &removed).await.0 != 401 {
        assert!(
            Instant::now() < deadline,
            "a withdrawn key is still trusted 5 s after a 1 s refresh interval"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status_and_code(&app, &kept).await.1, -32001);
}

#[tokio::test]
async fn the_jwks_fetch_follows_no_redirect_and_reads_at_most_a_mebibyte() {
    let keys = jwks_fixture();
    let (url, jwks) = spawn_jwks(vec![keys["rsa1"].clone()]).await;
    let token = rsa("rsa1.pem", "rsa1");
    for path in ["moved.json", "oversized.json"] {
        let url = url.replace("jwks.json", path);
        let app = spawn_app(move |s| {
            s.auth.mode = AuthMode::Jwks;
            s.auth.jwks_url = Some(url);
        })
        .await;
        let (status, code, message) = status_and_code(&app, &token).await;
        assert_eq!((status, code), (401, -32004), "{path}: {message}");
    }
    assert_eq!(
        jwks.fetches.load(Ordering::SeqCst),
        0,
        "the redirect was not followed"
    );
}

#[test]
fn jwks_errors_are_logged_without_the_query_of_the_url() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/jwks.json?client_secret=query-secret-4242");
    let mut server = Command::new(env!("CARGO_BIN_EXE_magisterium-a2a"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("A2A__AUTH__MODE", "jwks")
        .env("A2A__AUTH__JWKS_URL", &url)
        .env("A2A__SERVER__BIND", "127.0.0.1:0")
        .env("A2A__DATA__DIR", data.path())
        .args(["--config-dir", "/nonexistent", "serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("listening"), "{line}");
    server.kill().unwrap();
    server.wait().unwrap();
    let mut logs = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(logs.contains("JWKS refresh failed"), "{logs}");
    assert!(
        logs.contains(&format!("http://127.0.0.1:{port}/[sha256:")),
        "the URL's scheme and host are logged, the rest hashed: {logs}"
    );
    assert!(!logs.contains("query-secret-4242"), "{logs}");
}

/// A POST of a JSON-RPC call to the endpoint with these extra headers.
async fn post_with(app: &TestApp, headers: &[(&str, &str)]) -> (u16, Value) {
    let mut request = app
        .client
        .post(format!("{}/api/v1/a2a", app.base))
        .header("content-type", "application/json")
        .body(send_body("test_echo", "hi", &uuid()).to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn auth_off_mode_answers_only_loopback_hosts_and_origins() {
    let app = spawn_app(|s| {
        s.auth.mode = AuthMode::None;
        s.auth.none_plan = Plan::Pro;
    })
    .await;
    let port = app.base.rsplit(':').next().unwrap().to_string();
    let localhost = format!("localhost:{port}");
    let allowed: Vec<Vec<(&str, &str)>> = vec![
        vec![],
        vec![("host", &localhost)],
        vec![("host", "[::1]")],
        vec![("origin", "http://localhost:5173")],
        vec![("origin", "http://127.0.0.1:3000")],
    ];
    for headers in &allowed {
        let (status, body) = post_with(&app, headers).await;
        assert_eq!(status, 200, "{headers:?}: {body}");
        assert_eq!(
            body["result"]["status"]["state"], "completed",
            "{headers:?}"
        );
    }

    let rebinding = format!("attacker.example:{port}");
    let refused: Vec<Vec<(&str, &str)>> = vec![
        vec![("host", &rebinding)],
        vec![("host", "192.168.1.10")],
        vec![("origin", "https://attacker.example")],
        vec![("origin", "null")],
        vec![("host", &rebinding), ("origin", "http://attacker.example")],
    ];
    for headers in &refused {
        let (status, body) = post_with(&app, headers).await;
        assert_eq!(status, 403, "{headers:?}: {body}");
        assert_eq!(body["error"]["code"], -32600, "{headers:?}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("loopback"), "{message}");
    }
    // The preflight a page's cross-origin call needs is refused too.
    let preflight = app
        .client
        .request(reqwest::Method::OPTIONS, format!("{}/api/v1/a2a", app.base))
        .header("origin", "https://attacker.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status().as_u16(), 403);

    // With authentication on, a token is the defence, and the Host does not matter.
    let authenticated = spawn_app(|_| {}).await;
    let token = authenticated.token("remote", Plan::Pro);
    let bearer = format!("Bearer {token}");
    let (status, body) = post_with(
        &authenticated,
        &[("host", "a2a.example.org"), ("authorization", &bearer)],
    )
    .await;
    assert_eq!(status, 200, "{body}");
}
